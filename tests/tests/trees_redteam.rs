//! Adversarial tests of the grading call and grading trees: panics anywhere in a grader, graders
//! an agent can make fail, skip or time out, info that imitates the library's own markers, the
//! shared limiter under nesting, and commands left running after a drop.
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use grader_core::text::ExactMatch;
use grader_core::{
    BashGrader, EvaluationResult, Failure, Gather, GatherError, Grader, Grading, Info, Limiter,
    OnError, Resource, Score, SubScore, SyncGrader, all, any, cascade, grader,
};
use serde_json::{Value, json};

fn quiet() {
    grader_tests::quiet_expected_panics(&[
        "score exploded",
        "second poll exploded",
        "name exploded",
        "resource exploded",
        "condition exploded",
        "clone exploded",
        "payload drop exploded",
    ]);
}

#[grader]
fn fixed(value: f64) -> f64 {
    value
}

/// How many probes are inside their check at once, and the most there ever were.
#[derive(Default)]
struct Gauge {
    now: AtomicUsize,
    max: AtomicUsize,
}

struct Inside(Arc<Gauge>);

impl Gauge {
    fn enter(self: &Arc<Self>) -> Inside {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(now, Ordering::SeqCst);
        Inside(Arc::clone(self))
    }

    fn max(&self) -> usize {
        self.max.load(Ordering::SeqCst)
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What a probe's check does.
#[derive(Clone, Debug)]
enum Act {
    Value(f64),
    Fail,
    Panic,
    PanicOnSecondPoll,
    Sleep(Duration),
}

/// A grader whose behaviour the test picks, as an agent might pick what a check sees.
#[derive(Clone)]
struct Probe {
    name: &'static str,
    act: Act,
    info: Option<Info>,
    gauge: Option<Arc<Gauge>>,
}

fn probe(name: &'static str, act: Act) -> Probe {
    Probe {
        name,
        act,
        info: None,
        gauge: None,
    }
}

impl Probe {
    fn info(mut self, info: Value) -> Self {
        let Value::Object(info) = info else {
            unreachable!()
        };
        self.info = Some(info);
        self
    }

    fn gauge(mut self, gauge: &Arc<Gauge>) -> Self {
        self.gauge = Some(Arc::clone(gauge));
        self
    }
}

impl Grader for Probe {
    fn name(&self) -> Cow<'_, str> {
        self.name.into()
    }

    async fn score(self) -> Result<Score, Failure> {
        let _inside = self.gauge.as_ref().map(Gauge::enter);
        if self.gauge.is_some() {
            for _ in 0..5 {
                tokio::task::yield_now().await;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let value = match self.act {
            Act::Value(value) => value,
            Act::Fail => return Err(Failure::message("the check could not run")),
            Act::Panic => panic!("score exploded"),
            Act::PanicOnSecondPoll => {
                tokio::task::yield_now().await;
                panic!("second poll exploded")
            }
            Act::Sleep(duration) => {
                tokio::time::sleep(duration).await;
                1.0
            }
        };
        let score = Score::new(value);
        Ok(match self.info {
            Some(info) => score.with_info(info),
            None => score,
        })
    }
}

fn sub(name: &str, value: f64, weight: f64) -> SubScore {
    SubScore::new(name, value)
        .unwrap()
        .with_weight(weight)
        .unwrap()
}

fn is_panicked(failure: &Failure) -> bool {
    matches!(failure, Failure::Panicked { .. })
}

// ---------------------------------------------------------------------------------------------
// No panic escapes.
// ---------------------------------------------------------------------------------------------

struct BadName;

impl Grader for BadName {
    fn name(&self) -> Cow<'_, str> {
        panic!("name exploded")
    }

    async fn score(self) -> Result<Score, Failure> {
        Ok(Score::new(1.0))
    }
}

struct BadResource;

impl Grader for BadResource {
    fn name(&self) -> Cow<'_, str> {
        "bad_resource".into()
    }

    fn resource(&self) -> Option<Resource> {
        panic!("resource exploded")
    }

    async fn score(self) -> Result<Score, Failure> {
        Ok(Score::new(1.0))
    }
}

/// Fails every time, so a retry clones it; cloning panics.
struct BadClone;

impl Clone for BadClone {
    fn clone(&self) -> Self {
        panic!("clone exploded")
    }
}

impl Grader for BadClone {
    fn name(&self) -> Cow<'_, str> {
        "bad_clone".into()
    }

    async fn score(self) -> Result<Score, Failure> {
        Err(Failure::message("flaky"))
    }
}

impl SyncGrader for BadClone {
    fn score_now(self) -> Result<Score, Failure> {
        Err(Failure::message("flaky"))
    }
}

/// A panic payload whose own drop panics.
struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        panic!("payload drop exploded")
    }
}

struct ThrowsBomb;

impl Grader for ThrowsBomb {
    fn name(&self) -> Cow<'_, str> {
        "throws_bomb".into()
    }

    async fn score(self) -> Result<Score, Failure> {
        std::panic::panic_any(Bomb)
    }
}

#[tokio::test]
async fn a_panicking_name_is_a_typed_failure_alone_in_a_gather_and_in_a_tree() {
    quiet();
    let error = BadName.grade(1.0).await.unwrap_err();
    assert!(is_panicked(&error.failure), "{error:?}");

    // In a gather the name is asked for when the item is added: the panic must still be
    // reported, not replaced by the type's name and forgotten.
    let result = Gather::new()
        .on_error(OnError::Zero)
        .add(BadName.grade(0.5))
        .add(sub("other", 1.0, 0.5))
        .await
        .unwrap();
    assert!(result.is_error, "{result:?}");
    assert!((result.reward() - 0.5).abs() < 1e-12, "{}", result.reward());

    let error = any("t", (BadName,)).grade(1.0).await.unwrap_err();
    let Failure::Children { failed, .. } = &error.failure else {
        panic!("{error:?}")
    };
    assert!(is_panicked(&failed[0].failure), "{failed:?}");
}

#[tokio::test]
async fn a_panicking_resource_is_a_typed_failure() {
    quiet();
    let limiter = Limiter::new().limit(Resource::Cpu, 1);
    let error = limiter.scope(BadResource.grade(1.0)).await.unwrap_err();
    assert!(is_panicked(&error.failure), "{error:?}");
}

#[tokio::test]
async fn a_panicking_clone_during_retries_is_a_typed_failure() {
    quiet();
    let error = BadClone.grade(1.0).retries(2).await.unwrap_err();
    assert!(is_panicked(&error.failure), "{error:?}");
    let result = Gather::new()
        .on_error(OnError::Zero)
        .add(BadClone.grade(0.5).retries(3))
        .add(sub("other", 1.0, 0.5))
        .await
        .unwrap();
    assert!(result.is_error);
}

#[test]
fn a_panicking_clone_during_synchronous_retries_is_a_typed_failure() {
    quiet();
    let error = BadClone.grade(1.0).retries(2).now().unwrap_err();
    assert!(is_panicked(&error.failure), "{error:?}");
}

#[tokio::test]
async fn a_panic_payload_whose_drop_panics_does_not_escape() {
    quiet();
    let error = ThrowsBomb.grade(1.0).await.unwrap_err();
    assert!(is_panicked(&error.failure), "{error:?}");
}

#[tokio::test]
async fn a_score_future_that_panics_on_its_second_poll_is_caught_everywhere() {
    quiet();
    let error = probe("p", Act::PanicOnSecondPoll)
        .grade(1.0)
        .await
        .unwrap_err();
    assert!(is_panicked(&error.failure));
    let result = Gather::new()
        .on_error(OnError::Zero)
        .add(probe("p", Act::PanicOnSecondPoll).grade(0.5))
        .add(all("t", (probe("q", Act::PanicOnSecondPoll), fixed_bare(1.0))).grade(0.5))
        .add(probe("ok", Act::Value(1.0)).grade(0.5))
        .await
        .unwrap();
    assert!(result.is_error);
    assert!(
        (result.reward() - 1.0 / 3.0).abs() < 1e-12,
        "{}",
        result.reward()
    );
    // Under Fail, a panic in a retried, time-limited grading in a cascade still comes back as
    // an error with its siblings kept.
    let error = Gather::new()
        .add(
            cascade(
                "c",
                1.0,
                (probe("q", Act::Panic)
                    .grade(1.0)
                    .retries(2)
                    .time_limit(Duration::from_secs(60)),),
            )
            .grade(0.5),
        )
        .add(probe("ok", Act::Value(1.0)).grade(0.5))
        .await
        .unwrap_err();
    assert_eq!(error.completed().count(), 1);
}

fn fixed_bare(value: f64) -> Fixed {
    Fixed { value }
}

#[tokio::test]
async fn a_panicking_condition_is_a_typed_failure_alone_and_in_a_gather() {
    quiet();
    let error = probe("p", Act::Value(1.0))
        .grade(1.0)
        .when(|_| panic!("condition exploded"))
        .await
        .unwrap_err();
    assert!(is_panicked(&error.failure), "{error:?}");
    let result = Gather::new()
        .on_error(OnError::Zero)
        .add(sub("other", 1.0, 0.5))
        .add(
            probe("p", Act::Value(1.0))
                .grade(0.5)
                .when(|_| panic!("condition exploded")),
        )
        .await
        .unwrap();
    assert!(result.is_error);
    assert_eq!(result.reward(), 0.5);
}

#[tokio::test]
async fn polling_a_finished_grading_or_gather_again_is_an_error_not_a_panic() {
    let mut grading = probe("p", Act::Value(1.0)).grade(1.0);
    assert_eq!((&mut grading).await.unwrap().value(), 1.0);
    let again = (&mut grading).await.unwrap_err();
    assert!(matches!(again.failure, Failure::Runtime(_)), "{again:?}");

    let mut gather = Gather::new().add(probe("p", Act::Value(1.0)).grade(1.0));
    assert_eq!((&mut gather).await.unwrap().reward(), 1.0);
    for _ in 0..2 {
        let again = (&mut gather).await.unwrap_err();
        assert!(
            again.to_string().contains("polled after it finished"),
            "{again}"
        );
    }

    let mut tree = all("t", (fixed_bare(1.0),)).grade(1.0);
    assert_eq!((&mut tree).await.unwrap().value(), 1.0);
    assert!((&mut tree).await.is_err());
}

#[test]
fn a_time_limit_on_a_runtime_without_a_timer_is_a_failure_not_a_panic() {
    quiet();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let outcome = runtime.block_on(
        probe("p", Act::Value(1.0))
            .grade(1.0)
            .time_limit(Duration::from_secs(1)),
    );
    assert!(outcome.is_err(), "{outcome:?}");
}

// ---------------------------------------------------------------------------------------------
// A failure, a skip or a time-out never helps the agent.
// ---------------------------------------------------------------------------------------------

/// Where the probe sits.
#[derive(Clone, Copy, Debug)]
enum Shape {
    Top,
    Any,
    All,
    CascadeLast,
    CascadeFirst,
    Nested,
}

/// What the agent made of the probe.
#[derive(Clone, Copy, Debug)]
enum Made {
    Scored(f64),
    Failed,
    Panicked,
    TimedOut,
    Skipped,
}

fn probe_grading(made: Made, weight: f64) -> Grading<'static, Probe> {
    let act = match made {
        Made::Scored(value) => Act::Value(value),
        Made::Failed => Act::Fail,
        Made::Panicked => Act::Panic,
        Made::TimedOut => Act::Sleep(Duration::from_secs(3600)),
        Made::Skipped => Act::Value(1.0),
    };
    let grading = probe("probe", act)
        .grade(weight)
        .time_limit(Duration::from_secs(10));
    match made {
        Made::Skipped => grading.when(|_| false),
        _ => grading,
    }
}

async fn reward(
    shape: Shape,
    weight: f64,
    child_weight: f64,
    policy: OnError,
    made: Made,
) -> Result<EvaluationResult, GatherError> {
    let gather = Gather::new().on_error(policy).add(sub("other", 0.5, 0.5));
    let child = probe_grading(made, child_weight);
    let gather = match shape {
        Shape::Top => gather.add(probe_grading(made, weight)),
        Shape::Any => gather.add(any("t", (child, fixed_bare(0.0))).grade(weight)),
        Shape::All => gather.add(all("t", (child, fixed_bare(1.0))).grade(weight)),
        Shape::CascadeLast => gather.add(cascade("t", 1.0, (fixed_bare(0.5), child)).grade(weight)),
        Shape::CascadeFirst => {
            gather.add(cascade("t", 1.0, (child, fixed_bare(0.5))).grade(weight))
        }
        Shape::Nested => gather.add(
            all(
                "outer",
                (any("inner", (child, fixed_bare(0.0))), fixed_bare(1.0)),
            )
            .grade(weight),
        ),
    };
    gather.await
}

#[tokio::test(start_paused = true)]
async fn no_failure_skip_or_time_out_scores_above_the_worst_success() {
    quiet();
    let shapes = [
        Shape::Top,
        Shape::Any,
        Shape::All,
        Shape::CascadeLast,
        Shape::CascadeFirst,
        Shape::Nested,
    ];
    let mut broken = Vec::new();
    for shape in shapes {
        for weight in [0.5, -0.5] {
            for child_weight in [1.0, -1.0] {
                for policy in [OnError::Zero, OnError::Exclude] {
                    let mut worst = f64::INFINITY;
                    for value in [0.0, 0.5, 1.0] {
                        let result =
                            reward(shape, weight, child_weight, policy, Made::Scored(value))
                                .await
                                .unwrap();
                        assert!(!result.is_error);
                        worst = worst.min(result.reward());
                    }
                    for made in [Made::Failed, Made::Panicked, Made::TimedOut, Made::Skipped] {
                        // A cascade decides what runs: its stages' conditions are not used.
                        if matches!(made, Made::Skipped)
                            && matches!(shape, Shape::CascadeFirst | Shape::CascadeLast)
                        {
                            continue;
                        }
                        // Excluding a failed positive grader from the normalization is what
                        // `Exclude` is for; it is flagged by `isError` (checked below).
                        let excluded = matches!(shape, Shape::Top)
                            && policy == OnError::Exclude
                            && weight > 0.0
                            && !matches!(made, Made::Skipped);
                        let result = reward(shape, weight, child_weight, policy, made)
                            .await
                            .unwrap();
                        if !matches!(made, Made::Skipped) {
                            assert!(result.is_error, "{shape:?} {made:?} {policy:?}");
                        }
                        if !excluded && result.reward() > worst + 1e-12 {
                            broken.push(format!(
                                "{shape:?} weight {weight} child weight {child_weight} \
                                 {policy:?} {made:?}: {} > worst success {worst}",
                                result.reward()
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[tokio::test]
async fn a_penalty_tree_whose_checks_fail_still_fires() {
    quiet();
    // "Did the agent do anything destructive?": each check scores 1.0 when it did. The agent
    // breaks the checks instead.
    let result = Gather::new()
        .on_error(OnError::Zero)
        .add(sub("tests", 1.0, 1.0))
        .add(
            any(
                "destructive",
                (probe("rm_rf", Act::Fail), probe("force_push", Act::Panic)),
            )
            .grade(-0.5),
        )
        .await
        .unwrap();
    assert!(result.is_error);
    assert_eq!(result.reward(), 0.5, "the failed checks count as fired");
    let node = result.subscore("destructive").unwrap();
    assert_eq!(node.value(), 1.0);

    // The same, graded synchronously from finished results.
    let broken = || probe("rm_rf", Act::Fail).grade(1.0).now_or_fail();
    let node = any("destructive", (broken(), sub("force_push", 0.0, 1.0)))
        .on_error(OnError::Zero)
        .grade(-0.5)
        .now()
        .unwrap();
    assert_eq!(node.value(), 1.0);
    let node = any("quality", (broken(), sub("lint", 0.0, 1.0)))
        .on_error(OnError::Zero)
        .grade(0.5)
        .now()
        .unwrap();
    assert_eq!(node.value(), 0.0);
}

trait NowOrFail {
    fn now_or_fail(self) -> Result<SubScore, grader_core::GraderError>;
}

impl NowOrFail for Grading<'static, Probe> {
    /// Runs a probe's grading to its outcome: it finishes at its first poll.
    fn now_or_fail(self) -> Result<SubScore, grader_core::GraderError> {
        futures_util::FutureExt::now_or_never(self).unwrap()
    }
}

#[tokio::test]
async fn a_cascade_whose_deciding_stage_fails() {
    quiet();
    // Under Fail the cascade fails, naming the stage.
    let error = cascade(
        "c",
        1.0,
        (
            probe("cheap", Act::Fail),
            probe("expensive", Act::Value(1.0)),
        ),
    )
    .grade(1.0)
    .await
    .unwrap_err();
    let Failure::Children { failed, total } = &error.failure else {
        panic!("{error:?}")
    };
    assert_eq!((failed[0].grader.as_str(), *total), ("cheap", 2));
    // Under Zero the next stage decides, as if the failed one had not reached the threshold.
    let node = cascade(
        "c",
        1.0,
        (
            probe("cheap", Act::Fail),
            probe("expensive", Act::Value(0.25)),
        ),
    )
    .on_error(OnError::Zero)
    .grade(1.0)
    .await
    .unwrap();
    assert_eq!(node.value(), 0.25);
    assert_eq!(node.info().unwrap()["stages"][0]["value"], Value::Null);
}

#[tokio::test]
async fn required_items_zero_the_reward_but_penalties_still_count() {
    quiet();
    for made in [Made::Failed, Made::Skipped, Made::Scored(0.5)] {
        let result = Gather::new()
            .on_error(OnError::Zero)
            .add(sub("quality", 1.0, 0.5))
            .add(probe_grading(made, 0.5).required())
            .add(sub("rm_rf", 1.0, -0.25))
            .await
            .unwrap();
        assert_eq!(result.reward(), -0.25, "{made:?}");
        assert_eq!(result.info["zeroed_by"], json!(["probe"]));
    }
}

#[tokio::test]
async fn a_failed_positive_grader_under_exclude_leaves_the_normalization_and_sets_is_error() {
    quiet();
    // Documented behaviour of `Exclude`, kept here so that a change is deliberate: the failed
    // grader does not count, so the reward is that of the others alone.
    let result = Gather::new()
        .on_error(OnError::Exclude)
        .add(sub("other", 1.0, 0.5))
        .add(probe("probe", Act::Fail).grade(0.5))
        .await
        .unwrap();
    assert_eq!(result.reward(), 1.0);
    assert!(result.is_error);
    assert_eq!(result.subscore("probe").unwrap().weight(), 0.0);
}

// ---------------------------------------------------------------------------------------------
// Info that looks like the library's own markers.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_grader_reporting_skipped_tests_in_its_info_is_not_taken_as_skipped() {
    // A test runner that ran, passed everything it ran, and reports how many tests it skipped.
    let tests = || probe("tests", Act::Value(1.0)).info(json!({"passed": 9, "skipped": 1}));
    let result = Gather::new()
        .add(tests().grade(0.5).required())
        .add(
            probe("review", Act::Value(1.0))
                .grade(0.5)
                .when(|earlier| earlier.passed("tests") && earlier.all_passed()),
        )
        .await
        .unwrap();
    assert_eq!(result.reward(), 1.0, "{:?}", result.info);
    assert!(result.info.get("zeroed_by").is_none());
    assert!(
        result
            .subscore("review")
            .unwrap()
            .info()
            .unwrap()
            .get("skipped")
            .is_none()
    );

    // A cascade's last stage that reports skipped tests is the cascade's value, not the
    // (higher) value of the stage before it.
    let node = cascade(
        "c",
        1.0,
        (
            probe("cheap", Act::Value(0.8)),
            probe("tests", Act::Value(0.1)).info(json!({"skipped": 4})),
        ),
    )
    .grade(1.0)
    .await
    .unwrap();
    assert_eq!(node.value(), 0.1);
    assert_eq!(node.info().unwrap()["stages"][1]["value"], 0.1);
}

#[tokio::test]
async fn a_grader_reporting_an_error_key_in_its_info_is_not_taken_as_failed() {
    let node = cascade(
        "c",
        1.0,
        (
            probe("lint", Act::Value(1.0)).info(json!({"error": null, "warnings": 0})),
            probe("expensive", Act::Value(0.0)),
        ),
    )
    .grade(1.0)
    .await
    .unwrap();
    assert_eq!(node.value(), 1.0);
    assert_eq!(node.info().unwrap()["decided_by"], "lint");
}

// ---------------------------------------------------------------------------------------------
// Conditions.
// ---------------------------------------------------------------------------------------------

/// Finishes only once `gate` is opened.
struct Gated {
    name: &'static str,
    gate: Arc<tokio::sync::Notify>,
}

impl Grader for Gated {
    fn name(&self) -> Cow<'_, str> {
        self.name.into()
    }

    async fn score(self) -> Result<Score, Failure> {
        self.gate.notified().await;
        Ok(Score::new(1.0))
    }
}

/// Opens `gate` and passes.
struct Opener {
    gate: Arc<tokio::sync::Notify>,
}

impl Grader for Opener {
    fn name(&self) -> Cow<'_, str> {
        "opener".into()
    }

    async fn score(self) -> Result<Score, Failure> {
        self.gate.notify_one();
        Ok(Score::new(1.0))
    }
}

#[tokio::test]
async fn a_condition_waits_for_every_earlier_item_but_blocks_no_later_one() {
    // `slow` finishes only when `opener`, added after the conditional item, has run: if the
    // conditional item held back the items after it, this would never finish.
    for limit in [None, Some(2)] {
        let gate = Arc::new(tokio::sync::Notify::new());
        let mut gather = Gather::new()
            .add(Gated {
                name: "slow",
                gate: Arc::clone(&gate),
            })
            .add(sub("ready", 1.0, 1.0))
            .add(
                probe("checked", Act::Value(1.0))
                    .grade(1.0)
                    .when(|earlier| {
                        let names: Vec<&str> = earlier.iter().map(|(name, _)| name).collect();
                        names == ["slow", "ready"] && earlier.all_passed()
                    }),
            )
            .add(Opener { gate });
        if let Some(limit) = limit {
            gather = gather.limit(limit);
        }
        let result = gather.await.unwrap();
        assert_eq!(result.reward(), 1.0, "limit {limit:?}: {:?}", result.info);
    }
}

#[tokio::test]
async fn a_condition_on_an_item_that_failed_under_fail() {
    quiet();
    let error = Gather::new()
        .add(probe("tests", Act::Fail).grade(0.5))
        .add(
            probe("review", Act::Value(1.0))
                .grade(0.5)
                .when(|earlier| earlier.passed("tests")),
        )
        .await
        .unwrap_err();
    let GatherError::Graders { outcomes } = &error else {
        panic!("{error:?}")
    };
    assert!(outcomes[0].is_err());
    let review = outcomes[1].as_ref().unwrap();
    assert!(review.info().unwrap()["skipped"].is_string());
}

#[tokio::test]
async fn a_failed_item_is_not_passed_over_for_a_later_one_of_the_same_name() {
    quiet();
    // Two checks with the same name; the first (the real test suite) is broken by the agent,
    // the second passes. The condition asks about "tests": the broken one must answer.
    let result = Gather::new()
        .on_error(OnError::Zero)
        .add(probe("tests", Act::Fail).grade(0.4))
        .add(probe("tests", Act::Value(1.0)).grade(0.2))
        .add(
            probe("bonus", Act::Value(1.0))
                .grade(0.4)
                .when(|earlier| earlier.passed("tests")),
        )
        .await
        .unwrap();
    let bonus = result.subscore("bonus").unwrap();
    assert!(bonus.info().unwrap()["skipped"].is_string(), "{bonus:?}");
    assert!((result.reward() - 0.2).abs() < 1e-12, "{}", result.reward());
}

#[tokio::test]
async fn conditions_on_cascade_stages_are_not_used() {
    let node = cascade(
        "c",
        1.0,
        (
            probe("cheap", Act::Value(0.0)),
            probe("expensive", Act::Value(1.0))
                .grade(1.0)
                .when(|earlier| earlier.passed("cheap")),
        ),
    )
    .grade(1.0)
    .await
    .unwrap();
    assert_eq!(node.value(), 1.0);
    assert_eq!(node.info().unwrap()["decided_by"], "expensive");
}

// ---------------------------------------------------------------------------------------------
// Names and redaction.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn empty_and_colliding_names() {
    let result = Gather::new()
        .add(any("", (fixed_bare(1.0),)).grade(0.25))
        .add(all("", (fixed_bare(0.0),)).grade(0.25))
        .add(fixed_bare(1.0).grade(0.25).named("probe"))
        .add(probe("probe", Act::Value(0.0)).grade(0.25))
        .await
        .unwrap();
    assert_eq!(
        grader_tests::names(&result),
        ["-1", "-2", "probe-1", "probe-2"]
    );
    assert_eq!(result.reward(), 0.5);
    // Each is found by its final name.
    assert_eq!(result.subscore("probe-1").unwrap().value(), 1.0);
    assert_eq!(result.subscore("probe-2").unwrap().value(), 0.0);
}

#[tokio::test]
async fn a_misspelt_redaction_never_leaks_another_redacted_value() {
    for order in [["typo", "answer"], ["answer", "typo"]] {
        let mut grading = ExactMatch {
            answer: "the secret answer",
            expected: "x",
            normalize_text: true,
        }
        .grade(1.0);
        for name in order {
            grading = grading.redact(name);
        }
        let error = grading.await.unwrap_err();
        assert!(
            matches!(&error.failure, Failure::UnknownParameter { name, .. } if name == "typo"),
            "{error:?}"
        );
        assert_eq!(error.parameters["answer"], "<redacted>", "{order:?}");
        assert!(!error.to_string().contains("secret"));
        // Under a lenient policy the parameters go in the breakdown: still redacted.
        let result = Gather::new()
            .on_error(OnError::Zero)
            .add(sub("other", 1.0, 1.0))
            .add(Err(error))
            .await
            .unwrap();
        assert!(!serde_json::to_string(&result).unwrap().contains("secret"));
    }
}

#[tokio::test]
async fn is_error_rises_from_lenient_trees_at_any_depth() {
    quiet();
    let result = Gather::new()
        .add(sub("tests", 1.0, 0.5))
        .add(
            all(
                "outer",
                (
                    any("inner", (probe("broken", Act::Panic), fixed_bare(1.0)))
                        .on_error(OnError::Exclude),
                    fixed_bare(1.0),
                ),
            )
            .grade(0.5),
        )
        .await
        .unwrap();
    assert!(result.is_error, "a failure scored deep inside is flagged");
    assert_eq!(result.reward(), 1.0);

    // A tree graded inside a hand-written grader inside the gather: still flagged.
    struct Wraps;
    impl Grader for Wraps {
        fn name(&self) -> Cow<'_, str> {
            "wraps".into()
        }
        async fn score(self) -> Result<Score, Failure> {
            let sub = all("t", (probe("broken", Act::Fail), fixed_bare(1.0)))
                .on_error(OnError::Zero)
                .grade(1.0)
                .await
                .map_err(Failure::message)?;
            Ok(Score::new(sub.value()))
        }
    }
    let result = Gather::new().add(Wraps.grade(1.0)).await.unwrap();
    assert!(result.is_error);
}

// ---------------------------------------------------------------------------------------------
// The shared limiter.
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_limiter_holds_across_gathers_trees_retries_and_time_limits() {
    let limiter = Limiter::new().limit(Resource::Cpu, 2);
    let gauge = Arc::new(Gauge::default());
    let gathers = (0..12).map(|round| {
        let gauge = Arc::clone(&gauge);
        let mut gather = Gather::new().limiter(&limiter).on_error(OnError::Zero);
        for _ in 0..3 {
            gather = gather
                .add(
                    probe("p", Act::Value(1.0))
                        .gauge(&gauge)
                        .grade(1.0)
                        .resource(Resource::Cpu),
                )
                .add(
                    probe("slow", Act::Sleep(Duration::from_secs(3600)))
                        .gauge(&gauge)
                        .grade(1.0)
                        .resource(Resource::Cpu)
                        .time_limit(Duration::from_millis(5))
                        .retries(1),
                )
                .add(
                    probe("flaky", Act::Fail)
                        .gauge(&gauge)
                        .grade(1.0)
                        .resource(Resource::Cpu)
                        .retries(2),
                );
        }
        if round % 2 == 0 {
            gather = gather.add(
                all(
                    "tree",
                    vec![
                        probe("a", Act::Value(1.0))
                            .gauge(&gauge)
                            .grade(1.0)
                            .resource(Resource::Cpu),
                        probe("b", Act::Value(1.0))
                            .gauge(&gauge)
                            .grade(1.0)
                            .resource(Resource::Cpu),
                    ],
                )
                .grade(1.0),
            );
        }
        gather
    });
    for result in futures_util::future::join_all(gathers).await {
        assert!(result.unwrap().is_error);
    }
    assert!(gauge.max() <= 2, "{} at once", gauge.max());
    assert!(gauge.max() >= 1);
    assert_eq!(
        limiter.in_use(&Resource::Cpu),
        0,
        "every slot was given back"
    );
}

/// A grader that takes a CPU slot of the outer limiter and grades a gather of its own under
/// another limiter.
struct GathersUnder {
    inner: Limiter,
    gauge: Arc<Gauge>,
}

impl Grader for GathersUnder {
    fn name(&self) -> Cow<'_, str> {
        "gathers_under".into()
    }

    fn resource(&self) -> Option<Resource> {
        Some(Resource::Cpu)
    }

    async fn score(self) -> Result<Score, Failure> {
        let gather = Gather::new().limiter(&self.inner).extend((0..4).map(|_| {
            probe("p", Act::Value(1.0))
                .gauge(&self.gauge)
                .grade(1.0)
                .resource(Resource::Cpu)
        }));
        let result = gather.await.map_err(Failure::message)?;
        Ok(Score::new(result.reward()))
    }
}

#[tokio::test]
async fn a_slot_held_under_one_limiter_does_not_lift_another_limiters_limit() {
    let outer = Limiter::new().limit(Resource::Cpu, 1);
    let inner = Limiter::new().limit(Resource::Cpu, 1);
    let gauge = Arc::new(Gauge::default());
    let result = Gather::new()
        .limiter(&outer)
        .add(GathersUnder {
            inner: inner.clone(),
            gauge: Arc::clone(&gauge),
        })
        .await
        .unwrap();
    assert_eq!(result.reward(), 1.0);
    assert_eq!(gauge.max(), 1, "the inner limiter allows one at a time");
    // The same limiter again is re-entrant: no deadlock.
    let result = Gather::new()
        .limiter(&outer)
        .add(GathersUnder {
            inner: outer.clone(),
            gauge: Arc::new(Gauge::default()),
        })
        .await
        .unwrap();
    assert_eq!(result.reward(), 1.0);
}

#[tokio::test]
async fn nested_trees_of_one_class_with_one_slot_do_not_deadlock() {
    let limiter = Limiter::new()
        .limit(Resource::Cpu, 1)
        .limit(Resource::Judge, 1);
    let cpu = |name| {
        probe(name, Act::Value(1.0))
            .grade(1.0)
            .resource(Resource::Cpu)
    };
    let tree = all(
        "outer",
        (
            any("inner", (cpu("a"), cpu("b")))
                .grade(1.0)
                .resource(Resource::Cpu),
            cpu("c"),
            any("judged", (cpu("d"),))
                .grade(1.0)
                .resource(Resource::Judge),
        ),
    );
    let gathers = (0..20).map(|_| {
        Gather::new()
            .limiter(&limiter)
            .add(
                all(
                    "outer",
                    (
                        any("inner", (cpu("a"), cpu("b")))
                            .grade(1.0)
                            .resource(Resource::Cpu),
                        cpu("c"),
                    ),
                )
                .grade(1.0)
                .resource(Resource::Cpu),
            )
            .add(cpu("e"))
    });
    for result in futures_util::future::join_all(gathers).await {
        assert_eq!(result.unwrap().reward(), 1.0);
    }
    let result = Gather::new()
        .limiter(&limiter)
        .add(tree.grade(1.0))
        .await
        .unwrap();
    assert_eq!(result.reward(), 1.0);
    assert_eq!(limiter.in_use(&Resource::Cpu), 0);
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_or_dropped_grading_gives_its_slot_back() {
    let limiter = Limiter::new().limit(Resource::Cpu, 1);
    let forever = || probe("forever", Act::Sleep(Duration::from_secs(1 << 20)));
    // Timed out: the next grading gets the slot.
    let result = Gather::new()
        .limiter(&limiter)
        .on_error(OnError::Zero)
        .add(
            forever()
                .grade(0.5)
                .resource(Resource::Cpu)
                .time_limit(Duration::from_secs(1))
                .retries(2),
        )
        .add(
            probe("next", Act::Value(1.0))
                .grade(0.5)
                .resource(Resource::Cpu),
        )
        .await
        .unwrap();
    assert_eq!(result.reward(), 0.5);
    assert_eq!(limiter.in_use(&Resource::Cpu), 0);
    // Dropped: the gather is dropped while its grader holds the slot.
    let gather = Gather::new()
        .limiter(&limiter)
        .add(forever().grade(1.0).resource(Resource::Cpu));
    assert!(
        tokio::time::timeout(Duration::from_secs(5), gather)
            .await
            .is_err()
    );
    assert_eq!(limiter.in_use(&Resource::Cpu), 0);
    // A grading dropped while waiting for the slot does not take it later either.
    let holder = limiter.scope(forever().grade(1.0).resource(Resource::Cpu));
    let waiter = limiter.scope(forever().grade(1.0).resource(Resource::Cpu));
    let both = futures_util::future::join(holder, waiter);
    assert!(
        tokio::time::timeout(Duration::from_secs(5), both)
            .await
            .is_err()
    );
    assert_eq!(limiter.in_use(&Resource::Cpu), 0);
}

// ---------------------------------------------------------------------------------------------
// Nothing keeps running.
// ---------------------------------------------------------------------------------------------

/// A string of digits unique to this call, for `sleep 1000.<marker>`.
fn marker() -> String {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{}{:06}{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos() % 1_000_000),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Pids of live (not zombie) processes whose command line mentions `mark`.
fn live(mark: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            !zombie && String::from_utf8_lossy(&cmdline).contains(mark)
        })
        .collect()
}

/// Waits (a generous while) for every process mentioning `mark` to be gone.
async fn survivors(mark: &str) -> Vec<u32> {
    for _ in 0..200 {
        if live(mark).is_empty() {
            return Vec::new();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    live(mark)
}

fn sleeper(mark: &str) -> BashGrader {
    BashGrader::new(format!("sleep 1000.{mark}"))
        .env("HOME", std::env::temp_dir())
        .kill_grace(Duration::from_millis(100))
}

#[tokio::test]
async fn time_limits_and_retries_leave_no_command_running() {
    if !Path::new("/proc").exists() {
        return;
    }
    let mark = marker();
    let result = Gather::new()
        .on_error(OnError::Zero)
        .add(sub("other", 1.0, 0.5))
        .add(
            all(
                "t",
                (sleeper(&mark)
                    .grade(1.0)
                    .time_limit(Duration::from_millis(300))
                    .retries(2),),
            )
            .grade(0.5),
        )
        .await
        .unwrap();
    assert!(result.is_error);
    let child = &result.subscore("t").unwrap().children().unwrap()[0];
    assert!(
        child.info().unwrap()["error"]
            .as_str()
            .unwrap()
            .contains("time limit")
    );
    assert_eq!(survivors(&mark).await, Vec::<u32>::new());
}

#[tokio::test]
async fn dropping_a_gather_of_trees_with_retries_leaves_no_command_running() {
    if !Path::new("/proc").exists() {
        return;
    }
    let mark = marker();
    let limiter = Limiter::new().limit(Resource::Commands, 2);
    let gather = Gather::new()
        .limiter(&limiter)
        .add(
            any(
                "t",
                (
                    sleeper(&mark)
                        .grade(1.0)
                        .time_limit(Duration::from_secs(600))
                        .retries(3),
                    cascade("c", 1.0, (sleeper(&mark),)),
                ),
            )
            .grade(0.5),
        )
        .add(sleeper(&mark).grade(0.5).retries(3));
    let mut gather = Box::pin(gather);
    let mut started = false;
    for _ in 0..400 {
        tokio::select! {
            _ = &mut gather => panic!("the gather finished; its commands sleep for 1000 s"),
            () = tokio::time::sleep(Duration::from_millis(25)) => {}
        }
        if live(&mark).len() >= 2 {
            started = true;
            break;
        }
    }
    assert!(started, "the commands never started");
    assert_eq!(limiter.in_use(&Resource::Commands), 2);
    drop(gather);
    assert_eq!(limiter.in_use(&Resource::Commands), 0);
    assert_eq!(survivors(&mark).await, Vec::<u32>::new());
}

// ---------------------------------------------------------------------------------------------
// Send and 'static.
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gradings_trees_and_gathers_of_owned_graders_can_be_spawned() {
    let grading = tokio::spawn(probe("p", Act::Value(1.0)).grade(0.5).retries(1));
    let tree = tokio::spawn(
        all(
            "t",
            vec![probe("a", Act::Value(1.0)), probe("b", Act::Value(0.5))],
        )
        .grade(1.0)
        .time_limit(Duration::from_secs(60)),
    );
    let gather = tokio::spawn(
        Gather::new()
            .add(probe("a", Act::Value(1.0)).grade(1.0))
            .add(cascade("c", 1.0, (Fixed { value: 1.0 },)).grade(1.0)),
    );
    assert_eq!(grading.await.unwrap().unwrap().weight(), 0.5);
    assert_eq!(tree.await.unwrap().unwrap().value(), 0.5);
    assert_eq!(gather.await.unwrap().unwrap().reward(), 1.0);
}

#[tokio::test]
async fn a_gather_borrowing_locals_works() {
    let answer = String::from("Paris");
    let expected = String::from("paris");
    let result = Gather::new()
        .add(
            ExactMatch {
                answer: &answer,
                expected: &expected,
                normalize_text: true,
            }
            .grade(0.5)
            .when(|earlier| earlier.iter().count() == 0),
        )
        .add(any(
            "t",
            (ExactMatch {
                answer: &answer,
                expected: "lyon",
                normalize_text: true,
            },),
        ))
        .await
        .unwrap();
    assert!((result.reward() - 1.0 / 3.0).abs() < 1e-12);
    drop((answer, expected));
}

/// Takes a slot per call it makes, as a judge does per criterion, with its calls concurrent.
struct CallsConcurrently {
    gauge: Arc<Gauge>,
}

impl Grader for CallsConcurrently {
    fn name(&self) -> Cow<'_, str> {
        "calls_concurrently".into()
    }

    async fn score(self) -> Result<Score, Failure> {
        let calls = (0..4).map(|_| async {
            let _permit = grader_core::limit::acquire(Resource::Judge).await;
            let _inside = self.gauge.enter();
            tokio::time::sleep(Duration::from_millis(2)).await;
        });
        futures_util::future::join_all(calls).await;
        Ok(Score::new(1.0))
    }
}

#[tokio::test(start_paused = true)]
async fn children_sharing_their_parents_slot_take_turns_in_it() {
    let limiter = Limiter::new()
        .limit(Resource::Cpu, 1)
        .limit(Resource::Judge, 2);
    let gauge = Arc::new(Gauge::default());
    let cpu = || {
        probe("p", Act::Value(1.0))
            .gauge(&gauge)
            .grade(1.0)
            .resource(Resource::Cpu)
    };
    let tree = all(
        "t",
        (
            cpu(),
            cpu(),
            any("inner", (cpu(), cpu()))
                .grade(1.0)
                .resource(Resource::Cpu),
            cpu(),
        ),
    );
    let result = Gather::new()
        .limiter(&limiter)
        .add(tree.grade(1.0).resource(Resource::Cpu))
        .add(cpu())
        .await
        .unwrap();
    assert_eq!(result.reward(), 1.0);
    assert_eq!(gauge.max(), 1, "one CPU-heavy check at a time");

    // Calls of a grader graded as one judge call take turns in that one slot; ungraded as a
    // judge call, they take up to the limit.
    let gauge = Arc::new(Gauge::default());
    let grader = || CallsConcurrently {
        gauge: Arc::clone(&gauge),
    };
    Gather::new()
        .limiter(&limiter)
        .add(grader().grade(1.0).resource(Resource::Judge))
        .await
        .unwrap();
    assert_eq!(gauge.max(), 1);
    Gather::new()
        .limiter(&limiter)
        .add(grader().grade(1.0))
        .await
        .unwrap();
    assert_eq!(gauge.max(), 2);
    assert_eq!(limiter.in_use(&Resource::Judge), 0);
}

/// Awaits a penalty's grading on its own, inside its own check, and reports its value.
struct AwaitsPenalty;

impl Grader for AwaitsPenalty {
    fn name(&self) -> Cow<'_, str> {
        "awaits_penalty".into()
    }

    async fn score(self) -> Result<Score, Failure> {
        let penalty = probe("p", Act::Value(0.0))
            .grade(-1.0)
            .when(|_| false)
            .await
            .map_err(Failure::message)?;
        Ok(Score::new(penalty.value()))
    }
}

#[tokio::test]
async fn a_grading_awaited_on_its_own_takes_its_direction_from_its_own_weight() {
    // Skipped on its own, a penalty counts as fired, even when awaited by a check inside a
    // tree that counts for the agent.
    let node = any("t", (AwaitsPenalty,)).grade(1.0).await.unwrap();
    assert_eq!(node.value(), 1.0);
    let sub = probe("p", Act::Value(0.0))
        .grade(-1.0)
        .when(|_| false)
        .now_or_fail()
        .unwrap();
    assert_eq!(sub.value(), 1.0);
}

/// Grades a gather of its own, in which one check fails under `Zero`, and reports its reward.
struct GathersLeniently;

impl Grader for GathersLeniently {
    fn name(&self) -> Cow<'_, str> {
        "gathers_leniently".into()
    }

    async fn score(self) -> Result<Score, Failure> {
        let result = Gather::new()
            .on_error(OnError::Zero)
            .add(probe("broken", Act::Fail).grade(0.5))
            .add(probe("ok", Act::Value(1.0)).grade(0.5))
            .await
            .map_err(Failure::message)?;
        assert!(result.is_error);
        Ok(Score::new(result.reward()))
    }
}

#[tokio::test]
async fn is_error_rises_from_a_lenient_gather_inside_a_grader() {
    quiet();
    let result = Gather::new().add(GathersLeniently).await.unwrap();
    assert_eq!(result.reward(), 0.5);
    assert!(
        result.is_error,
        "a failure scored by an inner gather is flagged"
    );
    let result = Gather::new()
        .add(all("t", (GathersLeniently,)))
        .await
        .unwrap();
    assert!(result.is_error);
}
