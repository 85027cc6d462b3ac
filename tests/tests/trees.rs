//! Grading trees: the one grading call, composition before running, gating, failure rules,
//! time limits, retries and the shared limiter.
#![allow(clippy::unwrap_used)]

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::time::Duration;

use grader_core::text::{Contains, ExactMatch};
use grader_core::{
    BoxGrader, Failure, Gather, GatherError, Grader, Info, Limiter, OnError, Resource, Score,
    SubScore, all, any, cascade, grader,
};
use serde::{Serialize, Serializer};

/// A parameter whose `Serialize` panics.
struct Explosive;

impl Serialize for Explosive {
    fn serialize<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        panic!("Serialize exploded")
    }
}

#[grader]
fn records_explosive(value: &Explosive) -> f64 {
    let _ = value;
    1.0
}

#[grader]
fn unwraps(text: &str) -> f64 {
    text.parse::<f64>().unwrap()
}

#[grader]
fn fixed(value: f64) -> f64 {
    value
}

#[grader]
async fn later(value: f64) -> f64 {
    tokio::task::yield_now().await;
    value
}

#[grader]
fn reads(path: &str) -> Result<bool, std::io::Error> {
    Ok(std::fs::read_to_string(path)?.contains("deleted"))
}

fn quiet_panics() {
    grader_tests::quiet_expected_panics(&["ParseFloatError", "Serialize exploded"]);
}

#[tokio::test]
async fn one_grading_call_for_sync_async_hand_written_and_trees() {
    let sync = Fixed { value: 0.25 }.grade(1.0);
    let async_ = Later { value: 0.5 }.grade(1.0);
    assert_eq!(sync.await.unwrap().value(), 0.25);
    assert_eq!(async_.await.unwrap().value(), 0.5);
    assert_eq!(
        Fixed { value: 0.25 }.grade(1.0).now().unwrap().value(),
        0.25
    );
    let tree = all("both", (Fixed { value: 1.0 }, Later { value: 0.5 }));
    assert_eq!(tree.grade(1.0).await.unwrap().value(), 0.5);
    // A grading is a Future: spawn it like any other.
    let spawned = tokio::spawn(Later { value: 1.0 }.grade(0.3)).await.unwrap();
    assert_eq!(spawned.unwrap().weight(), 0.3);
}

#[tokio::test]
async fn trees_run_children_concurrently_keep_them_and_need_no_weights() {
    let result = Gather::new()
        .add(
            any(
                "either",
                (
                    Fixed { value: 0.0 },
                    Later { value: 1.0 },
                    SubScore::new("given", 0.5).unwrap(),
                ),
            )
            .grade(0.5),
        )
        .add(all("every", vec![Fixed { value: 0.2 }, Fixed { value: 0.9 }]).grade(0.5))
        .await
        .unwrap();
    let either = result.subscore("either").unwrap();
    assert_eq!(either.value(), 1.0);
    let names: Vec<&str> = either
        .children()
        .unwrap()
        .iter()
        .map(SubScore::name)
        .collect();
    assert_eq!(names, ["fixed", "later", "given"]);
    // Tree nodes record no `_parameters`, as the reference's any/all.
    assert!(either.info().is_none());
    let every = result.subscore("every").unwrap();
    assert_eq!(every.value(), 0.2);
    assert_eq!(every.children().unwrap()[0].name(), "fixed-1");
    assert!((result.reward() - 0.6).abs() < 1e-12);
}

#[tokio::test]
async fn a_panic_in_scoring_code_is_a_typed_failure_under_every_policy() {
    quiet_panics();
    for policy in [OnError::Fail, OnError::Zero, OnError::Exclude] {
        let outcome = Gather::new()
            .on_error(policy)
            .add(Fixed { value: 1.0 }.grade(0.5))
            .add(
                Unwraps {
                    text: "not a number",
                }
                .grade(0.5),
            )
            .await;
        match (policy, outcome) {
            (OnError::Fail, Err(error @ GatherError::Graders { .. })) => {
                let failure = error.failures().next().unwrap();
                assert_eq!(failure.grader, "unwraps");
                assert!(
                    matches!(&failure.failure, Failure::Panicked { message } if message.contains("ParseFloatError")),
                    "{failure:?}"
                );
                assert_eq!(error.completed().next().unwrap().name(), "fixed");
            }
            (OnError::Zero, Ok(result)) => {
                assert!(result.is_error);
                assert_eq!(result.reward(), 0.5);
                let failed = result.subscore("unwraps").unwrap();
                let error = failed.info().unwrap()["error"].as_str().unwrap();
                assert!(error.contains("panicked"), "{error}");
            }
            (OnError::Exclude, Ok(result)) => {
                assert!(result.is_error);
                assert_eq!(result.reward(), 1.0);
                assert_eq!(result.subscore("unwraps").unwrap().weight(), 0.0);
            }
            (policy, other) => panic!("{policy:?}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_panic_in_serialize_is_a_typed_failure_under_every_policy() {
    quiet_panics();
    for policy in [OnError::Fail, OnError::Zero, OnError::Exclude] {
        let outcome = Gather::new()
            .on_error(policy)
            .add(Fixed { value: 1.0 }.grade(0.5))
            .add(RecordsExplosive { value: &Explosive }.grade(0.5))
            .await;
        let failure_text = match outcome {
            Err(error) => {
                assert_eq!(policy, OnError::Fail);
                let failure = error.failures().next().unwrap();
                assert_eq!(failure.grader, "records_explosive");
                failure.to_string()
            }
            Ok(result) => {
                assert_ne!(policy, OnError::Fail);
                assert!(result.is_error);
                let failed = result.subscore("records_explosive").unwrap();
                failed.info().unwrap()["error"].as_str().unwrap().to_owned()
            }
        };
        assert!(
            failure_text.contains("Serialize exploded"),
            "{failure_text}"
        );
    }
    // Synchronously too.
    let error = RecordsExplosive { value: &Explosive }
        .grade(1.0)
        .now()
        .unwrap_err();
    assert!(matches!(error.failure, Failure::Panicked { .. }));
}

#[tokio::test]
async fn a_failing_penalty_counts_as_fired_under_each_lenient_policy() {
    // The agent deletes the file the penalty reads: the penalty cannot run.
    let missing = "/nonexistent/grader-penalty-file";
    for policy in [OnError::Fail, OnError::Zero, OnError::Exclude] {
        let outcome = Gather::new()
            .on_error(policy)
            .add(Fixed { value: 1.0 }.grade(1.0))
            .add(Reads { path: missing }.grade(-0.5).named("deleted_files"))
            .await;
        match outcome {
            Err(error) => {
                assert_eq!(policy, OnError::Fail);
                assert_eq!(error.failures().next().unwrap().grader, "deleted_files");
            }
            Ok(result) => {
                assert_ne!(policy, OnError::Fail);
                // Never 1.0: the failed penalty fires.
                assert_eq!(result.reward(), 0.5, "{policy:?}");
                let penalty = result.subscore("deleted_files").unwrap();
                assert_eq!((penalty.value(), penalty.weight()), (1.0, -0.5));
                assert!(result.is_error);
            }
        }
    }
}

#[tokio::test]
async fn a_gate_skips_the_expensive_check_and_a_skipped_grader_is_visible() {
    let expensive_runs = Arc::new(AtomicU32::new(0));
    let runs = Arc::clone(&expensive_runs);
    let result = Gather::new()
        .add(Fixed { value: 0.0 }.grade(0.6).named("tests"))
        .add(Fixed { value: 1.0 }.grade(0.1).named("lint"))
        .add(
            Counted { runs, value: 1.0 }
                .grade(0.3)
                .when(|earlier| earlier.passed("tests")),
        )
        .await
        .unwrap();
    assert_eq!(expensive_runs.load(Ordering::SeqCst), 0);
    let skipped = result.subscore("counted").unwrap();
    assert_eq!(skipped.value(), 0.0);
    assert_eq!(
        skipped.info().unwrap()["skipped"],
        "its condition on earlier results did not hold"
    );
    assert!((result.reward() - 0.1).abs() < 1e-12);

    // When the tests pass, it runs.
    let runs = Arc::clone(&expensive_runs);
    let result = Gather::new()
        .add(Later { value: 1.0 }.grade(0.6).named("tests"))
        .add(
            Counted { runs, value: 1.0 }
                .grade(0.4)
                .when(|earlier| earlier.passed("tests")),
        )
        .await
        .unwrap();
    assert_eq!(expensive_runs.load(Ordering::SeqCst), 1);
    assert_eq!(result.reward(), 1.0);
}

#[tokio::test]
async fn a_skipped_penalty_counts_as_fired() {
    let result = Gather::new()
        .add(Fixed { value: 1.0 }.grade(1.0).named("tests"))
        .add(
            Fixed { value: 0.0 }
                .grade(-0.5)
                .named("tampered")
                .when(|_| false),
        )
        .await
        .unwrap();
    assert_eq!(result.reward(), 0.5);
    assert!(
        result.subscore("tampered").unwrap().info().unwrap()["skipped"].is_string(),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_required_criterion_that_fails_zeroes_its_parent() {
    let result = Gather::new()
        .add(Fixed { value: 0.5 }.grade(0.5).named("tests").required())
        .add(Fixed { value: 1.0 }.grade(0.5).named("style"))
        .await
        .unwrap();
    assert_eq!(result.reward(), 0.0);
    assert_eq!(result.info["zeroed_by"], serde_json::json!(["tests"]));
    // Penalties still count below zero: zeroing never helps the agent.
    let result = Gather::new()
        .add(Fixed { value: 0.0 }.grade(1.0).required())
        .add(Fixed { value: 1.0 }.grade(-0.5))
        .await
        .unwrap();
    assert_eq!(result.reward(), -0.5);
    // Inside a tree: the node scores 0.
    let node = any(
        "quality",
        (
            Fixed { value: 0.0 }.grade(1.0).named("must").required(),
            Fixed { value: 1.0 },
        ),
    )
    .grade(1.0)
    .await
    .unwrap();
    assert_eq!(node.value(), 0.0);
    assert_eq!(
        node.info().unwrap()["zeroed_by"],
        serde_json::json!(["must"])
    );
}

#[tokio::test]
async fn a_cascade_stops_at_the_first_stage_that_decides() {
    let expensive_runs = Arc::new(AtomicU32::new(0));
    let node = cascade(
        "answer",
        1.0,
        (
            ExactMatch {
                answer: "Paris",
                expected: "Lyon",
                normalize_text: true,
            },
            Contains {
                answer: "Paris",
                substring: "paris",
                case_sensitive: false,
            },
            Counted {
                runs: Arc::clone(&expensive_runs),
                value: 1.0,
            },
        ),
    )
    .grade(1.0)
    .await
    .unwrap();
    assert_eq!(node.value(), 1.0);
    assert_eq!(expensive_runs.load(Ordering::SeqCst), 0);
    let info = node.info().unwrap();
    assert_eq!(info["decided_by"], "contains");
    assert_eq!(
        info["stages"],
        serde_json::json!([
            {"name": "exact_match", "value": 0.0},
            {"name": "contains", "value": 1.0},
            {"name": "counted", "value": null},
        ])
    );
    assert!(node.children().unwrap()[2].info().unwrap()["skipped"].is_string());

    // None decides: the last stage's value, and every stage ran.
    let node = cascade("answer", 1.0, (Fixed { value: 0.0 }, Later { value: 0.25 }))
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(node.value(), 0.25);
    assert_eq!(node.info().unwrap()["decided_by"], serde_json::Value::Null);
}

#[tokio::test(start_paused = true)]
async fn a_time_limit_is_a_typed_failure_not_a_zero() {
    let error = Sleeps { seconds: 30 }
        .grade(1.0)
        .time_limit(Duration::from_secs(1))
        .await
        .unwrap_err();
    assert_eq!(error.grader, "sleeps");
    assert!(
        matches!(error.failure, Failure::TimedOut { limit } if limit == Duration::from_secs(1))
    );
    let sub = Sleeps { seconds: 1 }
        .grade(1.0)
        .time_limit(Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(sub.value(), 1.0);
}

#[test]
fn a_synchronous_grader_over_its_time_limit_fails_when_it_returns() {
    let error = SleepsBlocking { millis: 30 }
        .grade(1.0)
        .time_limit(Duration::from_millis(1))
        .now()
        .unwrap_err();
    assert!(
        matches!(error.failure, Failure::TimedOut { .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn retries_run_a_flaky_grader_again() {
    let attempts = Arc::new(AtomicU32::new(0));
    let flaky = Flaky {
        attempts: Arc::clone(&attempts),
        fails: 2,
    };
    let sub = flaky.clone().grade(1.0).retries(2).await.unwrap();
    assert_eq!(sub.value(), 1.0);
    assert_eq!(sub.info().unwrap()["attempts"], 3);
    assert_eq!(attempts.load(Ordering::SeqCst), 3);

    attempts.store(0, Ordering::SeqCst);
    let error = flaky.grade(1.0).retries(1).await.unwrap_err();
    assert!(matches!(error.failure, Failure::Message(_)));
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn names_redaction_and_timing() {
    // An empty name keeps the grader's own, as the reference does.
    let sub = Fixed { value: 1.0 }.grade(1.0).named("").await.unwrap();
    assert_eq!(sub.name(), "fixed");
    let sub = ExactMatch {
        answer: "secret answer",
        expected: "x",
        normalize_text: true,
    }
    .grade(1.0)
    .redact("answer")
    .await
    .unwrap();
    let params = &sub.info().unwrap()["_parameters"];
    assert_eq!(params["answer"], "<redacted>");
    assert_eq!(params["expected"], "x");
    assert!(!serde_json::to_string(&sub).unwrap().contains("secret"));
    let error = Fixed { value: 1.0 }
        .grade(1.0)
        .redact("vaule")
        .await
        .unwrap_err();
    assert!(
        matches!(&error.failure, Failure::UnknownParameter { name, .. } if name == "vaule"),
        "{error:?}"
    );
    // Timing is opt-in.
    let plain = Fixed { value: 1.0 }.grade(1.0).await.unwrap();
    assert!(!plain.info().unwrap().contains_key("elapsed_seconds"));
    let timed = Fixed { value: 1.0 }.grade(1.0).timed().await.unwrap();
    assert!(timed.info().unwrap()["elapsed_seconds"].is_f64());
    let result = Gather::new()
        .timed()
        .add(all("tree", (Fixed { value: 1.0 },)).grade(1.0))
        .await
        .unwrap();
    let leaf = &result.subscore("tree").unwrap().children().unwrap()[0];
    assert!(leaf.info().unwrap()["elapsed_seconds"].is_f64());
}

#[tokio::test]
async fn type_erased_graders_built_at_run_time() {
    let config = [("fixed", 1.0), ("later", 0.0), ("fixed", 0.5)];
    let graders: Vec<BoxGrader> = config
        .iter()
        .map(|&(kind, value)| match kind {
            "later" => Later { value }.boxed(),
            _ => Fixed { value }.boxed(),
        })
        .collect();
    let result = Gather::new().extend(graders).await.unwrap();
    assert_eq!(
        grader_tests::names(&result),
        ["fixed-1", "later", "fixed-2"]
    );
    assert!((result.reward() - 0.5).abs() < 1e-12);
}

#[tokio::test]
async fn errors_convert_with_the_question_mark() {
    async fn run() -> Result<f64, grader_core::Error> {
        let sub = SubScore::new("a", 1.0)?;
        let node = all("n", [sub]).grade(1.0).now()?;
        let result = Gather::new().add(node).await?;
        Ok(result.reward())
    }
    assert_eq!(run().await.unwrap(), 1.0);
}

#[tokio::test(start_paused = true)]
async fn a_shared_limiter_bounds_fifty_gathers_of_ten() {
    let gauge = Arc::new(Gauge::default());
    let limiter = Limiter::new().limit(Resource::Cpu, 8);
    let gathers = (0..50).map(|_| {
        let mut gather = Gather::new().limiter(&limiter);
        for _ in 0..10 {
            gather = gather.add(
                Busy {
                    gauge: Arc::clone(&gauge),
                }
                .grade(1.0)
                .resource(Resource::Cpu),
            );
        }
        gather
    });
    let results = futures_util::future::join_all(gathers).await;
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(gauge.done.load(Ordering::SeqCst), 500);
    assert_eq!(gauge.max.load(Ordering::SeqCst), 8);
    assert_eq!(limiter.in_use(&Resource::Cpu), 0);
}

#[tokio::test(start_paused = true)]
async fn trees_nested_under_one_limiter_do_not_deadlock() {
    let gauge = Arc::new(Gauge::default());
    let limiter = Limiter::new().limit(Resource::Cpu, 1);
    let busy = || {
        Busy {
            gauge: Arc::clone(&gauge),
        }
        .grade(1.0)
        .resource(Resource::Cpu)
    };
    let inner = all("inner", (busy(), busy()))
        .grade(1.0)
        .resource(Resource::Cpu);
    let outer = any("outer", (inner, busy()))
        .grade(1.0)
        .resource(Resource::Cpu);
    let gathers = (0..3).map(|_| {
        Gather::new().limiter(&limiter).add(
            all("again", (busy(), busy()))
                .grade(1.0)
                .resource(Resource::Cpu),
        )
    });
    let all_done = async {
        let first = Gather::new().limiter(&limiter).add(outer).await;
        let rest = futures_util::future::join_all(gathers).await;
        (first, rest)
    };
    let (first, rest) = tokio::time::timeout(Duration::from_secs(3600), all_done)
        .await
        .expect("no deadlock");
    assert_eq!(first.unwrap().reward(), 1.0);
    assert!(rest.iter().all(Result::is_ok));
    assert_eq!(gauge.done.load(Ordering::SeqCst), 9);
    // Re-entrant slots: children take turns in their parent's slot, never beside another
    // tree's, so the limit of one holds throughout.
    assert_eq!(gauge.max.load(Ordering::SeqCst), 1);
}

/// Counts concurrent runs.
#[derive(Default)]
struct Gauge {
    running: AtomicUsize,
    max: AtomicUsize,
    done: AtomicUsize,
}

struct Busy {
    gauge: Arc<Gauge>,
}

impl Grader for Busy {
    fn name(&self) -> Cow<'_, str> {
        "busy".into()
    }

    async fn score(self) -> Result<Score, Failure> {
        let now = self.gauge.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.gauge.max.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(10)).await;
        self.gauge.running.fetch_sub(1, Ordering::SeqCst);
        self.gauge.done.fetch_add(1, Ordering::SeqCst);
        Ok(Score::new(1.0))
    }
}

struct Counted {
    runs: Arc<AtomicU32>,
    value: f64,
}

impl Grader for Counted {
    fn name(&self) -> Cow<'_, str> {
        "counted".into()
    }

    async fn score(self) -> Result<Score, Failure> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok(Score::new(self.value))
    }
}

#[derive(Clone)]
struct Flaky {
    attempts: Arc<AtomicU32>,
    fails: u32,
}

impl Grader for Flaky {
    fn name(&self) -> Cow<'_, str> {
        "flaky".into()
    }

    fn parameters(&self) -> Info {
        let mut info = Info::new();
        info.insert("fails".into(), self.fails.into());
        info
    }

    async fn score(self) -> Result<Score, Failure> {
        let attempt = self.attempts.fetch_add(1, Ordering::SeqCst) + 1;
        if attempt <= self.fails {
            return Err(Failure::message(format!("attempt {attempt} failed")));
        }
        Ok(Score::new(1.0))
    }
}

#[grader]
async fn sleeps(seconds: u64) -> bool {
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    true
}

#[grader]
fn sleeps_blocking(millis: u64) -> bool {
    std::thread::sleep(Duration::from_millis(millis));
    true
}

#[tokio::test]
async fn a_penalty_cannot_be_required() {
    let error = Fixed { value: 1.0 }
        .grade(-0.5)
        .required()
        .await
        .unwrap_err();
    assert!(
        matches!(error.failure, Failure::RequiredPenalty { weight } if weight == -0.5),
        "{error:?}"
    );
    let outcome = Gather::new()
        .add(Fixed { value: 1.0 }.grade(1.0))
        .add(Fixed { value: 0.0 }.grade(-0.5).required())
        .await;
    assert!(outcome.is_err());
}
