//! Escapes under load: beside long-running graders whose descendants the sweeper passes over,
//! gradings cancelled while commands start, a process hopping from pid to
//! pid, and commands forking tens of thousands of times while escapes are graded (a process
//! caught in the middle of `exec` reads an empty environment). Each test asserts that nothing
//! of a command outlives its grade.
#![cfg(all(target_os = "linux", feature = "bash"))]
#![allow(clippy::unwrap_used)]

mod bash_support;

use std::time::{Duration, Instant};

use bash_support::{bash, child::Bounded as _, live_processes, marker, survivors_after};
use grader_core::Gather;

fn kill_all(mark: &str) {
    for (pid, _, _) in live_processes(mark) {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status_bounded();
    }
}

/// Alive right after the grade returned (with a 50 ms slack for signals in flight).
fn leaked(mark: &str) -> Vec<(u32, String, String)> {
    let alive = survivors_after(mark, Duration::from_millis(50));
    kill_all(mark);
    alive
}

/// Many escaping graders beside long-running unrelated graders (so the "others" skip is used).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapes_beside_long_running_graders() {
    let escapes = [
        "setsid sleep 1000.{m} >/dev/null 2>&1 & sleep 0.2; exit 0",
        "set -m; sleep 1000.{m} >/dev/null 2>&1 & sleep 0.2; exit 0",
        "(set -m; (sleep 1000.{m} >/dev/null 2>&1 &) &); sleep 0.2; exit 0",
        "setsid -f sleep 1000.{m} >/dev/null 2>&1; sleep 0.2",
        "exec setsid sleep 1000.{m}",
        "exec setsid -f sleep 1000.{m}",
        "setsid bash -c 'sleep 1000.{m} & wait' >/dev/null 2>&1 & sleep 0.2; exit 0",
        "(setsid sh -c 'sleep 1000.{m}' >/dev/null 2>&1 &); sleep 0.1; exit 3",
    ];
    let other = marker();
    let mut failures = Vec::new();
    for round in 0..3 {
        let mut handles = Vec::new();
        let mut marks = Vec::new();
        for (i, template) in escapes.iter().enumerate() {
            let mark = marker();
            let command = template.replace("{m}", &mark);
            let timeout = Duration::from_millis(if i % 2 == 0 { 150 } else { 5000 });
            marks.push((mark.clone(), command.clone()));
            let m2 = mark.clone();
            handles.push(tokio::spawn(async move {
                let sub = bash(&command).timeout(timeout).grade(1.0).await;
                let alive = live_processes(&m2);
                (sub, alive)
            }));
        }
        // Long-running others, with children that fork all the time (pids keep moving).
        let mut others = Vec::new();
        for _ in 0..4 {
            let o = other.clone();
            others.push(tokio::spawn(async move {
                bash(&format!("for i in $(seq 200); do (sleep 0.0{o} 2>/dev/null; true) ; sleep 0.01; done; sleep 5.{o}"))
                    .timeout(Duration::from_secs(4))
                    .grade(1.0)
                    .await
            }));
        }
        let mut results = Vec::new();
        for h in handles {
            results.push(h.await.unwrap());
        }
        for ((mark, command), (_, alive)) in marks.iter().zip(results) {
            if !alive.is_empty() {
                failures.push(format!("round {round}: `{command}` left {alive:?}"));
            }
            kill_all(mark);
        }
        for o in others {
            let _ = o.await;
        }
    }
    kill_all(&other);
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Gradings cancelled by a timeout at many moments during their start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_at_random_moments_during_start() {
    let mark = marker();
    for i in 0..40u64 {
        let mut gather = Gather::new();
        for _ in 0..8 {
            gather = gather.add(
                bash(&format!(
                    "setsid sleep 1000.{mark} & set -m; sleep 1000.{mark} & sleep 1000.{mark}"
                ))
                .grade(1.0),
            );
        }
        let wait = Duration::from_micros((i * 397) % 15_000);
        let _ = tokio::time::timeout(wait, gather).await;
    }
    let alive = survivors_after(&mark, Duration::from_secs(3));
    kill_all(&mark);
    assert_eq!(alive, vec![]);
}

/// A process that hops from pid to pid (forks and exits) for a while, ignoring SIGTERM, then
/// settles into `sleep`: rounds stay unsettled and may not see it for 200 ms.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hopping_process_is_not_given_up_after_200ms() {
    let mut failures = Vec::new();
    for hops in [100, 300, 600, 1000] {
        let mark = marker();
        let command = format!(
            "setsid bash -c 'trap \"\" TERM; hop() {{ local n=$1; if [ $n -le 0 ]; then exec sleep 1000.{mark}; fi; ( hop $((n-1)) ) & exit; }}; hop {hops}' >/dev/null 2>&1 & sleep 0.05; exit 0"
        );
        let start = Instant::now();
        let sub = bash(&command).grade(1.0).await.unwrap();
        let took = start.elapsed();
        let alive = leaked(&mark);
        if !alive.is_empty() {
            failures.push(format!(
                "hops {hops}: after {took:?} left {alive:?}; {:?}",
                sub.info()
            ));
        }
    }
    for hops in [200, 500, 1000, 2000] {
        let mark = marker();
        let command = format!(
            "setsid perl -e '$SIG{{TERM}}=\"IGNORE\"; for (1..{hops}) {{ exit 0 if fork }} exec \"sleep\", \"1000.{mark}\"' >/dev/null 2>&1 & sleep 0.05; exit 0"
        );
        let start = Instant::now();
        let sub = bash(&command).grade(1.0).await.unwrap();
        let took = start.elapsed();
        let alive = leaked(&mark);
        eprintln!("perl hops {hops}: took {took:?}, left {alive:?}");
        if !alive.is_empty() {
            failures.push(format!(
                "perl hops {hops}: after {took:?} left {alive:?}; {:?}",
                sub.info()
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Grades 4 commands at a time, each made by `command` from its index and marker, again and
/// again for 25 s while another command forks `/bin/true` as fast as it can (pid reuse
/// pressure, memo resets, processes caught in the middle of `exec`). Returns how many rounds
/// ran and a line for each command that left something running.
async fn graded_under_churn(command: fn(usize, &str) -> String) -> (usize, Vec<String>) {
    let churn = marker();
    let churner = tokio::spawn({
        let c = churn.clone();
        async move {
            bash(&format!(
                "for i in $(seq 60000); do /bin/true; done; sleep 0.{c}"
            ))
            .timeout(Duration::from_secs(70))
            .grade(1.0)
            .await
        }
    });
    let mut failures = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(25);
    let mut n = 0;
    while Instant::now() < deadline && !churner.is_finished() {
        n += 1;
        let marks: Vec<String> = (0..4).map(|_| marker()).collect();
        let mut gather = Gather::new();
        for (k, mark) in marks.iter().enumerate() {
            gather = gather.add(
                bash(&command(k, mark))
                    .timeout(Duration::from_millis(300))
                    .grade(1.0),
            );
        }
        let _ = gather.await;
        for (k, mark) in marks.iter().enumerate() {
            let alive = survivors_after(mark, Duration::from_millis(50));
            if !alive.is_empty() {
                let detail: Vec<String> = alive
                    .iter()
                    .map(|(pid, _, _)| {
                        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                            .unwrap_or_default();
                        let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
                        let tagged = env
                            .split(|&b| b == 0)
                            .any(|e| e.starts_with(b"GRADER_BASH_"));
                        format!("stat: {stat:?} tagged: {tagged}")
                    })
                    .collect();
                let later = survivors_after(mark, Duration::from_secs(2));
                failures.push(format!(
                    "round {n}, command {k}: left {alive:?} {detail:?}; 2 s later {later:?}"
                ));
                kill_all(mark);
            }
        }
    }
    // Dropping the churner's grading stops it.
    churner.abort();
    let _ = survivors_after(&churn, Duration::from_secs(3));
    kill_all(&churn);
    (n, failures)
}

/// The escapes, graded while pids are handed out all the time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapes_under_pid_pressure() {
    let (n, failures) = graded_under_churn(|k, mark| match k {
        0 => format!("setsid sleep 1000.{mark} & sleep 0.05; exit 0"),
        1 => format!("(set -m; (sleep 1000.{mark} >/dev/null 2>&1 &) &); sleep 0.05"),
        2 => format!("exec setsid sleep 1000.{mark}"),
        _ => format!("setsid -f sleep 1000.{mark}; for i in $(seq 30); do /bin/true; done"),
    })
    .await;
    assert!(failures.is_empty(), "{n} rounds: {failures:#?}");
}

/// `exec setsid sleep` (bash becomes setsid, which forks because bash leads its group, and the
/// child runs `sleep`): the child is often caught in the middle of `exec`, when its
/// environment reads empty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_setsid_under_fork_churn() {
    let (n, failures) =
        graded_under_churn(|_, mark| format!("exec setsid sleep 1000.{mark}")).await;
    assert!(failures.is_empty(), "{n} rounds: {failures:#?}");
}
