//! Every error the library returns, each typed and carrying the name and the bad value.
//!
//! - [`ScoreError`]: a [`SubScore`](crate::SubScore) that would hold an invalid value or weight.
//! - [`CombineError`]: subscores that cannot be combined (none, or no positive weight).
//! - [`Failure`]: why a grader's own computation failed (returned by
//!   [`Grader::score`](crate::Grader::score)).
//! - [`GraderError`]: a failed grade: the grader's name and weight with its [`Failure`].
//! - [`OnError`]: what a gather or a tree does when a grader fails.
//! - [`GatherError`](crate::GatherError) lives in [`gather`](crate::gather), and the judge's
//!   errors in `judge` (feature `judge`), above this module.
//! - [`Error`](crate::Error), at the crate root where everything it wraps is visible: any of
//!   them, for code that uses `?` on several (`fn main() -> Result<(), grader_core::Error>`).
//!
//! This module sits at the bottom of the crate: every other module may import it, and it
//! imports none of them.

use std::path::PathBuf;

use serde_json::{Map, Value};

/// A [`SubScore`](crate::SubScore) (or a JSON document describing one) that would be invalid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ScoreError {
    /// The value is NaN, infinite, or outside `[0, 1]`.
    #[error("subscore `{name}`: value {value:?} is not a number in [0, 1]")]
    InvalidValue {
        /// The subscore's name.
        name: String,
        /// The rejected value.
        value: f64,
    },
    /// The weight is NaN or infinite.
    #[error("subscore `{name}`: weight {weight:?} is not a finite number")]
    InvalidWeight {
        /// The subscore's name.
        name: String,
        /// The rejected weight.
        weight: f64,
    },
}

/// Subscores that cannot be combined into a reward.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CombineError {
    /// `from_subscores`, `any` or `all` was given no subscores.
    #[error("`{what}` needs at least one subscore, got none")]
    Empty {
        /// What was being combined (`from_subscores`, or the name of the `any`/`all` node).
        what: String,
    },
    /// No subscore has a positive weight, so there is nothing to normalize by.
    #[error("subscores must include at least one positive weight, got weights {weights:?}")]
    NoPositiveWeight {
        /// The weights that were given, in input order.
        weights: Vec<f64>,
    },
    /// The penalties are so large that the reward overflows to an infinity.
    #[error("the reward is not a finite number for weights {weights:?}")]
    NonFiniteReward {
        /// The normalized weights, in input order.
        weights: Vec<f64>,
    },
}

/// Why a grader could not produce a score. [`GraderError`] adds which grader it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Failure {
    /// The scoring function returned an error (`Err(e)`); this is `e`'s message.
    #[error("{0}")]
    Message(String),
    /// The scoring function returned a value that is not a valid score.
    #[error("returned {value:?}, which is not a score in [0, 1]")]
    InvalidScore {
        /// The rejected value.
        value: f64,
    },
    /// The weight given to the grade is NaN or infinite.
    #[error("weight {weight:?} is not a finite number")]
    InvalidWeight {
        /// The rejected weight.
        weight: f64,
    },
    /// The working directory given to a command grader does not exist or is not a directory.
    #[error("working directory `{}` {reason}", path.display())]
    WorkingDirectory {
        /// The path as given.
        path: PathBuf,
        /// What is wrong with it (`does not exist`, `is not a directory`, …).
        reason: String,
    },
    /// An environment variable given to a command grader cannot be set: its name is empty
    /// or holds `=` or a NUL byte, or its value holds a NUL byte.
    #[error("environment variable {name:?} {reason}")]
    Environment {
        /// The variable's name, as given (invalid UTF-8 as U+FFFD).
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A blocking grade (such as `BashGrader::grade_blocking`) was called from within a tokio
    /// runtime, where blocking would stall the runtime's other tasks; await the grade instead.
    #[error("a blocking grade was called inside a tokio runtime; await `grade` instead")]
    InsideRuntime,
    /// The grader panicked, in its scoring code or while recording its parameters (a
    /// `Serialize` that panics). The panic is caught: the grading fails, its siblings do not.
    #[error("panicked: {message}")]
    Panicked {
        /// The panic's message, when it was a string.
        message: String,
    },
    /// The grader did not finish within the time limit its grading was given
    /// ([`Grading::time_limit`](crate::Grading::time_limit)).
    #[error("did not finish within its time limit of {limit:?}")]
    TimedOut {
        /// The time limit.
        limit: std::time::Duration,
    },
    /// Children of a tree node failed under [`OnError::Fail`]; each
    /// error is kept, and so are the children that succeeded.
    #[error("{} of {} children failed: {}", .failed.len(), .total, list_errors(.failed))]
    Children {
        /// The children's errors, in input order.
        failed: Vec<GraderError>,
        /// How many children the node had.
        total: usize,
    },
    /// A grading was told to [`redact`](crate::Grading::redact) a parameter the grader does
    /// not have (so a misspelt name cannot leak the value it meant to hide).
    #[error("has no parameter `{name}` to redact (its parameters: {known:?})")]
    UnknownParameter {
        /// The name given.
        name: String,
        /// The parameters the grader records.
        known: Vec<String>,
    },
    /// A penalty (a negative weight) was marked [`required`](crate::Grading::required): only a
    /// criterion the agent must meet can be required.
    #[error("is a penalty (weight {weight:?}) and cannot be required; only positive criteria can")]
    RequiredPenalty {
        /// The weight given.
        weight: f64,
    },
    /// A tree node could not combine its children (it has none, say).
    #[error(transparent)]
    Combine(#[from] CombineError),
    /// The grading needs something the async runtime does not provide (a tokio runtime with
    /// its timer, for a time limit; with its IO driver and its timer, for a command, which is
    /// then not started).
    #[error("{0}")]
    Runtime(String),
    /// A command was to run in the bubblewrap `Sandbox` (`grader_core::sandbox`, feature
    /// `bash`), and bwrap cannot sandbox here (it is missing, or the kernel refuses it the namespaces): why.
    #[error("cannot sandbox the command: {0}")]
    Sandbox(String),
    /// An I/O error while running the grader (spawning or waiting on a process).
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The LLM judge could not judge a criterion (which one, and what was received, is in the
    /// [`JudgeError`](crate::judge::JudgeError)).
    #[cfg(feature = "judge")]
    #[error(transparent)]
    Judge(Box<crate::judge::JudgeError>),
}

impl Failure {
    /// A failure described by a message, as from a scoring function's `Err(e)`.
    pub fn message(message: impl std::fmt::Display) -> Self {
        Failure::Message(message.to_string())
    }
}

fn list_errors(errors: &[GraderError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// A grade that could not be made: which grader, at which weight, and why.
///
/// `weight` and `parameters` are kept so that [`Gather`]'s failure policies can
/// put a failed grade in the breakdown at the weight it was given, saying what it was given.
///
/// [`Gather`]: crate::Gather
#[derive(Debug, thiserror::Error)]
#[error("grader `{grader}` failed: {failure}")]
pub struct GraderError {
    /// The name the subscore would have had (the override, if one was given).
    pub grader: String,
    /// The weight the subscore would have had.
    pub weight: f64,
    /// The grader's arguments, as they would have been recorded under `_parameters` (they are
    /// recorded before the grader runs): an [`Info`](crate::Info). Boxed to keep the error
    /// small.
    pub parameters: Box<Map<String, Value>>,
    /// What went wrong.
    #[source]
    pub failure: Failure,
}

/// What a [`Gather`] or a tree does when a grader fails. A failure is never silently a 0.0 and
/// never helps the agent: the two lenient policies put the error in the failed subscore's
/// `info.error`, set the result's `isError`, and count a failed penalty as fired (value 1.0 at
/// its weight) under both.
///
/// Trees nested in a gather follow the gather's policy unless given their own.
///
/// [`Gather`]: crate::Gather
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OnError {
    /// The gather fails with a [`GatherError::Graders`] that still holds every sibling's
    /// finished subscore (the default, as the reference raises).
    ///
    /// [`GatherError::Graders`]: crate::GatherError::Graders
    #[default]
    Fail,
    /// A failed grader scores 0.0 at its weight (a failed penalty: fired).
    Zero,
    /// A failed grader is kept in the breakdown with weight 0, so it does not count (a failed
    /// penalty still counts, as fired).
    ///
    /// For failures of the grading infrastructure (a judge that is down), not of the agent's
    /// work: leaving a positive grader out renormalizes the others, so the reward can be higher
    /// than if it had scored 0.0. When the agent can make a check fail (by deleting the file it
    /// reads, say), use [`Zero`](OnError::Zero).
    Exclude,
}
