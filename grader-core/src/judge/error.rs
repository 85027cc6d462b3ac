//! Why a judge could not judge: [`JudgeError`], one variant per way a criterion can fail.
//!
//! It sits at the bottom of the judge: the crate's own `Failure` carries it, so it imports
//! nothing from the crate above the judge's transport and verdict parser.

use std::time::Duration;

use super::transport::TransportError;
use super::verdict::VerdictError;

/// Why a judge could not judge.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum JudgeError {
    /// No key was configured and `HUD_API_KEY` and `OPENAI_API_KEY` are unset or empty.
    #[error(
        "the judge needs an API key: set HUD_API_KEY (or OPENAI_API_KEY), or use JudgeConfig::api_key"
    )]
    MissingApiKey,
    /// A criterion's weight is NaN or infinite.
    #[error("criterion {criterion:?}: weight {weight:?} is not a finite number")]
    InvalidWeight {
        /// The criterion's text.
        criterion: String,
        /// The weight.
        weight: f64,
    },
    /// The reply had no verdict in it.
    #[error("criterion {criterion:?} (model {model}): {source}")]
    NoVerdict {
        /// The criterion's text.
        criterion: String,
        /// The model asked.
        model: String,
        /// What the parser found, with the reply's start.
        #[source]
        source: VerdictError,
    },
    /// The endpoint answered with an error status, after any retries.
    #[error(
        "criterion {criterion:?} (model {model}): HTTP {status} after {attempts} attempt(s): {body:?}"
    )]
    Status {
        /// The criterion's text.
        criterion: String,
        /// The model asked.
        model: String,
        /// The last status.
        status: u16,
        /// Attempts made.
        attempts: u32,
        /// The last reply's body, truncated.
        body: String,
    },
    /// No reply: connection errors or timeouts, after any retries.
    #[error("criterion {criterion:?} (model {model}): {source} (after {attempts} attempt(s))")]
    Transport {
        /// The criterion's text.
        criterion: String,
        /// The model asked.
        model: String,
        /// Attempts made.
        attempts: u32,
        /// The last attempt's error.
        #[source]
        source: TransportError,
    },
    /// The judge's overall deadline passed before this criterion was judged.
    #[error(
        "criterion {criterion:?} (model {model}): the judge's deadline of {deadline:?} passed \
         (after {attempts} attempt(s))"
    )]
    Deadline {
        /// The criterion's text.
        criterion: String,
        /// The model asked.
        model: String,
        /// The deadline, counted from the judge's start.
        deadline: Duration,
        /// Attempts started.
        attempts: u32,
    },
    /// A success status with a body that is not a chat completion.
    #[error("criterion {criterion:?} (model {model}): malformed reply ({reason}): {body:?}")]
    Malformed {
        /// The criterion's text.
        criterion: String,
        /// The model asked.
        model: String,
        /// What is wrong with it.
        reason: String,
        /// The body, truncated.
        body: String,
    },
    /// A panel gave no strict majority either way (a failed judge withholds its vote).
    #[error(
        "criterion {criterion:?}: no strict majority of {judges} judges ({met} MET, {unmet} UNMET, \
         {failed} failed)"
    )]
    NoMajority {
        /// The criterion's text.
        criterion: String,
        /// Panel size.
        judges: usize,
        /// MET votes.
        met: usize,
        /// UNMET votes.
        unmet: usize,
        /// Judges that gave no vote.
        failed: usize,
    },
}

impl JudgeError {
    /// The criterion this error is about, if it is about one.
    #[must_use]
    pub fn criterion(&self) -> Option<&str> {
        match self {
            JudgeError::MissingApiKey => None,
            JudgeError::InvalidWeight { criterion, .. }
            | JudgeError::NoVerdict { criterion, .. }
            | JudgeError::Status { criterion, .. }
            | JudgeError::Transport { criterion, .. }
            | JudgeError::Deadline { criterion, .. }
            | JudgeError::Malformed { criterion, .. }
            | JudgeError::NoMajority { criterion, .. } => Some(criterion),
        }
    }
}
