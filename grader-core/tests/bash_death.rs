//! When the grading process itself ends (SIGKILL, SIGTERM, a Ctrl-C, `std::process::exit`)
//! while its commands run, the watcher stops them, escaped ones included. Each test runs this
//! same test binary again as the grading process, waits until its commands run, ends it, and
//! looks for what is left.
#![cfg(all(target_os = "linux", feature = "bash"))]
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod bash_support;

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bash_support::{
    bash,
    child::{self, Bounded as _},
    live_processes, marker, survivors_after,
};
use grader_core::Gather;

/// Set in the re-run test binary: the marker its commands carry.
const MARK_ENV: &str = "GRADER_BASH_DEATH_MARK";
/// Set in the re-run test binary to `exit` when it should end by `std::process::exit`.
const MODE_ENV: &str = "GRADER_BASH_DEATH_MODE";

/// How many `sleep`s the grading process starts (see [`grading_until_ended`]).
const SLEEPS: usize = 3;

/// How many in `envless` mode: one that cleared its environment, one that did not.
const ENVLESS_SLEEPS: usize = 2;

/// How many `sleep`s the grading process starts in `mode`.
fn sleeps(mode: &str) -> usize {
    if mode == "envless" {
        ENVLESS_SLEEPS
    } else {
        SLEEPS
    }
}

/// Starts the grading process, waits for its sleeps, ends it with `end` (given its pid, which
/// is also its process group), and returns what is still alive 2 s after it is gone.
fn end_the_grading_process(mode: &str, end: impl FnOnce(u32)) -> Vec<(u32, String, String)> {
    let mark = marker();
    let exe = std::env::current_exe().expect("the test binary's path");
    // With the default disposition of SIGINT even where this run ignores it (a background job):
    // the Ctrl-C test must see the grading process end.
    let mut child = child::with_default_signals(exe)
        .args(["--exact", "grading_until_ended", "--nocapture"])
        .env(MARK_ENV, &mark)
        .env(MODE_ENV, mode)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("the test binary runs again");
    let start = Instant::now();
    loop {
        let sleeps = live_processes(&mark)
            .iter()
            .filter(|(_, _, args)| args.starts_with("sleep"))
            .count();
        if sleeps == self::sleeps(mode) {
            break;
        }
        if let Ok(Some(status)) = child.try_wait() {
            // In `exit` mode it ends by itself once it has seen its sleeps, possibly before this
            // loop saw them.
            if mode == "exit" && status.success() {
                break;
            }
            panic!("the grading process ended early: {status}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the commands never all started: {:?}",
            live_processes(&mark)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    end(child.id());
    let status = child::wait(&mut child, "the grading process is reaped");
    assert!(!status.success() || mode == "exit", "{status}");
    let left = survivors_after(&mark, Duration::from_secs(2));
    for (pid, _, _) in &left {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status_bounded();
    }
    left
}

fn kill(args: &[&str]) {
    let status = Command::new("kill").args(args).status_bounded();
    assert!(status.success(), "kill {args:?}");
}

#[test]
fn commands_stop_when_the_grading_process_is_killed() {
    let left = end_the_grading_process("wait", |pid| kill(&["-KILL", &pid.to_string()]));
    assert_eq!(left, vec![]);
}

#[test]
fn commands_stop_when_the_grading_process_is_terminated() {
    let left = end_the_grading_process("wait", |pid| kill(&["-TERM", &pid.to_string()]));
    assert_eq!(left, vec![]);
}

#[test]
fn commands_stop_on_a_ctrl_c_of_the_grading_process() {
    // A terminal's Ctrl-C sends SIGINT to the foreground process group: the grading process's.
    let left = end_the_grading_process("wait", |pid| kill(&["-INT", "--", &format!("-{pid}")]));
    assert_eq!(left, vec![]);
}

/// `(setsid env -i sleep …&)`: out of the process group and without the tag, found by nothing
/// but its cgroup, which the watcher empties. Where no cgroup is offered it cannot be found;
/// CI offers one.
#[test]
fn what_cleared_its_environment_stops_when_the_grading_process_is_killed() {
    if !cgroup_here() {
        return;
    }
    let left = end_the_grading_process("envless", |pid| kill(&["-KILL", &pid.to_string()]));
    assert_eq!(left, vec![]);
}

/// Whether a command gets a cgroup here (under CI it must).
fn cgroup_here() -> bool {
    let sub = bash("true").grade_blocking(1.0).unwrap();
    let by = sub.info().unwrap()["limits"]["processes"].clone();
    if by.as_str().is_some_and(|by| by.starts_with("cgroup")) {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must offer a cgroup: {by}"
    );
    eprintln!("skipping: no cgroup here ({by})");
    false
}

#[test]
fn commands_stop_when_the_grading_process_exits() {
    let left = end_the_grading_process("exit", |_| {});
    assert_eq!(left, vec![]);
}

/// Runs only inside the binary started by the tests above: grades three commands that run for
/// 1000 s (one plain, one escaped with `setsid`, one ignoring SIGTERM), and either waits to be
/// ended or, in `exit` mode, calls `std::process::exit` once they all run.
#[test]
fn grading_until_ended() {
    let Some(mark) = std::env::var_os(MARK_ENV) else {
        return;
    };
    let mark = mark.into_string().unwrap();
    let mode = std::env::var(MODE_ENV).unwrap_or_default();
    let exit = mode == "exit";
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    if exit {
        let mark = mark.clone();
        std::thread::spawn(move || {
            while live_processes(&mark)
                .iter()
                .filter(|(_, _, args)| args.starts_with("sleep"))
                .count()
                < SLEEPS
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            std::process::exit(0);
        });
    }
    if mode == "envless" {
        let result = runtime.block_on(
            Gather::new()
                .add(
                    bash(&format!(
                        "(setsid env -i sleep 1000.{mark} &); sleep 1000.{mark}"
                    ))
                    .grade(1.0),
                )
                .run(),
        );
        panic!("the grading process should have been ended, got {result:?}");
    }
    let result = runtime.block_on(
        Gather::new()
            .add(bash(&format!("sleep 1000.{mark}")).grade(1.0))
            .add(bash(&format!("setsid sleep 1000.{mark} & wait")).grade(1.0))
            .add(bash(&format!("(trap '' TERM; exec sleep 1000.{mark}) & wait")).grade(1.0))
            .run(),
    );
    panic!("the grading process should have been ended, got {result:?}");
}
