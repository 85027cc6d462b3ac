//! `grader schema` against the reference's own `EvaluationResult.model_json_schema()`.
//!
//! Both schemas are normalized only where they say the same thing in different words, and
//! what is left must be exactly the documented differences below: a change on either side
//! fails the test.

#![allow(clippy::unwrap_used)]

mod support;

use serde_json::{Map, Value, json};
use support::{grader, python};

/// Keys that carry no constraint: words (`title`, `description`), the dialect (`$schema`), and
/// schemars' `format: double` annotation (JSON Schema does not check `format` by default).
///
/// - `title`: pydantic titles every property (`"Iserror"`); schemars titles the root only.
/// - `description`: each side's own docs.
/// - `$schema`: we declare draft 2020-12; pydantic's output declares nothing (it is 2020-12).
/// - `format`: `"double"` on our numbers says they are read as f64.
const WORDS: [&str; 4] = ["title", "description", "$schema", "format"];

/// The differences that remain, each with why.
fn documented_differences() -> Vec<String> {
    vec![
        // pydantic leaves out defaults made by a `default_factory` (`info: dict = {}`); serde's
        // `#[serde(default)]` is written out. Both mean a missing `info` is `{}`.
        "$.properties.info.default: ours {} theirs absent".to_owned(),
    ]
}

/// The same meaning in one form: `anyOf: [{type: X, ...}, {type: null}]` (pydantic) becomes
/// `{type: [X, "null"], ...}` (schemars), and the keys in [`WORDS`] go.
fn normalize(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, item) in map {
                if WORDS.contains(&key.as_str()) {
                    continue;
                }
                if key == "anyOf"
                    && let Some([first, null]) = item.as_array().map(Vec::as_slice)
                    && null == &json!({"type": "null"})
                    && let Some(Value::String(kind)) = first.get("type")
                {
                    for (inner_key, inner) in first.as_object().unwrap() {
                        out.insert(inner_key.clone(), normalize(inner));
                    }
                    out.insert("type".into(), json!([kind, "null"]));
                    continue;
                }
                out.insert(key.clone(), normalize(item));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        Value::Number(n) => json!(n.as_f64()),
        other => other.clone(),
    }
}

/// Every place where `ours` and `theirs` differ, as `path: ours X theirs Y`.
fn differences(path: &str, ours: &Value, theirs: &Value, found: &mut Vec<String>) {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let sub = format!("{path}.{key}");
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => differences(&sub, x, y, found),
                    (Some(x), None) => found.push(format!("{sub}: ours {x} theirs absent")),
                    (None, Some(y)) => found.push(format!("{sub}: ours absent theirs {y}")),
                    (None, None) => unreachable!(),
                }
            }
        }
        _ if ours == theirs => {}
        _ => found.push(format!("{path}: ours {ours} theirs {theirs}")),
    }
}

#[test]
fn schema_matches_the_reference() {
    let output = grader().arg("schema").output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let ours: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(ours, grader_cli::schema::schema());

    let Some(python) = python() else { return };
    let theirs: Value = serde_json::from_str(&grader_tests::python::run_script(
        &python,
        "import json; from hud.graders import EvaluationResult; \
         print(json.dumps(EvaluationResult.model_json_schema()))",
        "",
    ))
    .unwrap();

    let mut found = Vec::new();
    differences("$", &normalize(&ours), &normalize(&theirs), &mut found);
    assert_eq!(
        found,
        documented_differences(),
        "\nours:\n{ours:#}\ntheirs:\n{theirs:#}"
    );
}

#[test]
fn the_schema_states_the_constraints_that_matter() {
    let schema = grader_cli::schema::schema();
    let sub = &schema["$defs"]["SubScore"];
    assert_eq!(sub["additionalProperties"], false);
    assert_eq!(sub["required"], json!(["name", "value"]));
    assert_eq!(sub["properties"]["value"]["minimum"], 0.0);
    assert_eq!(sub["properties"]["value"]["maximum"], 1.0);
    assert_eq!(schema["additionalProperties"], true);
    assert!(schema["properties"]["isError"].is_object());
}
