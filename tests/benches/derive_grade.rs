//! What `#[derive(Grader)]` costs at run time: grading a derived grader against the same
//! grader with `Grader` (and `SyncGrader`) implemented by hand: the same fields, the same
//! recorded parameters, the same check. Sync (`.now()`) and async (the grading polled once),
//! in one run.
//!
//! On a machine too busy for a 5% comparison of times, the instructions per grading are steady:
//! run the bench binary under `valgrind --tool=callgrind` with `--bench --profile-time 1
//! '^derive_grade_sync/derived$'` (and each other case), then divide the inclusive cost of
//! `Grading::now` (sync) or `now_or_never` (async) by its call count, both shown by
//! `callgrind_annotate --inclusive=yes --tree=caller`.
#![allow(missing_docs)]

use std::borrow::Cow;
use std::future::Future;
use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::FutureExt;
use grader_core::params::{json_safe, placeholder};
use grader_core::{Failure, Grader, GraderError, Info, Score, SubScore, SyncGrader};

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

fn manual_parameters(answer: &str, expected: &[&str], path: &Path, limit: u32) -> Info {
    let mut parameters = Info::with_capacity(5);
    parameters.insert("answer".into(), json_safe(answer, "str"));
    parameters.insert("expected".into(), json_safe(expected, "[&str]"));
    parameters.insert("path".into(), json_safe(path, "Path"));
    parameters.insert("client".into(), placeholder("Client"));
    parameters.insert("limit".into(), json_safe(&limit, "u32"));
    parameters
}

impl Grader for Manual<'_> {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("answer_quality")
    }

    fn parameters(&self) -> Info {
        manual_parameters(self.answer, self.expected, self.path, self.limit)
    }

    fn score(self) -> impl Future<Output = Result<Score, Failure>> + Send {
        std::future::ready(self.score_now())
    }
}

impl SyncGrader for Manual<'_> {
    fn score_now(self) -> Result<Score, Failure> {
        let _ = (self.path, self.client);
        Ok(Score::from(quality(self.answer, self.expected, self.limit)))
    }
}

struct ManualAsync<'a> {
    answer: &'a str,
    expected: &'a [&'a str],
    path: &'a Path,
    client: &'a Client,
    limit: u32,
}

impl Grader for ManualAsync<'_> {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("answer_quality")
    }

    fn parameters(&self) -> Info {
        manual_parameters(self.answer, self.expected, self.path, self.limit)
    }

    async fn score(self) -> Result<Score, Failure> {
        let _ = (self.path, self.client);
        Ok(Score::from(quality(self.answer, self.expected, self.limit)))
    }
}

/// Awaits a grading by polling it once: nothing in these gradings waits.
fn poll_once<G: Grader + Send>(grader: G, weight: f64) -> Result<SubScore, GraderError> {
    grader
        .grade(weight)
        .now_or_never()
        .expect("nothing to wait for")
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
    let manual = grader!(Manual).grade(0.5).now().expect("valid");
    assert_eq!(grader!(Derived).grade(0.5).now().expect("valid"), manual);
    assert_eq!(poll_once(grader!(ManualAsync), 0.5).expect("valid"), manual);
    assert_eq!(
        poll_once(grader!(DerivedAsync), 0.5).expect("valid"),
        manual
    );

    // Synchronous score methods, graded with `.now()`.
    let mut group = c.benchmark_group("derive_grade_sync");
    group.bench_function("manual", |b| {
        b.iter(|| grader!(Manual).grade(black_box(0.5)).now());
    });
    group.bench_function("derived", |b| {
        b.iter(|| grader!(Derived).grade(black_box(0.5)).now());
    });
    group.finish();

    // Async score methods, graded as futures.
    let mut group = c.benchmark_group("derive_grade_async");
    group.bench_function("manual", |b| {
        b.iter(|| poll_once(grader!(ManualAsync), black_box(0.5)));
    });
    group.bench_function("derived", |b| {
        b.iter(|| poll_once(grader!(DerivedAsync), black_box(0.5)));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
