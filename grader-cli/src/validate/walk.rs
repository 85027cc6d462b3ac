//! The walk over a line's JSON that explains what the wire format's types rejected: each
//! problem with its JSON path (`$.subscores[1].value`), and the reference's warnings on a result
//! that is valid.

use grader_core::EvaluationResult;
use grader_core::score::json_kind;
use grader_eval::line::FormError;
use serde_json::{Map, Value};

/// `$` followed by `.key` (or `["key"]` when the key is not a plain name).
pub(super) fn child_path(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && !key.starts_with(|c: char| c.is_ascii_digit())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", Value::from(key))
    }
}

pub(super) fn json_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut text = "$".to_owned();
    for segment in path {
        text = match segment {
            Segment::Seq { index } => format!("{text}[{index}]"),
            Segment::Map { key } | Segment::Enum { variant: key } => child_path(&text, key),
            Segment::Unknown => format!("{text}[?]"),
        };
    }
    text
}

type Found = Vec<(String, String)>;

/// The checks of an evaluation line (grader-eval's `Line`), its result included.
pub(super) fn check_line(value: &Value, found: &mut Found) {
    let path = "$";
    let Value::Object(fields) = value else {
        found.push((
            path.to_owned(),
            format!(
                "an evaluation line must be a JSON object, found {}",
                json_kind(value)
            ),
        ));
        return;
    };
    for key in ["v", "id", "epoch", "duration_secs"] {
        if !fields.contains_key(key) {
            found.push((path.to_owned(), format!("missing field `{key}`")));
        }
    }
    let version = grader_eval::LINE_VERSION;
    if let Some(v) = fields.get("v")
        && v.as_u64() != Some(u64::from(version))
    {
        found.push((
            child_path(path, "v"),
            format!("line format version {v} is not supported (this reader knows {version})"),
        ));
    }
    expect(fields, path, "id", found, |v| {
        v.is_string().then_some(()).ok_or("a string")
    });
    expect(fields, path, "epoch", found, |v| {
        v.as_u64()
            .filter(|epoch| (1..=u64::from(u32::MAX)).contains(epoch))
            .map(drop)
            .ok_or("a whole number from 1")
    });
    expect(fields, path, "duration_secs", found, |v| {
        v.as_f64()
            .is_some_and(f64::is_finite)
            .then_some(())
            .ok_or("a finite number")
    });
    match fields.get("error") {
        None | Some(Value::Null) => {}
        Some(Value::Object(error)) => {
            let error_path = child_path(path, "error");
            for key in ["kind", "message"] {
                if !error.contains_key(key) {
                    found.push((error_path.clone(), format!("missing field `{key}`")));
                }
            }
            expect(error, &error_path, "kind", found, |v| {
                matches!(v.as_str(), Some("failed" | "panicked"))
                    .then_some(())
                    .ok_or("\"failed\" or \"panicked\"")
            });
            expect(error, &error_path, "message", found, |v| {
                v.is_string().then_some(()).ok_or("a string")
            });
        }
        Some(other) => found.push((
            child_path(path, "error"),
            format!(
                "`error` must be an object or null, found {}",
                describe(other)
            ),
        )),
    }
    match fields.get("result") {
        None | Some(Value::Null) => {}
        Some(result) => check_result(result, &child_path(path, "result"), found),
    }
}

/// The wire-format checks of a result (R3, D11) at `path`, collecting every problem.
pub(super) fn check_result(value: &Value, path: &str, found: &mut Found) {
    let Value::Object(fields) = value else {
        found.push((
            path.to_owned(),
            format!("a result must be a JSON object, found {}", json_kind(value)),
        ));
        return;
    };
    expect(fields, path, "reward", found, |v| {
        v.as_f64()
            .is_some_and(f64::is_finite)
            .then_some(())
            .ok_or("a finite number")
    });
    for key in ["done", "isError"] {
        expect(fields, path, key, found, |v| {
            v.is_boolean().then_some(()).ok_or("a boolean")
        });
    }
    expect(fields, path, "content", found, |v| {
        (v.is_string() || v.is_null())
            .then_some(())
            .ok_or("a string or null")
    });
    expect(fields, path, "info", found, |v| {
        v.is_object().then_some(()).ok_or("an object")
    });
    if let Some(subscores) = fields.get("subscores") {
        check_subscores(subscores, &child_path(path, "subscores"), found);
    }
    if !fields.contains_key("reward") {
        match fields.get("score") {
            // hud's form: the score is the reward.
            Some(score) if !score.as_f64().is_some_and(f64::is_finite) => found.push((
                child_path(path, "score"),
                format!(
                    "`score` (the reward, there being no `reward`) must be a finite number, \
                     found {}",
                    describe(score)
                ),
            )),
            Some(_) => {}
            None if fields.get("isError") != Some(&Value::Bool(true)) => {
                found.push((path.to_owned(), FormError::NoReward.to_string()));
            }
            None => {}
        }
    }
}

/// Checks `fields[key]`, if present, with `ok` (which names what it expects when it fails).
fn expect(
    fields: &Map<String, Value>,
    path: &str,
    key: &str,
    found: &mut Found,
    ok: impl Fn(&Value) -> Result<(), &'static str>,
) {
    if let Some(value) = fields.get(key)
        && let Err(expected) = ok(value)
    {
        found.push((
            child_path(path, key),
            format!("`{key}` must be {expected}, found {}", describe(value)),
        ));
    }
}

/// A value for a message: its kind, and the value itself when it is short.
fn describe(value: &Value) -> String {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => value.to_string(),
        Value::String(text) if text.chars().count() <= 40 => {
            format!("the string {value}")
        }
        _ => json_kind(value).to_owned(),
    }
}

fn check_subscores(value: &Value, path: &str, found: &mut Found) {
    match value {
        Value::Null => {}
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                check_subscore(item, &format!("{path}[{index}]"), found);
            }
        }
        other => found.push((
            path.to_owned(),
            format!(
                "subscores must be an array or null, found {}",
                describe(other)
            ),
        )),
    }
}

const SUBSCORE_FIELDS: [&str; 6] = ["name", "weight", "value", "children", "info", "metadata"];

/// The wire-format checks of a subscore (R1, R2, D2).
fn check_subscore(value: &Value, path: &str, found: &mut Found) {
    let Value::Object(fields) = value else {
        found.push((
            path.to_owned(),
            format!(
                "a subscore must be a JSON object, found {}",
                json_kind(value)
            ),
        ));
        return;
    };
    for key in fields.keys() {
        if !SUBSCORE_FIELDS.contains(&key.as_str()) {
            found.push((
                child_path(path, key),
                format!(
                    "unknown field `{key}`: a subscore has only name, weight, value, children \
                     and info"
                ),
            ));
        }
    }
    if fields.contains_key("info") && fields.contains_key("metadata") {
        found.push((
            child_path(path, "metadata"),
            "both `info` and `metadata`, which are the same field".to_owned(),
        ));
    }
    for key in ["name", "value"] {
        if !fields.contains_key(key) {
            found.push((path.to_owned(), format!("missing field `{key}`")));
        }
    }
    expect(fields, path, "name", found, |v| {
        v.is_string().then_some(()).ok_or("a string")
    });
    expect(fields, path, "weight", found, |v| {
        v.as_f64()
            .is_some_and(f64::is_finite)
            .then_some(())
            .ok_or("a finite number")
    });
    if let Some(v) = fields.get("value") {
        match v.as_f64() {
            Some(number) if (0.0..=1.0).contains(&number) => {}
            Some(_) => found.push((
                child_path(path, "value"),
                format!("value {v} is outside [0, 1]"),
            )),
            None => found.push((
                child_path(path, "value"),
                format!("`value` must be a number in [0, 1], found {}", describe(v)),
            )),
        }
    }
    for key in ["info", "metadata"] {
        expect(fields, path, key, found, |v| {
            (v.is_object() || v.is_null())
                .then_some(())
                .ok_or("an object or null")
        });
    }
    if let Some(children) = fields.get("children") {
        check_subscores(children, &child_path(path, "children"), found);
    }
}

/// What the reference warns about when it reads a result (its `_check_subscores`), and a
/// `score` beside the `reward` that says otherwise.
pub(super) fn warnings(result: &EvaluationResult, path: &str) -> Found {
    let mut found = Vec::new();
    if let Some(score) = result.extra.get("score").as_ref().and_then(Value::as_f64)
        && score != result.reward()
    {
        found.push((
            format!("{path}.score"),
            format!(
                "`score` {score} differs from `reward` {}: the reward is read, `score` is kept \
                 as one more field",
                result.reward()
            ),
        ));
    }
    let Some(subscores) = result.subscores.as_deref().filter(|s| !s.is_empty()) else {
        return found;
    };
    let mut seen = std::collections::HashSet::new();
    for (index, sub) in subscores.iter().enumerate() {
        if !seen.insert(sub.name()) {
            found.push((
                format!("{path}.subscores[{index}].name"),
                format!("duplicate subscore name {}", Value::from(sub.name())),
            ));
        }
    }
    let positive: f64 = subscores
        .iter()
        .map(grader_core::SubScore::weight)
        .filter(|w| *w > 0.0)
        .sum();
    if (positive - 1.0).abs() > 0.01 {
        found.push((
            format!("{path}.subscores"),
            format!("positive subscore weights should sum to about 1.0 (got {positive:.4})"),
        ));
    }
    let weighted: f64 = subscores.iter().map(|s| s.value() * s.weight()).sum();
    if (weighted - result.reward()).abs() > 0.01 {
        found.push((
            format!("{path}.reward"),
            format!(
                "subscores don't match the reward: sum(value*weight) = {weighted:.4} but \
                 reward = {:.4}",
                result.reward()
            ),
        ));
    }
    found
}
