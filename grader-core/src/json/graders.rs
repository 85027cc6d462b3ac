//! The JSON checks as graders, made with `#[grader]`: each records its arguments under
//! `_parameters` and runs in a [`Gather`](crate::Gather) or a tree like any grader.
//!
//! ```
//! use grader_core::Grade;
//! use grader_core::json::{ContainsJson, IsJson, JsonEquals};
//! use serde_json::json;
//!
//! let answer = r#"{"city": "Paris", "population": 2.1e6}"#;
//! let expected = json!({"population": 2100000, "city": "Paris"});
//! let result = Grade::from_subscores([
//!     IsJson { answer }.grade(0.2).now()?,
//!     ContainsJson { answer }.grade(0.2).now()?,
//!     JsonEquals { answer, expected: &expected }.grade(0.6).now()?,
//! ])?;
//! assert_eq!(result.reward(), 1.0);
//! let subscores = result.subscores.as_deref().unwrap();
//! assert_eq!(subscores[1].info().unwrap()["objects"], 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde_json::Value;

use super::JsonError;
use crate::{Info, Score, grader};

/// 1.0 when the answer is JSON. See [`is_json`](super::is_json).
#[grader(crate = crate)]
pub fn is_json(answer: &str) -> bool {
    super::is_json(answer)
}

/// 1.0 when the answer contains a JSON object; `info.objects` counts them. See
/// [`json_objects`](super::json_objects). Too much work to search is the grader's error.
#[grader(crate = crate)]
pub fn contains_json(answer: &str) -> Result<Score, JsonError> {
    let found = super::json_objects(answer)?;
    let mut info = Info::new();
    info.insert("objects".into(), found.len().into());
    Ok(Score::new(if found.is_empty() { 0.0 } else { 1.0 }).with_info(info))
}

/// 1.0 when the answer is JSON equal to `expected`, ignoring key order. See
/// [`json_equals`](super::json_equals). An answer too deep to compare is the grader's error.
#[grader(crate = crate)]
pub fn json_equals(answer: &str, expected: &Value) -> Result<bool, JsonError> {
    super::json_equals(answer, expected)
}

/// 1.0 when the answer is JSON matching `schema` (promptfoo's `is-json` with a schema);
/// `info.mismatches` says which keywords failed where. See
/// [`matches_schema`](super::matches_schema). A schema that is not one is the grader's error.
#[cfg(feature = "json-schema")]
#[grader(crate = crate)]
pub fn matches_schema(answer: &str, schema: &Value) -> Result<Score, JsonError> {
    const GRADER: &str = "matches_schema";
    let compiled = super::JsonSchema::compile(GRADER, schema, None)?;
    bounded(super::schema::matches_schema_as(GRADER, answer, &compiled))
}

/// 1.0 when the answer holds a JSON object matching `schema` (promptfoo's `contains-json`
/// with a schema); `info.at` is the first such object's byte range, `info.mismatches` why the
/// last object tried does not match. See [`first_schema_match`](super::first_schema_match). A
/// schema that is not one is the grader's error.
#[cfg(feature = "json-schema")]
#[grader(crate = crate)]
pub fn contains_schema_match(answer: &str, schema: &Value) -> Result<Score, JsonError> {
    const GRADER: &str = "contains_schema_match";
    let compiled = super::JsonSchema::compile(GRADER, schema, None)?;
    bounded(super::schema::first_schema_match_as(
        GRADER, answer, &compiled,
    ))
}

/// The score of a schema check; an answer whose validation is past the bounds scores 0 with
/// the reason in `info.error` (SPEC D43: writing something unjudgeable never escapes a 0).
#[cfg(feature = "json-schema")]
fn bounded(check: Result<super::SchemaCheck, JsonError>) -> Result<Score, JsonError> {
    match check {
        Ok(check) => Ok(schema_score(check)),
        Err(error @ JsonError::ValidationTooLarge { .. }) => {
            let mut info = Info::new();
            info.insert("error".into(), error.to_string().into());
            Ok(Score::new(0.0).with_info(info))
        }
        Err(error) => Err(error),
    }
}

/// The score of a schema check: 1 for a match, with where it is or why not in `info`.
#[cfg(feature = "json-schema")]
fn schema_score(check: super::SchemaCheck) -> Score {
    use super::SchemaCheck;
    let mut info = Info::new();
    let value = match check {
        SchemaCheck::Match(range) => {
            info.insert("at".into(), serde_json::json!([range.start, range.end]));
            1.0
        }
        SchemaCheck::Mismatch(why) => {
            info.insert(
                "mismatches".into(),
                serde_json::to_value(&why).unwrap_or_default(),
            );
            0.0
        }
        _ => {
            info.insert("json".into(), false.into());
            0.0
        }
    };
    Score::new(value).with_info(info)
}
