//! The wire format (R1–R4, D2, D7): field names, defaults, aliases, strictness and order of
//! `SubScore` and `EvaluationResult`, as `hud.graders.results` (hud 0.6.21) defines them.

use grader_core::{EvaluationResult, Info, ScoreError, SubScore};
use serde_json::{Value, json};

fn parse_sub(text: &str) -> Result<SubScore, serde_json::Error> {
    serde_json::from_str(text)
}

fn parse_result(text: &str) -> Result<EvaluationResult, serde_json::Error> {
    serde_json::from_str(text)
}

#[test]
fn subscore_writes_exactly_the_five_fields_in_the_reference_order() {
    let sub = SubScore::new("tests", 0.5)
        .and_then(|s| s.with_weight(-0.25))
        .expect("valid");
    assert_eq!(
        serde_json::to_string(&sub).expect("serializes"),
        r#"{"name":"tests","weight":-0.25,"value":0.5,"children":null,"info":null}"#
    );
}

#[test]
fn subscore_defaults() {
    let sub = parse_sub(r#"{"name": "a", "value": 0.5}"#).expect("parses");
    assert_eq!(sub.weight(), 1.0);
    assert_eq!(sub.children(), None);
    assert_eq!(sub.info(), None);
    let sub = parse_sub(r#"{"value": 1, "name": "a", "children": null, "info": null}"#)
        .expect("parses integers and nulls");
    assert_eq!(sub.value(), 1.0);
}

#[test]
fn subscore_reads_info_or_its_seed_era_name_metadata() {
    let sub = parse_sub(r#"{"name": "a", "value": 0.5, "metadata": {"k": 1}}"#).expect("parses");
    assert_eq!(sub.info().expect("info")["k"], 1);
    let sub = parse_sub(r#"{"name": "a", "value": 0.5, "info": {"k": 2}}"#).expect("parses");
    assert_eq!(sub.info().expect("info")["k"], 2);
    // The reference rejects both at once (`metadata` is then an extra field).
    parse_sub(r#"{"name": "a", "value": 0.5, "info": {}, "metadata": {}}"#)
        .expect_err("both info and metadata");
    // It always writes `info`.
    let text = serde_json::to_string(&sub).expect("serializes");
    assert!(
        text.contains(r#""info":{"k":2}"#) && !text.contains("metadata"),
        "{text}"
    );
}

#[test]
fn subscore_rejects_unknown_and_missing_fields() {
    let error = parse_sub(r#"{"name": "a", "value": 0.5, "score": 0.5}"#).expect_err("extra");
    assert!(error.to_string().contains("score"), "{error}");
    parse_sub(r#"{"value": 0.5}"#).expect_err("no name");
    parse_sub(r#"{"name": "a"}"#).expect_err("no value");
    parse_sub(r#"{"name": 1, "value": 0.5}"#).expect_err("name not a string");
    parse_sub(r#"{"name": "a", "value": "0.5"}"#).expect_err("value not a number");
    parse_sub(r#"{"name": "a", "value": 0.5, "info": []}"#).expect_err("info not an object");
    parse_sub(r#"{"name": "a", "value": 0.5, "children": {}}"#).expect_err("children not a list");
    parse_sub(r#"{"name": "a", "value": 0.5, "weight": null}"#).expect_err("null weight");
    parse_sub(r#"["a", 1.0, 0.5]"#).expect_err("a sequence is not a subscore");
}

#[test]
fn subscore_values_outside_the_unit_interval_are_refused_naming_the_subscore_and_value() {
    for (value, shown) in [("1.5", "1.5"), ("-0.1", "-0.1"), ("1e300", "1e300")] {
        let text = format!(r#"{{"name": "tests", "value": {value}}}"#);
        let error = parse_sub(&text).expect_err("out of range");
        let message = error.to_string();
        assert!(
            message.contains("`tests`") && message.contains(shown),
            "{value}: {message}"
        );
    }
    // JSON has no NaN or infinity: those and overflowing literals are syntax/number errors.
    for value in ["NaN", "Infinity", "-Infinity", "1e400"] {
        let text = format!(r#"{{"name": "tests", "value": {value}}}"#);
        parse_sub(&text).expect_err(value);
    }
    // The boundaries are valid, including -0.0 (pydantic's `ge=0.0` accepts it too).
    for value in ["0", "1", "0.0", "1.0", "-0.0", "5e-324"] {
        let text = format!(r#"{{"name": "tests", "value": {value}}}"#);
        parse_sub(&text).unwrap_or_else(|e| panic!("{value}: {e}"));
    }
}

#[test]
fn constructors_refuse_invalid_values_and_weights_with_typed_errors() {
    for value in [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -1e-300,
        1.0 + f64::EPSILON,
    ] {
        let error = SubScore::new("v", value).expect_err("invalid value");
        match error {
            ScoreError::InvalidValue { name, value: got } => {
                assert_eq!(name, "v");
                assert!(got.to_bits() == value.to_bits(), "{got} vs {value}");
            }
            other => panic!("{other:?}"),
        }
    }
    for weight in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let error = SubScore::new("w", 1.0)
            .and_then(|s| s.with_weight(weight))
            .expect_err("invalid weight");
        assert!(
            matches!(error, ScoreError::InvalidWeight { ref name, .. } if name == "w"),
            "{error:?}"
        );
        assert!(error.to_string().contains("`w`"), "{error}");
    }
    // Any finite weight is allowed: negative is a penalty, zero does not count.
    for weight in [-5.0, 0.0, -0.0, 1e300] {
        SubScore::new("w", 1.0)
            .and_then(|s| s.with_weight(weight))
            .expect("finite weight");
    }
}

#[test]
fn invalid_children_are_refused_at_any_depth() {
    let text = r#"{"name": "root", "value": 0.5, "children": [
        {"name": "ok", "value": 1.0, "children": [{"name": "deep", "value": 2.0}]}
    ]}"#;
    let error = parse_sub(text).expect_err("deep child out of range");
    assert!(error.to_string().contains("`deep`"), "{error}");
    let text =
        r#"{"name": "root", "value": 0.5, "children": [{"name": "x", "value": 0.5, "bogus": 1}]}"#;
    parse_sub(text).expect_err("unknown field in a child");
}

#[test]
fn evaluation_result_defaults() {
    let result = parse_result("{}").expect("parses");
    assert_eq!(result, EvaluationResult::default());
    assert_eq!(result.reward(), 0.0);
    assert!(result.done);
    assert_eq!(result.content, None);
    assert!(result.info.is_empty());
    assert!(!result.is_error);
    assert_eq!(result.subscores, None);
    assert!(result.extra.is_empty());
}

#[test]
fn evaluation_result_writes_the_reference_field_names_in_order() {
    let result = EvaluationResult::from_reward(0.5).expect("finite");
    assert_eq!(
        serde_json::to_string(&result).expect("serializes"),
        r#"{"reward":0.5,"done":true,"content":null,"info":{},"isError":false,"subscores":null}"#
    );
}

#[test]
fn is_error_is_camel_case_only() {
    let result = parse_result(r#"{"isError": true}"#).expect("parses");
    assert!(result.is_error);
    // `is_error` is not the field; it is an unknown field, kept as such.
    let result = parse_result(r#"{"is_error": true}"#).expect("parses");
    assert!(!result.is_error);
    assert_eq!(
        result.extra.get("is_error"),
        Some(serde_json::Value::Bool(true))
    );
}

#[test]
fn unknown_fields_survive_a_round_trip_in_order() {
    let text = r#"{"reward":0.25,"done":false,"content":"why","info":{"z":1,"a":{"y":[1,2],"b":null}},"isError":true,"subscores":[{"name":"s","weight":1.0,"value":0.25,"children":null,"info":{"q":"é"}}],"trace_id":"abc","zeta":{"nested":[true,null,1.5]},"alpha":-3}"#;
    let result = parse_result(text).expect("parses");
    assert_eq!(
        result.extra.keys().collect::<Vec<_>>(),
        ["trace_id", "zeta", "alpha"]
    );
    assert_eq!(result.info.keys().collect::<Vec<_>>(), ["z", "a"]);
    assert_eq!(serde_json::to_string(&result).expect("serializes"), text);
    // Field order on input does not matter; known fields come first on output.
    let shuffled = r#"{"zeta":1,"isError":true,"reward":0.5}"#;
    let result = parse_result(shuffled).expect("parses");
    assert_eq!(
        serde_json::to_string(&result).expect("serializes"),
        r#"{"reward":0.5,"done":true,"content":null,"info":{},"isError":true,"subscores":null,"zeta":1}"#
    );
}

#[test]
fn evaluation_result_rejects_wrong_types_and_invalid_subscores() {
    for text in [
        r#"{"reward": "1"}"#,
        r#"{"done": 1}"#,
        r#"{"content": 5}"#,
        r#"{"info": null}"#,
        r#"{"info": []}"#,
        r#"{"isError": "yes"}"#,
        r#"{"subscores": {}}"#,
        r#"{"subscores": [{"name": "a", "value": 0.5, "extra": 1}]}"#,
        "[]",
        "null",
        "0.5",
    ] {
        parse_result(text).expect_err(text);
    }
    let error = parse_result(r#"{"subscores": [{"name": "bad", "value": -2}]}"#)
        .expect_err("invalid subscore");
    let message = error.to_string();
    assert!(
        message.contains("`bad`") && message.contains("-2"),
        "{message}"
    );
}

#[test]
fn unicode_names_and_info_round_trip() {
    let mut info = Info::new();
    info.insert("ключ".into(), json!("значение \u{1F600} \"quoted\" \\ \n"));
    let sub = SubScore::new("名前 ✓", 1.0).expect("valid").with_info(info);
    let text = serde_json::to_string(&sub).expect("serializes");
    let back: SubScore = serde_json::from_str(&text).expect("parses");
    assert_eq!(back, sub);
}

#[test]
fn children_trees_round_trip() {
    let leaf = |n: &str, v: f64| SubScore::new(n, v).expect("valid");
    let tree = SubScore::new("root", 0.5)
        .expect("valid")
        .with_children(vec![
            leaf("a", 0.0).with_children(vec![leaf("a1", 1.0), leaf("a2", 0.0)]),
            leaf("b", 1.0).with_children(Vec::new()),
        ]);
    let text = serde_json::to_string(&tree).expect("serializes");
    assert_eq!(
        serde_json::from_str::<SubScore>(&text).expect("parses"),
        tree
    );
    let value: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(value["children"][1]["children"], json!([]));
}
