//! [`Info`], the JSON object a subscore or a result carries, and how a JSON value becomes one.

use serde_json::Value;

/// A JSON object: the `info` of a subscore or result. Keys keep insertion order.
///
/// It is `serde_json`'s `Map`, so a `json!({...})` object becomes one with
/// [`info_from_value`] (the `TryFrom<Value>` conversion; Rust's orphan rule keeps this crate
/// from implementing `TryFrom` on another crate's type for another crate's type).
pub type Info = serde_json::Map<String, Value>;

/// A JSON value that cannot be an [`Info`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InfoError {
    /// The value is not a JSON object.
    #[error("info must be a JSON object, not {kind} ({value})")]
    NotAnObject {
        /// What the value is: `"null"`, `"a boolean"`, `"a number"`, `"a string"` or
        /// `"an array"`.
        kind: &'static str,
        /// The value.
        value: Value,
    },
}

/// What kind of JSON value this is, as an error message says it: `null`, `a boolean`,
/// `a number`, `a string`, `an array` or `an object`.
///
/// ```
/// use grader_core::score::json_kind;
///
/// assert_eq!(json_kind(&serde_json::json!([1, 2])), "an array");
/// ```
#[must_use]
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The [`Info`] a JSON object holds, keys in order; any other value is an
/// [`InfoError::NotAnObject`] carrying it and its kind.
///
/// ```
/// use grader_core::{InfoError, Score, info_from_value};
/// use serde_json::json;
///
/// let info = info_from_value(json!({"failed": ["test_a"], "ran": 12}))?;
/// assert_eq!(Score::new(0.5).with_info(info).info.unwrap()["ran"], 12);
///
/// let error = info_from_value(json!([1, 2])).unwrap_err();
/// assert!(matches!(error, InfoError::NotAnObject { kind: "an array", .. }));
/// assert_eq!(error.to_string(), "info must be a JSON object, not an array ([1,2])");
/// # Ok::<(), InfoError>(())
/// ```
///
/// # Errors
/// [`InfoError::NotAnObject`] when `value` is not a JSON object.
pub fn info_from_value(value: Value) -> Result<Info, InfoError> {
    match value {
        Value::Object(map) => Ok(map),
        other => Err(InfoError::NotAnObject {
            kind: json_kind(&other),
            value: other,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_non_object_is_refused_with_its_kind_and_value() {
        let cases = [
            (json!(null), "null"),
            (json!(true), "a boolean"),
            (json!(1.5), "a number"),
            (json!("text"), "a string"),
            (json!([1, {"a": 2}]), "an array"),
        ];
        for (value, expected) in cases {
            match info_from_value(value.clone()) {
                Err(InfoError::NotAnObject { kind, value: kept }) => {
                    assert_eq!((kind, &kept), (expected, &value));
                }
                other => panic!("{value}: {other:?}"),
            }
        }
    }

    #[test]
    fn an_object_becomes_the_info_with_its_keys_in_order() {
        let info = info_from_value(json!({"z": 1, "a": [2], "m": {"n": null}})).expect("object");
        assert_eq!(info.keys().collect::<Vec<_>>(), ["z", "a", "m"]);
        assert_eq!(info["a"], json!([2]));
    }
}
