//! `grader summary` and `grader validate` on large JSON Lines files, beside `jq -c .` and a plain
//! Python loop (`json.loads` per line, running sums for the mean and standard error of the
//! rewards: the least a summary computes) on the same file in the same run: throughput (MB/s of
//! file) and peak resident memory, at two sizes to show whether memory grows with the file.
//!
//! ```sh
//! cargo bench -p grader-cli --bench large_file            # 256 MB and 1 GB
//! cargo bench -p grader-cli --bench large_file -- 64 256  # other sizes, in MB
//! ```
//!
//! With `GRADER_BASELINE=/path/to/another/grader` set, that binary's `summary` runs on the same
//! file too, for a before-and-after comparison of two builds in one run.
//!
//! The files are written under `target/` as the evaluation runner writes its lines (one result
//! per line with three subscores, parameters and a command's output in info, about 1.2 KB a
//! line) and deleted afterwards. Each command is run once per size after one untimed warm-up
//! read of the file (so all read it from the page cache); peak RSS is GNU time's `%M`.

use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use grader_core::{Grade, Info, SubScore};
use grader_eval::Line;
use serde_json::json;

fn info(value: serde_json::Value) -> Info {
    match value {
        serde_json::Value::Object(map) => map,
        _ => Info::new(),
    }
}

/// Writes about `megabytes` MB of evaluation lines to `path`; returns the line count.
fn write_file(path: &Path, megabytes: u64) -> u64 {
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).expect("create"));
    let target = megabytes * 1_000_000;
    let (mut written, mut lines) = (0u64, 0u64);
    let output = "test_checkout.py::test_case PASSED\n".repeat(20);
    while written < target {
        let passed = lines % 3 != 0;
        let tests = SubScore::new("tests", if passed { 1.0 } else { 0.0 })
            .and_then(|s| s.with_weight(0.7))
            .expect("valid")
            .with_info(info(json!({
                "_parameters": {"command": "pytest -q", "timeout": 120},
                "exit_code": i32::from(!passed),
                "stdout": output,
                "stderr": "",
            })));
        let style = SubScore::new("style", (lines % 10) as f64 / 10.0)
            .and_then(|s| s.with_weight(0.3))
            .expect("valid");
        let penalty = SubScore::new("deleted tests", 0.0)
            .and_then(|s| s.with_weight(-0.5))
            .expect("valid");
        let result = Grade::from_subscores([tests, style, penalty]).expect("combinable");
        let line = Line::graded(
            format!("sample-{}", lines / 2),
            (lines % 2 + 1) as u32,
            result,
            0.5,
        );
        let bytes = line.to_json_line().expect("serializable");
        out.write_all(&bytes).expect("write");
        written += bytes.len() as u64;
        lines += 1;
    }
    out.flush().expect("flush");
    lines
}

/// The plain Python loop: each line parsed whole with `json.loads`, the rewards' count, sum and
/// sum of squares kept, the mean and standard error printed.
const PYTHON_LOOP: &str = r#"
import json, math, sys
n = total = squares = 0.0
with open(sys.argv[1], "rb") as lines:
    for line in lines:
        reward = json.loads(line)["result"]["reward"]
        n += 1; total += reward; squares += reward * reward
mean = total / n
print(mean, math.sqrt(max(squares / n - mean * mean, 0.0) * n / (n - 1) / n))
"#;

/// Runs `program args` under GNU time; returns (seconds, peak RSS in KiB).
fn measure(program: &str, args: &[&str], stdout_to_null: bool) -> Option<(f64, u64)> {
    let report = tempfile_path("time");
    let started = Instant::now();
    let status = Command::new("/usr/bin/time")
        .args(["-f", "%M", "-o"])
        .arg(&report)
        .arg(program)
        .args(args)
        .stdout(if stdout_to_null {
            Stdio::null()
        } else {
            Stdio::inherit()
        })
        .stderr(Stdio::null())
        .status()
        .ok()?;
    let seconds = started.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&report).ok()?;
    let _ = std::fs::remove_file(&report);
    let rss = text.lines().last()?.trim().parse().ok()?;
    // validate exits 0 on this valid file; anything else is a failed run.
    status.success().then_some((seconds, rss))
}

fn tempfile_path(name: &str) -> PathBuf {
    target_dir().join(format!("bench-{name}-{}", std::process::id()))
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

fn main() {
    let sizes: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|arg| arg.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![256, 1024]
    } else {
        sizes
    };
    let grader = env!("CARGO_BIN_EXE_grader");
    if !Path::new("/usr/bin/time").exists() {
        eprintln!("GNU time (/usr/bin/time) is needed to measure peak memory");
        std::process::exit(2);
    }
    let jq = Command::new("jq").arg("--version").output().is_ok();
    let python = Command::new("python3").arg("--version").output().is_ok();
    println!("| file | command | seconds | MB/s | peak RSS | ÷ jq time | ÷ Python loop time |");
    println!("|---|---|---|---|---|---|---|");
    for megabytes in sizes {
        let path = tempfile_path(&format!("{megabytes}mb.jsonl"));
        let lines = write_file(&path, megabytes);
        let bytes = std::fs::metadata(&path).expect("written").len();
        let file = path.to_str().expect("a UTF-8 path").to_owned();
        // Warm the page cache so every command reads from memory.
        let _ = Command::new("cat")
            .arg(&file)
            .stdout(Stdio::null())
            .status();
        let jq_time = if jq {
            measure(
                "sh",
                &["-c", &format!("jq -c . '{file}' > /dev/null")],
                true,
            )
        } else {
            None
        };
        let python_time = if python {
            measure("python3", &["-c", PYTHON_LOOP, &file], true)
        } else {
            None
        };
        let baseline = std::env::var("GRADER_BASELINE").ok().map(|other| {
            (
                "grader summary (GRADER_BASELINE)",
                measure(&other, &["summary", &file], true),
            )
        });
        let runs = [
            ("jq -c . > /dev/null", jq_time),
            ("Python loop (mean, stderr)", python_time),
            ("grader summary", measure(grader, &["summary", &file], true)),
            (
                "grader validate",
                measure(grader, &["validate", &file], true),
            ),
        ];
        for (name, result) in runs.into_iter().chain(baseline) {
            let label = format!("{:.0} MB, {lines} lines", bytes as f64 / 1e6);
            match result {
                Some((seconds, rss)) => {
                    let ratio = |baseline: Option<(f64, u64)>| {
                        baseline
                            .map(|(base, _)| format!("{:.2}", seconds / base))
                            .unwrap_or_else(|| "n/a".to_owned())
                    };
                    let (to_jq, to_python) = (ratio(jq_time), ratio(python_time));
                    println!(
                        "| {label} | {name} | {seconds:.2} | {:.0} | {:.1} MiB | {to_jq} | {to_python} |",
                        bytes as f64 / 1e6 / seconds,
                        rss as f64 / 1024.0
                    );
                }
                None => println!("| {label} | {name} | failed or unavailable | | | | |"),
            }
        }
        std::fs::remove_file(&path).expect("remove the file");
    }
}
