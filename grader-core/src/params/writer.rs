//! [`ParametersWriter`]: a grader's parameters written as the JSON text of an object, key by
//! key, without building a map.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::direct::write_json_safe;
use super::json::{write_str, write_value};

/// A grader's parameters being written as the JSON text of an object, for
/// [`Grader::write_parameters`](crate::Grader::write_parameters): each key with the JSON of
/// its value, in the order recorded. What it holds is always a JSON object.
///
/// ```
/// use grader_core::params::{ParametersWriter, json_safe};
///
/// let mut params = ParametersWriter::new();
/// params.record("tolerance", &0.5, "f64");
/// params.record_json("expected", &json_safe(&[1, 2], "[i32; 2]"));
/// assert_eq!(params.into_string(), r#"{"tolerance":0.5,"expected":[1,2]}"#);
/// ```
#[derive(Clone)]
pub struct ParametersWriter {
    /// The object so far, without its closing brace.
    out: Vec<u8>,
}

impl fmt::Debug for ParametersWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ParametersWriter")
            .field(&String::from_utf8_lossy(&self.out))
            .finish()
    }
}

impl Default for ParametersWriter {
    fn default() -> Self {
        ParametersWriter::new()
    }
}

impl ParametersWriter {
    /// An empty object.
    #[must_use]
    pub fn new() -> Self {
        let mut out = Vec::with_capacity(128);
        out.push(b'{');
        ParametersWriter { out }
    }

    /// Records `value` under `key` as the JSON text of [`json_safe`]`(value, type_name)`,
    /// without building that [`Value`].
    ///
    /// The value is written as it serializes. Where writing it directly could differ from
    /// going through a [`Value`] (a map that gives a key twice, which a [`Value`] keeps once;
    /// a `serde_json` raw value, which a [`Value`] reformats) or serializing fails, what was
    /// written is taken back and the value goes through [`json_safe`] instead, so the text is
    /// always the same; such a value's `Serialize` then runs twice.
    ///
    /// [`json_safe`]: super::json_safe
    pub fn record<T: Serialize + ?Sized>(&mut self, key: &str, value: &T, type_name: &str) {
        self.key(key);
        write_json_safe(&mut self.out, value, type_name);
    }

    /// Records the [`placeholder`] for `type_name` under `key`.
    ///
    /// [`placeholder`]: super::placeholder
    pub fn record_placeholder(&mut self, key: &str, type_name: &str) {
        self.key(key);
        write_placeholder(&mut self.out, type_name);
    }

    /// Records `value` under `key`.
    pub fn record_json(&mut self, key: &str, value: &Value) {
        self.key(key);
        write_value(&mut self.out, value);
    }

    /// The object's JSON text.
    #[must_use]
    pub fn into_string(self) -> String {
        let out = self.into_bytes();
        // Only strings and JSON's own ASCII are ever written, so this is text.
        String::from_utf8(out)
            .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
    }

    /// The object's JSON text as bytes (UTF-8).
    pub(crate) fn into_bytes(mut self) -> Vec<u8> {
        self.out.push(b'}');
        self.out
    }

    /// A comma unless this is the first key, then `key` and a colon.
    fn key(&mut self, key: &str) {
        self.comma();
        write_str(&mut self.out, key);
        self.out.push(b':');
    }

    fn comma(&mut self) {
        if self.out.len() > 1 {
            self.out.push(b',');
        }
    }

    /// As [`record`](Self::record), with the key given as its JSON text and a colon (what
    /// `#[grader]` writes for an identifier, which needs no escaping).
    pub(crate) fn record_keyed<T: Serialize + ?Sized>(
        &mut self,
        json_key: &str,
        value: &T,
        type_name: &str,
    ) {
        self.comma();
        self.out.extend_from_slice(json_key.as_bytes());
        write_json_safe(&mut self.out, value, type_name);
    }

    /// As [`record_placeholder`](Self::record_placeholder), with the key given as in
    /// [`record_keyed`](Self::record_keyed).
    pub(crate) fn record_placeholder_keyed(&mut self, json_key: &str, type_name: &str) {
        self.comma();
        self.out.extend_from_slice(json_key.as_bytes());
        write_placeholder(&mut self.out, type_name);
    }
}

/// Appends the JSON text of [`placeholder`]`(type_name)` to `out`.
///
/// [`placeholder`]: super::placeholder
fn write_placeholder(out: &mut Vec<u8>, type_name: &str) {
    write_str(out, &format!("<{type_name}: not serializable>"));
}
