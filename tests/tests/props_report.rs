//! The readable report is safe to print (D12): over arbitrary `EvaluationResult` JSON, and on
//! the inputs that once broke it, `Display` never panics, writes no control character but the
//! `\n` ending each line, no escape and no bidirectional formatting character, cannot be made
//! to forge a line, and stays within a small multiple of the JSON's size.

use grader_core::{EvaluationResult, Grade, Info, SubScore};
use proptest::prelude::*;
use serde_json::{Value, json};

/// How many times the JSON's size the report may take. A subscore costs at least 22 bytes of
/// JSON (`{"name":"","value":0},`) and its line at most about 145 bytes more than the JSON it
/// shows (8 levels of indentation, padding to a 72-character name column, the numbers).
const SIZE_FACTOR: usize = 8;
/// Room for the `reward …` line of an empty result.
const SIZE_SLACK: usize = 256;

/// Characters the report must never write.
fn forbidden(c: char) -> bool {
    (c < ' ' && c != '\n')
        || ('\u{7f}'..='\u{9f}').contains(&c)
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// Checks everything D12 promises of `text`, the report of the result read from `json`.
fn check_report(json: &str, text: &str) -> Result<(), TestCaseError> {
    if let Some(bad) = text.chars().find(|c| forbidden(*c)) {
        return Err(TestCaseError::fail(format!(
            "{bad:?} in the report of {json}"
        )));
    }
    prop_assert!(
        text.len() <= SIZE_FACTOR * json.len() + SIZE_SLACK,
        "{} bytes of report for {} bytes of JSON",
        text.len(),
        json.len()
    );
    // One `reward` line, first; every other line is part of the tree.
    let mut lines = text.lines();
    prop_assert!(
        lines.next().is_some_and(|l| l.starts_with("reward ")),
        "{text}"
    );
    for line in lines {
        prop_assert!(
            ["├─ ", "└─ ", "│  ", "   "]
                .iter()
                .any(|start| line.starts_with(start)),
            "a line outside the tree: {line:?}"
        );
    }
    Ok(())
}

/// Text an agent could put anywhere: terminal controls, bidi overrides, box-drawing
/// characters, wide characters, and anything else.
fn nasty_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            "\u{1b}",
            "\u{1b}[31m",
            "\u{1b}[0m",
            "\u{1b}[2J",
            "\u{1b}]0;title\u{7}",
            "\u{7}",
            "\r",
            "\n",
            "\t",
            "\u{0}",
            "\u{7f}",
            "\u{85}",
            "\u{9b}",
            "\u{202e}",
            "\u{2066}",
            "\u{2069}",
            "\u{200f}",
            "\u{061c}",
            "\u{2028}",
            "├─ ",
            "└─ ",
            "│",
            "reward 1.0000",
            "é",
            "名",
            "😀",
            "…",
            "\\",
            "\"",
            "exit code 0",
        ])
        .prop_map(str::to_owned),
        "[a-z -]{0,12}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..6).prop_map(|pieces| pieces.concat())
}

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(Value::from),
        Just(json!(0)),
        Just(json!(-15)),
    ]
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        number(),
        nasty_text().prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::vec((nasty_text(), inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

/// A subscore's info, with the keys the report reads (and what a grader may put in them) more
/// often than chance would.
fn info() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        prop::sample::select(vec![
            "error",
            "timed_out",
            "timeout",
            "exit_code",
            "stdout",
            "stderr",
            "_parameters",
        ])
        .prop_map(str::to_owned),
        nasty_text(),
    ];
    let value = prop_oneof![
        json_value(),
        Just(Value::Bool(true)),
        nasty_text().prop_map(Value::from),
    ];
    prop::collection::vec((key, value), 0..5)
        .prop_map(|pairs| Value::Object(pairs.into_iter().collect()))
}

fn subscore_json() -> impl Strategy<Value = Value> {
    let leaf = (
        nasty_text(),
        prop_oneof![0.0..=1.0_f64, Just(0.0), Just(1.0)],
        prop::option::of(prop_oneof![
            -2.0..2.0_f64,
            Just(-1e300),
            Just(1e300),
            Just(0.0)
        ]),
        prop::option::of(info()),
    )
        .prop_map(|(name, value, weight, info)| {
            let mut object = serde_json::Map::new();
            object.insert("name".into(), name.into());
            object.insert("value".into(), value.into());
            if let Some(weight) = weight {
                object.insert("weight".into(), weight.into());
            }
            if let Some(info) = info {
                object.insert("info".into(), info);
            }
            Value::Object(object)
        });
    // Deep enough to pass the depth the report draws (8 levels), wide enough to need columns.
    leaf.prop_recursive(11, 64, 4, |inner| {
        (inner.clone(), prop::collection::vec(inner, 1..4)).prop_map(|(mut node, children)| {
            node["children"] = Value::Array(children);
            node
        })
    })
}

fn result_json() -> impl Strategy<Value = Value> {
    (
        prop::option::of(number().prop_filter("finite", |n| n.as_f64().is_some())),
        prop::option::of(nasty_text()),
        any::<bool>(),
        prop::option::of(prop::collection::vec(subscore_json(), 0..5)),
        prop::collection::vec((nasty_text(), json_value()), 0..3),
    )
        .prop_map(|(reward, content, is_error, subscores, extra)| {
            let mut object = serde_json::Map::new();
            for (key, value) in extra {
                object.insert(key, value);
            }
            if let Some(reward) = reward {
                object.insert("reward".into(), reward);
            }
            if let Some(content) = content {
                object.insert("content".into(), content.into());
            }
            object.insert("isError".into(), is_error.into());
            if let Some(subscores) = subscores {
                object.insert("subscores".into(), Value::Array(subscores));
            }
            Value::Object(object)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_result_prints_safely_in_bounded_space(value in result_json()) {
        let json = value.to_string();
        let result: EvaluationResult = match serde_json::from_str(&json) {
            Ok(result) => result,
            // Only a known field of the wrong type is refused (an extra named `reward` with
            // a string, say); the report is about what parses.
            Err(_) => return Ok(()),
        };
        check_report(&json, &result.to_string())?;
        check_report(&json, &format!("{result:#}"))?;
        for sub in result.subscores.as_deref().unwrap_or_default() {
            let text = sub.to_string();
            prop_assert!(!text.chars().any(forbidden), "{text:?}");
            prop_assert!(text.len() <= SIZE_FACTOR * json.len() + SIZE_SLACK);
        }
    }
}

fn sub(name: &str, value: f64) -> SubScore {
    SubScore::new(name, value).expect("valid")
}

fn info_of(value: Value) -> Info {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

#[test]
fn a_name_of_65_537_characters_prints_cut_instead_of_panicking() {
    let name = "n".repeat(65_537);
    let result = Grade::from_subscores([sub(&name, 1.0), sub("short", 0.0)]).expect("combines");
    let text = result.to_string();
    let first = text.lines().nth(1).expect("a line per subscore");
    assert!(
        first.starts_with(&format!("├─ {}…  weight", "n".repeat(47))),
        "{first}"
    );
    let second = text.lines().nth(2).expect("a line per subscore");
    // The columns still line up with the cut name.
    let column = |line: &str| line.find("weight").map(|at| line[..at].chars().count());
    assert_eq!(column(first), column(second), "{text}");
    // Alone, and in the alternate form, too.
    assert!(sub(&name, 1.0).to_string().len() < 200);
    assert!(format!("{result:#}").len() < 400);
}

#[test]
fn a_name_cannot_forge_a_report_line() {
    let forged = "tests\r\u{1b}[2K\u{1b}[1Areward 1.0000\n└─ all good\u{7}";
    let mut result = Grade::from_subscores([sub(forged, 0.0)]).expect("combines");
    result.content = Some("\u{1b}[31mred\u{1b}[0m\rreward 1.0000".to_owned());
    let text = result.to_string();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        text.starts_with("reward 0.0000  red reward 1.0000\n"),
        "{text}"
    );
    // The colour and cursor sequences are dropped, the CR and LF become spaces, BEL is `�`.
    assert!(
        text.contains("└─ tests reward 1.0000 └─ all good�  weight"),
        "{text}"
    );
    assert!(!text.contains('\u{1b}') && !text.contains('\r') && !text.contains('\u{7}'));
}

#[test]
fn string_exit_codes_and_timeouts_are_cleaned_too() {
    let exit = sub("cmd", 0.0).with_info(info_of(json!({
        "exit_code": "1\rreward 1.0000\u{1b}]0;pwned\u{7}",
        "stderr": "ok\n\u{1b}[32m2 passed\u{1b}[0m\u{9b}2J\n",
    })));
    let timeout = sub("slow", 0.0).with_info(info_of(json!({
        "timed_out": true,
        "timeout": "5\n\u{1b}[1Areward 1.0000",
    })));
    let result = Grade::from_subscores([exit, timeout]).expect("combines");
    let text = result.to_string();
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(!text.chars().any(forbidden), "{text:?}");
    assert!(
        text.contains("exit code 1 reward 1.0000�]0;pwned�: 2 passed�2J"),
        "{text}"
    );
    assert!(text.contains("timed out after 5 reward 1.0000s"), "{text}");
}

#[test]
fn bidirectional_overrides_and_isolates_are_replaced() {
    for mark in [
        '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}',
        '\u{2068}', '\u{2069}', '\u{200e}', '\u{200f}', '\u{061c}',
    ] {
        let name = format!("tests{mark}1.0 eulav");
        let sub = sub(&name, 0.0).with_info(info_of(json!({ "error": format!("x{mark}y") })));
        let text = Grade::from_subscores([sub]).expect("combines").to_string();
        assert!(!text.contains(mark), "{mark:?} in {text}");
        assert!(text.contains("tests�1.0 eulav"), "{text}");
        assert!(text.contains("error: x�y"), "{text}");
    }
}

/// A tree as deep as `serde_json` reads (its recursion limit allows about 40 levels of
/// subscores), 80 leaves on every level, and one long name: what once made every line as wide
/// as the longest name plus its indentation.
fn deep_wide_json() -> String {
    let leaves: Vec<Value> = (0..80)
        .map(|i| json!({"name": format!("x{i}"), "value": 0}))
        .collect();
    let mut node = json!({"name": "bottom", "value": 1});
    for level in 0..40 {
        let mut children = leaves.clone();
        children.push(node);
        node = json!({"name": format!("level {level}"), "value": 1, "children": children});
    }
    let long = json!({"name": "L".repeat(118_000), "value": 1});
    json!({"reward": 1, "subscores": [long, node]}).to_string()
}

#[test]
fn a_deep_wide_tree_prints_in_bounded_space() {
    let json = deep_wide_json();
    assert!((190_000..210_000).contains(&json.len()), "{}", json.len());
    let result: EvaluationResult = serde_json::from_str(&json).expect("parses");
    let text = result.to_string();
    assert!(
        text.len() <= 4 * json.len(),
        "{} bytes for {} bytes of JSON",
        text.len(),
        json.len()
    );
    assert!(!text.chars().any(forbidden));
    // Eight levels are drawn; the rest is counted on one line.
    let hidden = text
        .lines()
        .find(|line| line.contains("deeper subscores not shown"))
        .expect("a line for what is not drawn");
    // Level 32 is on the 8th; below it are 33 levels of 81 subscores each.
    assert!(
        hidden.ends_with("└─ … 2673 deeper subscores not shown"),
        "{hidden}"
    );
    assert!(text.contains("level 32 "), "{text}");
    assert!(!text.contains("level 31 "), "{text}");
}

#[test]
fn huge_weights_are_written_in_scientific_notation() {
    let penalty = sub("penalty", 1.0).with_weight(-1e300).expect("finite");
    let text = penalty.to_string();
    assert!(text.contains("weight -1.000e300"), "{text}");
    assert!(text.contains("penalty -1.000e300"), "{text}");
    assert!(text.len() < 100, "{text}");
}

#[test]
fn coloured_test_output_reads_as_plain_text() {
    let tests = sub("tests", 0.0).with_info(info_of(json!({
        "exit_code": 1,
        "stdout": "\u{1b}[1m\u{1b}[31m====== 1 failed, 2 passed in 0.12s ======\u{1b}[0m\n",
    })));
    assert!(
        tests
            .to_string()
            .ends_with("exit code 1: ====== 1 failed, 2 passed in 0.12s ======\n"),
        "{tests}"
    );
}

/// The densest report per byte of JSON: nameless subscores with nothing but a value, as deep as
/// the report draws, beside a name as wide as the name column.
#[test]
fn the_smallest_subscores_stay_within_the_size_factor() {
    let leaves: Vec<Value> = (0..200).map(|_| json!({"name": "", "value": 0})).collect();
    let mut node = json!({"name": "", "value": 0, "children": leaves.clone()});
    for _ in 0..8 {
        let mut children = leaves.clone();
        children.push(node);
        node = json!({"name": "", "value": 0, "children": children});
    }
    let wide = json!({"name": "W".repeat(48), "value": 1});
    let json = json!({"subscores": [wide, node]}).to_string();
    let result: EvaluationResult = serde_json::from_str(&json).expect("parses");
    for text in [result.to_string(), format!("{result:#}")] {
        check_report(&json, &text).expect("safe and bounded");
    }
}
