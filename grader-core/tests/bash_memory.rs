//! A command printing a gigabyte does not grow this process's memory by a gigabyte: the peak
//! resident set stays near the output budget. A file of its own, so that no other test's
//! allocations count.
#![cfg(all(target_os = "linux", feature = "bash"))]
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod bash_support;

use std::time::Duration;

use bash_support::bash;

use grader_core::bash::DEFAULT_OUTPUT_LIMIT;

/// This process's peak resident set size in bytes (`VmHWM`).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("procfs");
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/self/status");
    kib * 1024
}

#[tokio::test]
async fn printing_a_gigabyte_keeps_memory_within_the_budget() {
    const PRINTED: u64 = 1_000_000_000;
    let before = peak_rss();
    let sub = bash(&format!("head -c {PRINTED} /dev/zero"))
        .timeout(Duration::from_secs(300))
        .grade(1.0)
        .await
        .expect("runs");
    let grown = peak_rss().saturating_sub(before);
    let info = sub.info().unwrap();
    assert_eq!(sub.value(), 1.0);
    assert_eq!(
        info["stdout_dropped_bytes"],
        PRINTED - DEFAULT_OUTPUT_LIMIT as u64
    );
    // The budget is 4 MiB for stdout; a few MiB more for buffers and the decoded text.
    assert!(grown < 32 << 20, "peak RSS grew by {} MiB", grown >> 20);
}
