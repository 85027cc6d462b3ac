//! [`Grading`]: one grader at one weight, with the options of that grading, not yet run.
//!
//! Every grader's [`grade`](crate::Grader::grade) returns one. It runs when awaited (any
//! grader), when run with [`now`](Grading::now) (a [`SyncGrader`]), or when the gather or tree it
//! was added to runs. Running it:
//!
//! 1. records the grader's parameters (before the check, so a failure still says what the
//!    grader was given), with any [`redact`](Grading::redact)ed ones replaced;
//! 2. takes a slot of the grader's [`Resource`] class from the shared [`Limiter`](crate::limit::Limiter)
//!    in force, if any;
//! 3. runs the check, at most [`time_limit`](Grading::time_limit) long, again on failure up to
//!    [`retries`](Grading::retries) times; a panic in the check or in its parameters is caught
//!    and becomes [`Failure::Panicked`];
//! 4. packages the score as a [`SubScore`] with the grading's name and weight, or fails with a
//!    [`GraderError`] naming the grader.
//!
//! ```
//! use std::time::Duration;
//! use grader_core::{Grader, grader};
//!
//! #[grader]
//! fn long_enough(answer: &str, words: usize) -> bool {
//!     answer.split_whitespace().count() >= words
//! }
//!
//! let sub = LongEnough { answer: "a short answer", words: 2 }
//!     .grade(0.5)
//!     .named("length")
//!     .redact("answer")
//!     .time_limit(Duration::from_secs(1))
//!     .now()?;
//! assert_eq!((sub.name(), sub.value()), ("length", 1.0));
//! assert_eq!(sub.info().unwrap()["_parameters"]["answer"], "<redacted>");
//! # Ok::<(), grader_core::GraderError>(())
//! ```
//!
//! [`SyncGrader`]: crate::SyncGrader
//!
//! [`SubScore`]: crate::SubScore

use std::fmt;
use std::time::Duration;

use crate::error::{Failure, GraderError};
use crate::limit::Resource;
pub(crate) use crate::outcome::{Earlier, Outcome};

mod options;
mod run;
mod start;

pub(crate) use run::{CONDITION_FAILED, catch};
pub(crate) use start::{Job, Run, Started};

/// A condition on the results of the graders added before this one to the same gather or tree.
pub(crate) type Condition<'a> = Box<dyn FnOnce(&Earlier<'_>) -> bool + Send + 'a>;

/// What replaces a redacted parameter.
pub const REDACTED: &str = "<redacted>";

/// One grader at one weight, with this grading's options; nothing runs until it is awaited, run
/// with [`now`](Self::now), or run by the gather or tree it was added to. Made by
/// [`Grader::grade`](crate::Grader::grade). See [the module docs](self).
///
/// It is a `Future` (`Send`, and `'static` when the grader is), so any executor API takes it:
/// `.await`, `block_on`, `tokio::spawn`, `join!`, `join_all`.
#[must_use = "a grading does nothing until it is awaited, run with `.now()`, or added to a gather or a tree"]
pub struct Grading<'a, G> {
    /// What to run; taken when it starts.
    spec: Option<Spec<'a, G>>,
    /// The run, once polled.
    running: Option<Run<'a>>,
}

// The grader is never pinned in place: polling moves it into a boxed future.
impl<G> Unpin for Grading<'_, G> {}

/// A grading's grader and options.
pub(crate) struct Spec<'a, G> {
    pub(crate) grader: G,
    pub(crate) weight: f64,
    pub(crate) name: Option<String>,
    time_limit: Option<Duration>,
    retries: u32,
    clone: Option<fn(&G) -> G>,
    resource: Option<Option<Resource>>,
    timed: bool,
    redact: Vec<String>,
    pub(crate) required: Option<f64>,
    pub(crate) condition: Option<Condition<'a>>,
}

impl<G> fmt::Debug for Grading<'_, G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.spec {
            Some(spec) => spec.fmt(f),
            None => f.write_str("Grading { running }"),
        }
    }
}

impl<G> fmt::Debug for Spec<'_, G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Grading")
            .field("grader", &std::any::type_name::<G>())
            .field("weight", &self.weight)
            .field("name", &self.name)
            .field("time_limit", &self.time_limit)
            .field("retries", &self.retries)
            .field("resource", &self.resource)
            .field("timed", &self.timed)
            .field("redact", &self.redact)
            .field("required", &self.required)
            .field("conditional", &self.condition.is_some())
            .finish()
    }
}

/// The error for a grading run twice.
pub(crate) fn used_up() -> GraderError {
    GraderError {
        grader: String::new(),
        weight: 0.0,
        parameters: Box::default(),
        failure: Failure::Runtime("the grading was polled after it finished".to_owned()),
    }
}
