//! grader-core's `json` module gives JavaScript's own `JSON.parse` verdicts, the objects
//! promptfoo's `extractJsonObjects` finds, and key-order-free equality, on hand-picked texts and
//! thousands of seeded random ones; and it answers bounded on inputs built to hurt.
//!
//! One run of `scripts/json_cases.js` under Node checks every case. Where `node` is not
//! installed the comparison is skipped with a message; the bounds are checked everywhere.

use grader_tests::child;
use std::io::Write as _;
use std::process::{Command, Stdio};

use grader_core::json::{self, JsonError, MAX_DEPTH};
use grader_tests::rng::Rng;
use serde_json::{Value, json};

const SCRIPT: &str = include_str!("../../scripts/json_cases.js");

/// Node's results for `cases`, or `None` (after saying why) where `node` is missing.
fn node_results(cases: &[Value]) -> Option<Vec<Value>> {
    let Ok(mut child) = Command::new("node")
        .args(["-e", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        // The machines this project runs on ship Node.js: under CI the comparison must run.
        assert!(
            std::env::var_os("CI").is_none(),
            "node is required under CI for the comparison with JSON.parse"
        );
        eprintln!("skipping the comparison with JSON.parse: node is not installed");
        return None;
    };
    let input = Value::from(cases.to_vec()).to_string();
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write the cases");
    let output = child::wait_with_output(child, "node");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(serde_json::from_slice(&output.stdout).expect("node's JSON"))
}

/// grader-core's result for `case`, in the script's form.
fn run(case: &Value) -> Value {
    let text = case["text"].as_str().expect("text");
    match case["f"].as_str().expect("f") {
        "is_json" => json::is_json(text).into(),
        "objects" => json::json_objects(text)
            .expect("bounded")
            .into_iter()
            .map(|range| Value::from(&text[range]))
            .collect(),
        "equals" => {
            if json::is_json(text) {
                json::json_equals(text, &case["expected"])
                    .expect("comparable")
                    .into()
            } else {
                Value::Null
            }
        }
        other => panic!("unknown case {other}"),
    }
}

fn compare(cases: &[Value]) -> Option<(usize, Vec<String>)> {
    let theirs = node_results(cases)?;
    let differ: Vec<String> = cases
        .iter()
        .zip(&theirs)
        .filter_map(|(case, theirs)| {
            let ours = run(case);
            (ours != *theirs).then(|| format!("{case}\n  node: {theirs}\n  ours: {ours}"))
        })
        .collect();
    Some((cases.len(), differ))
}

#[test]
fn hand_picked_texts_agree_with_json_parse() {
    let texts = [
        "0",
        "-0",
        "1.5e-3",
        "1E+2",
        "01",
        "1.",
        ".5",
        "+1",
        "-",
        "[]",
        "{}",
        "[1,]",
        "{\"a\":1,}",
        "{\"a\"}",
        "{a:1}",
        "{'a':1}",
        "\"\\u00e9\"",
        "\"\\ud83d\"",
        "\"\\x41\"",
        "\"\t\"",
        " \n\t\r{} \n",
        "\u{a0}{}",
        "{}\u{feff}",
        "NaN",
        "Infinity",
        "nul",
        "null",
        "true false",
        "[1] [2]",
        "\"é😀\"",
        "{\"a\":{\"b\":[1,{\"c\":null}]}}",
        "// c\n{}",
        "{\"a\":1}}",
        "Here: {\"a\": 1} and {\"b\": 2}",
        "{\"a\": \"}\"} {x} {\"c\": [1, {\"d\": 2}]}",
        "```json\n{\"ok\": true}\n```",
        "{{\"a\":1}}",
        "{\"a\":{\"b\":1}",
        "[{\"a\":1}]",
        "{\"k\": \"\\\"}\"}",
        "{\"a\":1,\"a\":2}",
        "{ }",
        "{\"\":\"\"}",
    ];
    let mut cases = Vec::new();
    for text in texts {
        cases.push(json!({"f": "is_json", "text": text}));
        cases.push(json!({"f": "objects", "text": text}));
    }
    for (text, expected) in [
        ("{\"b\": 1.0, \"a\": [true]}", json!({"a": [true], "b": 1})),
        ("{\"a\":1,\"a\":2}", json!({"a": 2})),
        ("{\"a\":1,\"a\":2}", json!({"a": 1})),
        ("[1, 2]", json!([2, 1])),
        ("1e2", json!(100)),
        ("-0", json!(0)),
        ("\"1\"", json!(1)),
        ("{\"a\": null}", json!({})),
        (
            "{\"a\": {\"b\": [1, {\"c\": \"d\"}]}}",
            json!({"a": {"b": [1, {"c": "d"}]}}),
        ),
        (
            "12345678901234567890",
            json!(12_345_678_901_234_567_890_u64),
        ),
        ("0.1", json!(0.1)),
        ("not json", json!(null)),
    ] {
        cases.push(json!({"f": "equals", "text": text, "expected": expected}));
    }
    let Some((total, differ)) = compare(&cases) else {
        return;
    };
    eprintln!("hand-picked: {} of {total} agree", total - differ.len());
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// Pieces of near-JSON text. Left out: lone surrogate escapes and numbers beyond a double,
/// which `json_equals` refuses (pinned below).
#[rustfmt::skip]
const PIECES: &[&str] = &[
    "{", "}", "[", "]", "{", "}", "\"a\"", "\"b\"", ":", ":", ",", ",", " ", "\n", "\t", "\u{a0}",
    "1", "-0", "01", "1.5e3", "1.", ".5", "-", "true", "nul", "null", "\"\\u00e9\"", "\"\\x\"",
    "'a'", "\"é\"", "\"😀\"", "text", "NaN", "\"}\"", "\"{\"", "\\", "\"", "0", "2", "e",
];

/// A random JSON value, as a `Value`.
fn random_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth > 3 { 5 } else { 7 }) {
        0 => Value::Null,
        1 => (rng.below(2) == 0).into(),
        2 => json!(*rng.pick(&[0.0, -0.0, 1.0, 1.5, 100.0, -3.25, 1e21, 0.1])),
        3 => json!(*rng.pick(&[0_i64, 1, -7, 42, 1_000_000])),
        4 => (*rng.pick(&["", "a", "é", "😀", "\"}\"", "line\nbreak"])).into(),
        5 => (0..rng.below(4))
            .map(|_| random_value(rng, depth + 1))
            .collect(),
        _ => {
            let mut map = serde_json::Map::new();
            for _ in 0..rng.below(4) {
                map.insert(
                    (*rng.pick(&["a", "b", "c", "é"])).to_owned(),
                    random_value(rng, depth + 1),
                );
            }
            Value::Object(map)
        }
    }
}

/// `value` written with keys in reverse order, numbers in another form, random spacing.
fn rewrite(rng: &mut Rng, value: &Value) -> String {
    let space = |rng: &mut Rng| (*rng.pick(&["", " ", "\n  ", "\t"])).to_owned();
    match value {
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(|v| rewrite(rng, v)).collect();
            format!(
                "[{}{}]",
                space(rng),
                inner.join(&format!(",{}", space(rng)))
            )
        }
        Value::Object(map) => {
            let inner: Vec<String> = map
                .iter()
                .rev()
                .map(|(k, v)| {
                    format!(
                        "{}:{}{}",
                        Value::from(k.as_str()),
                        space(rng),
                        rewrite(rng, v)
                    )
                })
                .collect();
            format!("{{{}{}}}", space(rng), inner.join(","))
        }
        Value::Number(n)
            if n.as_f64()
                .is_some_and(|x| x.fract() == 0.0 && x.abs() < 1e15)
                && rng.below(2) == 0 =>
        {
            format!("{:.1}", n.as_f64().unwrap_or(0.0))
        }
        other => other.to_string(),
    }
}

#[test]
fn generated_texts_agree_with_json_parse() {
    let mut rng = Rng(0x150B_1EC7);
    let mut cases = Vec::new();
    for _ in 0..2500 {
        let mut text = String::new();
        for _ in 0..rng.below(14) {
            text.push_str(rng.pick::<&str>(PIECES));
        }
        cases.push(json!({"f": "is_json", "text": text}));
        cases.push(json!({"f": "objects", "text": text}));
    }
    for _ in 0..1000 {
        // JSON written inside near-JSON text, as models write it.
        let mut text = String::new();
        for _ in 0..rng.below(6) {
            text.push_str(rng.pick::<&str>(PIECES));
        }
        let inner = json!({"k": random_value(&mut rng, 1)});
        text.push_str(&rewrite(&mut rng, &inner));
        for _ in 0..rng.below(6) {
            text.push_str(rng.pick::<&str>(PIECES));
        }
        cases.push(json!({"f": "objects", "text": text}));
    }
    for _ in 0..1500 {
        let value = random_value(&mut rng, 0);
        let mut text = rewrite(&mut rng, &value);
        let expected = if rng.below(3) == 0 {
            random_value(&mut rng, 0)
        } else {
            value
        };
        if rng.below(6) == 0 {
            // Not a digit: `1e21` then `01` would be a number beyond a double.
            text.push_str(rng.pick::<&str>(&[" ", ",", "}", "]", "x", "\n"]));
        }
        cases.push(json!({"f": "equals", "text": text, "expected": expected}));
        cases.push(json!({"f": "is_json", "text": text}));
    }
    let Some((total, differ)) = compare(&cases) else {
        return;
    };
    eprintln!("generated: {} of {total} agree", total - differ.len());
    let equal = cases
        .iter()
        .filter(|c| c["f"] == "equals" && run(c) == true)
        .count();
    assert!(equal > 100, "only {equal} equal pairs were generated");
    let with_objects = cases
        .iter()
        .filter(|c| c["f"] == "objects" && run(c).as_array().is_some_and(|a| !a.is_empty()))
        .count();
    let valid = cases
        .iter()
        .filter(|c| c["f"] == "is_json" && run(c) == true)
        .count();
    eprintln!("  {equal} equal pairs, {with_objects} texts with objects, {valid} valid texts");
    assert!(
        with_objects > 100 && valid > 100,
        "{with_objects} with objects, {valid} valid"
    );
    grader_tests::assert_none_differ(&differ);
}

#[test]
fn inputs_built_to_hurt_get_a_bounded_typed_answer() {
    // A million levels: valid, read without recursion; too deep to compare, a typed error.
    let deep = "[".repeat(1_000_000) + &"]".repeat(1_000_000);
    assert!(json::is_json(&deep));
    assert!(matches!(
        json::json_equals(&deep, &json!([])),
        Err(JsonError::TooDeep { depth: 1_000_000, limit, .. }) if limit == MAX_DEPTH
    ));
    let deep_object = "{\"a\":".repeat(1_000_000) + "1" + &"}".repeat(1_000_000);
    assert!(json::is_json(&deep_object));
    assert!(!json::is_json(&deep_object[..deep_object.len() - 1]));
    // Megabytes of text with no object, and megabytes of one valid object.
    let prose = "lorem { ipsum } dolor ".repeat(200_000);
    assert_eq!(json::contains_json(&prose), Ok(false));
    let big = format!("{{\"items\": [{}0]}}", "1, ".repeat(1_000_000));
    assert!(json::is_json(&big));
    assert_eq!(json::json_objects(&big).map(|found| found.len()), Ok(0));
    // Unclosed nesting from every brace: each start reads to its limit; the total is bounded.
    let unclosed = "{\"a\":".repeat(400_000);
    assert!(matches!(
        json::contains_json(&unclosed),
        Err(JsonError::TooMuchWork { .. })
    ));
    // What JSON.parse reads but serde_json cannot hold is refused, not misjudged.
    for text in ["1e400", "[\"\\ud800\"]"] {
        assert!(json::is_json(text));
        assert!(matches!(
            json::json_equals(text, &json!(null)),
            Err(JsonError::Unsupported { .. })
        ));
    }
}
