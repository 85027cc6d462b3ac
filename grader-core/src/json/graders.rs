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
