//! `EvaluationResult` beyond the reference's field list: the reward is always finite (D11),
//! unknown fields come back byte for byte (R3), the tree can be summarized without info as the
//! reference's `to_summary` does, and a nested subscore can be found by its path.

use grader_core::score::ExtraError;
use grader_core::{EvaluationResult, Grade, Info, RewardError, SubScore, all, any};
use serde::Deserialize;
use serde::de::value::{Error as ValueError, MapDeserializer};
use serde_json::value::RawValue;
use serde_json::{Value, json};

fn sub(name: &str, value: f64) -> SubScore {
    SubScore::new(name, value).expect("valid")
}

#[test]
fn a_non_finite_reward_cannot_be_built() {
    for reward in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let error: RewardError = EvaluationResult::from_reward(reward).expect_err("refused");
        assert_eq!(
            error.reward.to_bits(),
            reward.to_bits(),
            "the error has the value"
        );
        assert!(error.to_string().contains("not a finite number"), "{error}");
        let mut result = EvaluationResult::from_reward(0.5).expect("finite");
        let refused = result.set_reward(reward).expect_err("refused");
        assert_eq!(refused.reward.to_bits(), reward.to_bits());
        assert_eq!(result.reward(), 0.5, "a refused reward leaves the old one");
    }
    for reward in [0.0, -0.0, 1.0, -3.5, f64::MAX, f64::MIN_POSITIVE] {
        let result = EvaluationResult::from_reward(reward).expect("finite");
        assert_eq!(result.reward().to_bits(), reward.to_bits());
    }
}

#[test]
fn a_non_finite_reward_cannot_be_parsed() {
    // JSON itself has no NaN; `null`, `1e400` and strings are refused.
    for text in [
        r#"{"reward": null}"#,
        r#"{"reward": 1e400}"#,
        r#"{"reward": -1e400}"#,
        r#"{"reward": "NaN"}"#,
        r#"{"reward": NaN}"#,
    ] {
        serde_json::from_str::<EvaluationResult>(text).expect_err(text);
    }
    // A format that does carry NaN (here serde's own map of floats) meets the same check.
    for reward in [f64::NAN, f64::INFINITY] {
        let input = MapDeserializer::<_, ValueError>::new([("reward", reward)].into_iter());
        let error = EvaluationResult::deserialize(input).expect_err("refused");
        assert!(error.to_string().contains("not a finite number"), "{error}");
    }
    let input = MapDeserializer::<_, ValueError>::new([("reward", 0.25)].into_iter());
    let result = EvaluationResult::deserialize(input).expect("finite");
    assert_eq!(result.reward(), 0.25);
}

#[test]
fn every_result_serializes_and_reads_back() {
    // The old failure: `from_reward(NAN)` wrote `"reward":null`, which nothing reads. Now no
    // result holds a non-finite reward, so every one written reads back the same.
    let results = [
        EvaluationResult::default(),
        EvaluationResult::from_reward(-0.0).expect("finite"),
        EvaluationResult::from_reward(f64::MAX).expect("finite"),
        Grade::from_subscores([sub("a", 1.0)]).expect("combines"),
    ];
    for result in results {
        let text = serde_json::to_string(&result).expect("serializes");
        assert!(!text.contains("null,\"done\""), "{text}");
        let back: EvaluationResult = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, result);
        assert_eq!(back.reward().to_bits(), result.reward().to_bits());
    }
}

#[test]
fn a_big_integer_trace_id_survives_a_round_trip_byte_for_byte() {
    let text = r#"{"reward":0.5,"done":true,"content":null,"info":{},"isError":false,"subscores":null,"trace_id":123456789012345678901234567890,"ratio":0.1000000000000000055511151231257827,"neg":-98765432109876543210,"nested":{"id":340282366920938463463374607431768211457,"s":"\u00e9\"\\"},"list":[1e400,-0.0,1E-7]}"#;
    let result: EvaluationResult = serde_json::from_str(text).expect("parses");
    assert_eq!(serde_json::to_string(&result).expect("writes"), text);
    assert_eq!(
        result.extra.get_raw("trace_id").map(RawValue::get),
        Some("123456789012345678901234567890")
    );
    // The same through a Value-free path: bytes in, bytes out.
    let mut bytes = Vec::new();
    serde_json::to_writer(&mut bytes, &result).expect("writes");
    assert_eq!(bytes, text.as_bytes());
}

#[test]
fn extra_fields_keep_their_order_and_lose_only_insignificant_whitespace() {
    let text = "{ \"zeta\" : { \"a\" : [ 1 , 2 ] , \"s\" : \"keep  these \\\" spaces\" } ,\n\t\"reward\": 1, \"alpha\" : 10000000000000000000001 }";
    let result: EvaluationResult = serde_json::from_str(text).expect("parses");
    assert_eq!(result.extra.keys().collect::<Vec<_>>(), ["zeta", "alpha"]);
    assert_eq!(
        serde_json::to_string(&result).expect("writes"),
        r#"{"reward":1.0,"done":true,"content":null,"info":{},"isError":false,"subscores":null,"zeta":{"a":[1,2],"s":"keep  these \" spaces"},"alpha":10000000000000000000001}"#
    );
    // Pretty output is valid JSON with the same content.
    let pretty = serde_json::to_string_pretty(&result).expect("writes");
    let again: EvaluationResult = serde_json::from_str(&pretty).expect("reads");
    assert_eq!(again, result);
    // A repeated unknown key keeps its first place and its last value, as Python's dict.
    let result: EvaluationResult =
        serde_json::from_str(r#"{"a": 1, "b": 2, "a": 3}"#).expect("parses");
    assert_eq!(result.extra.keys().collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(result.extra.get("a"), Some(json!(3)));
    // A repeated known key is ambiguous, and refused.
    let error = serde_json::from_str::<EvaluationResult>(r#"{"reward": 1, "reward": 0}"#)
        .expect_err("duplicate");
    assert!(
        error.to_string().contains("duplicate field `reward`"),
        "{error}"
    );
}

#[test]
fn extra_is_a_small_ordered_map_of_json_texts() {
    let mut result = EvaluationResult::default();
    result.extra.insert("trace_id", "abc").expect("inserts");
    result.extra.insert("attempt", 2).expect("inserts");
    result
        .extra
        .insert_raw(
            "id",
            RawValue::from_string("[ 12345678901234567890123 ]".to_owned()).expect("JSON"),
        )
        .expect("inserts");
    result
        .extra
        .insert("trace_id", json!({"v": 2}))
        .expect("replaces in place");
    assert_eq!(result.extra.len(), 3);
    assert_eq!(
        result
            .extra
            .iter()
            .map(|(k, v)| (k, v.get()))
            .collect::<Vec<_>>(),
        [
            ("trace_id", r#"{"v":2}"#),
            ("attempt", "2"),
            ("id", "[12345678901234567890123]")
        ]
    );
    assert_eq!(result.extra.get("attempt"), Some(json!(2)));
    assert!(result.extra.contains_key("id") && !result.extra.contains_key("nope"));
    assert_eq!(
        result
            .extra
            .remove("trace_id")
            .map(|raw| raw.get().to_owned()),
        Some(r#"{"v":2}"#.to_owned())
    );
    assert_eq!(result.extra.keys().collect::<Vec<_>>(), ["attempt", "id"]);
    assert!(format!("{:?}", result.extra).contains(r#""id": "[12345678901234567890123]""#));

    for key in ["reward", "done", "content", "info", "isError", "subscores"] {
        match result.extra.insert(key, 1) {
            Err(ExtraError::KnownField { key: refused }) => assert_eq!(refused, key),
            other => panic!("{key}: {other:?}"),
        }
    }
    let mut not_json = std::collections::BTreeMap::new();
    not_json.insert(vec![1], "a key that is not a string");
    match result.extra.insert("map", &not_json) {
        Err(ExtraError::Json { key, .. }) => assert_eq!(key, "map"),
        other => panic!("{other:?}"),
    }
    // Equality is by content, in any order.
    let a: EvaluationResult = serde_json::from_str(r#"{"x": [1, 2], "y": 1}"#).expect("parses");
    let b: EvaluationResult = serde_json::from_str(r#"{"y":1,"x":[1,2]}"#).expect("parses");
    let c: EvaluationResult = serde_json::from_str(r#"{"y":1,"x":[1,3]}"#).expect("parses");
    assert_eq!(a, b);
    assert_ne!(a, c);
}

/// A line of an evaluation log that embeds a result: serde buffers a flattened field, so its
/// unknown fields arrive as values rather than text. They still parse.
#[derive(Debug, Deserialize, serde::Serialize)]
struct LogLine {
    sample: u32,
    #[serde(flatten)]
    result: EvaluationResult,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Either {
    Result(EvaluationResult),
}

#[test]
fn a_result_inside_flatten_or_an_untagged_enum_still_reads() {
    let text = r#"{"sample": 3, "reward": 0.75, "trace_id": "t-1", "attempt": {"n": [1, 2]}}"#;
    let line: LogLine = serde_json::from_str(text).expect("parses");
    assert_eq!(line.sample, 3);
    assert_eq!(line.result.reward(), 0.75);
    assert_eq!(line.result.extra.get("trace_id"), Some(json!("t-1")));
    assert_eq!(
        line.result.extra.get_raw("attempt").map(RawValue::get),
        Some(r#"{"n":[1,2]}"#)
    );
    // And written back flat, extras included.
    let written = serde_json::to_string(&line).expect("writes");
    assert_eq!(
        written,
        r#"{"sample":3,"reward":0.75,"done":true,"content":null,"info":{},"isError":false,"subscores":null,"trace_id":"t-1","attempt":{"n":[1,2]}}"#
    );
    let Either::Result(result) =
        serde_json::from_str(r#"{"reward": 1, "x": [true]}"#).expect("parses");
    assert_eq!(result.extra.get("x"), Some(json!([true])));
    // From a Value too.
    let result: EvaluationResult =
        serde_json::from_value(json!({"reward": 0.5, "x": {"y": null}})).expect("parses");
    assert_eq!(
        result.extra.get_raw("x").map(RawValue::get),
        Some(r#"{"y":null}"#)
    );
}

fn tree() -> EvaluationResult {
    let mut info = Info::new();
    info.insert("stdout".into(), "12 passed".into());
    Grade::from_subscores([
        sub("tests", 1.0).with_info(info.clone()),
        all(
            "quality",
            [
                sub("lint", 0.0).with_info(info.clone()),
                any("src/lib.rs", [sub("a/b", 1.0), sub("a", 0.5)])
                    .grade(1.0)
                    .now()
                    .expect("any"),
                sub("lint", 1.0),
            ],
        )
        .grade(1.0)
        .now()
        .expect("all")
        .with_info(info),
    ])
    .expect("combines")
}

#[test]
fn find_follows_a_path_of_names() {
    let result = tree();
    let value = |path: &[&str]| result.find(path).map(SubScore::value);
    assert_eq!(value(&["tests"]), Some(1.0));
    assert_eq!(value(&["quality"]), Some(0.0));
    assert_eq!(value(&["quality", "lint-1"]), Some(0.0));
    assert_eq!(value(&["quality", "lint-2"]), Some(1.0));
    // A name with `/` in it is one step of the path.
    assert_eq!(value(&["quality", "src/lib.rs", "a/b"]), Some(1.0));
    assert_eq!(value(&["quality", "src/lib.rs", "a"]), Some(0.5));
    assert_eq!(value(&["quality", "src", "lib.rs"]), None);
    assert_eq!(value(&["quality", "lint"]), None);
    assert_eq!(value(&["tests", "anything"]), None);
    assert_eq!(value(&[]), None);
    // Owned paths and a subscore's own children work the same way.
    let path = vec!["quality".to_owned(), "src/lib.rs".to_owned()];
    assert_eq!(result.find(&path).map(SubScore::name), Some("src/lib.rs"));
    let quality = result.subscore("quality").expect("top level");
    assert_eq!(
        quality.find(["src/lib.rs", "a"]).map(SubScore::value),
        Some(0.5)
    );
    assert!(EvaluationResult::default().find(["x"]).is_none());
}

#[test]
fn to_summary_drops_info_at_every_depth_and_keeps_the_rest() {
    let mut result = tree();
    result.info.insert("run".into(), json!("kept"));
    result.extra.insert("trace_id", "t").expect("inserts");
    let summary = result.to_summary();
    let text = summary.to_string();
    assert!(!text.contains("12 passed"), "{text}");
    assert_eq!(summary["info"], json!({"run": "kept"}));
    assert_eq!(summary["trace_id"], "t");
    assert_eq!(
        summary["subscores"][1]["children"][1],
        json!({"name": "src/lib.rs", "weight": 1.0, "value": 1.0, "children": [
            {"name": "a/b", "weight": 1.0, "value": 1.0, "children": null},
            {"name": "a", "weight": 1.0, "value": 0.5, "children": null},
        ]})
    );
    let keys: Vec<&str> = summary
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "reward",
            "done",
            "content",
            "info",
            "isError",
            "subscores",
            "trace_id"
        ]
    );
    // Everything but the subscores' info is as serialized.
    let mut full: Value = serde_json::to_value(&result).expect("serializes");
    fn strip(node: &mut Value) {
        if let Some(object) = node.as_object_mut() {
            object.remove("info");
            if let Some(Value::Array(children)) = object.get_mut("children") {
                children.iter_mut().for_each(strip);
            }
        }
    }
    if let Some(Value::Array(subs)) = full.get_mut("subscores") {
        subs.iter_mut().for_each(strip);
    }
    assert_eq!(full, summary);
}
