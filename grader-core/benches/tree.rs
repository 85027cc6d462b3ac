//! Benchmarks a grading tree of 1 000 trivial graders against the same subscores combined by
//! hand, in the same run.
//!
//! `gather`: a `Gather` of 1 000 `#[grader]` gradings (names distinct, weights 1.0), run on a
//! current-thread runtime. `nested`: the same 1 000 leaves as 10 `all` nodes of 100 in one
//! gather. `by_hand`: the 1 000 subscores those gradings produce (the same name, value, weight
//! and `_parameters`), built directly and combined with `Grade::from_subscores`, which is what a
//! tree saves its user from writing. Both sides are checked to give the same result first.
#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use grader_core::{Gather, Grade, Info, SubScore, all, grader};
use std::hint::black_box;

/// A trivial check.
#[grader]
fn passes(index: usize, value: f64) -> f64 {
    let _ = index;
    value
}

const N: usize = 1_000;

fn value(i: usize) -> f64 {
    (i % 11) as f64 / 10.0
}

fn name(i: usize) -> String {
    format!("check-{i}")
}

fn gather() -> Gather<'static> {
    (0..N).fold(Gather::new(), |gather, i| {
        gather.add(
            Passes {
                index: i,
                value: value(i),
            }
            .grade(1.0)
            .named(name(i)),
        )
    })
}

fn nested() -> Gather<'static> {
    (0..N / 100).fold(Gather::new(), |gather, group| {
        let leaves: Vec<_> = (0..100)
            .map(|j| {
                let i = group * 100 + j;
                Passes {
                    index: i,
                    value: value(i),
                }
                .grade(1.0)
                .named(name(i))
            })
            .collect();
        gather.add(all(format!("group-{group}"), leaves).grade(1.0))
    })
}

fn by_hand() -> Result<grader_core::EvaluationResult, Box<dyn std::error::Error>> {
    let subscores = (0..N)
        .map(|i| {
            let mut parameters = Info::new();
            parameters.insert("index".into(), i.into());
            parameters.insert("value".into(), value(i).into());
            let mut info = Info::new();
            info.insert("_parameters".into(), parameters.into());
            Ok(SubScore::new(name(i), value(i))?.with_info(info))
        })
        .collect::<Result<Vec<_>, grader_core::ScoreError>>()?;
    Ok(Grade::from_subscores(subscores)?)
}

fn tree(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let graded = runtime.block_on(gather()).expect("graded");
    assert_eq!(graded, by_hand().expect("combined"), "the same result");

    let mut group = c.benchmark_group("tree_1000");
    group.bench_function("gather", |b| {
        b.iter(|| black_box(runtime.block_on(gather()).expect("graded")));
    });
    group.bench_function("nested", |b| {
        b.iter(|| black_box(runtime.block_on(nested()).expect("graded")));
    });
    group.bench_function("by_hand", |b| {
        b.iter(|| black_box(by_hand().expect("combined")));
    });
    group.finish();
}

criterion_group!(benches, tree);
criterion_main!(benches);
