//! Lines per second an evaluation writes to object storage against a local file, in the same
//! run: the same `Evaluation` (50 000 samples, one cheap subscore each, so that writing is
//! most of the cost) into a fresh local file, and into a fresh prefix of a real S3-compatible
//! server on 127.0.0.1 (moto, installed on first use like the tests'), with the default
//! chunking (a chunk every 1 000 lines) and with chunks of 100 lines.
//!
//! `object_store` reads its endpoint and credentials from the environment only, so the
//! benchmark starts the server, then runs itself again with `AWS_ENDPOINT` and dummy
//! credentials set, and both measurements happen in that one process.
//!
//! Run with `cargo bench -p grader-tests --bench store_write`.
#![allow(missing_docs)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use grader_core::{Grade, SubScore};
use grader_eval::Evaluation;
use grader_eval::store::StoreOptions;
use grader_tests::s3_server::S3Server;

const SAMPLES: usize = 50_000;
const BUCKET: &str = "bench";
const TMP: &str = env!("CARGO_TARGET_TMPDIR");

static RUNS: AtomicUsize = AtomicUsize::new(0);

/// One run of `SAMPLES` cheap gradings into `output`; the time it took.
fn run(runtime: &tokio::runtime::Runtime, output: &str, options: StoreOptions) -> Duration {
    let samples = (0..SAMPLES).map(|i| (format!("s{i}"), i));
    let started = Instant::now();
    let report = runtime
        .block_on(
            Evaluation::new(output)
                .concurrency(64)
                .handle_interrupts(false)
                .progress(false)
                .store_options(options)
                .run(samples, |sample, _epoch| async move {
                    let value = (sample.1 % 5) as f64 / 4.0;
                    let exact = SubScore::new("exact", value).map_err(|e| e.to_string())?;
                    Grade::from_subscores([exact]).map_err(|e| e.to_string())
                }),
        )
        .expect("the run");
    let elapsed = started.elapsed();
    assert_eq!(report.written, SAMPLES);
    elapsed
}

/// A fresh output each iteration, so that no run resumes another.
fn fresh(kind: &str) -> String {
    let n = RUNS.fetch_add(1, Ordering::Relaxed);
    match kind {
        "file" => {
            let dir = PathBuf::from(TMP).join("store-bench");
            std::fs::create_dir_all(&dir).expect("the bench folder");
            let path = dir.join(format!("run-{}-{n}.jsonl", std::process::id()));
            let _ = std::fs::remove_file(&path);
            path.to_str().expect("a UTF-8 path").to_owned()
        }
        _ => format!("s3://{BUCKET}/run-{}-{n}", std::process::id()),
    }
}

fn store_write(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut group = c.benchmark_group("store_write");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8))
        .throughput(Throughput::Elements(SAMPLES as u64));
    let cases = [
        ("local_file", "file", StoreOptions::default()),
        ("s3_chunks_of_1000", "s3", StoreOptions::default()),
        (
            "s3_chunks_of_100",
            "s3",
            StoreOptions::default().upload_every(100, Duration::from_secs(10)),
        ),
    ];
    for (name, kind, options) in cases {
        group.bench_function(name, |b| {
            b.iter_custom(|iterations| {
                (0..iterations)
                    .map(|_| {
                        let output = fresh(kind);
                        let took = run(&runtime, &output, options);
                        if kind == "file" {
                            let _ = std::fs::remove_file(&output);
                        }
                        took
                    })
                    .sum()
            });
        });
    }
    group.finish();
}

criterion_group!(benches, store_write);

fn main() {
    if std::env::var_os("AWS_ENDPOINT").is_some() {
        benches();
        Criterion::default().configure_from_args().final_summary();
        return;
    }
    // Start the server, then measure in a child process pointed at it.
    let Some(server) = S3Server::start(TMP, false) else {
        eprintln!("store_write: python3 is missing, so there is no S3 server to measure");
        return;
    };
    server.create_bucket(BUCKET);
    let status = std::process::Command::new(std::env::current_exe().expect("this benchmark"))
        .args(std::env::args_os().skip(1))
        .envs(S3Server::env(server.port()))
        .status()
        .expect("run the measuring process");
    drop(server);
    std::process::exit(status.code().unwrap_or(1));
}
