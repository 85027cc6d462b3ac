//! The text helpers as graders, made with `#[grader]`: each records its arguments under
//! `_parameters` like any other grader and runs inside a [`Gather`](crate::Gather).
//!
//! The reference's keyword options are fields, so every call states them:
//!
//! ```
//! use grader_core::Grade;
//! use grader_core::text::{ContainsAny, ExactMatch, F1Score, NumericMatch};
//!
//! let answer = "The capital of France is Paris, population about 2.1 million.";
//! let result = Grade::from_subscores([
//!     ExactMatch { answer: "Paris", expected: "paris", normalize_text: true }.grade(0.2).now()?,
//!     ContainsAny { answer, substrings: &["Paris", "Lutetia"], case_sensitive: false }.grade(0.3).now()?,
//!     NumericMatch { answer, expected: 2.1, tolerance: 0.05 }.grade(0.3).now()?,
//!     F1Score { answer, reference: "Paris" }.grade(0.2).now()?,
//! ])?;
//! let subscores = result.subscores.as_deref().unwrap();
//! assert_eq!(subscores[1].name(), "contains_any");
//! assert_eq!(subscores[2].info().unwrap()["_parameters"]["tolerance"], 0.05);
//! assert!(result.reward() > 0.8);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::Serialize;

use super::{ContainsOptions, ExactMatchOptions, NumericMatchOptions};
use crate::grader;

/// 1.0 when the answer equals the expected text: after [`normalize`](super::normalize) on
/// both, or, with `normalize_text` off, after trimming and lowercasing.
/// See [`exact_match_with`](super::exact_match_with).
#[grader(crate = crate)]
pub fn exact_match(answer: &str, expected: &str, normalize_text: bool) -> f64 {
    super::exact_match_with(answer, expected, ExactMatchOptions { normalize_text })
}

/// 1.0 when the answer contains `substring` (ignoring case unless `case_sensitive`).
/// See [`contains_with`](super::contains_with).
#[grader(crate = crate)]
pub fn contains(answer: &str, substring: &str, case_sensitive: bool) -> f64 {
    super::contains_with(answer, substring, ContainsOptions { case_sensitive })
}

/// 1.0 when the answer contains at least one of `substrings`.
/// See [`contains_any_with`](super::contains_any_with).
#[grader(crate = crate)]
pub fn contains_any<S: AsRef<str> + Serialize>(
    answer: &str,
    substrings: &[S],
    case_sensitive: bool,
) -> f64 {
    super::contains_any_with(answer, substrings, ContainsOptions { case_sensitive })
}

/// 1.0 when the answer contains every one of `substrings`.
/// See [`contains_all_with`](super::contains_all_with).
#[grader(crate = crate)]
pub fn contains_all<S: AsRef<str> + Serialize>(
    answer: &str,
    substrings: &[S],
    case_sensitive: bool,
) -> f64 {
    super::contains_all_with(answer, substrings, ContainsOptions { case_sensitive })
}

/// 1.0 when the first number in the answer is within `tolerance` of `expected`.
/// See [`numeric_match_with`](super::numeric_match_with).
#[grader(crate = crate)]
pub fn numeric_match(answer: &str, expected: f64, tolerance: f64) -> f64 {
    super::numeric_match_with(answer, expected, NumericMatchOptions { tolerance })
}

/// Token-level F1 between the answer and the reference. See [`f1_score`](super::f1_score).
#[grader(crate = crate)]
pub fn f1_score(answer: &str, reference: &str) -> f64 {
    super::f1_score(answer, reference)
}
