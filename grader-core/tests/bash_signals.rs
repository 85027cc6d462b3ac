//! The command starts with default signal dispositions even when this process ignores signals
//! (as under `nohup`, or as a background job of a script). The test runs this same test binary
//! again under a shell that ignores SIGINT, SIGQUIT and SIGHUP, and checks the commands it
//! grades from there.
#![cfg(all(target_os = "linux", feature = "bash"))]
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod bash_support;

use std::process::Command;

use bash_support::{assert_rerun_passed, bash, child::Bounded as _};

/// Set in the re-run test binary.
const CHILD_ENV: &str = "GRADER_BASH_SIGNALS_CHILD";

#[test]
fn commands_start_with_default_signal_dispositions_when_we_ignore_signals() {
    let exe = std::env::current_exe().expect("the test binary's path");
    let output = Command::new("/bin/bash")
        .args([
            "-c",
            r#"trap '' INT QUIT HUP; exec "$0" --exact graded_under_ignored_signals --nocapture"#,
        ])
        .arg(&exe)
        .env(CHILD_ENV, "1")
        .output_bounded();
    assert_rerun_passed(&output);
}

/// Runs only inside the binary started by the test above, where SIGINT, SIGQUIT and SIGHUP are
/// ignored: checks that they are, then that the graded commands see them at their defaults.
#[test]
fn graded_under_ignored_signals() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let ignored = status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .map(|m| u64::from_str_radix(m.trim(), 16).unwrap())
        .unwrap();
    assert_eq!(
        ignored & 0b111,
        0b111,
        "SIGHUP, SIGINT and SIGQUIT are ignored here"
    );

    for (command, code) in [("kill -INT $$", -2), ("kill -HUP $$", -1)] {
        let sub = bash(command).grade_blocking(1.0).expect("runs");
        assert_eq!(sub.value(), 0.0, "{command}: {:?}", sub.info());
        assert_eq!(sub.info().unwrap()["exit_code"], code, "{command}");
    }
    // Bash itself always ignores SIGQUIT, but what it runs in the foreground ignores nothing
    // (glibc's own signals 32 and 33 aside: its `posix_spawn` leaves them ignored).
    let sub = bash("grep SigIgn /proc/self/status")
        .grade_blocking(1.0)
        .expect("runs");
    let stdout = sub.info().unwrap()["stdout"].as_str().unwrap().to_owned();
    let mask = stdout.trim().strip_prefix("SigIgn:").map(str::trim);
    let mask = u64::from_str_radix(mask.expect("a SigIgn line"), 16).unwrap();
    assert_eq!(mask & !(1 << 31 | 1 << 32), 0, "{stdout}");
}
