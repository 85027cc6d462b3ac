//! The judge under load: 1 000 criteria against a scripted server (its own process) that
//! answers each call after 20 ms, at most 100 calls at once.
//!
//! - Wall time, measured with criterion, against the floor of 10 rounds × 20 ms = 200 ms.
//! - CPU time per judged criterion and peak memory: `judge-load` (this crate's binary) and the
//!   reference's `LLMJudgeGrader` (the test venv's `hud==0.6.21`) each judge the same 1 000
//!   criteria against the same server in the same run, each measuring its own process around
//!   the judging only (after a warm-up). The reference has no concurrency limit: all 1 000
//!   calls go out at once.
//!
//! Run with `cargo bench -p grader-tests --bench judge_load`.
#![allow(missing_docs)]

use std::future::IntoFuture as _;
use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use grader_core::judge::{JudgeConfig, LlmJudge};
use grader_tests::python::{hud_python, run_script};
use serde_json::Value;

const CRITERIA: usize = 1000;
const LIMIT: usize = 100;
const DELAY_MS: u64 = 20;

/// The reference's side: the same judging, measured the same way.
const REFERENCE_SCRIPT: &str = r#"
import asyncio, json, os, resource, sys, time
job = json.load(sys.stdin)
os.environ["HUD_GATEWAY_URL"] = job["base_url"]
os.environ["HUD_API_KEY"] = "bench"
from hud.graders import LLMJudgeGrader

criteria = [f"criterion {i}" for i in range(job["criteria"])]

def judge(n):
    return asyncio.run(LLMJudgeGrader.grade(
        weight=1.0, answer="The answer under test.", criteria=criteria[:n],
        question="The question?"))

def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime

judge(10)
wall, used = [], []
for _ in range(job["rounds"]):
    started, before = time.perf_counter(), cpu()
    sub = judge(job["criteria"])
    used.append(cpu() - before)
    wall.append(time.perf_counter() - started)
    assert sub.value == 1.0, sub
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"wall_s": wall, "cpu_s": used, "peak_rss_kib": peak}))
"#;

/// The scripted server in its own process, so its work counts for neither side.
struct Server {
    child: Child,
    base_url: String,
}

impl Server {
    fn start() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_judge-server"))
            .arg(DELAY_MS.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start judge-server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .expect("read the server's address");
        Server {
            child,
            base_url: line.trim().to_owned(),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.child.stdin.take()); // closing its stdin stops it
        let _ = self.child.wait();
    }
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

fn summary(label: &str, report: &Value) -> (f64, f64) {
    let numbers = |key: &str| -> Vec<f64> {
        report[key]
            .as_array()
            .map(|items| items.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default()
    };
    let (wall, cpu) = (median(&numbers("wall_s")), median(&numbers("cpu_s")));
    #[allow(clippy::cast_precision_loss)]
    let per_criterion_us = cpu / CRITERIA as f64 * 1e6;
    println!(
        "{label:<28} wall {:>7.1} ms   CPU {:>7.1} ms   CPU per criterion {:>7.1} µs   peak RSS {:>7.1} MiB",
        wall * 1e3,
        cpu * 1e3,
        per_criterion_us,
        report["peak_rss_kib"].as_f64().unwrap_or(0.0) / 1024.0
    );
    (wall, per_criterion_us)
}

fn judge_load(c: &mut Criterion) {
    let server = Server::start();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let config = JudgeConfig::new()
        .base_url(&server.base_url)
        .api_key("bench")
        .max_concurrent_calls(LIMIT);
    let criteria: Vec<String> = (0..CRITERIA).map(|i| format!("criterion {i}")).collect();

    let mut group = c.benchmark_group("judge_load");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    group.bench_function("1000_criteria_20ms_limit_100", |b| {
        b.to_async(&runtime).iter(|| {
            LlmJudge::new("The answer under test.", criteria.clone())
                .question("The question?")
                .config(config.clone())
                .grade(1.0)
                .into_future()
        });
    });
    group.finish();

    // CPU and memory: both sides as separate processes against the same server.
    let output = Command::new(env!("CARGO_BIN_EXE_judge-load"))
        .args([
            server.base_url.as_str(),
            &CRITERIA.to_string(),
            &LIMIT.to_string(),
            "5",
        ])
        .output()
        .expect("run judge-load");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let ours: Value = serde_json::from_slice(&output.stdout).expect("judge-load's JSON");
    println!(
        "\n1 000 criteria, server answers after {DELAY_MS} ms, floor 200 ms (10 rounds of 100):"
    );
    let (_, our_cpu) = summary("grader (limit 100)", &ours);
    let Some(python) = hud_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let job = serde_json::json!({"base_url": server.base_url, "criteria": CRITERIA, "rounds": 3});
    let theirs: Value =
        serde_json::from_str(run_script(&python, REFERENCE_SCRIPT, &job.to_string()).trim())
            .expect("the reference's JSON");
    let (_, their_cpu) = summary("reference (no limit)", &theirs);
    println!(
        "CPU per criterion: the reference uses {:.1}× ours",
        their_cpu / our_cpu
    );
}

criterion_group!(benches, judge_load);
criterion_main!(benches);
