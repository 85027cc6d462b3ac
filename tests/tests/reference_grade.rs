//! The reference's own tests of `Grade`, `Grader.any`/`Grader.all` and `Grader.grade`
//! (`hud/native/tests/test_graders.py` of hud-python 0.5.39), ported, plus the behaviour of the
//! current era's `hud.graders.combine` (hud 0.6.21 ships no tests in its wheel, so those cases
//! follow its source: `_combine_subscores`, `_dedupe_subscore_names`, `combine_any`/`combine_all`).
//!
//! Where we follow the current era instead of the seed (R15: `any`/`all` keep their inputs as
//! `children` instead of `info.subscores`/`info.subscore_metadata`), the port asserts the
//! current-era shape and says so.

use grader_tests::names;
use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use grader_core::{CombineError, Failure, Grade, Grader, Info, Score, SubScore, all, any};
use serde_json::json;

fn sub(name: &str, value: f64, weight: f64) -> SubScore {
    SubScore::new(name, value)
        .and_then(|s| s.with_weight(weight))
        .expect("valid subscore")
}

fn info(value: serde_json::Value) -> Info {
    match value {
        serde_json::Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn approx(actual: f64, expected: f64) {
    // pytest.approx's default: relative 1e-6 (we are far stricter where it matters elsewhere).
    assert!(
        (actual - expected).abs() <= 1e-12_f64.max(expected.abs() * 1e-12),
        "{actual} != {expected}"
    );
}

fn by_name<'a>(result: &'a grader_core::EvaluationResult, name: &str) -> &'a SubScore {
    result
        .subscores
        .as_deref()
        .expect("subscores")
        .iter()
        .find(|s| s.name() == name)
        .unwrap_or_else(|| panic!("no subscore named {name}"))
}

// ---- TestGrade -------------------------------------------------------------------------------

#[test]
fn from_subscores_returns_evaluation_result() {
    let result = Grade::from_subscores([sub("alpha", 1.0, 1.0)]).expect("combines");
    assert_eq!(result.reward(), 1.0);
    assert!(result.done);
    assert!(!result.is_error);
    assert_eq!(result.content, None);
}

#[test]
fn from_subscores_normalizes_positive_weights() {
    let result =
        Grade::from_subscores([sub("alpha", 1.0, 2.0), sub("beta", 0.0, 1.0)]).expect("combines");
    approx(result.reward(), 2.0 / 3.0);
    approx(by_name(&result, "alpha").weight(), 2.0 / 3.0);
    approx(by_name(&result, "beta").weight(), 1.0 / 3.0);
}

#[test]
fn from_subscores_preserves_negative_penalties() {
    let result = Grade::from_subscores([sub("correct", 1.0, 1.0), sub("penalty", 1.0, -0.2)])
        .expect("combines");
    approx(result.reward(), 0.8);
    assert_eq!(by_name(&result, "correct").weight(), 1.0);
    assert_eq!(by_name(&result, "penalty").weight(), -0.2);
}

#[test]
fn from_subscores_duplicate_names_are_deduped() {
    let result =
        Grade::from_subscores([sub("same", 1.0, 0.5), sub("same", 0.0, 0.5)]).expect("combines");
    assert_eq!(names(&result), ["same-1", "same-2"]);
}

#[test]
fn from_subscores_duplicate_names_avoid_existing_suffix_collisions() {
    let (result, events) = capture_events(|| {
        Grade::from_subscores([sub("x-1", 1.0, 0.3), sub("x", 1.0, 0.4), sub("x", 0.0, 0.6)])
    });
    let result = result.expect("combines");
    assert_eq!(names(&result), ["x-1", "x-2", "x-3"]);
    assert!(
        result.info.is_empty(),
        "no subscore had info: {:?}",
        result.info
    );
    // The weights sum to 1.3: the current era warns (R11); nothing about duplicate names.
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(!events[0].1.contains("Duplicate"), "{events:?}");
}

#[test]
fn from_subscores_keeps_info_on_the_subscore_only() {
    let metadata = info(json!({"stdout": "ok"}));
    let result = Grade::from_subscores([sub("grader", 1.0, 1.0).with_info(metadata.clone())])
        .expect("combines");
    // R9: the current reference leaves `result.info` empty.
    assert!(result.info.is_empty(), "{:?}", result.info);
    assert_eq!(
        result.subscores.as_deref().expect("subscores")[0].info(),
        Some(&metadata)
    );
}

#[test]
fn from_subscores_preserves_negative_reward() {
    let result = Grade::from_subscores([sub("correct", 0.0, 1.0), sub("penalty", 1.0, -0.2)])
        .expect("combines");
    approx(result.reward(), -0.2);
    // The reward is not clamped and is exactly Σ value × weight, so the SDK's validator (which
    // warns when they differ by more than 0.01) has nothing to say.
    assert!(result.reward() < 0.0);
}

// ---- The current era's `_combine_subscores` (hud 0.6.21), from its source --------------------

#[test]
fn empty_input_is_an_error() {
    let error = Grade::from_subscores(Vec::new()).expect_err("empty");
    assert!(matches!(error, CombineError::Empty { .. }), "{error:?}");
}

#[test]
fn no_positive_weight_is_an_error_listing_the_weights() {
    let error = Grade::from_subscores([sub("a", 1.0, 0.0), sub("b", 1.0, -0.5)])
        .expect_err("no positive weight");
    assert_eq!(
        error,
        CombineError::NoPositiveWeight {
            weights: vec![0.0, -0.5]
        }
    );
    assert!(error.to_string().contains("-0.5"), "{error}");
}

#[test]
fn zero_weights_stay_zero_and_count_for_nothing() {
    let result = Grade::from_subscores([sub("a", 1.0, 0.5), sub("b", 0.0, 0.0)]).expect("ok");
    assert_eq!(by_name(&result, "b").weight(), 0.0);
    assert_eq!(by_name(&result, "a").weight(), 1.0);
    assert_eq!(result.reward(), 1.0);
}

#[test]
fn subscores_keep_order_value_info_and_children() {
    let child = sub("leaf", 0.25, 1.0);
    let node = sub("node", 0.25, 2.0).with_children(vec![child.clone()]);
    let result = Grade::from_subscores([
        sub("z", 1.0, 1.0).with_info(info(json!({"k": [1, 2]}))),
        node,
        sub("a", 0.5, 1.0),
    ])
    .expect("ok");
    assert_eq!(names(&result), ["z", "node", "a"]);
    let subs = result.subscores.as_deref().expect("subscores");
    assert_eq!(subs[0].value(), 1.0);
    assert_eq!(subs[0].info(), Some(&info(json!({"k": [1, 2]}))));
    assert_eq!(subs[1].children(), Some(&[child][..]));
    assert_eq!(subs[2].value(), 0.5);
    assert_eq!(subs[2].info(), None);
    // R9: the result's own info stays empty.
    assert!(result.info.is_empty(), "{:?}", result.info);
}

#[test]
fn info_stays_with_the_deduplicated_subscore() {
    let result = Grade::from_subscores([
        sub("BashGrader", 1.0, 0.5).with_info(info(json!({"exit_code": 0}))),
        sub("BashGrader", 0.0, 0.5).with_info(info(json!({"exit_code": 1}))),
        sub("plain", 0.0, 0.5),
        sub("empty", 0.0, 0.5).with_info(Info::new()),
    ])
    .expect("ok");
    let info_of = |name: &str| result.subscore(name).and_then(SubScore::info).cloned();
    assert_eq!(info_of("BashGrader-1").expect("info")["exit_code"], 0);
    assert_eq!(info_of("BashGrader-2").expect("info")["exit_code"], 1);
    assert_eq!(info_of("plain"), None);
    assert_eq!(info_of("empty"), Some(Info::new()));
    assert!(result.info.is_empty(), "{:?}", result.info);
}

#[test]
fn dedupe_follows_the_reference_algorithm() {
    let cases: &[(&[&str], &[&str])] = &[
        (&["x-1", "x", "x"], &["x-1", "x-2", "x-3"]),
        (&["same", "same"], &["same-1", "same-2"]),
        (&["a", "b", "c"], &["a", "b", "c"]),
        (&["a", "a-1", "a", "a-2"], &["a-3", "a-1", "a-4", "a-2"]),
        (&["a", "a", "a-1", "a-1"], &["a-2", "a-3", "a-1-1", "a-1-2"]),
        (&["a-1", "a-1", "a"], &["a-1-1", "a-1-2", "a"]),
        (&["", ""], &["-1", "-2"]),
        (&["é", "é", "é-2"], &["é-1", "é-3", "é-2"]),
    ];
    for (input, expected) in cases {
        let result =
            Grade::from_subscores(input.iter().map(|n| sub(n, 0.5, 1.0))).expect("combines");
        assert_eq!(names(&result), *expected, "input {input:?}");
    }
}

#[test]
fn all_negative_zero_values_give_a_positive_zero_reward() {
    let result = Grade::from_subscores([sub("a", -0.0, 1.0), sub("b", -0.0, 1.0)]).expect("ok");
    assert_eq!(result.reward(), 0.0);
    assert!(result.reward().is_sign_positive(), "reward is -0.0");
    // Value × weight is -0.0 for every term; Python's sum starts at int 0, giving +0.0.
    let result = Grade::from_subscores([sub("a", 0.0, 1.0), sub("p", 0.0, -1.0)]).expect("ok");
    assert!(result.reward().is_sign_positive(), "reward is -0.0");
}

#[test]
fn the_sum_is_compensated() {
    // Ten weights of 0.1: naive summation of value × weight gives 0.9999999999999999.
    let result =
        Grade::from_subscores((0..10).map(|i| sub(&format!("s{i}"), 1.0, 0.1))).expect("ok");
    assert_eq!(result.reward(), 1.0);
}

#[test]
fn overflowing_penalties_are_a_typed_error() {
    let error = Grade::from_subscores([
        sub("ok", 1.0, 1.0),
        sub("p1", 1.0, -f64::MAX),
        sub("p2", 1.0, -f64::MAX),
    ])
    .expect_err("reward overflows");
    assert!(
        matches!(error, CombineError::NonFiniteReward { .. }),
        "{error:?}"
    );
}

#[test]
fn huge_positive_weights_still_normalize_to_one() {
    let result = Grade::from_subscores([sub("a", 1.0, f64::MAX), sub("b", 0.0, f64::MAX)])
        .expect("combines");
    let weights: Vec<f64> = result
        .subscores
        .as_deref()
        .expect("subscores")
        .iter()
        .map(SubScore::weight)
        .collect();
    assert_eq!(weights, [0.5, 0.5]);
    assert_eq!(result.reward(), 0.5);
}

// ---- R11: the warning ------------------------------------------------------------------------

#[test]
fn weights_not_summing_to_one_warn_once_and_still_normalize() {
    let (result, events) = capture_events(|| {
        Grade::from_subscores([sub("a", 1.0, 0.5), sub("b", 0.0, 0.3), sub("c", 1.0, 0.3)])
    });
    let result = result.expect("warning is not a failure");
    approx(result.reward(), 0.8 / 1.1);
    assert_eq!(events.len(), 1, "{events:?}");
    let (level, message) = &events[0];
    assert_eq!(*level, tracing::Level::WARN);
    assert!(message.contains("1.1000"), "{message}");
    assert!(message.contains("not 1.0"), "{message}");
}

#[test]
fn weights_within_a_hundredth_of_one_do_not_warn() {
    for weights in [[0.5, 0.5], [0.5, 0.505], [0.5, 0.495]] {
        let (result, events) = capture_events(|| {
            Grade::from_subscores([
                sub("a", 1.0, weights[0]),
                sub("b", 0.0, weights[1]),
                sub("penalty", 1.0, -3.0),
            ])
        });
        result.expect("combines");
        assert!(events.is_empty(), "{weights:?}: {events:?}");
    }
}

/// Runs `f` with a subscriber that records every event's level and message.
fn capture_events<T>(f: impl FnOnce() -> T) -> (T, Vec<(tracing::Level, String)>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let subscriber = Capture {
        events: Arc::clone(&events),
    };
    let out = tracing::subscriber::with_default(subscriber, f);
    let events = events.lock().expect("not poisoned").clone();
    (out, events)
}

struct Capture {
    events: Arc<Mutex<Vec<(tracing::Level, String)>>>,
}

struct Message(String);

impl tracing::field::Visit for Message {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut message = Message(String::new());
        event.record(&mut message);
        self.events
            .lock()
            .expect("not poisoned")
            .push((*event.metadata().level(), message.0));
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

// ---- TestGraderCombinators -------------------------------------------------------------------

#[test]
fn any_picks_max() {
    let combined = any("any", [sub("a", 1.0, 0.5), sub("b", 0.0, 0.5)])
        .grade(1.0)
        .now()
        .expect("ok");
    // The seed named it `BaseGrader_any`; the current era's default is `any` (R15).
    assert_eq!(combined.name(), "any");
    assert_eq!(combined.value(), 1.0);
    assert_eq!(combined.weight(), 1.0);
}

#[test]
fn all_picks_min() {
    let combined = all("all", [sub("a", 1.0, 0.5), sub("b", 0.0, 0.5)])
        .grade(1.0)
        .now()
        .expect("ok");
    assert_eq!(combined.name(), "all");
    assert_eq!(combined.value(), 0.0);
}

#[test]
fn any_and_all_keep_duplicate_named_inputs_as_children() {
    // The seed put `{"subscores": [...], "subscore_metadata": {...}}` in the node's info; the
    // current era keeps the inputs (with their info) as children under de-duplicated names.
    for combinator in [any, all] {
        let combined = combinator(
            "node",
            vec![
                sub("BashGrader", 1.0, 0.5).with_info(info(json!({"exit_code": 0}))),
                sub("BashGrader", 0.0, 0.5).with_info(info(json!({"exit_code": 1}))),
            ],
        )
        .grade(1.0)
        .now()
        .expect("ok");
        let children = combined.children().expect("children");
        let names: Vec<&str> = children.iter().map(SubScore::name).collect();
        assert_eq!(names, ["BashGrader-1", "BashGrader-2"]);
        assert_eq!(children[0].info().expect("info")["exit_code"], 0);
        assert_eq!(children[1].info().expect("info")["exit_code"], 1);
        // Children keep their own weights and values.
        assert_eq!(children[0].weight(), 0.5);
        assert_eq!(children[1].value(), 0.0);
        assert_eq!(combined.info(), None);
    }
}

#[test]
fn any_and_all_reject_empty_input_and_bad_weights() {
    let error = any("any", Vec::<SubScore>::new())
        .grade(1.0)
        .now()
        .expect_err("empty");
    assert_eq!(error.grader, "any");
    assert!(
        matches!(error.failure, Failure::Combine(CombineError::Empty { ref what }) if what == "any"),
        "{error:?}"
    );
    let error = all("all", [sub("a", 1.0, 1.0)])
        .grade(f64::NAN)
        .now()
        .expect_err("NaN weight");
    assert_eq!(error.grader, "all");
    assert!(
        matches!(error.failure, Failure::InvalidWeight { weight } if weight.is_nan()),
        "{error:?}"
    );
}

#[test]
fn nodes_combine_like_any_other_subscore() {
    let node = any("either", [sub("a", 0.0, 1.0), sub("b", 1.0, 1.0)])
        .grade(0.5)
        .now()
        .expect("ok");
    let result = Grade::from_subscores([node, sub("c", 0.0, 0.5)]).expect("ok");
    approx(result.reward(), 0.5);
    let either = by_name(&result, "either");
    assert_eq!(either.children().expect("children").len(), 2);
}

// ---- TestGrader ------------------------------------------------------------------------------

struct DummyGrader {
    marker: &'static str,
}

impl Grader for DummyGrader {
    fn name(&self) -> Cow<'_, str> {
        "DummyGrader".into()
    }

    fn parameters(&self) -> Info {
        let mut params = Info::new();
        params.insert(
            "marker".into(),
            grader_core::params::json_safe(self.marker, "str"),
        );
        params.insert("payload".into(), grader_core::params::placeholder("object"));
        params
    }

    async fn score(self) -> Result<Score, Failure> {
        Ok(Score::from((0.75, info(json!({"source": "dummy"})))))
    }
}

#[tokio::test]
async fn grade_returns_subscore_and_stores_parameters() {
    let subscore = DummyGrader { marker: "ok" }
        .grade(0.4)
        .await
        .expect("grades");
    assert_eq!(subscore.name(), "DummyGrader");
    assert_eq!(subscore.value(), 0.75);
    assert_eq!(subscore.weight(), 0.4);
    let info = subscore.info().expect("info");
    assert_eq!(info["source"], "dummy");
    assert_eq!(info["_parameters"]["marker"], "ok");
    assert_eq!(info["_parameters"]["payload"], "<object: not serializable>");
    // `_parameters` comes after whatever the score returned, as `{**info, "_parameters": ...}`.
    assert_eq!(info.keys().collect::<Vec<_>>(), ["source", "_parameters"]);
}

#[tokio::test]
async fn grade_named_overrides_the_name() {
    let subscore = DummyGrader { marker: "ok" }
        .grade(1.0)
        .named("custom")
        .await
        .expect("grades");
    assert_eq!(subscore.name(), "custom");
}
