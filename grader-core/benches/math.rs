//! Benchmarks math answers (`grader_core::math`): `verify(gold, answer)` on typical pairs
//! (`tests/data/math_bench_pairs.json`: an integer, a fraction against a decimal, roots, an
//! interval, a set, an equation, a percentage, a plain number with units).
//!
//! `scripts/bench_math.sh` runs this and math-verify 0.9.0 on the same pairs and prints the
//! ratios.
//!
//! `math_configs` times the eight pairs together under each configuration (math-verify's
//! defaults exactly and under parity, TRL's, open-r1's and verl's reward functions), so that a
//! configuration's cost reads against the defaults'.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use grader_core::math::{MathConfig, verify, verify_with};

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

    let configs = [
        ("math_verify", MathConfig::math_verify()),
        ("parity", MathConfig::math_verify().parity()),
        ("trl", MathConfig::trl_accuracy_reward()),
        ("open_r1", MathConfig::open_r1_accuracy_reward()),
        ("verl", MathConfig::verl_math_verify()),
    ];
    let mut group = c.benchmark_group("math_configs");
    for (name, config) in &configs {
        group.bench_function(*name, |bench| {
            bench.iter(|| {
                for (_, gold, answer) in &pairs {
                    let _ = black_box(verify_with(black_box(gold), black_box(answer), config));
                }
            });
        });
    }
    group.finish();
}

criterion_group!(benches, math);
criterion_main!(benches);
