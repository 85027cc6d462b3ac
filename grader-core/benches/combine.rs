//! Benchmarks `Grade::from_subscores` at N = 10, 1 000 and 100 000.
//!
//! `half_duplicated`: half of the names unique, the other half repeating names in pairs (the
//! case the de-duplication has to work for). `unique`: every name distinct, the baseline
//! measured in the same run (no renaming needed). Both inputs carry info on every third
//! subscore (it stays on the subscore: the result's info is left empty).
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use grader_core::{Grade, Info, SubScore};
use std::hint::black_box;

fn subscore(i: usize, name: String) -> SubScore {
    let value = (i % 11) as f64 / 10.0;
    let sub = SubScore::new(name, value.min(1.0))
        .and_then(|s| s.with_weight(if i.is_multiple_of(7) { -0.1 } else { 1.0 }))
        .expect("valid subscore");
    if i.is_multiple_of(3) {
        let mut info = Info::new();
        info.insert("exit_code".into(), (i % 2).into());
        sub.with_info(info)
    } else {
        sub
    }
}

/// `n` subscores: the first half have unique names, the second half repeat names in pairs.
fn half_duplicated(n: usize) -> Vec<SubScore> {
    (0..n)
        .map(|i| {
            let name = if i < n / 2 {
                format!("check-{i}")
            } else {
                format!("dup-{}", i % (n / 4).max(1))
            };
            subscore(i, name)
        })
        .collect()
}

/// `n` subscores with distinct names.
fn unique(n: usize) -> Vec<SubScore> {
    (0..n).map(|i| subscore(i, format!("check-{i}"))).collect()
}

fn from_subscores(c: &mut Criterion) {
    let mut group = c.benchmark_group("from_subscores");
    for n in [10_usize, 1_000, 100_000] {
        for (label, input) in [
            ("unique", unique(n)),
            ("half_duplicated", half_duplicated(n)),
        ] {
            group.bench_with_input(BenchmarkId::new(label, n), &input, |b, input| {
                b.iter_batched(
                    || input.clone(),
                    |input| black_box(Grade::from_subscores(input)),
                    criterion::BatchSize::LargeInput,
                );
            });
        }
    }
    group.finish();
}

criterion_group!(benches, from_subscores);
criterion_main!(benches);
