//! Benchmarks the JSON Schema checks (`grader_core::json::JsonSchema`, feature `json-schema`)
//! on a 20 KB document (`tests/data/bench.json`) against a recursive schema that reaches every
//! value in it (`tests/data/bench_schema.json`).
//!
//! `scripts/bench_format.sh` runs this and Python's `jsonschema` 4.26.0 on the same inputs and
//! prints the ratios.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use grader_core::json::{JsonSchema, matches_schema};
use serde_json::Value;

const DOCUMENT: &str = include_str!("../../tests/data/bench.json");
const SCHEMA: &str = include_str!("../../tests/data/bench_schema.json");

fn json_schema(c: &mut Criterion) {
    let schema: Value = serde_json::from_str(SCHEMA).unwrap_or_default();
    let value: Value = serde_json::from_str(DOCUMENT).unwrap_or_default();
    let Ok(compiled) = JsonSchema::new(&schema) else {
        return;
    };
    let mut group = c.benchmark_group("json_schema");
    group.bench_function("compile", |b| {
        b.iter(|| JsonSchema::new(black_box(&schema)))
    });
    group.bench_function("is_valid", |b| {
        b.iter(|| compiled.is_valid(black_box(&value)))
    });
    group.bench_function("matches_schema", |b| {
        b.iter(|| matches_schema(black_box(DOCUMENT), &compiled));
    });
    group.finish();
}

criterion_group!(benches, json_schema);
criterion_main!(benches);
