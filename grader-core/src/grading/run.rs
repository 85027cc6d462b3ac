//! Running a [`Grading`](super::Grading): its parameters recorded, a slot of its resource
//! taken, the check run within its time limit and retried, panics caught, and the outcome
//! packaged as a subscore.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::FutureExt as _;
use serde_json::Value;

use crate::error::{Failure, GraderError};
use crate::grader::{Grader, PARAMETERS_KEY, SyncGrader, package_bare, package_recorded};
use crate::limit::{Scope, Scoped, with_against};
use crate::outcome::{Earlier, skipped_subscore};
use crate::params::ParametersWriter;
use crate::score::{Info, SubScore, parse_parameters};

use super::{Grading, Outcome, REDACTED, Spec, used_up};

impl<'a, G: Grader> Spec<'a, G> {
    /// The name the subscore will have, fixed as the grading's: the grader's own is asked for
    /// once. A panic asking for it leaves the name unset.
    pub(crate) fn resolve_name(&mut self) -> Result<String, Failure> {
        if let Some(name) = &self.name {
            return Ok(name.clone());
        }
        let name = catch(|| self.grader.name().into_owned())?;
        self.name = Some(name.clone());
        Ok(name)
    }

    /// Name, weight and parameters (the JSON text of an object), checked before anything
    /// runs. A grader that records no parameters gets `None`.
    pub(super) fn prepare(&mut self) -> Result<(String, Option<Vec<u8>>), GraderError> {
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
    pub(super) fn now(mut self) -> Result<SubScore, GraderError>
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

    /// Runs the check. `against`: whether its value counts against the agent, or `None` to
    /// take it from the tree it is a child of (or from its weight, in a gather).
    pub(super) async fn run_prepared(
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
                // Boxed, as the timer above: only gradings of a limited resource carry it.
                let permit = Box::pin(scope.acquire(&resource)).await;
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
            // Boxed, so that the timer's state is no part of the future of a grading without
            // a time limit (a gather holds one such future per grading).
            let timed = Box::pin(
                AssertUnwindSafe(async move { tokio::time::timeout(limit, check).await })
                    .catch_unwind(),
            )
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
pub(super) fn finish(
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
