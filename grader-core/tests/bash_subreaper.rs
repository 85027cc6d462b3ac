//! The grading process is a child subreaper (orphans of commands become its children):
//! escapes are still stopped. Its own test binary, since the setting is process-wide.
#![cfg(all(target_os = "linux", feature = "bash"))]
#![allow(clippy::unwrap_used)]

mod bash_support;

use std::time::Duration;

use bash_support::{bash, child::Bounded as _, live_processes, marker, survivors_after};
use grader_core::Gather;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapes_are_stopped_when_this_process_is_a_subreaper() {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid())).unwrap();
    let long = marker();
    let mut failures = Vec::new();
    for round in 0..5 {
        // Others running meanwhile, whose orphans are adopted by this process too.
        let mut others = Vec::new();
        for _ in 0..3 {
            let l = long.clone();
            others.push(tokio::spawn(async move {
                bash(&format!(
                    "(sleep 2.{l} &) ; (setsid sleep 2.{l} &); sleep 1.5"
                ))
                .timeout(Duration::from_secs(3))
                .grade(1.0)
                .await
            }));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mark = marker();
        let mut gather = Gather::new();
        for cmd in [
            format!("(sleep 1000.{mark} &); sleep 0.1; exit 0"),
            format!("setsid sleep 1000.{mark} & sleep 0.1; exit 0"),
            format!("(set -m; (sleep 1000.{mark} >/dev/null 2>&1 &) &); sleep 0.1"),
            format!("exec setsid sleep 1000.{mark}"),
            format!("(exec -c sleep 1000.{mark} &); sleep 0.1"),
        ] {
            gather = gather.add(bash(&cmd).timeout(Duration::from_millis(300)).grade(1.0));
        }
        let _ = gather.await;
        let alive = survivors_after(&mark, Duration::from_millis(50));
        if !alive.is_empty() {
            failures.push(format!("round {round}: {alive:?}"));
        }
        for (pid, _, _) in live_processes(&mark) {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status_bounded();
        }
        for o in others {
            let _ = o.await;
        }
    }
    let _ = survivors_after(&long, Duration::from_secs(3));
    assert!(failures.is_empty(), "{failures:#?}");
}
