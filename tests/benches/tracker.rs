//! The change tracker on a large root, beside the reference's own: 50 000 files in 500
//! directories (about 1 KB of text each), of which the "agent" then touches 10 000 (edits
//! 6 000, adds 2 000, deletes 2 000). Measured: the baseline scan, and the scan and diff that
//! list the changes, for grader-env's `Tracker` and for hud 0.6.21's
//! `hud.environment.file_tracker.FileTracker` (in its own process, timing itself), with the
//! memory each held at its peak (this process's `VmHWM` growth; Python's `ru_maxrss`).
//! Printed to stderr as ratios; criterion times the Rust side's `changes()`.
#![allow(missing_docs, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use grader_env::workspace::Tracker;
use grader_tests::python::hud_python;

const DIRS: usize = 500;
const PER_DIR: usize = 100;

fn body(k: usize, version: usize) -> String {
    let mut text = String::new();
    for line in 0..30 {
        text.push_str(&format!("line {line} of file {k}, version {version}\n"));
    }
    text
}

fn file(root: &Path, k: usize) -> PathBuf {
    root.join(format!("d{:03}", k / PER_DIR))
        .join(format!("f{k:05}.txt"))
}

/// Lays out the 50 000 files (or restores them to the baseline).
fn lay_out(root: &Path) {
    let _ = std::fs::remove_dir_all(root);
    for d in 0..DIRS {
        std::fs::create_dir_all(root.join(format!("d{d:03}"))).unwrap();
    }
    for k in 0..DIRS * PER_DIR {
        std::fs::write(file(root, k), body(k, 0)).unwrap();
    }
}

/// The agent's 10 000 changes.
fn touch(root: &Path) {
    for k in (0..DIRS * PER_DIR).step_by(5) {
        match k % 25 {
            0 | 5 | 10 => std::fs::write(file(root, k), body(k, 1)).unwrap(),
            15 => std::fs::remove_file(file(root, k)).unwrap(),
            _ => std::fs::write(
                root.join(format!("d{:03}/new{k:05}.txt", k / PER_DIR)),
                body(k, 2),
            )
            .unwrap(),
        }
    }
}

/// This process's peak resident memory so far, in KiB.
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

const SCRIPT: &str = r#"
import json, resource, sys, time
from hud.environment.file_tracker import FileTracker
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = FileTracker(sys.argv[1])
start = time.perf_counter(); t.take_baseline(); baseline = time.perf_counter() - start
print("ready", flush=True); sys.stdin.readline()
start = time.perf_counter(); d = t.take_snapshot(); diff = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"baseline": baseline, "diff": diff, "changed": d.files_changed, "peak_kib": peak - before}), flush=True)
"#;

fn tracker(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-tracker");
    lay_out(&root);

    // Rust: the baseline, then the changes, with the peak memory they added.
    let peak_before = peak_kib();
    let start = Instant::now();
    let tracker = Tracker::start(&root).unwrap();
    let baseline = start.elapsed();
    // The reference takes its baseline of the same tree.
    let python = hud_python(env!("CARGO_TARGET_TMPDIR"));
    let mut reference = python.as_ref().map(|python| {
        use std::io::BufRead as _;
        let mut child = Command::new(python)
            .args(["-c", SCRIPT])
            .arg(&root)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        (child, out)
    });
    touch(&root);
    let start = Instant::now();
    let changes = tracker.changes();
    let diff = start.elapsed();
    let peak = peak_kib() - peak_before;
    assert_eq!(changes.files_changed, 10_000);
    eprintln!(
        "grader-env Tracker: baseline {baseline:?}, changes {diff:?}, peak +{peak} KiB (10 000 of 50 000 files)"
    );
    if let Some((mut child, mut out)) = reference.take() {
        use std::io::{BufRead as _, Write as _};
        writeln!(child.stdin.as_mut().unwrap()).unwrap();
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let _ = child.wait();
        let theirs: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(theirs["changed"], 10_000);
        let (their_base, their_diff) = (
            theirs["baseline"].as_f64().unwrap(),
            theirs["diff"].as_f64().unwrap(),
        );
        eprintln!(
            "hud FileTracker: baseline {:.3} s, diff {:.3} s, peak +{} KiB; ratios (hud / ours): baseline {:.1}x, changes {:.1}x",
            their_base,
            their_diff,
            theirs["peak_kib"],
            their_base / baseline.as_secs_f64(),
            their_diff / diff.as_secs_f64(),
        );
    }

    let mut group = c.benchmark_group("tracker");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("changes_10000_of_50000", |b| b.iter(|| tracker.changes()));
    group.finish();
    let _ = std::fs::remove_dir_all(&root);
}

criterion_group!(benches, tracker);
criterion_main!(benches);
