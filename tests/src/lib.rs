//! Support for the cross-crate tests in `tests/`: the reference's Python SDK, installed on
//! first use into a virtual environment under `target/`, a scripted OpenAI-compatible
//! server for the judge, and real S3-compatible, Azure Blob and Google Cloud Storage servers
//! for object storage.

pub mod azurite;
pub mod env_process;
pub mod gcs_server;
pub mod judge_server;
pub mod local_server;
pub mod python;
pub mod s3_server;

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

/// Keeps the panics a test provokes on purpose (whose message contains one of `expected`) off
/// stderr; every other panic, such as a failing assertion, is reported as usual.
pub fn quiet_expected_panics(expected: &'static [&'static str]) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|text| (*text).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            if !expected.iter().any(|text| message.contains(text)) {
                report(info);
            }
        }));
    });
}
