//! Python's `str()` and `repr()` of JSON values, for the reference's error messages, which
//! format the offending values the way Python prints them.

use serde_json::Value;

pub(crate) use grader_core::pyjson::{py_float, py_repr, py_str, py_str_repr};

/// The name of the Python type `json.loads` makes for this value.
pub(crate) fn py_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(number) if number.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// Python's truth value of the value `json.loads` makes (`x or {}` keeps only truthy ones).
pub(crate) fn py_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(number) => number.as_f64().is_some_and(|x| x != 0.0),
        Value::String(text) => !text.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reprs_match_python() {
        assert_eq!(
            py_repr(&json!(["a", 1, 1.5, null, true])),
            "['a', 1, 1.5, None, True]"
        );
        assert_eq!(py_repr(&json!({"k": "it's"})), "{'k': \"it's\"}");
        assert_eq!(py_str(&json!("plain")), "plain");
        assert_eq!(py_float(1e16), "1e+16");
        assert_eq!(py_float(0.0001), "0.0001");
        assert_eq!(py_float(f64::NAN), "nan");
        assert!(!py_truthy(&json!([])));
        assert!(py_truthy(&json!([0])));
    }
}
