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

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::FutureExt as _;
use serde_json::Value;

use crate::error::{Failure, GraderError};
use crate::grader::{Grader, PARAMETERS_KEY, SyncGrader, package_bare, package_recorded};
use crate::limit::{Resource, Scope, Scoped, with_against};
use crate::node::{Earlier, skipped_subscore};
use crate::params::ParametersWriter;
use crate::score::{Info, SubScore, parse_parameters};

/// What a grading produces.
pub(crate) type Outcome = Result<SubScore, GraderError>;

/// A condition on the results of the graders added before this one to the same gather or tree.
pub(crate) type Condition<'a> = Box<dyn FnOnce(&Earlier<'_>) -> bool + Send + 'a>;

/// What replaces a redacted parameter.
pub const REDACTED: &str = "<redacted>";

/// One grader at one weight, with this grading's options; nothing runs until it is awaited, run
/// with [`now`](Self::now), or run by the gather or tree it was added to. Made by
/// [`Grader::grade`]. See [the module docs](self).
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

type Run<'a> = Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>;

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

/// The error for a grading run twice.
pub(crate) fn used_up() -> GraderError {
    GraderError {
        grader: String::new(),
        weight: 0.0,
        parameters: Box::default(),
        failure: Failure::Runtime("the grading was polled after it finished".to_owned()),
    }
}

impl<'a, G: Grader> Spec<'a, G> {
    /// The name the subscore will have.
    pub(crate) fn resolved_name(&self) -> Result<String, Failure> {
        match &self.name {
            Some(name) => Ok(name.clone()),
            None => catch(|| self.grader.name().into_owned()),
        }
    }

    /// Name, weight and parameters (the JSON text of an object), checked before anything
    /// runs. A grader that records no parameters gets `None`.
    fn prepare(&mut self) -> Result<(String, Option<Vec<u8>>), GraderError> {
        let weight = self.weight;
        let fail = |grader: String, parameters: Info, failure| GraderError {
            grader,
            weight,
            parameters: Box::new(parameters),
            failure,
        };
        // The name is needed once from here on: take an override rather than copy it.
        let name = match self.name.take() {
            Some(name) => Ok(name),
            None => catch(|| self.grader.name().into_owned()),
        };
        let name = name
            .map_err(|failure| fail(std::any::type_name::<G>().to_owned(), Info::new(), failure))?;
        let parameters = if self.redact.is_empty() {
            let written = catch(|| {
                let mut out = ParametersWriter::new();
                self.grader.write_parameters(&mut out);
                out
            });
            match written {
                Ok(out) => out.into_bytes(),
                Err(failure) => return Err(fail(name, Info::new(), failure)),
            }
        } else {
            let mut parameters = match catch(|| self.grader.parameters()) {
                Ok(parameters) => parameters,
                Err(failure) => return Err(fail(name, Info::new(), failure)),
            };
            // Every known name is redacted before a misspelt one is reported, so that the
            // error (whose parameters go in the breakdown) never shows a value meant to be
            // hidden.
            let mut unknown = None;
            for key in &self.redact {
                match parameters.get_mut(key) {
                    Some(value) => *value = Value::String(REDACTED.to_owned()),
                    None => unknown = unknown.or(Some(key)),
                }
            }
            if let Some(key) = unknown {
                let failure = Failure::UnknownParameter {
                    name: key.clone(),
                    known: parameters.keys().cloned().collect(),
                };
                return Err(fail(name, parameters, failure));
            }
            // A map of JSON values always serializes.
            serde_json::to_vec(&parameters).unwrap_or_default()
        };
        if !weight.is_finite() {
            let failure = Failure::InvalidWeight { weight };
            return Err(fail(name, parse_parameters(&parameters), failure));
        }
        if weight < 0.0 && self.required.is_some() {
            let failure = Failure::RequiredPenalty { weight };
            return Err(fail(name, parse_parameters(&parameters), failure));
        }
        let records = catch(|| self.grader.records_parameters()).unwrap_or(true);
        Ok((name, records.then_some(parameters)))
    }

    /// The grader for the next attempt: a clone while retries remain, the grader itself last.
    /// A panicking `Clone` is the attempt's failure.
    fn next_grader(
        grader: &mut Option<G>,
        clone: Option<fn(&G) -> G>,
        last: bool,
    ) -> Result<G, Failure> {
        match (last, clone, grader.as_ref()) {
            (false, Some(clone), Some(grader)) => catch(|| clone(grader)),
            _ => grader
                .take()
                .ok_or_else(|| Failure::Runtime("the grader was used up".to_owned())),
        }
    }

    /// Whether a condition, run with no earlier results (the grading is not in a gather or a
    /// tree), says to skip it. A condition that panics fails the grading, as in a gather.
    fn skipped_alone(&mut self) -> Result<bool, Failure> {
        match self.condition.take() {
            Some(condition) => catch(|| !condition(&Earlier::none())),
            None => Ok(false),
        }
    }

    /// The outcome of a grading whose condition, run alone, said to skip it or panicked.
    fn alone(&mut self, name: &str, parameters: Option<&[u8]>) -> Option<Outcome> {
        match self.skipped_alone() {
            Ok(false) => None,
            Ok(true) => Some(Ok(skipped_subscore(
                name.to_owned(),
                self.weight,
                CONDITION_FAILED,
                self.weight < 0.0,
            ))),
            Err(failure) => Some(Err(GraderError {
                grader: name.to_owned(),
                weight: self.weight,
                parameters: Box::new(parameters.map(parse_parameters).unwrap_or_default()),
                failure,
            })),
        }
    }

    /// As [`Grading::now`].
    fn now(mut self) -> Result<SubScore, GraderError>
    where
        G: SyncGrader,
    {
        let (name, parameters) = self.prepare()?;
        if let Some(outcome) = self.alone(&name, parameters.as_deref()) {
            return outcome;
        }
        // Graded on its own, its direction is its weight's.
        let against = Some(self.weight < 0.0);
        let Spec {
            grader,
            weight,
            time_limit,
            retries,
            clone,
            timed,
            ..
        } = self;
        let mut grader = Some(grader);
        let started = timed.then(Instant::now);
        let mut attempts = 0;
        let outcome = loop {
            attempts += 1;
            let last = attempts > retries;
            let grader = match Self::next_grader(&mut grader, clone, last) {
                Ok(grader) => grader,
                Err(failure) => break Err(failure),
            };
            let attempt_started = time_limit.map(|limit| (limit, Instant::now()));
            let mut outcome =
                catch(|| with_against(against, || grader.score_now())).and_then(|score| score);
            if let Some((limit, attempt_started)) = attempt_started
                && attempt_started.elapsed() > limit
            {
                outcome = Err(Failure::TimedOut { limit });
            }
            match outcome {
                Err(failure) if !last && retryable(&failure) => continue,
                outcome => break outcome,
            }
        };
        finish(
            name,
            weight,
            parameters,
            outcome,
            attempts,
            started.map(|started| started.elapsed()),
        )
    }
}

/// What a grading whose condition failed says in its `skipped` info.
pub(crate) const CONDITION_FAILED: &str = "its condition on earlier results did not hold";

impl<'a, G: Grader + Send + 'a> Spec<'a, G> {
    /// Runs the grading; what awaiting it does.
    pub(crate) async fn run(mut self) -> Outcome {
        let (name, parameters) = self.prepare()?;
        if let Some(outcome) = self.alone(&name, parameters.as_deref()) {
            return outcome;
        }
        // Graded on its own, its direction is its weight's, wherever it is awaited.
        let against = self.weight < 0.0;
        self.run_prepared(name, parameters, Some(against)).await
    }

    /// Runs the check of a grading whose name and parameters are known, ignoring any
    /// condition (its parent has decided to run it).
    pub(crate) async fn run_checked(mut self) -> Outcome {
        let (name, parameters) = self.prepare()?;
        self.run_prepared(name, parameters, None).await
    }

    /// Runs the check. `against`: whether its value counts against the agent, or `None` to
    /// take it from the tree it is a child of (or from its weight, in a gather).
    async fn run_prepared(
        self,
        name: String,
        parameters: Option<Vec<u8>>,
        against: Option<bool>,
    ) -> Outcome {
        let Spec {
            grader,
            weight,
            time_limit,
            retries,
            clone,
            resource,
            timed,
            ..
        } = self;
        let scope = Scope::current();
        let resource = match resource {
            Some(resource) => resource,
            None => match catch(|| grader.resource()) {
                Ok(resource) => resource,
                Err(failure) => return finish(name, weight, parameters, Err(failure), 1, None),
            },
        };
        let timed = timed || scope.timed;
        let (_permit, mut inner) = match resource {
            Some(resource) => {
                let permit = scope.acquire(&resource).await;
                let inner = scope.clone().holding(resource, &permit);
                (Some(permit), inner)
            }
            None => (None, scope.clone()),
        };
        inner.against = Some(against.or(scope.against).unwrap_or(weight < 0.0));
        let attempts_run = async move {
            let mut grader = Some(grader);
            let mut attempts = 0;
            let started = timed.then(Instant::now);
            let outcome = loop {
                attempts += 1;
                let last = attempts > retries;
                let grader = match Self::next_grader(&mut grader, clone, last) {
                    Ok(grader) => grader,
                    Err(failure) => break Err(failure),
                };
                let outcome = attempt(grader, time_limit).await;
                match outcome {
                    Err(failure) if !last && retryable(&failure) => continue,
                    outcome => break outcome,
                }
            };
            (outcome, attempts, started.map(|started| started.elapsed()))
        };
        let (outcome, attempts, elapsed) = Scoped::new(inner, attempts_run).await;
        finish(name, weight, parameters, outcome, attempts, elapsed)
    }
}

/// One run of the check, panics caught, within the time limit.
async fn attempt<G: Grader>(
    grader: G,
    time_limit: Option<Duration>,
) -> Result<crate::score::Score, Failure> {
    let check = AssertUnwindSafe(async move { grader.score().await }).catch_unwind();
    let outcome = match time_limit {
        None => check.await,
        Some(limit) => {
            if tokio::runtime::Handle::try_current().is_err() {
                return Err(Failure::Runtime(
                    "a time limit needs a tokio runtime with its timer enabled".to_owned(),
                ));
            }
            let timed = AssertUnwindSafe(async move { tokio::time::timeout(limit, check).await })
                .catch_unwind()
                .await;
            match timed {
                Ok(Ok(outcome)) => outcome,
                Ok(Err(_elapsed)) => return Err(Failure::TimedOut { limit }),
                Err(panic) => Err(panic),
            }
        }
    };
    outcome.unwrap_or_else(|panic| Err(panicked(panic)))
}

/// Packages the outcome, with the optional `attempts` and `elapsed_seconds`.
fn finish(
    name: String,
    weight: f64,
    parameters: Option<Vec<u8>>,
    outcome: Result<crate::score::Score, Failure>,
    attempts: u32,
    elapsed: Option<Duration>,
) -> Outcome {
    let mut sub = match parameters {
        Some(parameters) => package_recorded(name, weight, parameters, outcome)?,
        None => package_bare(name, weight, outcome)?,
    };
    if attempts > 1 {
        sub.info_mut()
            .insert("attempts".to_owned(), attempts.into());
    }
    if let Some(elapsed) = elapsed {
        sub.info_mut()
            .insert("elapsed_seconds".to_owned(), elapsed.as_secs_f64().into());
    }
    // `_parameters` stays last, after what the grading added.
    if attempts > 1 || elapsed.is_some() {
        let info = sub.info_mut();
        if let Some(parameters) = info.remove(PARAMETERS_KEY) {
            info.insert(PARAMETERS_KEY.to_owned(), parameters);
        }
    }
    Ok(sub)
}

/// Whether another attempt may help.
fn retryable(failure: &Failure) -> bool {
    !matches!(
        failure,
        Failure::Panicked { .. } | Failure::InvalidWeight { .. } | Failure::UnknownParameter { .. }
    )
}

/// Runs `f`, turning a panic into [`Failure::Panicked`].
pub(crate) fn catch<T>(f: impl FnOnce() -> T) -> Result<T, Failure> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).map_err(panicked)
}

/// The failure for a caught panic, with its message when it has one. The payload is dropped
/// here; a payload whose own `drop` panics is leaked rather than let that panic escape.
pub(crate) fn panicked(payload: Box<dyn Any + Send>) -> Failure {
    let message = payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a payload that is not a string".to_owned());
    if let Err(again) = std::panic::catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
    Failure::Panicked { message }
}

impl<'a, G: Grader + Send + 'a> Future for Grading<'a, G> {
    type Output = Result<SubScore, GraderError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if this.running.is_none() {
            match this.spec.take() {
                Some(spec) => this.running = Some(Box::pin(spec.run())),
                None => return Poll::Ready(Err(used_up())),
            }
        }
        let Some(running) = this.running.as_mut() else {
            return Poll::Ready(Err(used_up()));
        };
        let outcome = std::task::ready!(running.as_mut().poll(cx));
        this.running = None;
        Poll::Ready(outcome)
    }
}
