//! What a recorded argument becomes: its JSON ([`json_safe`]) or, without one, the
//! [`placeholder`]; and the key the recorded arguments go under.

use serde::Serialize;
use serde_json::Value;

/// The key under which a grade records its grader's arguments in the subscore's info.
pub const PARAMETERS_KEY: &str = "_parameters";

/// The JSON form of `value`, or the placeholder for `type_name` if serializing it fails.
pub fn json_safe<T: Serialize + ?Sized>(value: &T, type_name: &str) -> Value {
    serde_json::to_value(value).unwrap_or_else(|_| placeholder(type_name))
}

/// The string recorded for a value with no JSON form: `"<TypeName: not serializable>"`.
#[must_use]
pub fn placeholder(type_name: &str) -> Value {
    Value::String(format!("<{type_name}: not serializable>"))
}
