//! Starting a grading in a gather or a tree: a check that never awaits
//! ([`Grader::score_at_once`]) runs there and then, with no future of its own; any other
//! becomes the future its parent awaits.

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use crate::grader::{AtOnce, Grader};
use crate::limit::with_against;

use super::run::{catch, finish};
use super::{Outcome, Spec};

/// The run of a grading that has to be awaited, as its gather or tree holds it.
pub(crate) type Run<'a> = Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>;

/// A grading waiting in a gather or a tree, its grader's type erased: its grader and options
/// in one box, until it starts.
pub(crate) type Job<'a> = Box<dyn Start<'a> + Send + 'a>;

/// A grading its gather or tree has decided to run (its condition, if any, held).
pub(crate) trait Start<'a> {
    /// Starts it where the parent runs its items: `against` and `timed` are the parent's scope's
    /// (see [`Scope`](crate::limit::Scope)).
    fn start(self: Box<Self>, against: Option<bool>, timed: bool) -> Started<'a>;
}

/// A grading once started.
pub(crate) enum Started<'a> {
    /// It has finished: its check did not await.
    Done(Outcome),
    /// It runs: the parent awaits it.
    Running(Run<'a>),
}

impl<'a, G: Grader + Send + 'a> Start<'a> for Spec<'a, G> {
    /// What awaiting the grading in the parent's scope does, without the future for a check
    /// that does not await and takes no slot, timer or retries: the same steps in the same
    /// order (name and parameters, resource, the check with its direction in force, a panic
    /// caught, the outcome packaged).
    fn start(self: Box<Self>, against: Option<bool>, timed: bool) -> Started<'a> {
        let mut spec = *self;
        let (name, parameters) = match spec.prepare() {
            Ok(prepared) => prepared,
            Err(error) => return Started::Done(Err(error)),
        };
        let weight = spec.weight;
        let resource = match &spec.resource {
            Some(resource) => resource.clone(),
            None => match catch(|| spec.grader.resource()) {
                Ok(resource) => resource,
                Err(failure) => {
                    return Started::Done(finish(name, weight, parameters, Err(failure), 1, None));
                }
            },
        };
        let awaited = resource.is_some() || spec.time_limit.is_some() || spec.retries > 0;
        // Asked once: the run below uses the answer.
        spec.resource = Some(resource);
        if awaited {
            return Started::Running(Box::pin(spec.run_prepared(name, parameters, None)));
        }
        // As the run would set it for a child of a tree, or an item of a gather.
        let against = Some(against.unwrap_or(weight < 0.0));
        let started = (timed || spec.timed).then(Instant::now);
        let grader = spec.grader;
        let outcome = match catch(|| with_against(against, || grader.score_at_once())) {
            Ok(AtOnce::Awaits(grader)) => {
                let spec = Spec { grader, ..spec };
                return Started::Running(Box::pin(spec.run_prepared(name, parameters, None)));
            }
            Ok(AtOnce::Scored(outcome)) => outcome,
            Err(failure) => Err(failure),
        };
        let elapsed = started.map(|started| started.elapsed());
        Started::Done(finish(name, weight, parameters, outcome, 1, elapsed))
    }
}
