//! Dropping a `BashGrader`'s grading future mid-run kills the command's whole process group
//! and reaps bash. A file of its own, so that no other test's children are around.
#![cfg(all(unix, feature = "bash"))]
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod bash_support;

use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

use bash_support::{bash, live_processes, marker, survivors_after};
use grader_core::Gather;

/// Polls `future` until the processes mentioning `mark` include bash and `count` sleeps, then
/// drops it. Returns bash's pid.
async fn drop_once_running<F: Future>(future: F, mark: &str, count: usize) -> u32 {
    let mut future = Box::pin(future);
    let start = Instant::now();
    let bash_pid = loop {
        tokio::select! {
            _ = &mut future => panic!("the command finished; it should still be running"),
            () = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
        let alive = live_processes(mark);
        let sleeps = alive
            .iter()
            .filter(|(_, _, args)| args.starts_with("sleep"))
            .count();
        let bash = alive
            .iter()
            .find(|(_, _, args)| args.starts_with("/bin/bash -lc"));
        if let (Some((pid, _, _)), true) = (bash, sleeps == count) {
            break *pid;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "never started: {alive:?}"
        );
    };
    drop(future);
    bash_pid
}

fn assert_reaped(pid: u32) {
    // Not even a zombie: the guard waited for bash.
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "bash ({pid}) was not reaped"
    );
}

#[tokio::test]
async fn dropping_the_grading_future_kills_the_group_and_reaps_bash() {
    let mark = marker();
    let command = format!("sleep 30.{mark} & sleep 30.{mark}");
    let grade = bash(&command).grade(1.0);
    let bash_pid = drop_once_running(grade, &mark, 2).await;
    assert_reaped(bash_pid);
    // SIGKILL is delivered asynchronously; the sleeps end within moments.
    assert_eq!(survivors_after(&mark, Duration::from_secs(2)), vec![]);
}

#[tokio::test]
async fn dropping_a_gather_kills_every_group() {
    let mark = marker();
    let gather = Gather::new()
        .add(bash(&format!("sleep 30.{mark}; true")).grade(0.5))
        .add(bash(&format!("sleep 30.{mark} & wait")).grade(0.5));
    // Two commands; each has bash and one sleep. Wait for both sleeps, then drop.
    let mut gather = Box::pin(gather.run());
    let start = Instant::now();
    loop {
        tokio::select! {
            _ = &mut gather => panic!("the gather finished; it should still be running"),
            () = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
        let alive = live_processes(&mark);
        if alive
            .iter()
            .filter(|(_, _, a)| a.starts_with("sleep"))
            .count()
            == 2
        {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "never started: {alive:?}"
        );
    }
    let bash_pids: Vec<u32> = live_processes(&mark)
        .into_iter()
        .filter(|(_, _, args)| args.starts_with("/bin/bash -lc"))
        .map(|(pid, _, _)| pid)
        .collect();
    assert_eq!(bash_pids.len(), 2);
    drop(gather);
    for pid in bash_pids {
        assert_reaped(pid);
    }
    assert_eq!(survivors_after(&mark, Duration::from_secs(2)), vec![]);
}

/// Commands start on tokio's blocking pool; a grading dropped while its command is starting
/// (the blocking task still running) stops it once it has started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gradings_dropped_while_their_commands_start_leave_nothing() {
    let mark = marker();
    let mut seen_running = 0;
    for wait_ms in [0, 1, 2, 5, 10, 20, 50, 100, 250, 1000] {
        let mut gather = Gather::new();
        for _ in 0..20 {
            gather = gather.add(bash(&format!("sleep 30.{mark}")).grade(1.0));
        }
        let mut gather = Box::pin(gather);
        tokio::select! {
            _ = &mut gather => panic!("30 s commands finished in {wait_ms} ms"),
            () = tokio::time::sleep(Duration::from_millis(wait_ms)) => {}
        }
        seen_running += live_processes(&mark).len();
        drop(gather);
    }
    // Some were running when dropped, and others, surely, still starting.
    assert!(seen_running > 0, "no command had started");
    assert_eq!(survivors_after(&mark, Duration::from_secs(3)), vec![]);
}

/// The same when the runtime itself shuts down while commands start, waiting for its tasks
/// (dropped) or not (`shutdown_background`); the commands also leave their group.
#[test]
fn a_runtime_shut_down_while_commands_start_leaves_nothing() {
    let mark = marker();
    for background in [false, true] {
        for wait_ms in [0, 1, 2, 5, 10, 20, 50] {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            let mut gather = Gather::new();
            for _ in 0..12 {
                let command = format!("setsid sleep 30.{mark} & sleep 30.{mark}");
                gather = gather.add(bash(&command).grade(1.0));
            }
            runtime.spawn(gather);
            std::thread::sleep(Duration::from_millis(wait_ms));
            if background {
                runtime.shutdown_background();
            } else {
                drop(runtime);
            }
        }
    }
    assert_eq!(survivors_after(&mark, Duration::from_secs(5)), vec![]);
}
