//! Benchmarks `normalize` and `f1_score` on a 10 KB answer, English and mixed-script.
//!
//! `scripts/bench_text.sh` runs this and the Python reference on the same inputs and prints
//! the ratios.
#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use grader_core::text::{f1_score, normalize};
use std::hint::black_box;

const INPUTS: [(&str, &str); 2] = [
    ("en", include_str!("../../tests/data/text_answer_en.txt")),
    (
        "mixed",
        include_str!("../../tests/data/text_answer_mixed.txt"),
    ),
];
const REFERENCE: &str = include_str!("../../tests/data/text_reference.txt");

fn text(c: &mut Criterion) {
    let mut group = c.benchmark_group("text");
    for (name, answer) in INPUTS {
        group.bench_function(format!("normalize/{name}"), |b| {
            b.iter(|| normalize(black_box(answer)));
        });
        group.bench_function(format!("f1_score/{name}"), |b| {
            b.iter(|| f1_score(black_box(answer), black_box(REFERENCE)));
        });
    }
    group.finish();
}

criterion_group!(benches, text);
criterion_main!(benches);
