//! Benchmarks the JSON checks (`grader_core::json`) on a 20 KB document
//! (`tests/data/bench.json`), alone and inside a paragraph of prose.
//!
//! `scripts/bench_json.sh` runs this and Node's `JSON.parse` (and promptfoo's object search
//! on it) on the same inputs and prints the ratios.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use grader_core::json::{contains_json, is_json, json_equals};

const DOCUMENT: &str = include_str!("../../tests/data/bench.json");

fn json(c: &mut Criterion) {
    let expected: serde_json::Value = serde_json::from_str(DOCUMENT).unwrap_or_default();
    let prose = format!("Here is the result you asked for:\n\n{DOCUMENT}\n\nLet me know.");
    let mut group = c.benchmark_group("json");
    group.bench_function("is_json", |b| b.iter(|| is_json(black_box(DOCUMENT))));
    group.bench_function("contains_json", |b| {
        b.iter(|| contains_json(black_box(&prose)));
    });
    group.bench_function("json_equals", |b| {
        b.iter(|| json_equals(black_box(DOCUMENT), &expected));
    });
    group.finish();
}

criterion_group!(benches, json);
criterion_main!(benches);
