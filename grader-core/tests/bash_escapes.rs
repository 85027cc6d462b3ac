//! Processes that leave the command's process group (`set -m`, `setsid`, `setsid -f`,
//! `setpgid`, a double fork) are still found and stopped when the grade ends, and the grade
//! does not wait for them.
#![cfg(all(target_os = "linux", feature = "bash"))]
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod bash_support;

use std::path::Path;
use std::time::{Duration, Instant};

use bash_support::{bash, child::Bounded as _, live_processes, marker};
use grader_core::{BashGrader, SubScore};

/// Shell code that waits until `sleep 1000.<mark>` runs, so that the command does not end
/// before its escape has happened.
fn until_sleeping(mark: &str) -> String {
    format!("until pgrep -f '^sleep 1000\\.{mark}' >/dev/null; do sleep 0.01; done")
}

/// Grades `grader`, then checks that nothing mentioning `mark` is alive the moment the grade
/// has returned, and that the grade took far less than the 1000 s its sleeps would.
async fn grade_leaves_nothing(grader: BashGrader, mark: &str) -> SubScore {
    let start = Instant::now();
    let sub = grader.grade(1.0).await.expect("the command runs");
    let elapsed = start.elapsed();
    let alive = live_processes(mark);
    for (pid, _, _) in &alive {
        // Do not leave them to the next test run.
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status_bounded();
    }
    assert_eq!(alive, vec![], "left running; info: {:?}", sub.info());
    assert!(elapsed < Duration::from_secs(20), "took {elapsed:?}");
    sub
}

#[tokio::test]
async fn a_job_control_background_job_is_stopped() {
    let mark = marker();
    let command = format!(
        "set -m; sleep 1000.{mark} >/dev/null 2>&1 & {}; exit 0",
        until_sleeping(&mark)
    );
    let sub = grade_leaves_nothing(bash(&command), &mark).await;
    assert_eq!(sub.value(), 1.0);
}

#[tokio::test]
async fn setsid_is_stopped_even_with_the_pipes_open() {
    let mark = marker();
    let command = format!(
        "setsid sleep 1000.{mark} & {}; echo done",
        until_sleeping(&mark)
    );
    let sub = grade_leaves_nothing(bash(&command), &mark).await;
    assert_eq!(sub.value(), 1.0);
    assert_eq!(sub.info().unwrap()["stdout"], "done\n");
}

#[tokio::test]
async fn setsid_fork_is_stopped() {
    let mark = marker();
    let command = format!(
        "setsid -f sleep 1000.{mark} >/dev/null 2>&1; {}; exit 0",
        until_sleeping(&mark)
    );
    grade_leaves_nothing(bash(&command), &mark).await;
}

#[tokio::test]
async fn a_double_fork_out_of_the_group_is_stopped() {
    let mark = marker();
    let command = format!(
        "(set -m; (sleep 1000.{mark} >/dev/null 2>&1 &) &); {}; exit 0",
        until_sleeping(&mark)
    );
    grade_leaves_nothing(bash(&command), &mark).await;
}

#[tokio::test]
async fn a_process_calling_setpgid_is_stopped() {
    if !Path::new("/usr/bin/perl").exists() {
        assert!(std::env::var_os("CI").is_none(), "perl is needed under CI");
        eprintln!("skipped: /usr/bin/perl is not on this machine");
        return;
    }
    let mark = marker();
    let command = format!(
        "/usr/bin/perl -e 'setpgrp(0, 0); exec @ARGV' sleep 1000.{mark} & {}; exit 0",
        until_sleeping(&mark)
    );
    grade_leaves_nothing(bash(&command), &mark).await;
}

#[tokio::test]
async fn an_escaped_process_ignoring_sigterm_gets_sigkill_after_the_grace() {
    let mark = marker();
    let command = format!(
        "setsid bash -c \"trap '' TERM; sleep 1000.{mark}; :\" >/dev/null 2>&1 & \
         {}",
        until_sleeping(&mark)
    );
    let grader = bash(&command).kill_grace(Duration::from_millis(300));
    grade_leaves_nothing(grader, &mark).await;
}

#[tokio::test]
async fn escapes_are_stopped_at_a_timeout_too() {
    let mark = marker();
    let command = format!("setsid sleep 1000.{mark} & set -m; sleep 1000.{mark} & wait");
    let sub = grade_leaves_nothing(bash(&command).timeout(Duration::from_millis(500)), &mark).await;
    assert_eq!(sub.info().unwrap()["timed_out"], true);
}

#[tokio::test]
async fn escapes_are_stopped_when_the_grading_future_is_dropped() {
    let mark = marker();
    let command = format!("setsid sleep 1000.{mark} & set -m; sleep 1000.{mark} & wait");
    let mut grade = Box::pin(bash(&command).grade(1.0));
    let start = Instant::now();
    while live_processes(&mark)
        .iter()
        .filter(|(_, _, args)| args.starts_with("sleep"))
        .count()
        < 2
    {
        tokio::select! {
            _ = &mut grade => panic!("the command finished; it should still be running"),
            () = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
        assert!(start.elapsed() < Duration::from_secs(20), "never started");
    }
    drop(grade);
    // SIGKILL is sent from the sweeper thread, asynchronously.
    assert_eq!(
        bash_support::survivors_after(&mark, Duration::from_secs(2)),
        vec![]
    );
}
