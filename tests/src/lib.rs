//! Support for the cross-crate tests in `tests/`: the reference's Python SDK, installed on
//! first use into a virtual environment under `target/`, and a scripted OpenAI-compatible
//! server for the judge.

pub mod judge_server;
pub mod python;

use grader_core::{EvaluationResult, SubScore};

/// The subscores' names in a result, in order (none when it has no subscores).
#[must_use]
pub fn names(result: &EvaluationResult) -> Vec<&str> {
    result
        .subscores
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(SubScore::name)
        .collect()
}

/// The README's code compiles: its quick start is a doctest of this crate.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
