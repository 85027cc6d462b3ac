//! What `#[grader]` costs at run time: grading a generated grader against hand-written code that
//! builds the same subscore with the same recorded parameters, in one run.
#![allow(missing_docs)]

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use grader_core::params::{json_safe, placeholder};
use grader_core::{Info, SubScore, grader};

struct Client;

#[grader]
fn answer_quality(
    answer: &str,
    expected: &[&str],
    path: &Path,
    client: &Client,
    limit: u32,
) -> f64 {
    let _ = (path, client);
    let hits = expected
        .iter()
        .filter(|word| answer.contains(*word))
        .count();
    #[allow(clippy::cast_precision_loss)]
    let value = hits as f64 / expected.len().max(1) as f64;
    if answer.len() > limit as usize {
        0.0
    } else {
        value
    }
}

fn by_hand(
    answer: &str,
    expected: &[&str],
    path: &Path,
    client: &Client,
    limit: u32,
    weight: f64,
) -> SubScore {
    let mut parameters = Info::with_capacity(5);
    parameters.insert("answer".into(), json_safe(answer, "str"));
    parameters.insert("expected".into(), json_safe(expected, "[&str]"));
    parameters.insert("path".into(), json_safe(path, "Path"));
    parameters.insert("client".into(), placeholder("Client"));
    parameters.insert("limit".into(), json_safe(&limit, "u32"));
    let value = answer_quality(answer, expected, path, client, limit);
    let mut info = Info::new();
    info.insert("_parameters".into(), parameters.into());
    SubScore::new("answer_quality", value)
        .and_then(|sub| sub.with_weight(weight))
        .expect("valid")
        .with_info(info)
}

fn bench(c: &mut Criterion) {
    let expected = ["Paris", "France", "capital"];
    let path = Path::new("/srv/repo");
    let answer = "Paris is the capital of France.";
    let generated = AnswerQuality {
        answer,
        expected: &expected,
        path,
        client: &Client,
        limit: 200,
    }
    .grade(0.5)
    .now()
    .expect("valid");
    assert_eq!(
        generated,
        by_hand(answer, &expected, path, &Client, 200, 0.5),
        "both build the same subscore"
    );

    let mut group = c.benchmark_group("grade");
    group.bench_function("generated", |b| {
        b.iter(|| {
            AnswerQuality {
                answer: black_box(answer),
                expected: black_box(&expected),
                path: black_box(path),
                client: &Client,
                limit: black_box(200),
            }
            .grade(black_box(0.5))
            .now()
        });
    });
    group.bench_function("by_hand", |b| {
        b.iter(|| {
            by_hand(
                black_box(answer),
                black_box(&expected),
                black_box(path),
                &Client,
                black_box(200),
                black_box(0.5),
            )
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
