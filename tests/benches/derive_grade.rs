//! What `#[derive(Grader)]` costs at run time: grading a derived grader against the same
//! grader with `Grader` implemented by hand (the same fields, the same recorded parameters, the
//! same check), sync and async, in one run.
#![allow(missing_docs)]

use std::borrow::Cow;
use std::future::Future;
use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::FutureExt;
use grader_core::params::{json_safe, placeholder};
use grader_core::{Failure, Grader, GraderError, Info, Score, SubScore};

struct Client;

fn quality(answer: &str, expected: &[&str], limit: u32) -> f64 {
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

#[derive(Grader)]
#[grader(score = check, name = "answer_quality")]
struct Derived<'a> {
    answer: &'a str,
    expected: &'a [&'a str],
    path: &'a Path,
    client: &'a Client,
    limit: u32,
}

impl Derived<'_> {
    fn check(&self) -> f64 {
        let _ = (self.path, self.client);
        quality(self.answer, self.expected, self.limit)
    }
}

#[derive(Grader)]
#[grader(score = async check, name = "answer_quality")]
struct DerivedAsync<'a> {
    answer: &'a str,
    expected: &'a [&'a str],
    path: &'a Path,
    client: &'a Client,
    limit: u32,
}

impl DerivedAsync<'_> {
    async fn check(&self) -> f64 {
        let _ = (self.path, self.client);
        quality(self.answer, self.expected, self.limit)
    }
}

struct Manual<'a> {
    answer: &'a str,
    expected: &'a [&'a str],
    path: &'a Path,
    client: &'a Client,
    limit: u32,
}

impl Grader for Manual<'_> {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("answer_quality")
    }

    fn parameters(&self) -> Info {
        let mut parameters = Info::with_capacity(5);
        parameters.insert("answer".into(), json_safe(self.answer, "str"));
        parameters.insert("expected".into(), json_safe(self.expected, "[&str]"));
        parameters.insert("path".into(), json_safe(self.path, "Path"));
        parameters.insert("client".into(), placeholder("Client"));
        parameters.insert("limit".into(), json_safe(&self.limit, "u32"));
        parameters
    }

    async fn score(self) -> Result<Score, Failure> {
        let _ = (self.path, self.client);
        Ok(Score::from(quality(self.answer, self.expected, self.limit)))
    }
}

/// The grading call both sides go through: the future, polled once (nothing in it waits).
fn grade_now<G: Grader>(grader: G, weight: f64) -> Result<SubScore, GraderError> {
    grade_future(grader, weight)
        .now_or_never()
        .expect("nothing to wait for")
}

fn grade_future<G: Grader>(
    grader: G,
    weight: f64,
) -> impl Future<Output = Result<SubScore, GraderError>> {
    grader.grade(weight)
}

fn bench(c: &mut Criterion) {
    let expected = ["Paris", "France", "capital"];
    let path = Path::new("/srv/repo");
    let answer = "Paris is the capital of France.";
    macro_rules! grader {
        ($ty:ident) => {
            $ty {
                answer: black_box(answer),
                expected: black_box(&expected),
                path: black_box(path),
                client: &Client,
                limit: black_box(200),
            }
        };
    }
    let manual = grade_now(grader!(Manual), 0.5).expect("valid");
    assert_eq!(grade_now(grader!(Derived), 0.5).expect("valid"), manual);
    assert_eq!(
        grade_now(grader!(DerivedAsync), 0.5).expect("valid"),
        manual
    );

    let mut group = c.benchmark_group("derive_grade");
    group.bench_function("manual", |b| {
        b.iter(|| grade_now(grader!(Manual), black_box(0.5)));
    });
    group.bench_function("derived_sync", |b| {
        b.iter(|| grade_now(grader!(Derived), black_box(0.5)));
    });
    group.bench_function("derived_async", |b| {
        b.iter(|| grade_now(grader!(DerivedAsync), black_box(0.5)));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
