//! Commands across their life: processes whose main thread exited (it shows as a zombie, and
//! its own environment cannot be read), in and out of the group, with many pids handed out,
//! and when the grading process exits; unrelated processes with empty environments beside a grade
//! (rounds that cannot come to rest must not hold it); gradings dropped while queued behind
//! the starter threads, across several runtimes; a working directory removed around the
//! start; and the grading process exiting while its commands run or start. (A process that
//! clears its environment once out of the group still escapes, as documented.)
#![cfg(all(target_os = "linux", feature = "bash"))]
#![allow(clippy::unwrap_used)]

mod bash_support;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use bash_support::{
    bash, child::Bounded as _, live_processes, marker, scratch_dir, survivors_after,
};

/// A C program whose main thread calls `pthread_exit` (after `argv[2]` ms) while a second
/// thread keeps running: the thread-group leader is a zombie, its environ reads empty, and
/// the process is alive. Writes its pid to `argv[1]`.
fn zombie_leader_program() -> &'static PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let dir = scratch_dir("zl");
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("zl.c");
        std::fs::write(
            &src,
            r#"
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
static void *spin(void *a) { (void)a; for (;;) sleep(1); return 0; }
int main(int argc, char **argv) {
    if (argc > 1) { FILE *f = fopen(argv[1], "w"); fprintf(f, "%d\n", getpid()); fclose(f); }
    pthread_t t; pthread_create(&t, 0, spin, 0);
    usleep(1000 * atoi(argc > 2 ? argv[2] : "0"));
    pthread_exit(0);
}
"#,
        )
        .unwrap();
        let bin = dir.join("zl");
        let ok = std::process::Command::new("cc")
            .args(["-pthread", "-O0", "-o"])
            .arg(&bin)
            .arg(&src)
            .status_bounded()
            .success();
        assert!(ok, "cc failed");
        bin
    })
}

/// Whether any thread of `pid` is alive (not a zombie).
fn any_thread_alive(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|task| {
        std::fs::read_to_string(task.path().join("stat")).is_ok_and(|stat| {
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next().map(str::to_owned))
                .is_some_and(|state| state != "Z" && state != "X")
        })
    })
}

fn read_pid(file: &std::path::Path) -> Option<u32> {
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

fn kill9(pid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status_bounded();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Runs `f` on a thread; panics if it takes longer than `bound` (a hang).
fn within<T: Send + 'static>(bound: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(bound) {
        Ok(value) => value,
        Err(_) => panic!("hung for more than {bound:?}"),
    }
}

/// a process out of the group whose thread-group leader is a zombie (main thread
/// called pthread_exit) while another thread runs. Its /proc/<pid>/stat says `Z` and its
/// environ reads empty, so a sweeper that trusts either misses it.
fn zombie_leader_escape(delay_ms: u32, setsid: bool, forks_first: u32) {
    let mark = marker();
    let pidfile = scratch_dir(&format!("zlpid-{mark}"));
    let prog = zombie_leader_program().display().to_string();
    let launch = if setsid { "setsid -f " } else { "" };
    let command = format!(
        "for i in $(seq {forks_first}); do /bin/true; done; {launch}{prog} {} {delay_ms} & \
         for i in $(seq 200); do [ -s {} ] && break; sleep 0.01; done; sleep 0.{:03}; P=$(cat {}); ls /proc/$P/task; grep -E 'State|Threads' /proc/$P/status",
        pidfile.display(),
        pidfile.display(),
        (delay_ms / 2).min(999),
        pidfile.display()
    );
    let started = Instant::now();
    let score = within(Duration::from_secs(10), move || {
        runtime()
            .block_on(
                bash(&command)
                    .kill_grace(Duration::from_millis(300))
                    .grade(1.0),
            )
            .unwrap()
    });
    let took = started.elapsed();
    let pid = read_pid(&pidfile).expect("the program wrote its pid");

    eprintln!(
        "zl pid {pid}: right after the grade alive={} took {took:?} value {}",
        any_thread_alive(pid),
        score.value()
    );
    // After its main thread exited, give the sweeper's SIGKILL time to land.
    std::thread::sleep(Duration::from_millis(300 + u64::from(delay_ms)));
    let alive = any_thread_alive(pid);
    let state = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("State") || l.starts_with("Threads"))
        .collect::<Vec<_>>()
        .join(", ");
    kill9(pid);
    let _ = std::fs::remove_file(&pidfile);
    assert!(
        !alive,
        "zombie-leader process {pid} ({prog}, {state}) outlived the grade (value {}, took {took:?})",
        score.value()
    );
}

#[test]
fn zombie_leader_out_of_the_group_is_stopped() {
    zombie_leader_escape(0, true, 0);
}

#[test]
fn zombie_leader_out_of_the_group_after_many_pids_is_stopped() {
    // More than 256 pids handed out since the command started: the sweeper lists /proc,
    // which shows thread-group leaders only.
    zombie_leader_escape(0, true, 400);
}

#[test]
fn zombie_leader_out_of_the_group_seen_tagged_first_is_stopped() {
    // Main thread lives 400 ms (bash waits 200 ms of it), so a round may memo its tag first.
    zombie_leader_escape(400, true, 0);
}

#[test]
fn zombie_leader_in_the_group_is_stopped() {
    zombie_leader_escape(0, false, 0);
}

/// unrelated live processes with an empty environment (and a zombie leader) beside a
/// grade that needs the sweeper: rounds stay unsure; the grade must still return promptly.
#[test]
fn unrelated_empty_environments_do_not_hold_a_grade() {
    let mark = marker();
    // Baseline.
    let command = format!("sleep 30.{mark} & exit 0");
    let base = {
        let command = command.clone();
        let t = Instant::now();
        within(Duration::from_secs(10), move || {
            runtime().block_on(bash(&command).grade(1.0)).unwrap()
        });
        t.elapsed()
    };
    let mut others = Vec::new();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Keep spawning empty-environment processes (children of this process, so adopters'
    // children, inside every window) all through the grade.
    let spawner = {
        let stop = stop.clone();
        let mark = mark.clone();
        std::thread::spawn(move || {
            let mut kids = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                kids.push(
                    std::process::Command::new("/bin/sleep")
                        .arg(format!("5.{mark}9"))
                        .env_clear()
                        .spawn()
                        .unwrap(),
                );
                std::thread::sleep(Duration::from_millis(30));
            }
            kids
        })
    };
    let zl = zombie_leader_program().clone();
    let zpid = scratch_dir(&format!("zlpid-{mark}"));
    others.push(
        std::process::Command::new(&zl)
            .arg(&zpid)
            .arg("0")
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(Duration::from_millis(100));
    let t = Instant::now();
    let score = within(Duration::from_secs(10), move || {
        runtime().block_on(bash(&command).grade(1.0)).unwrap()
    });
    let took = t.elapsed();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for mut kid in spawner.join().unwrap().into_iter().chain(others) {
        let _ = kid.kill();
        let _ = kid.wait();
    }
    assert_eq!(score.value(), 1.0);
    eprintln!("baseline {base:?}, with empty environments {took:?}");
    assert!(
        took < Duration::from_millis(1500),
        "grade took {took:?} (baseline {base:?})"
    );
}

/// many runtimes (current_thread and multi_thread, several OS threads), 100+
/// gradings polled once and dropped after varying delays while they queue behind the 4
/// starters; some runtimes dropped outright with gradings mid-start.
#[test]
fn gradings_dropped_mid_start_across_runtimes_leave_nothing() {
    let mark = marker();
    let mut threads = Vec::new();
    for t in 0..8u64 {
        let mark = mark.clone();
        threads.push(std::thread::spawn(move || {
            let rt = if t % 2 == 0 {
                runtime()
            } else {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .max_blocking_threads(1)
                    .enable_all()
                    .build()
                    .unwrap()
            };
            let command = format!(
                "setsid -f sleep 30.{mark}; sleep 30.{mark} & env -u X setsid sleep 30.{mark}"
            );
            if t % 4 == 3 {
                // Drop the whole runtime with its gradings in flight.
                for i in 0..15u64 {
                    let command = command.clone();
                    rt.spawn(async move {
                        let _ = bash(&command).grade(1.0).await;
                        let _ = i;
                    });
                }
                std::thread::sleep(Duration::from_millis(5 * t));
                drop(rt);
                return;
            }
            rt.block_on(async move {
                let mut set = tokio::task::JoinSet::new();
                for i in 0..15u64 {
                    let command = command.clone();
                    set.spawn(async move {
                        let grade = bash(&command).grade(1.0);
                        let delay = Duration::from_millis((i * 7 + t * 3) % 90);
                        tokio::select! {
                            _ = grade => {}
                            () = tokio::time::sleep(delay) => {}
                        }
                    });
                }
                while set.join_next().await.is_some() {}
            });
        }));
    }
    for t in threads {
        t.join().unwrap();
    }
    // Starters may still be working through the queue.
    let left = survivors_after(&mark, Duration::from_secs(8));
    for (pid, _, _) in &left {
        kill9(*pid);
    }
    assert!(left.is_empty(), "{} left running: {left:?}", left.len());
}

/// `cwd` removed between the check and the spawn, many times, with a grading that may
/// be dropped. No panic, no leak; Ok or an error.
#[test]
fn a_cwd_removed_around_the_spawn_neither_panics_nor_leaks() {
    let mark = marker();
    let rt = runtime();
    for i in 0..40u64 {
        let dir = scratch_dir(&format!("cwd{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        let remover = {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let spin = Instant::now();
                while spin.elapsed() < Duration::from_micros(i * 97 % 3000) {}
                let _ = std::fs::remove_dir(&dir);
            })
        };
        let command = format!("setsid -f sleep 30.{mark}; exit 0");
        let result = rt.block_on(
            bash(&command)
                .cwd(&dir)
                .timeout(Duration::from_secs(5))
                .grade(1.0),
        );
        remover.join().unwrap();
        if let Err(error) = &result {
            assert!(
                format!("{error}").contains("cwd")
                    || format!("{error:?}").contains("WorkingDirectory"),
                "{error:?}"
            );
        }
    }
    let left = survivors_after(&mark, Duration::from_secs(2));
    assert!(left.is_empty(), "left running: {left:?}");
}

/// one worker, one blocking thread, a grade awaited from inside spawn_blocking while
/// others run.
#[test]
fn a_grade_from_the_only_blocking_thread_returns() {
    let mark = marker();
    within(Duration::from_secs(15), move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .max_blocking_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let handle = rt.handle().clone();
        let command = format!("setsid -f sleep 30.{mark}; exit 0");
        rt.block_on(async move {
            let c2 = command.clone();
            let inner =
                tokio::task::spawn_blocking(move || handle.block_on(bash(&c2).grade(1.0)).unwrap());
            let outer = bash(&command).grade(1.0).await.unwrap();
            assert_eq!(outer.value(), 1.0);
            assert_eq!(inner.await.unwrap().value(), 1.0);
        });
        let left = survivors_after(&mark, Duration::from_secs(2));
        assert!(left.is_empty(), "left running: {left:?}");
    });
}

/// Helper for the next test: run in a child copy of this test binary.
#[test]
fn exit_helper() {
    let Ok(mark) = std::env::var("GRADER_BASH_LIFECYCLE_MARK") else {
        return;
    };
    let wait_ms: u64 = std::env::var("GRADER_BASH_LIFECYCLE_WAIT")
        .unwrap()
        .parse()
        .unwrap();
    let command = format!("setsid -f sleep 30.{mark}; sleep 30.{mark} & sleep 30.{mark}");
    for _ in 0..6 {
        let command = command.clone();
        std::thread::spawn(move || runtime().block_on(bash(&command).grade(1.0)));
    }
    if wait_ms == 0 {
        // Until some of them run.
        let t = Instant::now();
        while live_processes(&mark).len() < 6 && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
    } else {
        std::thread::sleep(Duration::from_millis(wait_ms));
    }
    std::process::exit(0);
}

fn exit_attack(wait_ms: u64) {
    let mark = marker();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "exit_helper", "--nocapture", "--test-threads=1"])
        .env("GRADER_BASH_LIFECYCLE_MARK", &mark)
        .env("GRADER_BASH_LIFECYCLE_WAIT", wait_ms.to_string())
        .stdout(std::process::Stdio::null())
        .status_bounded();
    assert!(status.success());
    let left = survivors_after(&mark, Duration::from_secs(3));
    for (pid, _, _) in &left {
        kill9(*pid);
    }
    assert!(left.is_empty(), "left running after process exit: {left:?}");
}

#[test]
fn process_exit_while_commands_run_leaves_nothing() {
    exit_attack(0);
}

#[test]
fn process_exit_while_commands_start_leaves_nothing() {
    for wait in [1, 3, 8, 20] {
        exit_attack(wait);
    }
}

/// Set in the re-run test binary: the file the program writes its pid to.
const ZOMBIE_PID_FILE_ENV: &str = "GRADER_BASH_LIFECYCLE_ZOMBIE_PID_FILE";

/// The grading process of the next test, run as a copy of this test binary: starts the
/// program whose main thread exits, out of the group, beside a long command, and exits once
/// the program runs.
#[test]
fn zombie_exit_helper() {
    let Ok(pid_file) = std::env::var(ZOMBIE_PID_FILE_ENV) else {
        return; // not the re-run copy
    };
    let command = format!(
        "for i in $(seq 400); do /bin/true; done; setsid {} {pid_file} 0 & sleep 60",
        zombie_leader_program().display()
    );
    std::thread::spawn(move || bash(&command).grade_blocking(1.0));
    let start = Instant::now();
    while read_pid(std::path::Path::new(&pid_file)).is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the program never ran"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(100));
    std::process::exit(0);
}

/// The watcher, when the grading process exits, stops a process whose main thread exited.
#[test]
fn zombie_leader_out_of_the_group_is_stopped_when_the_grading_process_exits() {
    let pid_file = scratch_dir("zombie-exit-pid");
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "zombie_exit_helper", "--nocapture"])
        .env(ZOMBIE_PID_FILE_ENV, &pid_file)
        .stdout(std::process::Stdio::null())
        .status_bounded();
    assert!(status.success(), "the grading process failed: {status}");
    let pid = read_pid(&pid_file).unwrap();
    let start = Instant::now();
    while any_thread_alive(pid) && start.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let alive = any_thread_alive(pid);
    kill9(pid);
    let _ = std::fs::remove_file(&pid_file);
    assert!(!alive, "process {pid} outlived the grading process");
}
