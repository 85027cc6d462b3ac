//! Recording a grader's arguments as JSON under `_parameters`.
//!
//! A value with a JSON form (anything that implements `serde::Serialize`) is recorded as that
//! JSON; one without becomes the string `"<TypeName: not serializable>"`, as the reference
//! records it. Non-finite floats become `null`. Recording never fails a grade: a value whose
//! serialization fails at run time (a map whose keys are not strings, say) gets the placeholder.
//!
//! `#[grader]` records every parameter with these functions; a hand-written
//! [`Grader`](crate::Grader) can call them from its
//! [`parameters`](crate::Grader::parameters):
//!
//! ```
//! use grader_core::params::{json_safe, placeholder};
//!
//! assert_eq!(json_safe(&vec![1.0, f64::NAN], "Vec<f64>"), serde_json::json!([1.0, null]));
//! assert_eq!(placeholder("Client"), "<Client: not serializable>");
//! ```

use serde::Serialize;
use serde_json::Value;

/// The JSON form of `value`, or the placeholder for `type_name` if serializing it fails.
pub fn json_safe<T: Serialize + ?Sized>(value: &T, type_name: &str) -> Value {
    serde_json::to_value(value).unwrap_or_else(|_| placeholder(type_name))
}

/// The string recorded for a value with no JSON form: `"<TypeName: not serializable>"`.
#[must_use]
pub fn placeholder(type_name: &str) -> Value {
    Value::String(format!("<{type_name}: not serializable>"))
}
