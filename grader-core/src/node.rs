//! The items of a gather or a tree ([`Node`]), how they run together, and what failures and
//! skipped items become under each [`OnError`] policy.
//!
//! Anything that [`IntoNode`] goes in: a [`Grading`] (`check.grade(0.5)`), a bare grader (weight
//! 1.0, for tree children whose weight has no effect), a finished [`SubScore`], or the `Result`
//! of an awaited grading. Items run concurrently, each as soon as it may: a grading with a
//! condition ([`Grading::when`]) waits for every item before it and is skipped when the
//! condition does not hold.
//!
//! A skipped grading is in the breakdown with `info.skipped` saying why. It is never a hidden
//! 0 and never helps the agent: a skipped positive grader counts as 0.0 at its weight, and a
//! skipped penalty as fired (1.0), since nothing checked that the agent did not do what it
//! penalizes. Failed graders under the lenient policies follow the same rule. In a tree, where
//! children's weights have no effect, the tree's own direction decides: the children of a tree
//! graded as a penalty (at a negative weight in a gather, or inside such a tree) count as fired
//! when they fail or are skipped, the others as 0.0.

use std::fmt;
use std::task::{Context, Poll};

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use serde_json::Value;

use crate::error::GraderError;
use crate::error::OnError;
use crate::grader::{Grader, PARAMETERS_KEY};
use crate::grading::{CONDITION_FAILED, Condition, Grading, Job, Started};
pub use crate::outcome::{Earlier, SKIPPED_KEY};
pub(crate) use crate::outcome::{Finished, Outcome, counts_against, skipped_subscore, worst};
use crate::score::{Info, SubScore};

/// One item of a gather or a tree: a grading still to run, or a finished outcome. Made by
/// [`IntoNode`]; you rarely name it.
pub struct Node<'a> {
    name: String,
    weight: f64,
    required: Option<f64>,
    condition: Option<Condition<'a>>,
    work: Work<'a>,
}

enum Work<'a> {
    Done(Outcome),
    /// A grading not started yet: started when its parent runs it (so that a check that does
    /// not await needs no future), boxed once with its options.
    Run(Job<'a>),
}

impl fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Node")
            .field("name", &self.name)
            .field("weight", &self.weight)
            .field("required", &self.required)
            .field("conditional", &self.condition.is_some())
            .field("finished", &matches!(self.work, Work::Done(_)))
            .finish()
    }
}

impl<'a> Node<'a> {
    fn done(outcome: Outcome) -> Self {
        let (name, weight) = match &outcome {
            Ok(sub) => (sub.name().to_owned(), sub.weight()),
            Err(error) => (error.grader.clone(), error.weight),
        };
        Node {
            name,
            weight,
            required: None,
            condition: None,
            work: Work::Done(outcome),
        }
    }

    /// The item as skipped, for `reason`, without running it (scored as [`skipped_subscore`]
    /// with `against`).
    pub(crate) fn skip(self, reason: &str, against: bool) -> Finished {
        let (outcome, skipped) = match self.work {
            Work::Done(outcome) => (outcome, false),
            Work::Run(_) => {
                let sub = skipped_subscore(self.name.clone(), self.weight, reason, against);
                (Ok(sub), true)
            }
        };
        Finished {
            name: self.name,
            required: self.required,
            outcome,
            skipped,
        }
    }

    /// The item without its condition: it runs whatever came before it.
    pub(crate) fn unconditional(mut self) -> Self {
        self.condition = None;
        self
    }

    /// Whether it has finished already (a subscore or an outcome, not a grading).
    pub(crate) fn is_done(&self) -> bool {
        matches!(self.work, Work::Done(_))
    }
}

/// What can go in a [`Gather`](crate::Gather) or a tree ([`any`](crate::any),
/// [`all`](crate::all), [`cascade`](crate::cascade)).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot go in a gather or a tree",
    label = "not a grader, a grading or a subscore",
    note = "add a grader (`Check {{ .. }}`), a grading (`check.grade(0.5)`), a finished \
            `SubScore`, or the `Result` of an awaited grading",
    note = "a future from elsewhere must be awaited first; a grader's future is made by the \
            gather itself, so pass the grading, not `grading.into_future()`"
)]
pub trait IntoNode<'a> {
    /// The item.
    fn into_node(self) -> Node<'a>;
}

impl<'a> IntoNode<'a> for Node<'a> {
    fn into_node(self) -> Node<'a> {
        self
    }
}

impl<'a, G: Grader + Send + 'a> IntoNode<'a> for Grading<'a, G> {
    fn into_node(self) -> Node<'a> {
        let Some(mut spec) = self.into_spec() else {
            // Already polled: it can only say so.
            return Node::done(Err(crate::grading::used_up()));
        };
        let name = match spec.resolve_name() {
            Ok(name) => name,
            // The grading asks again when it runs, and fails with the panic.
            Err(_) => std::any::type_name::<G>().to_owned(),
        };
        let weight = spec.weight;
        let required = spec.required;
        let condition = spec.condition.take();
        Node {
            name,
            weight,
            required,
            condition,
            work: Work::Run(Box::new(spec)),
        }
    }
}

impl<'a, G: Grader + Send + 'a> IntoNode<'a> for G {
    /// The grader at weight 1.0: for the children of [`any`](crate::any) and
    /// [`all`](crate::all), whose weights have no effect.
    fn into_node(self) -> Node<'a> {
        self.grade(1.0).into_node()
    }
}

impl<'a> IntoNode<'a> for SubScore {
    fn into_node(self) -> Node<'a> {
        Node::done(Ok(self))
    }
}

impl<'a> IntoNode<'a> for Result<SubScore, GraderError> {
    fn into_node(self) -> Node<'a> {
        Node::done(self)
    }
}

/// Runs every item: finished ones as they are, the others concurrently (at most `limit` at
/// once), a conditional one once every item before it has finished. Outcomes come back in input
/// order.
pub(crate) async fn run_all(nodes: Vec<Node<'_>>, limit: Option<usize>) -> Vec<Finished> {
    let count = nodes.len();
    let limit = limit.unwrap_or(usize::MAX).max(1);
    let mut finished: Vec<Option<Finished>> = Vec::with_capacity(count);
    let mut waiting: Vec<Option<(Option<Condition<'_>>, Job<'_>)>> = Vec::with_capacity(count);
    let mut names = Vec::with_capacity(count);
    for node in nodes {
        let Node {
            name,
            weight,
            required,
            condition,
            work,
        } = node;
        match work {
            Work::Done(outcome) => {
                finished.push(Some(Finished {
                    name: name.clone(),
                    required,
                    outcome,
                    skipped: false,
                }));
                waiting.push(None);
            }
            Work::Run(run) => {
                finished.push(None);
                waiting.push(Some((condition, run)));
            }
        }
        names.push((name, weight, required));
    }
    let (against, timed) = {
        let scope = crate::limit::Scope::current();
        (scope.against, scope.timed)
    };
    let mut running = FuturesUnordered::new();
    // The first item not started yet, and the first not finished yet.
    let mut cursor = 0;
    let mut unfinished = 0;
    loop {
        while unfinished < count && finished[unfinished].is_some() {
            unfinished += 1;
        }
        let mut index = cursor;
        while index < count && running.len() < limit {
            let startable = match &waiting[index] {
                None => false,
                Some((None, _)) => true,
                Some((Some(_), _)) => unfinished >= index,
            };
            if startable && let Some((condition, run)) = waiting[index].take() {
                let go = match condition {
                    None => Ok(true),
                    Some(condition) => {
                        let earlier = Earlier {
                            items: &finished[..index],
                        };
                        crate::grading::catch(|| condition(&earlier))
                    }
                };
                let (weight, required) = (names[index].1, names[index].2);
                let name = if matches!(go, Ok(true)) {
                    String::new() // taken when it finishes
                } else {
                    std::mem::take(&mut names[index].0)
                };
                let outcome = match go {
                    Ok(true) => {
                        // A check that does not await finishes as it starts, with no future;
                        // so does, at its first poll, one whose future is ready at once: take
                        // either outcome here rather than through a task of `running`. One
                        // still pending is polled again by `running` (with the real waker) as
                        // soon as it is in.
                        let polled = match run.start(against, timed) {
                            Started::Done(outcome) => Poll::Ready(outcome),
                            Started::Running(mut run) => {
                                let noop = futures_util::task::noop_waker_ref();
                                match run.as_mut().poll(&mut Context::from_waker(noop)) {
                                    Poll::Ready(outcome) => Poll::Ready(outcome),
                                    Poll::Pending => {
                                        running.push(async move { (index, run.await) });
                                        Poll::Pending
                                    }
                                }
                            }
                        };
                        match polled {
                            Poll::Ready(outcome) => {
                                let name = std::mem::take(&mut names[index].0);
                                finished[index] = Some(Finished {
                                    name,
                                    required,
                                    outcome,
                                    skipped: false,
                                });
                            }
                            Poll::Pending => {}
                        }
                        None
                    }
                    Ok(false) => {
                        let against = counts_against(against, weight);
                        let sub = skipped_subscore(name.clone(), weight, CONDITION_FAILED, against);
                        Some((Ok(sub), true))
                    }
                    Err(failure) => Some((
                        Err(GraderError {
                            grader: name.clone(),
                            weight,
                            parameters: Box::default(),
                            failure,
                        }),
                        false,
                    )),
                };
                if let Some((outcome, skipped)) = outcome {
                    finished[index] = Some(Finished {
                        name,
                        required,
                        outcome,
                        skipped,
                    });
                }
            }
            index += 1;
        }
        while cursor < count && waiting[cursor].is_none() {
            cursor += 1;
        }
        match running.next().await {
            Some((index, outcome)) => {
                // Each item finishes once, so its name can be taken.
                let name = std::mem::take(&mut names[index].0);
                let required = names[index].2;
                finished[index] = Some(Finished {
                    name,
                    required,
                    outcome,
                    skipped: false,
                });
            }
            None if cursor >= count => break,
            None => {} // a conditional item can start now that everything before it is done
        }
    }
    finished.into_iter().flatten().collect()
}

/// The finished items under a failure policy.
pub(crate) struct Settled {
    /// One subscore per item, in input order; failed items as the policy scores them.
    pub(crate) subscores: Vec<SubScore>,
    /// Per item: whether it was skipped.
    pub(crate) skipped: Vec<bool>,
    /// Per item: whether it failed.
    pub(crate) errored: Vec<bool>,
    /// Whether any item failed.
    pub(crate) failed: bool,
    /// The required items that did not reach their threshold, by given name.
    pub(crate) zeroed_by: Vec<String>,
}

/// Applies `policy`: under [`OnError::Fail`] any failure gives back every outcome, in input
/// order; otherwise each failed item becomes the subscore the policy gives it. `against` is
/// the tree's (see [`failed_subscore`]); `None` in a gather.
pub(crate) fn settle(
    finished: Vec<Finished>,
    policy: OnError,
    against: Option<bool>,
) -> Result<Settled, Vec<Outcome>> {
    let failed = finished.iter().any(|item| item.outcome.is_err());
    if failed && policy == OnError::Fail {
        return Err(finished.into_iter().map(|item| item.outcome).collect());
    }
    let mut zeroed_by = Vec::new();
    let mut skipped = Vec::with_capacity(finished.len());
    let mut errored = Vec::with_capacity(finished.len());
    let subscores = finished
        .into_iter()
        .map(|item| {
            if let Some(threshold) = item.required {
                let met = !item.skipped
                    && item
                        .outcome
                        .as_ref()
                        .is_ok_and(|sub| sub.value() >= threshold);
                if !met {
                    zeroed_by.push(item.name.clone());
                }
            }
            skipped.push(item.skipped);
            errored.push(item.outcome.is_err());
            match item.outcome {
                Ok(sub) => sub,
                Err(error) => failed_subscore(&error, policy, against),
            }
        })
        .collect();
    Ok(Settled {
        subscores,
        skipped,
        errored,
        failed,
        zeroed_by,
    })
}

/// The subscore that stands for a failed grader under a lenient policy, never to the agent's
/// advantage: what counts for the agent scores 0.0 (at weight 0 under [`OnError::Exclude`]),
/// what counts against it (a penalty, or any child of a tree graded as a penalty) counts as
/// fired (1.0). The error is in `info.error`.
pub(crate) fn failed_subscore(
    error: &GraderError,
    policy: OnError,
    against: Option<bool>,
) -> SubScore {
    let weight = if error.weight.is_finite() {
        error.weight
    } else {
        0.0
    };
    let value = worst(counts_against(against, weight));
    let weight = if policy == OnError::Exclude && weight >= 0.0 {
        0.0
    } else {
        weight
    };
    let mut info = Info::new();
    info.insert("error".to_owned(), Value::String(error.to_string()));
    info.insert(
        PARAMETERS_KEY.to_owned(),
        Value::Object((*error.parameters).clone()),
    );
    SubScore::from_valid_parts(error.grader.clone(), weight, value, None, Some(info))
}
