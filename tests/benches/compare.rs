//! This project's side of the side-by-side benchmark with the Python reference: the same
//! workloads as `benches/compare/reference.py`, measured with criterion. Run both and get one
//! table with `python3 benches/compare/run.py`; this bench alone with
//! `cargo bench -p grader-tests --bench compare`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use grader_core::{BashGrader, Gather, Grade, SubScore, grader};

/// Mirror of `subscores` in `reference.py`: half unique names, half in duplicate pairs.
fn subscores(n: usize) -> Vec<SubScore> {
    (0..n)
        .map(|i| {
            let name = if i < n / 2 {
                format!("check-{i}")
            } else {
                format!("dup-{}", i % (n / 4).max(1))
            };
            let value = ((i % 11) as f64 / 10.0).min(1.0);
            let weight = if i.is_multiple_of(7) { -0.1 } else { 1.0 };
            SubScore::new(name, value)
                .and_then(|s| s.with_weight(weight))
                .expect("valid subscore")
        })
        .collect()
}

/// The same 3-parameter grader as `ThreeParams` in `reference.py`.
#[grader]
fn three_params(
    answer: &str,
    expected: f64,
    tolerance: f64,
) -> Result<f64, std::num::ParseFloatError> {
    let found: f64 = answer.trim().parse()?;
    Ok(if (found - expected).abs() <= tolerance {
        1.0
    } else {
        0.0
    })
}

fn quick() -> bool {
    std::env::var_os("GRADER_COMPARE_QUICK").is_some()
}

fn from_subscores(c: &mut Criterion) {
    let mut group = c.benchmark_group("from_subscores");
    for n in [10_usize, 1_000, 100_000] {
        let input = subscores(n);
        group.bench_with_input(BenchmarkId::from_parameter(n), &input, |b, input| {
            b.iter_batched(
                || input.clone(),
                |input| black_box(Grade::from_subscores(input)),
                criterion::BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

fn grade(c: &mut Criterion) {
    let mut group = c.benchmark_group("grade");
    group.bench_function("3-params", |b| {
        b.iter(|| {
            black_box(
                ThreeParams {
                    answer: black_box("41.9"),
                    expected: 42.0,
                    tolerance: 0.5,
                }
                .grade(1.0)
                .now(),
            )
        });
    });
    group.finish();
}

fn bash(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let mut group = c.benchmark_group("bash");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(if quick() { 100 } else { 1000 }));
    group.measurement_time(Duration::from_secs(if quick() { 1 } else { 10 }));
    group.bench_function("50-sequential-true", |b| {
        b.to_async(&runtime).iter(|| async {
            for _ in 0..50 {
                let sub = BashGrader::new("true").grade(1.0).await.expect("graded");
                assert_eq!(sub.value(), 1.0);
            }
        });
    });
    group.bench_function("100-concurrent-sleep-200ms", |b| {
        b.to_async(&runtime).iter(|| async {
            let gather = (0..100).fold(Gather::new(), |gather, _| {
                gather.add(BashGrader::new("sleep 0.2").grade(1.0))
            });
            let result = gather.await.expect("graded");
            assert_eq!(result.reward(), 1.0);
        });
    });
    group.finish();
}

criterion_group!(benches, from_subscores, grade, bash);
criterion_main!(benches);
