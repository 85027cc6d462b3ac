//! Benchmarks math answers (`grader_core::math`): `verify(gold, answer)` on typical pairs.
//!
//! `scripts/bench_math.sh` runs this and math-verify 0.9.0 on the same inputs and prints the
//! ratios.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use grader_core::math::verify;

/// The pairs timed, shared with `scripts/bench_math.sh`.
pub const PAIRS: &[(&str, &str, &str)] = &[
    (
        "integer",
        "$42$",
        "So the total is 6 * 7 = 42.\n\nThe answer is $\\boxed{42}$.",
    ),
    (
        "fraction",
        "$\\frac{3}{4}$",
        "Therefore the probability is $\\boxed{0.75}$.",
    ),
    (
        "sqrt",
        "$2\\sqrt{3}$",
        "We get \\[ x = \\sqrt{12} \\] so the answer is $\\boxed{\\sqrt{12}}$.",
    ),
    (
        "interval",
        "$[-2, 7)$",
        "The solution set is $x \\in \\boxed{[-2,7)}$.",
    ),
    (
        "set",
        "$\\{1, 2, 3\\}$",
        "The roots are $1$, $2$ and $3$, so $\\boxed{1, 2, 3}$.",
    ),
    (
        "equation",
        "$y = 2x + 1$",
        "Final answer: $\\boxed{y=1+2x}$",
    ),
    ("percent", "$28\\%$", "The increase is 28 percent."),
];

fn math(c: &mut Criterion) {
    let mut group = c.benchmark_group("math");
    for (name, gold, answer) in PAIRS {
        group.bench_function(*name, |bench| {
            bench.iter(|| verify(black_box(gold), black_box(answer)));
        });
    }
    group.finish();
}

criterion_group!(benches, math);
criterion_main!(benches);
