//! Support for the cross-crate tests in `tests/`: the reference's Python SDK, installed on
//! first use into a virtual environment under `target/`, a scripted OpenAI-compatible
//! server for the judge, and real S3-compatible, Azure Blob and Google Cloud Storage servers
//! for object storage.

pub mod azurite;
pub mod child;
pub mod driver;
pub mod env_process;
pub mod gcs_server;
pub mod judge_server;
pub mod lines;
pub mod local_server;
pub mod python;
pub mod rng;
pub mod s3_server;
pub mod sandboxing;

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

/// A differential test's verdict: passes when no case differs from the anchor, and otherwise
/// fails saying how many differ and showing the first ten.
///
/// # Panics
/// When `differ` is not empty.
#[track_caller]
pub fn assert_none_differ(differ: &[String]) {
    assert!(
        differ.is_empty(),
        "{} differ, the first ones:\n{}",
        differ.len(),
        differ
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The README's code compiles: its quick start is a doctest of this crate.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The code of `docs/grading-trees.md` compiles: the page is a doctest of this crate.
#[doc = include_str!("../../docs/grading-trees.md")]
#[cfg(doctest)]
pub struct GradingTreesDoctests;

/// The code of `docs/evaluations.md` compiles: the page is a doctest of this crate.
#[doc = include_str!("../../docs/evaluations.md")]
#[cfg(doctest)]
pub struct EvaluationsDoctests;

/// The code of `docs/cli.md` compiles: the page is a doctest of this crate.
#[doc = include_str!("../../docs/cli.md")]
#[cfg(doctest)]
pub struct CliDoctests;

/// The code of `docs/environments.md` compiles: the page is a doctest of this crate.
#[doc = include_str!("../../docs/environments.md")]
#[cfg(doctest)]
pub struct EnvironmentsDoctests;

/// The code of `docs/judge.md` compiles: the page is a doctest of this crate.
#[doc = include_str!("../../docs/judge.md")]
#[cfg(doctest)]
pub struct JudgeDoctests;

/// The code of `docs/workspaces.md` compiles: the page is a doctest of this crate.
#[doc = include_str!("../../docs/workspaces.md")]
#[cfg(doctest)]
pub struct WorkspacesDoctests;

/// The code of `docs/sandbox.md` compiles: the page is a doctest of this crate.
#[doc = include_str!("../../docs/sandbox.md")]
#[cfg(doctest)]
pub struct SandboxDoctests;

/// The code of `docs/graders.md` compiles: the page is a doctest of this crate.
#[doc = include_str!("../../docs/graders.md")]
#[cfg(doctest)]
pub struct GradersDoctests;

/// The code of `docs/differences.md` compiles: the page is a doctest of this crate.
#[doc = include_str!("../../docs/differences.md")]
#[cfg(doctest)]
pub struct DifferencesDoctests;

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
