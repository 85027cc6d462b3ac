//! The options of a [`Grading`]: its name, time limit, retries, shared resource, redaction,
//! condition and requirement, set before it runs; and running it at once with
//! [`now`](Grading::now).

use std::time::Duration;

use crate::error::GraderError;
use crate::grader::{Grader, SyncGrader};
use crate::limit::Resource;
use crate::outcome::Earlier;
use crate::score::SubScore;

use super::{Grading, Spec, used_up};

impl<'a, G: Grader> Grading<'a, G> {
    /// The grading of `grader` at `weight`; the same as `grader.grade(weight)`.
    pub fn new(grader: G, weight: f64) -> Self {
        let spec = Spec {
            grader,
            weight,
            name: None,
            time_limit: None,
            retries: 0,
            clone: None,
            resource: None,
            timed: false,
            redact: Vec::new(),
            required: None,
            condition: None,
        };
        Grading {
            spec: Some(spec),
            running: None,
        }
    }

    /// Changes the options; nothing once the grading has started.
    fn with(mut self, change: impl FnOnce(&mut Spec<'a, G>)) -> Self {
        if let Some(spec) = &mut self.spec {
            change(spec);
        }
        self
    }

    /// The grader and options, unless it has started.
    pub(crate) fn into_spec(self) -> Option<Spec<'a, G>> {
        self.spec
    }

    /// The subscore's name, instead of the grader's own (the reference's `name=`). An empty
    /// name keeps the grader's own, as the reference does.
    pub fn named(self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.with(|spec| spec.name = (!name.is_empty()).then_some(name))
    }

    /// Fails with [`Failure::TimedOut`] when the check takes longer than `limit` (a typed
    /// failure, not a 0.0). The clock starts when the check starts, after any wait for a shared
    /// slot. An async check is stopped at the limit (its future is dropped, which for
    /// `BashGrader` stops its commands); a synchronous one cannot be interrupted, so it fails
    /// when it returns after the limit.
    ///
    /// Awaiting a grading with a time limit needs a tokio runtime with its timer enabled.
    ///
    /// [`Failure::TimedOut`]: crate::Failure::TimedOut
    pub fn time_limit(self, limit: Duration) -> Self {
        self.with(|spec| spec.time_limit = Some(limit))
    }

    /// Runs the check again, up to `retries` more times, when it fails (an `Err`, an invalid
    /// score or a time-out; not a panic). The grader is cloned for each attempt. When it took
    /// more than one attempt, the subscore's info records `attempts`.
    pub fn retries(self, retries: u32) -> Self
    where
        G: Clone,
    {
        self.with(|spec| {
            spec.retries = retries;
            spec.clone = Some(G::clone);
        })
    }

    /// Takes a slot of `resource` from the shared limiter while the check runs, whatever class
    /// the grader declares ([`Grader::resource`]).
    pub fn resource(self, resource: Resource) -> Self {
        self.with(|spec| spec.resource = Some(Some(resource)))
    }

    /// Records how long the check took, in seconds, as `elapsed_seconds` in the subscore's info.
    /// Off by default, so that results stay the same from run to run.
    pub fn timed(self) -> Self {
        self.with(|spec| spec.timed = true)
    }

    /// Records the parameter `name` as `"<redacted>"` instead of its value: for an answer or a
    /// secret that must not be written out. Naming a parameter the grader does not have fails
    /// the grading with [`Failure::UnknownParameter`], so a misspelt name cannot leak the value.
    ///
    /// [`Failure::UnknownParameter`]: crate::Failure::UnknownParameter
    pub fn redact(self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.with(|spec| spec.redact.push(name))
    }

    /// A grading with a negative weight cannot be required: it fails with
    /// [`Failure::RequiredPenalty`] (a penalty that fires is the agent's mistake, not a
    /// criterion it missed).
    ///
    /// In a gather or a tree: when this grading's value is below 1.0 (or it failed, or was
    /// skipped), its parent scores 0: a gather's reward becomes that of its penalties alone
    /// (so they still count), and a tree's value 0.0 (1.0, fired, for a tree graded as a
    /// penalty, where 0.0 would help the agent). The parent's info names it under
    /// `zeroed_by`. Awaited on its own it changes nothing.
    ///
    /// [`Failure::RequiredPenalty`]: crate::Failure::RequiredPenalty
    pub fn required(self) -> Self {
        self.required_at(1.0)
    }

    /// As [`required`](Self::required), with the value it must reach.
    pub fn required_at(self, threshold: f64) -> Self {
        self.with(|spec| spec.required = Some(threshold))
    }

    /// In a gather or a tree: runs this grading only after every item added before it has
    /// finished, and only if `condition` holds for their results; otherwise it is recorded as
    /// skipped (see [`Earlier`]). Awaited on its own, the condition sees no earlier results.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use grader_core::{Gather, Grader, SubScore, grader};
    ///
    /// #[grader]
    /// async fn expensive_review() -> f64 {
    ///     0.9
    /// }
    ///
    /// let result = Gather::new()
    ///     .add(SubScore::new("tests", 0.0)?.with_weight(0.7)?)
    ///     .add(ExpensiveReview {}.grade(0.3).when(|earlier| earlier.passed("tests")))
    ///     .await?;
    /// let review = result.subscore("expensive_review").unwrap();
    /// assert_eq!(review.info().unwrap()["skipped"], "its condition on earlier results did not hold");
    /// assert_eq!(result.reward(), 0.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn when(self, condition: impl FnOnce(&Earlier<'_>) -> bool + Send + 'a) -> Self {
        self.with(|spec| spec.condition = Some(Box::new(condition)))
    }

    /// Runs the grading synchronously: the way to grade a [`SyncGrader`] without a runtime.
    /// A condition set with [`when`](Self::when) sees no earlier results.
    ///
    /// # Errors
    /// A [`GraderError`] naming the grader when the check fails, returns an invalid value,
    /// panics, overruns its time limit, or `weight` is not finite.
    pub fn now(self) -> Result<SubScore, GraderError>
    where
        G: SyncGrader,
    {
        match self.spec {
            Some(spec) => spec.now(),
            None => Err(used_up()),
        }
    }
}
