//! Checking that an answer is JSON, contains JSON, or equals an expected JSON value, as
//! promptfoo's `is-json`, `contains-json` and `equals` assertions do: [`is_json`],
//! [`json_objects`], [`contains_json`] and [`json_equals`].
//!
//! ```
//! use grader_core::json::{contains_json, is_json, json_equals};
//! use serde_json::json;
//!
//! assert!(is_json(r#" {"a": [1, 2.5, null]} "#));
//! assert!(!is_json("{'a': 1}"));
//! assert!(contains_json(r#"Here it is: {"name": "Ada"} as asked."#)?);
//! assert!(json_equals(r#"{"b": 1.0, "a": [true]}"#, &json!({"a": [true], "b": 1}))?);
//! # Ok::<(), grader_core::json::JsonError>(())
//! ```
//!
//! The graders ([`IsJson`], [`ContainsJson`], [`JsonEquals`]; see [`graders`]) record their
//! arguments under `_parameters` like any grader.
//!
//! With the feature `json-schema`, `matches_schema` and `first_schema_match` check JSON
//! against a JSON Schema (promptfoo's `is-json` and `contains-json` with a schema; see
//! `schema`), as the graders `MatchesSchema` and `ContainsSchemaMatch`.
//!
//! # The anchor, and bounds
//!
//! Validity is `JSON.parse`'s (ECMA-404): only space, tab, line feed and carriage return as
//! whitespace, no trailing commas, comments, single quotes or `NaN`, and any `\u` escape,
//! lone surrogates included. The validator keeps its nesting on a heap stack of one byte per
//! level: a document nested a million deep is read in linear time, as V8 reads it, with no
//! recursion. [`json_objects`] is promptfoo's `extractJsonObjects`: from each `{`, the shortest
//! text that `JSON.parse` accepts, at most [`MAX_OBJECT_UTF16`] UTF-16 code units long; the
//! search after an object goes on after it. Its work is bounded by [`WORK_LIMIT`] bytes read
//! in all, a typed [`JsonError::TooMuchWork`] beyond.
//!
//! [`json_equals`] compares values, not text: objects whatever their key order (the last of
//! duplicate keys counts, as in `JSON.parse`), arrays in order, numbers by their value as
//! doubles (`1`, `1.0` and `1e0` are equal, and so are `0` and `-0`), strings exactly. It reads
//! the answer with `serde_json`, so it refuses, with a typed error rather than a wrong verdict,
//! what `JSON.parse` reads but `serde_json` cannot hold: nesting deeper than [`MAX_DEPTH`],
//! numbers beyond the range of a double (`1e400`, `Infinity` in JavaScript) and lone
//! surrogates.

#[cfg(feature = "json-schema")]
pub mod bounds;
#[cfg(feature = "macros")]
pub mod graders;
mod scan;
#[cfg(feature = "json-schema")]
pub mod schema;

use std::ops::Range;

use serde_json::Value;

#[cfg(feature = "macros")]
pub use graders::{ContainsJson, IsJson, JsonEquals};
#[cfg(all(feature = "macros", feature = "json-schema"))]
pub use graders::{ContainsSchemaMatch, MatchesSchema};
#[cfg(feature = "json-schema")]
pub use schema::{
    Draft, JsonSchema, MAX_MISMATCHES, MAX_SCHEMA_DEPTH, SchemaCheck, SchemaMismatch,
    first_schema_match, matches_schema,
};

/// The longest object [`json_objects`] looks for, in UTF-16 code units (promptfoo's
/// `maxJsonLength`).
pub const MAX_OBJECT_UTF16: usize = 100_000;

/// The deepest answer [`json_equals`] compares (`serde_json`'s recursion limit).
pub const MAX_DEPTH: usize = 128;

/// The most bytes [`json_objects`] reads in all, over every `{` it tries (256 MiB).
pub const WORK_LIMIT: usize = 1 << 28;

/// Why a JSON check has no verdict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JsonError {
    /// The answer is JSON nested deeper than [`MAX_DEPTH`] levels.
    #[error("{grader}: the answer is JSON nested {depth} deep, deeper than the {limit} compared")]
    TooDeep {
        /// The grader or function.
        grader: &'static str,
        /// How deep the answer nests.
        depth: usize,
        /// [`MAX_DEPTH`].
        limit: usize,
    },
    /// Looking for objects would read more than [`WORK_LIMIT`] bytes.
    #[error(
        "{grader}: looking for JSON objects in {length} bytes would read more than {limit} bytes"
    )]
    TooMuchWork {
        /// The grader or function.
        grader: &'static str,
        /// The answer's length in bytes.
        length: usize,
        /// [`WORK_LIMIT`].
        limit: usize,
    },
    /// The answer is JSON that `serde_json` cannot hold (a number beyond a double's range, a
    /// lone surrogate).
    #[error("{grader}: the answer is JSON this crate cannot compare: {reason}")]
    Unsupported {
        /// The grader or function.
        grader: &'static str,
        /// `serde_json`'s message.
        reason: String,
    },
    /// Validating the answer against the schema could take more work than the bounds allow
    /// (feature `json-schema`; see `json::bounds`): an answer past them scores 0 in a grader.
    #[error("{grader}: validating the answer against the schema needs too much work: {what}")]
    ValidationTooLarge {
        /// The grader or function.
        grader: &'static str,
        /// Which bound, in words.
        what: String,
    },
    /// The schema given is not a valid JSON Schema (feature `json-schema`).
    #[error("{grader}: the schema is not a valid JSON Schema: {reason}")]
    InvalidSchema {
        /// The grader or function.
        grader: &'static str,
        /// What is wrong with it, and where.
        reason: String,
    },
}

/// Whether `text` is JSON: `JSON.parse(text)` succeeds (promptfoo's `is-json` without a
/// schema). Any length and depth; linear time.
///
/// ```
/// use grader_core::json::is_json;
///
/// assert!(is_json("[1, \"two\", {\"three\": 3}]"));
/// assert!(is_json(&("[".repeat(100_000) + &"]".repeat(100_000))));
/// assert!(!is_json("[1, 2,]"));
/// assert!(!is_json("```json\n{}\n```"));
/// ```
#[must_use]
pub fn is_json(text: &str) -> bool {
    scan::whole(text).is_some()
}

/// Where the JSON objects in `text` are: promptfoo's `extractJsonObjects` (see the
/// [module docs](self)), as byte ranges of `text`.
///
/// ```
/// use grader_core::json::json_objects;
///
/// let text = r#"{"a": 1} then {oops} then {"b": {"c": 2}}"#;
/// let found: Vec<&str> = json_objects(text)?.into_iter().map(|r| &text[r]).collect();
/// assert_eq!(found, [r#"{"a": 1}"#, r#"{"b": {"c": 2}}"#]);
/// # Ok::<(), grader_core::json::JsonError>(())
/// ```
///
/// # Errors
/// [`JsonError::TooMuchWork`] when the search would read more than [`WORK_LIMIT`] bytes.
pub fn json_objects(text: &str) -> Result<Vec<Range<usize>>, JsonError> {
    // A UTF-16 code unit takes at most three bytes of UTF-8.
    const MAX_BYTES: usize = 3 * MAX_OBJECT_UTF16;
    let mut found = Vec::new();
    let mut work = 0usize;
    let mut from = 0;
    while let Some(offset) = text[from..].find('{') {
        let start = from + offset;
        let scanned = scan::scan_value(text, start, MAX_BYTES);
        work += match scanned {
            Ok(scanned) => scanned.end - start,
            Err(scan::Stop::Invalid(at)) => at + 1 - start,
            Err(scan::Stop::TooLong) => MAX_BYTES,
        };
        if work > WORK_LIMIT {
            return Err(JsonError::TooMuchWork {
                grader: "contains_json",
                length: text.len(),
                limit: WORK_LIMIT,
            });
        }
        match scanned {
            Ok(scanned) if text[start..scanned.end].encode_utf16().count() <= MAX_OBJECT_UTF16 => {
                found.push(start..scanned.end);
                from = scanned.end;
            }
            _ => from = start + 1,
        }
    }
    Ok(found)
}

/// Whether `text` contains a JSON object (promptfoo's `contains-json` without a schema): see
/// [`json_objects`].
///
/// ```
/// use grader_core::json::contains_json;
///
/// assert!(contains_json("The result:\n```json\n{\"ok\": true}\n```")?);
/// assert!(!contains_json("[1, 2, 3] is an array, not an object")?);
/// # Ok::<(), grader_core::json::JsonError>(())
/// ```
///
/// # Errors
/// As [`json_objects`].
pub fn contains_json(text: &str) -> Result<bool, JsonError> {
    Ok(!json_objects(text)?.is_empty())
}

/// Whether `text` is JSON equal to `expected`, ignoring key order (see the
/// [module docs](self)); `false` when `text` is not JSON.
///
/// ```
/// use grader_core::json::json_equals;
/// use serde_json::json;
///
/// let expected = json!({"name": "Ada", "tags": ["a", "b"], "age": 36});
/// assert!(json_equals(r#"{"age": 36.0, "tags": ["a", "b"], "name": "Ada"}"#, &expected)?);
/// assert!(!json_equals(r#"{"age": 36, "tags": ["b", "a"], "name": "Ada"}"#, &expected)?);
/// assert!(!json_equals("not json", &expected)?);
/// # Ok::<(), grader_core::json::JsonError>(())
/// ```
///
/// # Errors
/// [`JsonError::TooDeep`] for an answer nested deeper than [`MAX_DEPTH`];
/// [`JsonError::Unsupported`] for JSON `serde_json` cannot hold.
pub fn json_equals(text: &str, expected: &Value) -> Result<bool, JsonError> {
    const GRADER: &str = "json_equals";
    let Some(depth) = scan::whole(text) else {
        return Ok(false);
    };
    if depth > MAX_DEPTH {
        return Err(JsonError::TooDeep {
            grader: GRADER,
            depth,
            limit: MAX_DEPTH,
        });
    }
    let value: Value = serde_json::from_str(text).map_err(|e| JsonError::Unsupported {
        grader: GRADER,
        reason: e.to_string(),
    })?;
    Ok(same(&value, expected))
}

/// JSON equality: objects as maps, numbers as doubles.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}
