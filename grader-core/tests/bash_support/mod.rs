//! Helpers shared by the `bash*` test files: graders that start quickly, unique markers, and
//! a look at which processes are alive.
#![allow(dead_code)] // each test file uses a different subset

/// Bounded waits on child processes, shared with the cross-crate tests (`tests/src/child.rs`).
#[path = "../../../tests/src/child.rs"]
pub mod child;

use child::Bounded as _;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use grader_core::BashGrader;

/// An empty directory to use as `HOME`, so that `bash -l` reads `/etc/profile` but not the
/// profile of whoever runs the tests (which can take seconds, e.g. `pyenv init`).
pub fn quiet_home() -> &'static PathBuf {
    static HOME: OnceLock<PathBuf> = OnceLock::new();
    HOME.get_or_init(|| {
        let dir = scratch_dir("home");
        std::fs::create_dir_all(&dir).expect("create a scratch HOME");
        dir
    })
}

/// A fresh path under the system's temporary directory (not created).
pub fn scratch_dir(what: &str) -> PathBuf {
    std::env::temp_dir().join(format!("grader-bash-test-{what}-{}", marker()))
}

/// A `BashGrader` of `command` with [`quiet_home`] as `HOME`.
pub fn bash(command: &str) -> BashGrader {
    BashGrader::new(command).env("HOME", quiet_home())
}

/// A string of digits unique to this call, to find a command's processes by their arguments
/// (`sleep 30.<marker>` sleeps 30 s).
pub fn marker() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{}{:09}{}",
        std::process::id(),
        nanos,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// `(pid, state, args)` of every process whose arguments contain `needle` and that is not a
/// zombie.
pub fn live_processes(needle: &str) -> Vec<(u32, String, String)> {
    let output = std::process::Command::new("ps")
        .args(["-eo", "pid=,stat=,args="])
        .output_bounded();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            let pid = parts.next()?.parse().ok()?;
            let stat = parts.next()?.to_owned();
            let args = parts.collect::<Vec<_>>().join(" ");
            (args.contains(needle) && !stat.starts_with('Z')).then_some((pid, stat, args))
        })
        .collect()
}

/// Waits up to `bound` for no live process to mention `needle`; returns those still alive.
pub fn survivors_after(needle: &str, bound: Duration) -> Vec<(u32, String, String)> {
    let start = Instant::now();
    loop {
        let alive = live_processes(needle);
        if alive.is_empty() || start.elapsed() >= bound {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Asserts that a re-run of this test binary (started by a test to change what the process
/// inherits: ignored signals, environment variables) ran its one inner test and passed.
pub fn assert_rerun_passed(output: &std::process::Output) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("1 passed"), "{stdout}");
}
