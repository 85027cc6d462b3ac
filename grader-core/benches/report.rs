//! Benchmarks the readable report (`Display` for `EvaluationResult`) of a result with 1 000
//! subscores: 20 `all` nodes of 48 command-like leaves each (exit code, a few lines of output,
//! `_parameters`), plus 20 plain leaves. The baseline, measured in the same run, is
//! `serde_json::to_string` of the same result: what writing it to a log costs.
#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use grader_core::{EvaluationResult, Grade, Info, SubScore, all};
use serde_json::json;
use std::hint::black_box;

fn leaf(group: usize, i: usize) -> SubScore {
    let passed = !(i + group).is_multiple_of(5);
    let mut info = Info::new();
    info.insert("exit_code".into(), json!(if passed { 0 } else { 1 }));
    info.insert(
        "stdout".into(),
        json!(format!(
            "collected 12 items\n\ntests/test_{i}.py ....{}\n\n===== {} in 0.{i:02}s =====\n",
            if passed { "." } else { "F" },
            if passed {
                "12 passed"
            } else {
                "1 failed, 11 passed"
            }
        )),
    );
    info.insert("stderr".into(), json!(""));
    info.insert(
        "_parameters".into(),
        json!({"command": format!("pytest -q tests/test_{i}.py"), "cwd": "/repo", "timeout": 600}),
    );
    SubScore::new(format!("test_{group}_{i}"), if passed { 1.0 } else { 0.0 })
        .expect("valid")
        .with_info(info)
}

fn result() -> EvaluationResult {
    let mut subscores: Vec<SubScore> = (0..20)
        .map(|group| {
            let leaves: Vec<SubScore> = (0..48).map(|i| leaf(group, i)).collect();
            all(format!("suite {group}"), leaves)
                .grade(1.0)
                .now()
                .expect("all")
        })
        .collect();
    subscores.extend((0..20).map(|i| {
        SubScore::new(format!("check {i}"), 0.5)
            .and_then(|s| s.with_weight(if i == 0 { -0.2 } else { 0.5 }))
            .expect("valid")
    }));
    Grade::from_subscores(subscores).expect("combines")
}

fn count(subscores: &[SubScore]) -> usize {
    subscores
        .iter()
        .map(|s| 1 + count(s.children().unwrap_or_default()))
        .sum()
}

fn report(c: &mut Criterion) {
    let result = result();
    assert_eq!(
        count(result.subscores.as_deref().unwrap_or_default()),
        1_000
    );
    let mut group = c.benchmark_group("report_1000_subscores");
    group.bench_function("json_baseline", |b| {
        b.iter(|| black_box(serde_json::to_string(black_box(&result))))
    });
    group.bench_function("display", |b| {
        b.iter(|| black_box(black_box(&result).to_string()))
    });
    group.bench_function("display_alternate", |b| {
        b.iter(|| black_box(format!("{:#}", black_box(&result))))
    });
    group.finish();
}

criterion_group!(benches, report);
criterion_main!(benches);
