//! The evaluation runner's own cost per sample: 1 000 samples graded by a cheap grading
//! function (a reward and one subscore), four ways, in the same run:
//!
//! - `loop`: the grading function called in a plain loop, results dropped (the baseline);
//! - `loop+jsonl`: the same loop writing each result as a JSONL line to a file, by hand, one
//!   `write` per line;
//! - `loop+jsonl-buffered`: the same through a `BufWriter` flushed once at the end, the cheapest
//!   way to write the same lines (and one that loses every unflushed line in a crash, where the
//!   runner loses none it has counted);
//! - `runner`: an `Evaluation` (concurrency 16) into a fresh file;
//! - `runner/4-text-graders`: the same with four text graders per sample, to set the runner's
//!   cost beside a realistic grading, with its own `loop/…` and `loop+jsonl-buffered/…`.
//!
//! And, in group `eval-threads`, 100 000 samples × 4 text graders through an `Evaluation`
//! (concurrency 64) on three runtimes: `current-thread` (grading and writing share one
//! thread: one core), `workers-1` (one worker grades and appends the lines; the awaiting
//! thread makes the gradings and counts the lines) and `workers-2` (two workers do); and the
//! two multi-threaded ones again at the default concurrency of 16 and at 1 024. `workers-2`
//! against `workers-1` is what the second core buys.
#![allow(missing_docs)]

use std::hint::black_box;
use std::io::Write as _;

use criterion::{Criterion, criterion_group, criterion_main};
use grader_core::text::{ContainsAny, ExactMatch, F1Score, NumericMatch};
use grader_core::{CombineError, EvaluationResult, Grade, SubScore};
use grader_eval::{Evaluation, Line};

const SAMPLES: usize = 1000;

fn cheap(i: usize) -> Result<EvaluationResult, CombineError> {
    let value = (i % 4) as f64 / 4.0;
    let sub = SubScore::new("check", value).map_err(|_| CombineError::Empty {
        what: "bench".to_owned(),
    })?;
    Grade::from_subscores([sub])
}

fn text(i: usize) -> Result<EvaluationResult, String> {
    let number = (i * 13 % 97) as f64;
    let reference = format!("There are {number} marbles in the jar");
    let answer = if i.is_multiple_of(2) {
        reference.clone()
    } else {
        format!("about {} marbles", number + 1.0)
    };
    let answer = answer.as_str();
    let subscores = [
        ExactMatch {
            answer,
            expected: &reference,
            normalize_text: true,
        }
        .grade(0.4)
        .now(),
        NumericMatch {
            answer,
            expected: number,
            tolerance: 0.0,
        }
        .grade(0.3)
        .now(),
        ContainsAny {
            answer,
            substrings: &["marble"],
            case_sensitive: false,
        }
        .grade(0.1)
        .now(),
        F1Score {
            answer,
            reference: &reference,
        }
        .grade(0.2)
        .now(),
    ];
    let subscores: Result<Vec<_>, _> = subscores.into_iter().collect();
    Grade::from_subscores(subscores.map_err(|e| e.to_string())?).map_err(|e| e.to_string())
}

/// Grades `SAMPLES` samples with `grade` and writes their lines, as the runner writes them,
/// through one buffer flushed at the end.
fn write_buffered(
    path: &std::path::Path,
    grade: impl Fn(usize) -> Result<EvaluationResult, String>,
) {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    for i in 0..SAMPLES {
        let result = grade(black_box(i)).expect("a result");
        let line = Line::graded(i.to_string(), 1, result, 0.0);
        file.write_all(&line.to_json_line().expect("json"))
            .expect("write");
    }
    file.flush().expect("flush");
}

fn runner(c: &mut Criterion) {
    let folder = std::env::temp_dir().join(format!("grader-eval-bench-{}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("a scratch folder");
    let path = folder.join("results.jsonl");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut group = c.benchmark_group("eval");
    group.throughput(criterion::Throughput::Elements(SAMPLES as u64));

    group.bench_function("loop", |b| {
        b.iter(|| {
            for i in 0..SAMPLES {
                black_box(cheap(black_box(i)).ok());
            }
        });
    });
    group.bench_function("loop+jsonl", |b| {
        b.iter(|| {
            let mut file = std::fs::File::create(&path).expect("create");
            for i in 0..SAMPLES {
                let result = cheap(black_box(i)).expect("a result");
                let line = Line::graded(i.to_string(), 1, result, 0.0);
                file.write_all(&line.to_json_line().expect("json"))
                    .expect("write");
            }
        });
    });
    group.bench_function("loop+jsonl-buffered", |b| {
        b.iter(|| write_buffered(&path, |i| cheap(i).map_err(|e| e.to_string())));
    });
    group.bench_function("runner", |b| {
        b.iter(|| {
            let _ = std::fs::remove_file(&path);
            runtime
                .block_on(
                    Evaluation::new(&path)
                        .handle_interrupts(false)
                        .progress(false)
                        .run((0..SAMPLES).map(|i| (i, i)), |s, _| {
                            std::future::ready(cheap(s.1))
                        }),
                )
                .expect("a run")
        });
    });
    group.bench_function("loop/4-text-graders", |b| {
        b.iter(|| {
            for i in 0..SAMPLES {
                black_box(text(black_box(i)).ok());
            }
        });
    });
    group.bench_function("loop+jsonl-buffered/4-text-graders", |b| {
        b.iter(|| write_buffered(&path, text));
    });
    group.bench_function("runner/4-text-graders", |b| {
        b.iter(|| {
            let _ = std::fs::remove_file(&path);
            runtime
                .block_on(
                    Evaluation::new(&path)
                        .handle_interrupts(false)
                        .progress(false)
                        .run((0..SAMPLES).map(|i| (i, i)), |s, _| {
                            std::future::ready(text(s.1))
                        }),
                )
                .expect("a run")
        });
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&folder);
}

const MANY: usize = 100_000;

fn threads(c: &mut Criterion) {
    let folder = std::env::temp_dir().join(format!("grader-eval-threads-{}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("a scratch folder");
    let path = folder.join("results.jsonl");
    let mut group = c.benchmark_group("eval-threads");
    group.throughput(criterion::Throughput::Elements(MANY as u64));
    group.sample_size(10);
    let runtimes: [(&str, tokio::runtime::Runtime); 3] = [
        (
            "current-thread",
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime"),
        ),
        (
            "workers-1",
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("a runtime"),
        ),
        (
            "workers-2",
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("a runtime"),
        ),
    ];
    let configurations = runtimes
        .iter()
        .map(|(name, runtime)| (name.to_string(), runtime, 64))
        .chain([16, 1024].into_iter().flat_map(|concurrency| {
            runtimes[1..].iter().map(move |(name, runtime)| {
                (
                    format!("{name}/concurrency-{concurrency}"),
                    runtime,
                    concurrency,
                )
            })
        }));
    for (name, runtime, concurrency) in configurations {
        group.bench_function(name, |b| {
            b.iter(|| {
                let _ = std::fs::remove_file(&path);
                runtime
                    .block_on(
                        Evaluation::new(&path)
                            .concurrency(concurrency)
                            .handle_interrupts(false)
                            .progress(false)
                            // The grading inside the future, so that it runs on a worker.
                            .run((0..MANY).map(|i| (i, i)), |s, _| async move { text(s.1) }),
                    )
                    .expect("a run")
            });
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&folder);
}

criterion_group!(benches, runner, threads);
criterion_main!(benches);
