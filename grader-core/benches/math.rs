//! Benchmarks math answers (`grader_core::math`): `verify(gold, answer)` on typical pairs
//! (`tests/data/math_bench_pairs.json`: an integer, a fraction against a decimal, roots, an
//! interval, a set, an equation, a percentage, a plain number with units).
//!
//! `scripts/bench_math.sh` runs this and math-verify 0.9.0 on the same pairs and prints the
//! ratios.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use grader_core::math::verify;

const PAIRS: &str = include_str!("../../tests/data/math_bench_pairs.json");

fn math(c: &mut Criterion) {
    let pairs: Vec<(String, String, String)> =
        serde_json::from_str(PAIRS).expect("the pairs file is JSON");
    let mut group = c.benchmark_group("math");
    for (name, gold, answer) in &pairs {
        assert!(verify(gold, answer).expect("small inputs"), "{name}");
        group.bench_function(name.as_str(), |bench| {
            bench.iter(|| verify(black_box(gold), black_box(answer)));
        });
    }
    group.finish();
}

criterion_group!(benches, math);
criterion_main!(benches);
