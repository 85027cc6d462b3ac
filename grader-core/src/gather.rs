//! Running graders concurrently and combining their subscores: [`Gather`].

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use serde_json::Value;

pub use crate::error::OnError;

use crate::error::{CombineError, GraderError};
use crate::grade::Grade;
use crate::limit::{Limiter, Scope, Scoped};
use crate::node::{Finished, IntoNode, Node, run_all, settle};
use crate::score::{EvaluationResult, SubScore};

type Outcome = Result<SubScore, GraderError>;

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

/// Runs graders concurrently, then combines every subscore as
/// [`Grade::from_subscores`](crate::Grade::from_subscores) does: the reference's
/// `Grade.gather` / `combine`.
///
/// It takes anything that [`IntoNode`]: gradings of any graders (sync, async, `BashGrader`, the
/// judge, trees), bare graders (weight 1.0), finished [`SubScore`]s and the `Result`s of awaited
/// gradings, in any mix, with [`add`](Self::add) or [`extend`](Self::extend).
///
/// Items keep their input order whatever order the graders finish in. The graders run
/// concurrently inside the awaiting task (at most [`limit`](Self::limit) of this gather at once,
/// and within the shared [`limiter`](Self::limiter)'s slots); nothing is spawned, so dropping
/// the gather drops every grader still running. A grading with a condition
/// ([`Grading::when`](crate::Grading::when)) runs once everything before it has finished.
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
///     .add(SubScore::new("format", 1.0)?.with_weight(0.2)?)
///     .add(Slow(0.5).grade(0.8))
///     .await?;
/// assert!((result.reward() - 0.6).abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[must_use = "a Gather does nothing until it is awaited"]
pub struct Gather<'a> {
    items: Vec<Node<'a>>,
    limit: Option<usize>,
    on_error: Option<OnError>,
    limiter: Option<Limiter>,
    timed: bool,
    clamp: bool,
    /// The run, once polled.
    running: Option<Pin<Box<dyn Future<Output = GatherOutcome> + Send + 'a>>>,
}

type GatherOutcome = Result<EvaluationResult, GatherError>;

// Nothing in a gather is pinned in place: polling moves its items into a boxed future.
impl Unpin for Gather<'_> {}

impl fmt::Debug for Gather<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gather")
            .field("items", &self.items.len())
            .field("limit", &self.limit)
            .field("on_error", &self.on_error)
            .field("limiter", &self.limiter)
            .field("timed", &self.timed)
            .field("clamp", &self.clamp)
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
            on_error: None,
            limiter: None,
            timed: false,
            clamp: false,
            running: None,
        }
    }

    /// Runs at most `limit` of this gather's graders at once. A limit of 0 is treated as 1.
    /// For a limit shared with other gathers, see [`limiter`](Self::limiter).
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit.max(1));
        self
    }

    /// What to do when a grader fails; [`OnError::Fail`] by default (or the policy of an
    /// enclosing gather). Trees inside follow it unless given their own.
    pub fn on_error(mut self, policy: OnError) -> Self {
        self.on_error = Some(policy);
        self
    }

    /// Takes the slots of every grading inside, trees included, from `limiter`, which other
    /// gathers and evaluations may share (see [`limit`](crate::limit)).
    pub fn limiter(mut self, limiter: &Limiter) -> Self {
        self.limiter = Some(limiter.clone());
        self
    }

    /// Records how long each grader took, as `elapsed_seconds` in its info (off by default,
    /// so that results stay the same from run to run).
    pub fn timed(mut self) -> Self {
        self.timed = true;
        self
    }

    /// Clamps the combined reward to `[0, 1]` (off by default: as in the reference, penalties
    /// can push the reward below 0). When clamping changes it, the reward before is recorded in
    /// the result's info under `unclamped_reward`; see [`EvaluationResult::clamped`]. The
    /// subscores are unchanged.
    ///
    /// ```
    /// use grader_core::{Gather, SubScore};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let tests = || SubScore::new("tests", 0.5)?.with_weight(1.0);
    /// let penalty = || SubScore::new("edited tests/", 1.0)?.with_weight(-0.7);
    /// let raw = Gather::new().add(tests()?).add(penalty()?).await?;
    /// assert!((raw.reward() + 0.2).abs() < 1e-12);
    /// let clamped = Gather::new().clamp(true).add(tests()?).add(penalty()?).await?;
    /// assert_eq!(clamped.reward(), 0.0);
    /// assert!((clamped.info["unclamped_reward"].as_f64().unwrap() + 0.2).abs() < 1e-12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn clamp(mut self, clamp: bool) -> Self {
        self.clamp = clamp;
        self
    }

    /// Adds an item: a grading (`check.grade(0.5)`), a grader (at weight 1.0), a finished
    /// [`SubScore`], or the `Result` of an awaited grading.
    #[allow(clippy::should_implement_trait)] // a builder step, not `+`
    pub fn add(mut self, item: impl IntoNode<'a>) -> Self {
        self.items.push(item.into_node());
        self
    }

    /// Adds every item of `items`, as [`add`](Self::add).
    #[allow(clippy::should_implement_trait)] // a builder step, not `Extend` (which takes `&mut`)
    pub fn extend<I>(mut self, items: I) -> Self
    where
        I: IntoIterator,
        I::Item: IntoNode<'a>,
    {
        self.items
            .extend(items.into_iter().map(IntoNode::into_node));
        self
    }

    /// Runs the graders and combines every subscore.
    ///
    /// When an item marked [`required`](crate::Grading::required) did not reach its threshold,
    /// the reward becomes that of the penalties alone (0 without any that fired) and
    /// `info.zeroed_by` names it.
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
            limiter,
            timed,
            clamp,
            running,
        } = self;
        if let Some(running) = running {
            return running.await;
        }
        let mut scope = Scope::current();
        if let Some(limiter) = limiter {
            scope = scope.with_limiter(limiter);
        }
        let policy = on_error.or(scope.on_error).unwrap_or_default();
        scope.on_error = Some(policy);
        scope.timed |= timed;
        // Each item counts for or against the agent by its own weight.
        scope.against = None;
        let outer = scope.failures.replace(Arc::new(AtomicBool::new(false)));
        let nested = scope.failures.clone();
        let finished = Scoped::new(scope, run_all(items, limit)).await;
        let mut result = resolve(finished, policy);
        if clamp {
            result = result.map(EvaluationResult::clamped);
        }
        let nested_failed = nested.is_some_and(|failed| failed.load(Ordering::Relaxed));
        if let Ok(result) = &mut result {
            result.is_error |= nested_failed;
        }
        // A failure scored here, by this gather's policy or deeper, marks any enclosing result
        // too (this gather may be run by a grader inside another gather).
        let flagged = nested_failed || result.as_ref().is_ok_and(|result| result.is_error);
        if flagged && let Some(outer) = outer {
            outer.store(true, Ordering::Relaxed);
        }
        result
    }
}

/// A gather is a `Future` (`Send`), so any executor API takes it: `.await`, `block_on`,
/// `join_all`, `tokio::spawn` (for a `'static` one).
impl<'a> Future for Gather<'a> {
    type Output = Result<EvaluationResult, GatherError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let running = this.running.get_or_insert_with(|| {
            let gather = Gather {
                items: std::mem::take(&mut this.items),
                limit: this.limit,
                on_error: this.on_error,
                limiter: this.limiter.take(),
                timed: this.timed,
                clamp: this.clamp,
                running: None,
            };
            Box::pin(gather.run())
        });
        let outcome = std::task::ready!(running.as_mut().poll(cx));
        // Polled again, it says so: an error, not a panic.
        this.running = Some(Box::pin(futures_util::future::poll_fn(|_| {
            Poll::Ready(Err(GatherError::Graders {
                outcomes: vec![Err(crate::grading::used_up())],
            }))
        })));
        Poll::Ready(outcome)
    }
}

/// Applies the failure policy, then combines.
fn resolve(finished: Vec<Finished>, policy: OnError) -> Result<EvaluationResult, GatherError> {
    let failed = finished.iter().any(|item| item.outcome.is_err());
    // When the failures leave nothing to normalize by (every grader failed under `Exclude`,
    // say), the graders' errors are the story, not "no positive weight".
    let counts = |outcome: &Outcome| match outcome {
        Ok(sub) => sub.weight() > 0.0,
        Err(error) => policy == OnError::Zero && error.weight.is_finite() && error.weight > 0.0,
    };
    if failed && !finished.iter().any(|item| counts(&item.outcome)) {
        let outcomes = finished.into_iter().map(|item| item.outcome).collect();
        return Err(GatherError::Graders { outcomes });
    }
    let settled =
        settle(finished, policy, None).map_err(|outcomes| GatherError::Graders { outcomes })?;
    let mut result = Grade::from_subscores(settled.subscores)?;
    result.is_error |= settled.failed;
    if !settled.zeroed_by.is_empty() {
        // The positive part goes; the penalties stay, so that an agent that has missed a
        // required check still loses for what it penalizes.
        let penalties = result
            .subscores
            .as_deref()
            .unwrap_or_default()
            .iter()
            .filter(|sub| sub.weight() < 0.0)
            .fold(0.0, |sum, sub| sum + sub.value() * sub.weight());
        result.reward = result.reward.min(penalties.min(0.0));
        let names = settled.zeroed_by.into_iter().map(Value::String).collect();
        result
            .info
            .insert("zeroed_by".to_owned(), Value::Array(names));
    }
    Ok(result)
}
