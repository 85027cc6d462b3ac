//! Running graders concurrently and combining their subscores: [`Gather`].

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde_json::Value;

use crate::error::{CombineError, GraderError};
use crate::grade::Grade;
use crate::grader::PARAMETERS_KEY;
use crate::score::{EvaluationResult, Info, SubScore};

type Outcome = Result<SubScore, GraderError>;
type PendingGrade<'a> = Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>;

/// What [`Gather`] does when a grader fails. A failure is never silently a 0.0: the two
/// lenient policies put the error in the failed subscore's `info.error` and set the result's
/// `isError`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OnError {
    /// The gather fails with a [`GatherError::Graders`] that still holds every sibling's
    /// finished subscore (the default, as the reference raises).
    #[default]
    Fail,
    /// The failed grader scores 0.0 at its weight.
    Zero,
    /// The failed grader is kept in the breakdown with weight 0, so it does not count.
    Exclude,
}

/// A gathering failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatherError {
    /// At least one grader failed under [`OnError::Fail`], or under another policy the
    /// failures left no positive weight to combine. Every outcome is kept, in input order, so
    /// nothing a sibling computed is lost.
    #[error("{}", describe_failures(.outcomes))]
    Graders {
        /// Every item's outcome, in input order.
        outcomes: Vec<Result<SubScore, GraderError>>,
    },
    /// The subscores could not be combined (none, or no positive weight).
    #[error(transparent)]
    Combine(#[from] CombineError),
}

impl GatherError {
    /// The graders that failed, in input order.
    pub fn failures(&self) -> impl Iterator<Item = &GraderError> {
        let outcomes: &[Outcome] = match self {
            GatherError::Graders { outcomes } => outcomes,
            GatherError::Combine(_) => &[],
        };
        outcomes.iter().filter_map(|outcome| outcome.as_ref().err())
    }

    /// The subscores that were computed, in input order.
    pub fn completed(&self) -> impl Iterator<Item = &SubScore> {
        let outcomes: &[Outcome] = match self {
            GatherError::Graders { outcomes } => outcomes,
            GatherError::Combine(_) => &[],
        };
        outcomes.iter().filter_map(|outcome| outcome.as_ref().ok())
    }
}

fn describe_failures(outcomes: &[Outcome]) -> String {
    let failures: Vec<String> = outcomes
        .iter()
        .filter_map(|outcome| outcome.as_ref().err().map(ToString::to_string))
        .collect();
    format!(
        "{} of {} graders failed: {}",
        failures.len(),
        outcomes.len(),
        failures.join("; ")
    )
}

enum Item<'a> {
    Ready(Outcome),
    Pending(PendingGrade<'a>),
}

/// A finished grade to put beside the pending ones: a [`SubScore`], or the `Result` of a
/// synchronous grader's `grade`.
#[derive(Debug)]
pub struct Ready(Outcome);

impl From<SubScore> for Ready {
    fn from(sub: SubScore) -> Self {
        Ready(Ok(sub))
    }
}

impl From<Result<SubScore, GraderError>> for Ready {
    fn from(outcome: Result<SubScore, GraderError>) -> Self {
        Ready(outcome)
    }
}

/// Runs graders concurrently, then combines every subscore as
/// [`Grade::from_subscores`](crate::Grade::from_subscores) does: the reference's
/// `Grade.gather` / `combine`.
///
/// Items keep their input order whatever order the graders finish in. The pending graders run
/// concurrently inside the awaiting task (at most [`limit`](Self::limit) at once); nothing is
/// spawned, so dropping the gather drops every grader still running.
///
/// ```
/// use grader_core::{Gather, Grader, OnError, SubScore};
/// # use grader_core::{Failure, Score};
/// # struct Slow(f64);
/// # impl Grader for Slow {
/// #     fn name(&self) -> std::borrow::Cow<'_, str> { "slow".into() }
/// #     async fn score(self) -> Result<Score, Failure> { Ok(self.0.into()) }
/// # }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let result = Gather::new()
///     .limit(8)
///     .on_error(OnError::Zero)
///     .ready(SubScore::new("format", 1.0)?.with_weight(0.2)?)
///     .pending(Slow(0.5).grade(0.8))
///     .await?;
/// assert!((result.reward - 0.6).abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[must_use = "a Gather does nothing until it is awaited"]
pub struct Gather<'a> {
    items: Vec<Item<'a>>,
    limit: Option<usize>,
    on_error: OnError,
}

impl fmt::Debug for Gather<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gather")
            .field("items", &self.items.len())
            .field("limit", &self.limit)
            .field("on_error", &self.on_error)
            .finish()
    }
}

impl Default for Gather<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> Gather<'a> {
    /// An empty gathering with no concurrency limit that fails when a grader fails.
    pub fn new() -> Self {
        Gather {
            items: Vec::new(),
            limit: None,
            on_error: OnError::Fail,
        }
    }

    /// Runs at most `limit` graders at once. A limit of 0 is treated as 1.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit.max(1));
        self
    }

    /// What to do when a grader fails; [`OnError::Fail`] by default.
    pub fn on_error(mut self, policy: OnError) -> Self {
        self.on_error = policy;
        self
    }

    /// Adds a finished grade: a [`SubScore`], or the `Result` a synchronous grader returned.
    pub fn ready(mut self, ready: impl Into<Ready>) -> Self {
        self.items.push(Item::Ready(ready.into().0));
        self
    }

    /// Adds a grade still to run, such as `BashGrader::new("pytest -q").grade(0.5)`.
    ///
    /// The grade must be `Send`, so that the gather can itself be awaited in a spawned task.
    /// Gather takes grade futures rather than graders because only at the call site does the
    /// compiler know whether a grader's future is `Send` (stable Rust cannot state that bound
    /// for a generic grader). A grader whose future is not `Send` (it holds an `Rc` across an
    /// `.await`) is graded on its own with `.grade(weight).await` and its result added with
    /// [`ready`](Self::ready).
    pub fn pending<F>(mut self, grade: F) -> Self
    where
        F: IntoFuture<Output = Result<SubScore, GraderError>>,
        F::IntoFuture: Send + 'a,
    {
        self.items
            .push(Item::Pending(Box::pin(grade.into_future())));
        self
    }

    /// Runs the pending graders and combines every subscore.
    ///
    /// # Errors
    /// [`GatherError::Graders`] when a grader failed under [`OnError::Fail`], or when the
    /// failures leave no positive weight; [`GatherError::Combine`] when the subscores cannot be
    /// combined (no items, or no positive weight among graders that all succeeded).
    pub async fn run(self) -> Result<EvaluationResult, GatherError> {
        let Gather {
            items,
            limit,
            on_error,
        } = self;
        let mut outcomes: Vec<Option<Outcome>> = Vec::with_capacity(items.len());
        let mut pending = Vec::new();
        for (index, item) in items.into_iter().enumerate() {
            match item {
                Item::Ready(outcome) => outcomes.push(Some(outcome)),
                Item::Pending(future) => {
                    outcomes.push(None);
                    pending.push(async move { (index, future.await) });
                }
            }
        }
        let limit = limit.unwrap_or(usize::MAX);
        let mut queued = pending.into_iter();
        let mut running: FuturesUnordered<_> = queued.by_ref().take(limit).collect();
        while let Some((index, outcome)) = running.next().await {
            outcomes[index] = Some(outcome);
            if let Some(next) = queued.next() {
                running.push(next);
            }
        }
        let outcomes: Vec<Outcome> = outcomes.into_iter().flatten().collect();
        resolve(outcomes, on_error)
    }
}

impl<'a> IntoFuture for Gather<'a> {
    type Output = Result<EvaluationResult, GatherError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}

/// Applies the failure policy, then combines.
fn resolve(outcomes: Vec<Outcome>, on_error: OnError) -> Result<EvaluationResult, GatherError> {
    let failed = outcomes.iter().any(Result::is_err);
    if failed && on_error == OnError::Fail {
        return Err(GatherError::Graders { outcomes });
    }
    // When the failures leave nothing to normalize by (every grader failed under `Exclude`,
    // say), the graders' errors are the story, not "no positive weight".
    let counts = |outcome: &Outcome| match outcome {
        Ok(sub) => sub.weight() > 0.0,
        Err(error) => on_error == OnError::Zero && error.weight.is_finite() && error.weight > 0.0,
    };
    if failed && !outcomes.iter().any(counts) {
        return Err(GatherError::Graders { outcomes });
    }
    let subscores = outcomes.into_iter().map(|outcome| match outcome {
        Ok(sub) => sub,
        Err(error) => failed_subscore(&error, on_error),
    });
    let mut result = Grade::from_subscores(subscores)?;
    result.is_error |= failed;
    Ok(result)
}

/// The subscore that stands for a failed grader under a lenient policy.
fn failed_subscore(error: &GraderError, on_error: OnError) -> SubScore {
    let weight = match on_error {
        OnError::Zero if error.weight.is_finite() => error.weight,
        _ => 0.0,
    };
    let mut info = Info::new();
    info.insert("error".to_owned(), Value::String(error.to_string()));
    info.insert(
        PARAMETERS_KEY.to_owned(),
        Value::Object((*error.parameters).clone()),
    );
    SubScore::from_valid_parts(error.grader.clone(), weight, 0.0, None, Some(info))
}
