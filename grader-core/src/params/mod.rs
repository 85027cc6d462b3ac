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
//!
//! # As text
//!
//! A grading records the parameters as JSON text, with
//! [`write_parameters`](crate::Grader::write_parameters) into a [`ParametersWriter`], and
//! keeps that text until the subscore is written out, so that recording costs no map, no
//! [`Value`] and no allocation per value. The writer records each value as the JSON text of
//! what [`json_safe`] or [`placeholder`] returns, byte for byte:
//!
//! ```
//! use grader_core::params::ParametersWriter;
//!
//! let mut params = ParametersWriter::new();
//! params.record("scores", &vec![1.5, f64::INFINITY], "Vec<f64>");
//! params.record("note", "tab\there", "str");
//! params.record_placeholder("client", "Client");
//! assert_eq!(
//!     params.into_string(),
//!     r#"{"scores":[1.5,null],"note":"tab\there","client":"<Client: not serializable>"}"#,
//! );
//! ```
//!
//! [`Value`]: serde_json::Value

mod direct;
mod json;
#[cfg(test)]
mod tests;
mod value;
mod writer;

pub use json::{needs_escaping, write_f64};
pub use value::{PARAMETERS_KEY, json_safe, placeholder};
pub use writer::ParametersWriter;
