//! A schema's validation is bounded as a whole (SPEC D35): the red team's schemas (chains of
//! `anyOf`, `oneOf` and `allOf` references that double at each step; a backreference pattern
//! over an object of many keys) and their neighbours get a verdict or a typed failure, with the
//! work counted, never a hang or an abort; the graders score such an answer 0 with the reason.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use grader_core::json::bounds::{MAX_PAIRS, MAX_REGEX_STEPS};
use grader_core::json::{JsonError, JsonSchema, MatchesSchema, matches_schema};
use serde_json::{Map, Value, json};

/// Runs `work` on a thread of its own, up to a generous bound: a hang fails the test instead of
/// stalling the run. This bounds the test; it does not time the code.
fn within_guard<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(work());
    });
    rx.recv_timeout(Duration::from_secs(300))
        .expect("the validation finished within the hang guard")
}

/// `count` definitions, each `combinator` of two references to the next (2.8 KB for 40).
fn doubling_chain(combinator: &str, count: usize, last: Value) -> Value {
    let mut defs = Map::new();
    for i in 0..count {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({ combinator: [{"$ref": next}, {"$ref": next}] }),
        );
    }
    defs.insert(format!("d{count}"), last);
    json!({"$defs": defs, "$ref": "#/$defs/d0"})
}

#[test]
fn doubling_reference_chains_are_refused_with_the_work_counted() {
    for combinator in ["anyOf", "oneOf", "allOf"] {
        for (count, last) in [
            (40, json!({"type": "string"})),
            (40, json!({"type": "integer"})),
            (64, json!(true)),
            (200, json!(false)),
        ] {
            let schema = doubling_chain(combinator, count, last);
            let compiled = JsonSchema::new(&schema).expect("a valid schema");
            let outcome = within_guard(move || {
                (
                    compiled.cost(&json!(1)),
                    compiled.is_valid(&json!(1)),
                    compiled.mismatches(&json!(1)),
                )
            });
            for result in [
                outcome.0.map(|_| ()),
                outcome.1.map(|_| ()),
                outcome.2.map(|_| ()),
            ] {
                assert!(
                    matches!(&result, Err(JsonError::ValidationTooLarge { what, .. }) if what.contains(&MAX_PAIRS.to_string())),
                    "{combinator} {count}: {result:?}"
                );
            }
        }
    }
    // A short chain is counted exactly enough to be validated.
    let short = JsonSchema::new(&doubling_chain("anyOf", 8, json!({"type": "integer"})))
        .expect("a valid schema");
    let cost = short.cost(&json!(1)).expect("small");
    assert!(cost.pairs >= 1 << 8, "{cost:?}");
    assert!(short.is_valid(&json!(1)).expect("small"));
    assert!(!short.is_valid(&json!("one")).expect("small"));
}

/// An object of `keys` keys `aaaa…c` that the backreference pattern cannot finish on.
fn many_keys(keys: usize) -> Value {
    let mut object = Map::new();
    for i in 0..keys {
        object.insert(format!("{}c{i}", "a".repeat(30)), json!(i));
    }
    Value::Object(object)
}

#[test]
fn backtracking_patterns_are_bounded_over_the_whole_value() {
    let schema = json!({"patternProperties": {"^(a|a)*\\1b$": {"type": "string"}}});
    let compiled = JsonSchema::new(&schema).expect("a valid schema");
    // 1 000 keys (38 KB): each match gets a thousandth of the steps; a verdict.
    for keys in [10, 1_000, 10_000] {
        let value = many_keys(keys);
        let cost = compiled.cost(&value).expect("counted");
        assert_eq!(cost.backtracking, keys as u64);
        let compiled = JsonSchema::new(&schema).expect("a valid schema");
        let verdict = within_guard(move || compiled.is_valid(&value));
        assert!(verdict.is_ok(), "{keys}: {verdict:?}");
    }
    // Past the steps of the cheapest tier, refused.
    let value = many_keys(20_000);
    let error = compiled.is_valid(&value).expect_err("too many matches");
    assert!(
        matches!(&error, JsonError::ValidationTooLarge { what, .. } if what.contains(&MAX_REGEX_STEPS.to_string())),
        "{error}"
    );
    // The same through a text, and through the grader: 0 with the reason, not an error.
    let text = serde_json::to_string(&many_keys(20_000)).expect("JSON");
    assert!(matches!(
        matches_schema(&text, &compiled),
        Err(JsonError::ValidationTooLarge { .. })
    ));
    let score = MatchesSchema {
        answer: &text,
        schema: &schema,
    }
    .grade(1.0)
    .now()
    .expect("scored");
    assert_eq!(score.value(), 0.0);
    let reason = score.info().expect("info")["error"]
        .as_str()
        .expect("a reason")
        .to_owned();
    assert!(reason.contains("matches_schema"), "{reason}");
}

#[test]
fn ordinary_schemas_stay_far_from_the_bounds() {
    let schema = json!({
        "$defs": {"node": {"type": "object", "properties": {
            "name": {"type": "string", "pattern": "^[a-z]+$"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
        }}},
        "$ref": "#/$defs/node"
    });
    let compiled = JsonSchema::new(&schema).expect("a valid schema");
    let mut value = json!({"name": "leaf", "children": []});
    for _ in 0..100 {
        value = json!({"name": "node", "children": [value.clone(), {"name": "x", "children": []}]});
    }
    let cost = compiled.cost(&value).expect("counted");
    assert!(cost.pairs < MAX_PAIRS / 100, "{cost:?}");
    assert_eq!(cost.backtracking, 0);
    assert!(compiled.is_valid(&value).expect("bounded"));
}
