//! `Gather` (R16, D5): input order, concurrency, the limit, the three failure policies, and
//! that nothing keeps running once the gather is dropped.
//!
//! Overlap is shown with counters of how many graders run at once and with tokio's paused
//! clock (a sleep advances virtual time only), so nothing here depends on the machine's speed.

use grader_tests::names;
use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use grader_core::{
    CombineError, EvaluationResult, Failure, Gather, GatherError, Grader, OnError, Score, SubScore,
};
use serde_json::Value;

/// Records how many graders run at once and the order they start and finish in.
#[derive(Default)]
struct Tracker {
    running: AtomicUsize,
    most: AtomicUsize,
    events: Mutex<Vec<String>>,
}

impl Tracker {
    fn start(&self, name: &str) {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        self.events
            .lock()
            .expect("lock")
            .push(format!("start {name}"));
    }

    fn end(&self, name: &str) {
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.events
            .lock()
            .expect("lock")
            .push(format!("end {name}"));
    }

    fn events(&self) -> Vec<String> {
        self.events.lock().expect("lock").clone()
    }
}

/// Sleeps, then scores `value` (or fails with `error`).
struct Sleepy {
    name: String,
    value: f64,
    delay: Duration,
    error: Option<&'static str>,
    tracker: Arc<Tracker>,
}

impl Sleepy {
    fn new(tracker: &Arc<Tracker>, name: &str, value: f64, delay_ms: u64) -> Self {
        Sleepy {
            name: name.to_owned(),
            value,
            delay: Duration::from_millis(delay_ms),
            error: None,
            tracker: Arc::clone(tracker),
        }
    }

    fn failing(mut self, message: &'static str) -> Self {
        self.error = Some(message);
        self
    }
}

impl Grader for Sleepy {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.name)
    }

    fn parameters(&self) -> grader_core::Info {
        let mut params = grader_core::Info::new();
        params.insert(
            "delay_ms".into(),
            grader_core::params::json_safe(&self.delay.as_millis(), "u128"),
        );
        params
    }

    async fn score(self) -> Result<Score, Failure> {
        self.tracker.start(&self.name);
        tokio::time::sleep(self.delay).await;
        self.tracker.end(&self.name);
        match self.error {
            Some(message) => Err(Failure::message(message)),
            None => Ok(Score::new(self.value)),
        }
    }
}

fn sub(name: &str, value: f64, weight: f64) -> SubScore {
    SubScore::new(name, value)
        .and_then(|s| s.with_weight(weight))
        .expect("valid")
}

fn weights(result: &EvaluationResult) -> Vec<f64> {
    result
        .subscores
        .as_deref()
        .expect("subscores")
        .iter()
        .map(SubScore::weight)
        .collect()
}

#[tokio::test(start_paused = true)]
async fn pending_graders_overlap_and_input_order_is_kept() {
    let tracker = Arc::new(Tracker::default());
    let started = tokio::time::Instant::now();
    let mut gather = Gather::new();
    for i in 0..10_u64 {
        // Later graders finish first.
        let grader = Sleepy::new(&tracker, &format!("g{i}"), 1.0, 100 + 10 * (9 - i));
        gather = gather.add(grader.grade(0.1));
        if i % 3 == 0 {
            gather = gather.add(sub(&format!("r{i}"), 0.0, 0.1));
        }
    }
    let result = gather.await.expect("gathers");
    assert_eq!(
        names(&result),
        [
            "g0", "r0", "g1", "g2", "g3", "r3", "g4", "g5", "g6", "r6", "g7", "g8", "g9", "r9"
        ]
    );
    assert_eq!(
        tracker.most.load(Ordering::SeqCst),
        10,
        "all ten ran at once"
    );
    let events = tracker.events();
    assert!(
        events[..10].iter().all(|e| e.starts_with("start")),
        "every grader started before any finished: {events:?}"
    );
    assert_eq!(events[10], "end g9", "{events:?}");
    // Concurrent: the longest sleep (190 ms of virtual time), not the sum (1450 ms).
    assert_eq!(started.elapsed(), Duration::from_millis(190));
    assert!(
        (result.reward() - 10.0 / 14.0).abs() < 1e-12,
        "{}",
        result.reward()
    );
    assert!(!result.is_error);
}

#[tokio::test(start_paused = true)]
async fn the_limit_bounds_how_many_run_at_once() {
    for limit in [1, 3, 7] {
        let tracker = Arc::new(Tracker::default());
        let started = tokio::time::Instant::now();
        let mut gather = Gather::new().limit(limit);
        for i in 0..10 {
            gather = gather.add(Sleepy::new(&tracker, &format!("g{i}"), 0.5, 100).grade(1.0));
        }
        let result = gather.await.expect("gathers");
        assert_eq!(tracker.most.load(Ordering::SeqCst), limit, "limit {limit}");
        assert_eq!(result.subscores.as_deref().expect("subscores").len(), 10);
        // Waves of `limit` graders of 100 ms each.
        let waves = 10_u64.div_ceil(limit as u64);
        assert_eq!(
            started.elapsed(),
            Duration::from_millis(100 * waves),
            "limit {limit}"
        );
        // Graders start in input order.
        let starts: Vec<String> = tracker
            .events()
            .into_iter()
            .filter_map(|e| e.strip_prefix("start ").map(str::to_owned))
            .collect();
        let expected: Vec<String> = (0..10).map(|i| format!("g{i}")).collect();
        assert_eq!(starts, expected);
    }
}

#[tokio::test(start_paused = true)]
async fn a_limit_of_zero_runs_one_at_a_time() {
    let tracker = Arc::new(Tracker::default());
    let mut gather = Gather::new().limit(0);
    for i in 0..4 {
        gather = gather.add(Sleepy::new(&tracker, &format!("g{i}"), 0.5, 10).grade(1.0));
    }
    gather.await.expect("gathers");
    assert_eq!(tracker.most.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn graders_run_concurrently_on_a_multi_threaded_runtime_too() {
    // `Gather` is `Send`, so it can be spawned; the graders still overlap inside that task.
    let tracker = Arc::new(Tracker::default());
    let inner = Arc::clone(&tracker);
    let handle = tokio::spawn(async move {
        let mut gather = Gather::new();
        for i in 0..5 {
            gather = gather.add(Sleepy::new(&inner, &format!("g{i}"), 1.0, 50).grade(1.0));
        }
        gather.await
    });
    let result = handle.await.expect("joins").expect("gathers");
    assert_eq!(result.reward(), 1.0);
    assert_eq!(tracker.most.load(Ordering::SeqCst), 5);
}

/// Three graders: `ok-fast`, `broken` (fails after 20 ms) and `ok-slow` (finishes after the
/// failure), plus a ready subscore.
fn mixed(tracker: &Arc<Tracker>, policy: OnError) -> Gather<'static> {
    Gather::new()
        .on_error(policy)
        .add(sub("ready", 1.0, 0.25))
        .add(Sleepy::new(tracker, "ok-fast", 1.0, 10).grade(0.25))
        .add(
            Sleepy::new(tracker, "broken", 1.0, 20)
                .failing("database unreachable")
                .grade(0.25),
        )
        .add(Sleepy::new(tracker, "ok-slow", 0.5, 30).grade(0.25))
}

#[tokio::test(start_paused = true)]
async fn fail_policy_errors_but_keeps_every_siblings_result() {
    let tracker = Arc::new(Tracker::default());
    let error = mixed(&tracker, OnError::Fail)
        .await
        .expect_err("a grader failed");
    let GatherError::Graders { outcomes } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(outcomes.len(), 4);
    assert_eq!(outcomes[0].as_ref().expect("ready").name(), "ready");
    assert_eq!(outcomes[1].as_ref().expect("ok-fast").name(), "ok-fast");
    let failure = outcomes[2].as_ref().expect_err("broken");
    assert_eq!(failure.grader, "broken");
    assert_eq!(failure.weight, 0.25);
    // The slower sibling was not cancelled by the failure: its result is there.
    let slow = outcomes[3].as_ref().expect("ok-slow");
    assert_eq!((slow.name(), slow.value()), ("ok-slow", 0.5));
    assert_eq!(
        error.completed().map(SubScore::name).collect::<Vec<_>>(),
        ["ready", "ok-fast", "ok-slow"]
    );
    assert_eq!(
        error
            .failures()
            .map(|f| f.grader.as_str())
            .collect::<Vec<_>>(),
        ["broken"]
    );
    let message = error.to_string();
    assert!(
        message.contains("1 of 4")
            && message.contains("broken")
            && message.contains("database unreachable"),
        "{message}"
    );
    assert_eq!(tracker.events().len(), 6, "every grader ran to the end");
}

#[tokio::test(start_paused = true)]
async fn fail_is_the_default_policy() {
    let tracker = Arc::new(Tracker::default());
    let error = Gather::new()
        .add(Sleepy::new(&tracker, "x", 1.0, 1).failing("no").grade(1.0))
        .await
        .expect_err("default is fail");
    assert!(matches!(error, GatherError::Graders { .. }), "{error:?}");
}

fn error_text(sub: &SubScore) -> &str {
    match &sub.info().expect("info")["error"] {
        Value::String(text) => text,
        other => panic!("info.error is {other}"),
    }
}

#[tokio::test(start_paused = true)]
async fn zero_policy_scores_the_failure_zero_at_its_weight() {
    let tracker = Arc::new(Tracker::default());
    let result = mixed(&tracker, OnError::Zero).await.expect("lenient");
    assert_eq!(names(&result), ["ready", "ok-fast", "broken", "ok-slow"]);
    assert_eq!(weights(&result), [0.25; 4]);
    let broken = &result.subscores.as_deref().expect("subscores")[2];
    assert_eq!(broken.value(), 0.0);
    let text = error_text(broken);
    assert!(
        text.contains("broken") && text.contains("database unreachable"),
        "{text}"
    );
    // What the failed grader was given is kept beside its error.
    let params = &broken.info().expect("info")["_parameters"];
    assert!(params["delay_ms"].is_u64(), "{params}");
    assert!(result.is_error, "a failure is never silently a 0.0");
    assert!(
        (result.reward() - 0.25 * 2.5).abs() < 1e-12,
        "{}",
        result.reward()
    );
}

#[tokio::test(start_paused = true)]
async fn exclude_policy_keeps_the_failure_at_weight_zero() {
    let tracker = Arc::new(Tracker::default());
    let result = mixed(&tracker, OnError::Exclude).await.expect("lenient");
    assert_eq!(names(&result), ["ready", "ok-fast", "broken", "ok-slow"]);
    let third = 1.0 / 3.0;
    let w = weights(&result);
    assert_eq!(w[2], 0.0);
    for (i, expected) in [(0, third), (1, third), (3, third)] {
        assert!((w[i] - expected).abs() < 1e-15, "{w:?}");
    }
    let broken = &result.subscores.as_deref().expect("subscores")[2];
    assert_eq!(broken.value(), 0.0);
    assert!(error_text(broken).contains("broken"));
    assert!(result.is_error);
    assert!(
        (result.reward() - 2.5 / 3.0).abs() < 1e-12,
        "{}",
        result.reward()
    );
}

#[tokio::test]
async fn failed_graders_with_the_same_name_are_deduplicated() {
    let tracker = Arc::new(Tracker::default());
    let result = Gather::new()
        .on_error(OnError::Zero)
        .add(Sleepy::new(&tracker, "check", 1.0, 0).grade(0.5))
        .add(
            Sleepy::new(&tracker, "check", 1.0, 0)
                .failing("nope")
                .grade(0.5),
        )
        .await
        .expect("lenient");
    assert_eq!(names(&result), ["check-1", "check-2"]);
    assert!(error_text(&result.subscores.as_deref().expect("subscores")[1]).contains("nope"));
}

#[tokio::test]
async fn when_every_grader_fails_the_errors_are_reported() {
    let tracker = Arc::new(Tracker::default());
    let all_failing = |policy| {
        Gather::new()
            .on_error(policy)
            .add(
                Sleepy::new(&tracker, "a", 1.0, 0)
                    .failing("first")
                    .grade(0.5),
            )
            .add(
                Sleepy::new(&tracker, "b", 1.0, 0)
                    .failing("second")
                    .grade(0.5),
            )
    };
    // Excluded failures leave no positive weight: report the graders, not the arithmetic.
    let error = all_failing(OnError::Exclude)
        .await
        .expect_err("nothing to combine");
    assert_eq!(
        error
            .failures()
            .map(|f| f.grader.as_str())
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
    // Under `Zero` they still count: a reward of 0 flagged as an error.
    let result = all_failing(OnError::Zero).await.expect("lenient");
    assert_eq!(result.reward(), 0.0);
    assert!(result.is_error);
}

#[tokio::test]
async fn ready_failures_and_invalid_scores_follow_the_policy() {
    let tracker = Arc::new(Tracker::default());
    let sync_failure = Sleepy::new(&tracker, "sync", 1.0, 0)
        .failing("bad input")
        .grade(0.5)
        .await;
    let result = Gather::new()
        .on_error(OnError::Exclude)
        .add(sync_failure)
        .add(Sleepy::new(&tracker, "too-high", 1.5, 0).grade(0.5))
        .add(sub("fine", 1.0, 1.0))
        .await
        .expect("lenient");
    assert_eq!(names(&result), ["sync", "too-high", "fine"]);
    assert_eq!(weights(&result), [0.0, 0.0, 1.0]);
    let subs = result.subscores.as_deref().expect("subscores");
    assert!(error_text(&subs[0]).contains("bad input"));
    let text = error_text(&subs[1]);
    assert!(text.contains("too-high") && text.contains("1.5"), "{text}");
    assert_eq!(result.reward(), 1.0);
    assert!(result.is_error);
}

#[tokio::test]
async fn an_empty_gather_or_no_positive_weight_is_a_combine_error() {
    let error = Gather::new().await.expect_err("empty");
    assert!(
        matches!(error, GatherError::Combine(CombineError::Empty { .. })),
        "{error:?}"
    );
    let error = Gather::new()
        .add(sub("penalty", 1.0, -1.0))
        .await
        .expect_err("no positive weight");
    assert!(
        matches!(
            error,
            GatherError::Combine(CombineError::NoPositiveWeight { .. })
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn ready_only_gathers_combine_like_from_subscores() {
    let items = [sub("a", 1.0, 0.6), sub("a", 0.0, 0.6), sub("p", 1.0, -0.1)];
    let gathered = items
        .iter()
        .cloned()
        .fold(Gather::new(), Gather::add)
        .await
        .expect("gathers");
    let direct = grader_core::Grade::from_subscores(items).expect("combines");
    assert_eq!(gathered, direct);
}

/// Counts how many guards were dropped.
struct Guard(Arc<AtomicUsize>);

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

struct Forever {
    started: Arc<AtomicUsize>,
    dropped: Arc<AtomicUsize>,
}

impl Grader for Forever {
    fn name(&self) -> Cow<'_, str> {
        "forever".into()
    }

    async fn score(self) -> Result<Score, Failure> {
        let _guard = Guard(Arc::clone(&self.dropped));
        self.started.fetch_add(1, Ordering::SeqCst);
        std::future::pending::<()>().await;
        Ok(Score::new(1.0))
    }
}

#[tokio::test(start_paused = true)]
async fn dropping_the_gather_drops_every_running_grader() {
    let started = Arc::new(AtomicUsize::new(0));
    let dropped = Arc::new(AtomicUsize::new(0));
    let mut gather = Gather::new().limit(2);
    for _ in 0..3 {
        let grader = Forever {
            started: Arc::clone(&started),
            dropped: Arc::clone(&dropped),
        };
        gather = gather.add(grader.grade(1.0));
    }
    let outcome = tokio::time::timeout(Duration::from_secs(5), gather).await;
    assert!(outcome.is_err(), "timed out");
    assert_eq!(
        started.load(Ordering::SeqCst),
        2,
        "the limit held the third back"
    );
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        2,
        "both running graders were dropped"
    );
}

/// `clamp(true)` keeps the reward in `[0, 1]` and records what it was when that changed it;
/// without it the reward is the reference's, below 0 when penalties outweigh the rest.
#[tokio::test(start_paused = true)]
async fn clamping_keeps_the_reward_in_range_and_records_the_reward_before() {
    let tracker = Arc::new(Tracker::default());
    let gather = |clamp: bool, tests: f64, on_error: OnError| {
        Gather::new()
            .clamp(clamp)
            .on_error(on_error)
            .add(Sleepy::new(&tracker, "tests", tests, 5).grade(0.8))
            .add(Sleepy::new(&tracker, "style", 1.0, 1).grade(0.2))
            .add(Sleepy::new(&tracker, "edited_tests", 1.0, 3).grade(-0.5))
    };

    let raw = gather(false, 0.0, OnError::Fail).await.expect("graded");
    assert!((raw.reward() - -0.3).abs() < 1e-12, "{}", raw.reward());
    assert!(raw.info.is_empty());

    let clamped = gather(true, 0.0, OnError::Fail).await.expect("graded");
    assert_eq!(clamped.reward(), 0.0);
    let before = clamped.info["unclamped_reward"].as_f64().expect("a number");
    assert_eq!(before, raw.reward());
    assert_eq!(
        clamped.subscores, raw.subscores,
        "the breakdown is unchanged"
    );
    let json: Value = serde_json::to_value(&clamped).expect("serializes");
    assert_eq!(json["reward"], 0.0);
    assert_eq!(json["info"]["unclamped_reward"], before);

    // In range already: nothing changes, nothing is recorded.
    let high = gather(true, 1.0, OnError::Fail).await.expect("graded");
    assert!((high.reward() - 0.5).abs() < 1e-12);
    assert!(!high.info.contains_key("unclamped_reward"));

    // A failure scored 0 keeps its error flag; the clamp only touches the reward.
    let failing = Gather::new()
        .clamp(true)
        .on_error(OnError::Zero)
        .add(
            Sleepy::new(&tracker, "tests", 1.0, 1)
                .failing("no runner")
                .grade(1.0),
        )
        .add(Sleepy::new(&tracker, "edited_tests", 1.0, 1).grade(-0.5));
    let failing = failing.await.expect("scored");
    assert!(failing.is_error());
    assert_eq!(failing.reward(), 0.0);
    assert_eq!(failing.info["unclamped_reward"], -0.5);
}

#[test]
fn a_clamped_result_above_one_comes_down_to_one() {
    let result = EvaluationResult::from_reward(1.5)
        .expect("finite")
        .clamped();
    assert_eq!(result.reward(), 1.0);
    assert_eq!(result.info["unclamped_reward"], 1.5);
    let untouched = EvaluationResult::from_reward(0.25).expect("finite");
    assert_eq!(untouched.clone().clamped(), untouched);
}
