//! Benchmarks the similarities (`grader_core::similarity`) on a 3 KB text against an edited
//! copy of it (two words replaced throughout), and the Levenshtein distance of long texts: the
//! 3 KB text repeated to 2 000, 30 000 and 100 000 characters, against the same edit of it
//! (`similar_N`) and against itself reversed (`different_N`, where almost every character
//! differs).
//!
//! `scripts/bench_similarity.sh` runs this and rapidfuzz, rouge-score and sacrebleu on the same
//! inputs and prints the ratios.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use grader_core::similarity::{bleu, chrf, levenshtein, ratio, rouge_l, rouge_n};

const TEXT: &str = include_str!("../../tests/data/inspect_completion.txt");

fn similarity(c: &mut Criterion) {
    let edited = TEXT.replace("plausible", "likely").replace("total", "sum");
    let (a, b) = (TEXT, edited.as_str());
    let mut group = c.benchmark_group("similarity");
    group.bench_function("levenshtein", |bench| {
        bench.iter(|| levenshtein(black_box(a), black_box(b)));
    });
    group.bench_function("ratio", |bench| {
        bench.iter(|| ratio(black_box(a), black_box(b)))
    });
    group.bench_function("rouge_1", |bench| {
        bench.iter(|| rouge_n(black_box(a), black_box(b), 1))
    });
    group.bench_function("rouge_2", |bench| {
        bench.iter(|| rouge_n(black_box(a), black_box(b), 2))
    });
    group.bench_function("rouge_l", |bench| {
        bench.iter(|| rouge_l(black_box(a), black_box(b)))
    });
    group.bench_function("bleu", |bench| bench.iter(|| bleu(black_box(b), &[a])));
    group.bench_function("chrf", |bench| bench.iter(|| chrf(black_box(b), &[a])));
    group.finish();

    let mut long = c.benchmark_group("levenshtein_long");
    long.sample_size(10);
    for n in [2_000, 30_000, 100_000] {
        let a: String = TEXT.chars().cycle().take(n).collect();
        let similar = a.replace("plausible", "likely").replace("total", "sum");
        let different: String = a.chars().rev().collect();
        for (kind, b) in [("similar", similar), ("different", different)] {
            long.bench_function(format!("{kind}_{n}"), |bench| {
                bench.iter(|| levenshtein(black_box(&a), black_box(&b)));
            });
        }
    }
    long.finish();
}

criterion_group!(benches, similarity);
criterion_main!(benches);
