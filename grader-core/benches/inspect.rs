//! Benchmarks Inspect AI's scorers (`grader_core::inspect`) on a 3 KB chain of thought ending
//! in `ANSWER: B`, and `exact`/`f1` on a 10 KB answer.
//!
//! `scripts/bench_inspect.sh` runs this and Inspect's own scorers on the same inputs and prints
//! the ratios.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use grader_core::inspect::{
    self, AnswerKind, ChoiceOptions, Location, MatchOptions, PatternOptions,
};

const COMPLETION: &str = include_str!("../../tests/data/inspect_completion.txt");
const LONG_ANSWER: &str = include_str!("../../tests/data/text_answer_en.txt");
const REFERENCE: &str = include_str!("../../tests/data/text_reference.txt");

fn scorers(c: &mut Criterion) {
    let mut group = c.benchmark_group("inspect");
    let numeric = MatchOptions {
        location: Location::End,
        ignore_case: true,
        numeric: true,
    };
    group.bench_function("match_numeric", |b| {
        b.iter(|| inspect::match_targets(black_box(COMPLETION), &["1888"], numeric));
    });
    group.bench_function("match_text", |b| {
        b.iter(|| inspect::match_targets(black_box(COMPLETION), &["b"], MatchOptions::default()));
    });
    group.bench_function("includes", |b| {
        b.iter(|| inspect::includes(black_box(COMPLETION), &["best option is b"], true));
    });
    for (name, kind) in [
        ("answer_letter", AnswerKind::Letter),
        ("answer_word", AnswerKind::Word),
        ("answer_line", AnswerKind::Line),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| inspect::answer(black_box(COMPLETION), &["B"], kind));
        });
    }
    group.bench_function("pattern", |b| {
        b.iter(|| {
            inspect::pattern(
                black_box(COMPLETION),
                r"ANSWER\s*:\s*(\w+)",
                &["B"],
                PatternOptions::default(),
            )
        });
    });
    let options = ChoiceOptions {
        choices: 4,
        shuffled: None,
        multiple_correct: false,
    };
    group.bench_function("choice", |b| {
        b.iter(|| inspect::choice(black_box(COMPLETION), &["B"], options));
    });
    group.bench_function("exact", |b| {
        b.iter(|| inspect::exact(black_box(LONG_ANSWER), &[REFERENCE]));
    });
    group.bench_function("f1", |b| {
        b.iter(|| inspect::f1(black_box(LONG_ANSWER), &[REFERENCE], &[] as &[&str]));
    });
    group.finish();
}

criterion_group!(benches, scorers);
criterion_main!(benches);
