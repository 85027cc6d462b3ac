//! Benchmarks the format checks (`grader_core::format`) on a 3 KB chain of thought in
//! `<think>` tags followed by an `<answer>` (`tests/data/inspect_completion.txt` inside them).
//!
//! `scripts/bench_format.sh` runs this and verifiers 0.3.1's parsers on the same inputs and
//! prints the ratios.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use grader_core::format::{XmlParser, think_answer, think_format_reward};

const TEXT: &str = include_str!("../../tests/data/inspect_completion.txt");

fn format(c: &mut Criterion) {
    let completion = format!("<think>\n{TEXT}\n</think>\n<answer>\nB\n</answer>");
    let Ok(parser) = XmlParser::new(["think", "answer"]) else {
        return;
    };
    let messages = [completion.as_str()];
    let mut group = c.benchmark_group("format");
    group.bench_function("parse", |b| b.iter(|| parser.parse(black_box(&completion))));
    group.bench_function("parse_answer", |b| {
        b.iter(|| parser.parse_answer(black_box(&completion)));
    });
    group.bench_function("format_reward", |b| {
        b.iter(|| parser.format_reward(black_box(&messages)));
    });
    group.bench_function("think_answer", |b| {
        b.iter(|| think_answer(black_box(&completion)));
    });
    group.bench_function("think_format_reward", |b| {
        b.iter(|| think_format_reward(black_box(&messages)));
    });
    group.finish();
}

criterion_group!(benches, format);
criterion_main!(benches);
