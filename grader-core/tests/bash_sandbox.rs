//! `BashGrader` in the bubblewrap sandbox: what the command cannot see or reach, checked with
//! real commands against real files, a real listener on 127.0.0.1 and the test's own process.
//! Where bwrap cannot sandbox the tests say so and pass, except under CI (`CI` set), which
//! installs bubblewrap and must run them.
#![cfg(all(target_os = "linux", feature = "bash"))]
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod bash_support;

use std::net::TcpListener;
use std::process::Command;
use std::time::Duration;

use bash_support::{
    assert_rerun_passed, bash, child::Bounded as _, marker, scratch_dir, survivors_after,
};
use grader_core::sandbox::{Limits, Sandbox};
use grader_core::{BashGrader, Failure, SubScore};

/// Whether bwrap can sandbox here; under CI it must.
fn sandboxing() -> bool {
    match Sandbox::check() {
        Ok(_) => true,
        Err(why) => {
            assert!(std::env::var_os("CI").is_none(), "CI must sandbox: {why}");
            eprintln!("skipping: {why}");
            false
        }
    }
}

async fn sandboxed(grader: BashGrader, sandbox: Sandbox) -> SubScore {
    let sub = grader
        .login_shell(false)
        .timeout(Duration::from_secs(60))
        .sandbox(sandbox)
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(sub.info().unwrap()["sandbox"], "bwrap");
    sub
}

fn stdout(sub: &SubScore) -> &str {
    sub.info().unwrap()["stdout"].as_str().unwrap()
}

#[tokio::test]
async fn the_command_sees_its_directory_and_the_system_only() {
    if !sandboxing() {
        return;
    }
    let inside = scratch_dir("sandbox-inside");
    let outside = scratch_dir("sandbox-outside");
    std::fs::create_dir_all(&inside).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(inside.join("given.txt"), "given").unwrap();
    std::fs::write(outside.join("secret.txt"), "secret").unwrap();
    let secret = outside.join("secret.txt");

    let command = format!(
        "cat given.txt; echo made > made.txt; echo private > /tmp/private-{tag}; \
         test -e {secret} && echo SEEN-SECRET; \
         for dir in /home /root /var /run /sys /mnt; do test -e $dir && echo SEEN-$dir; done; \
         test -w /usr || echo usr-read-only",
        tag = marker(),
        secret = secret.display(),
    );
    let sub = sandboxed(bash(&command).cwd(&inside), Sandbox::new()).await;
    assert_eq!(stdout(&sub), "givenusr-read-only\n", "{:?}", sub.info());
    assert_eq!(
        std::fs::read_to_string(inside.join("made.txt")).unwrap(),
        "made\n"
    );
    // Its /tmp was its own.
    let tmp_files = std::fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("private-"))
        .count();
    assert_eq!(tmp_files, 0);

    // A bound path is there, read-only.
    let sub = sandboxed(
        bash(&format!(
            "cat {}; echo x > {}",
            secret.display(),
            secret.display()
        ))
        .cwd(&inside),
        Sandbox::new().read_only(&outside),
    )
    .await;
    assert_eq!(stdout(&sub), "secret");
    assert_eq!(sub.value(), 0.0, "read-only: {:?}", sub.info());
    std::fs::remove_dir_all(&inside).unwrap();
    std::fs::remove_dir_all(&outside).unwrap();
}

#[tokio::test]
async fn the_command_cannot_reach_the_hosts_loopback_unless_allowed() {
    if !sandboxing() {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");

    let sub = sandboxed(bash(&connect), Sandbox::new()).await;
    assert_eq!(sub.value(), 0.0, "{:?}", sub.info());
    assert!(
        listener
            .accept()
            .is_err_and(|e| e.kind() == std::io::ErrorKind::WouldBlock),
        "nothing reached the listener"
    );

    let sub = sandboxed(bash(&connect), Sandbox::new().network(true)).await;
    assert_eq!(sub.value(), 1.0, "{:?}", sub.info());
    assert!(listener.accept().is_ok());
}

#[tokio::test]
async fn the_command_cannot_see_the_grading_process() {
    if !sandboxing() {
        return;
    }
    let me = std::process::id();
    let command = format!(
        "kill -0 {me} 2>/dev/null && echo SEES-GRADER; ls /proc | grep -c '^[0-9]'; \
         ulimit -H -n 1000000 2>/dev/null && echo RAISED"
    );
    let sub = sandboxed(bash(&command), Sandbox::new()).await;
    // bwrap's init, bash, and `ls` and `grep` of the pipeline: nothing of the host.
    let count: u32 = stdout(&sub).trim().parse().unwrap();
    assert!(count <= 5, "{:?}", sub.info());
    assert!(!stdout(&sub).contains("SEES-GRADER"));
    assert!(
        !stdout(&sub).contains("RAISED"),
        "no capability to raise a hard limit"
    );
}

#[tokio::test]
async fn limits_hold_inside_the_sandbox_and_nothing_detached_survives() {
    if !sandboxing() {
        return;
    }
    let tag = marker();
    let command = format!(
        "setsid -f sleep 300 {tag}; nohup sleep 301 {tag} >/dev/null 2>&1 & \
         ulimit -S -v 3000000; python3 -c '\nchunks = []\nwhile True: chunks.append(bytearray(64 << 20))'"
    );
    // `sleep` takes one argument; the tag rides along as a second, which GNU sleep adds up.
    let command = command.replace(&format!("300 {tag}"), &format!("300 0{tag}"));
    let command = command.replace(&format!("301 {tag}"), &format!("301 0{tag}"));
    let sub = sandboxed(
        bash(&command).limits(Limits::default().memory(128 * 1024 * 1024)),
        Sandbox::new(),
    )
    .await;
    assert_eq!(sub.value(), 0.0);
    let info = sub.info().unwrap();
    if info["limits"]["memory"] != "rlimit" {
        assert_eq!(info["limit_exceeded"], "memory limit 128 MiB exceeded");
    }
    assert_eq!(survivors_after(&tag, Duration::from_secs(5)), vec![]);
}

/// A child spinning inside the sandbox is counted in the command's CPU time as it would be
/// outside: the sandbox's processes are in the command's cgroup.
#[tokio::test]
async fn a_child_spinning_in_the_sandbox_is_stopped_at_the_cpu_limit() {
    if !sandboxing() {
        return;
    }
    let start = std::time::Instant::now();
    let sub = sandboxed(
        bash("bash -c 'while :; do :; done'; echo after; exit 0")
            .limits(Limits::default().cpu_time(Duration::from_secs(1))),
        Sandbox::new(),
    )
    .await;
    let info = sub.info().unwrap();
    if info["limits"]["cpu_time"] == "rlimit" {
        eprintln!("skipping: no cgroup counts CPU time here");
        return;
    }
    assert_eq!(sub.value(), 0.0, "{info:?}");
    assert_eq!(info["limit_exceeded"], "CPU time limit 1s exceeded");
    assert!(start.elapsed() < Duration::from_secs(30));
}

/// Set in the re-run test binary.
const CHILD_ENV: &str = "GRADER_BASH_SANDBOX_CHILD";

#[test]
fn without_bwrap_the_grade_fails_or_runs_unsandboxed_as_chosen() {
    let exe = std::env::current_exe().unwrap();
    let empty = scratch_dir("no-bwrap-path");
    std::fs::create_dir_all(&empty).unwrap();
    let output = Command::new(exe)
        .args(["--exact", "graded_without_bwrap", "--nocapture"])
        .env(CHILD_ENV, "1")
        .env("PATH", &empty)
        .output_bounded();
    assert_rerun_passed(&output);
    std::fs::remove_dir_all(&empty).unwrap();
}

/// Runs only inside the binary started by the test above, with no bwrap on `PATH`.
#[test]
fn graded_without_bwrap() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let error = BashGrader::new("true")
        .sandbox(Sandbox::new())
        .grade_blocking(1.0)
        .unwrap_err();
    assert!(
        matches!(&error.failure, Failure::Sandbox(why) if why.contains("bwrap (the bubblewrap package) is not on PATH")),
        "{error}"
    );
    assert!(error.to_string().contains("cannot sandbox the command"));

    let sub = BashGrader::new("true")
        .sandbox(Sandbox::new().or_unsandboxed())
        .grade_blocking(1.0)
        .unwrap();
    assert_eq!(sub.value(), 1.0);
    let shown = sub.info().unwrap()["sandbox"].as_str().unwrap();
    assert!(shown.starts_with("none: bwrap"), "{shown}");
}
