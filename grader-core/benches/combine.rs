//! Benchmarks `Grade::from_subscores` at N = 10, 1 000 and 100 000, half of the names duplicated.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use grader_core::{Grade, SubScore};
use std::hint::black_box;

/// `n` subscores: the first half have unique names, the second half repeat one name in pairs.
fn subscores(n: usize) -> Vec<SubScore> {
    (0..n)
        .map(|i| {
            let name = if i < n / 2 {
                format!("check-{i}")
            } else {
                format!("dup-{}", i % (n / 4).max(1))
            };
            let value = (i % 11) as f64 / 10.0;
            SubScore::new(name, value.min(1.0))
                .and_then(|s| s.with_weight(if i % 7 == 0 { -0.1 } else { 1.0 }))
                .expect("valid subscore")
        })
        .collect()
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

criterion_group!(benches, from_subscores);
criterion_main!(benches);
