//! Untrusted JSON: the parsers never panic, every invalid document is an error, and every
//! document that parses holds only valid scores and survives a serialize → parse round trip.

use grader_core::{EvaluationResult, SubScore};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Arbitrary JSON, biased towards the shapes of subscores and results so that the parsers'
/// deeper paths (children, info, unknown fields, out-of-range values) are reached.
fn json_value() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("name".to_owned()),
        Just("value".to_owned()),
        Just("weight".to_owned()),
        Just("children".to_owned()),
        Just("info".to_owned()),
        Just("metadata".to_owned()),
        Just("reward".to_owned()),
        Just("done".to_owned()),
        Just("content".to_owned()),
        Just("isError".to_owned()),
        Just("subscores".to_owned()),
        "[a-zé_]{0,6}",
    ];
    let number = prop_oneof![
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
        0.0..=1.0_f64,
        Just(-0.0),
        Just(1.0),
        Just(0.0),
    ]
    .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number));
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number,
        any::<i64>().prop_map(|i| json!(i)),
        "\\PC{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..7)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Every number inside a subscore tree is valid.
fn assert_valid(sub: &SubScore) {
    assert!((0.0..=1.0).contains(&sub.value()), "{sub:?}");
    assert!(sub.weight().is_finite(), "{sub:?}");
    for child in sub.children().unwrap_or_default() {
        assert_valid(child);
    }
}

fn check_subscore(text: &str) {
    if let Ok(sub) = serde_json::from_str::<SubScore>(text) {
        assert_valid(&sub);
        let again = serde_json::to_string(&sub).expect("a parsed subscore serializes");
        let back: SubScore = serde_json::from_str(&again).expect("what we wrote parses");
        assert_eq!(back, sub);
    }
}

fn check_result(text: &str) {
    if let Ok(result) = serde_json::from_str::<EvaluationResult>(text) {
        for sub in result.subscores.as_deref().unwrap_or_default() {
            assert_valid(sub);
        }
        let again = serde_json::to_string(&result).expect("a parsed result serializes");
        let back: EvaluationResult = serde_json::from_str(&again).expect("what we wrote parses");
        assert_eq!(back, result);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_json_never_panics_and_what_parses_round_trips(value in json_value()) {
        let text = value.to_string();
        check_subscore(&text);
        check_result(&text);
        // Also from a `Value` (serde_json's other deserializer).
        if let Ok(sub) = serde_json::from_value::<SubScore>(value.clone()) {
            assert_valid(&sub);
        }
        if let Ok(result) = serde_json::from_value::<EvaluationResult>(value) {
            for sub in result.subscores.as_deref().unwrap_or_default() {
                assert_valid(sub);
            }
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = serde_json::from_slice::<SubScore>(&bytes);
        let _ = serde_json::from_slice::<EvaluationResult>(&bytes);
    }

    #[test]
    fn mutated_valid_documents_never_panic(
        position in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        cut in any::<prop::sample::Index>(),
    ) {
        let text = VALID_RESULT.as_bytes();
        let mut mutated = text.to_vec();
        mutated[position.index(text.len())] = byte;
        let _ = serde_json::from_slice::<EvaluationResult>(&mutated);
        let truncated = &text[..cut.index(text.len())];
        prop_assert!(serde_json::from_slice::<EvaluationResult>(truncated).is_err());
        if let Ok(text) = std::str::from_utf8(&mutated) {
            check_result(text);
        }
    }

    #[test]
    fn out_of_range_values_are_always_refused(
        value in prop_oneof![
            (1.0..f64::MAX).prop_filter("above 1", |v| *v > 1.0),
            (-f64::MAX..-0.0).prop_filter("below 0", |v| *v < 0.0),
        ],
        name in "\\PC{0,12}",
    ) {
        let doc = json!({"name": name, "value": value});
        let error = serde_json::from_str::<SubScore>(&doc.to_string())
            .expect_err("out of range");
        prop_assert!(error.is_data(), "{error}");
        prop_assert!(error.to_string().contains(&format!("{value:?}")), "{error}");
        let nested = json!({"subscores": [{"name": "ok", "value": 0.5, "children": [doc]}]});
        prop_assert!(serde_json::from_str::<EvaluationResult>(&nested.to_string()).is_err());
    }
}

const VALID_RESULT: &str = r#"{"reward":0.5,"done":true,"content":"c","info":{"a":1},"isError":false,"subscores":[{"name":"x","weight":0.5,"value":1.0,"children":[{"name":"y","weight":1.0,"value":0.0,"children":null,"info":null}],"info":{"k":"v"}}],"extra":[1,2]}"#;

#[test]
fn the_valid_document_is_valid() {
    let result: EvaluationResult = serde_json::from_str(VALID_RESULT).expect("valid");
    assert_eq!(
        serde_json::to_string(&result).expect("serializes"),
        VALID_RESULT
    );
}

#[test]
fn errors_are_categorized() {
    use serde_json::error::Category;
    let cases = [
        ("{\"reward\": ", Category::Eof),
        ("{\"reward\" 1}", Category::Syntax),
        ("{\"reward\": true}", Category::Data),
        (
            "{\"subscores\": [{\"name\": \"a\", \"value\": 7}]}",
            Category::Data,
        ),
    ];
    for (text, category) in cases {
        let error = serde_json::from_str::<EvaluationResult>(text).expect_err(text);
        assert_eq!(error.classify(), category, "{text}: {error}");
    }
}

#[test]
fn duplicate_keys_are_refused() {
    // The reference keeps the last of duplicate keys; we refuse the document rather than
    // guess which one was meant.
    serde_json::from_str::<SubScore>(r#"{"name": "a", "value": 0.5, "value": 2}"#)
        .expect_err("duplicate value");
    serde_json::from_str::<EvaluationResult>(r#"{"reward": 0.5, "reward": 0.7}"#)
        .expect_err("duplicate reward");
}

#[test]
fn deeply_nested_documents_are_refused_not_overflowing_the_stack() {
    let depth = 10_000;
    let mut text = String::new();
    for _ in 0..depth {
        text.push_str(r#"{"name":"n","value":0.5,"children":["#);
    }
    for _ in 0..depth {
        text.push_str("]}");
    }
    serde_json::from_str::<SubScore>(&text).expect_err("serde_json's recursion limit");
    let text = format!(r#"{{"subscores":[{text}]}}"#);
    serde_json::from_str::<EvaluationResult>(&text).expect_err("recursion limit");
}
