//! What a run grades: [`Sample`]s, and the (sample, epoch) pairs of them that the run's
//! shard holds and its output lacks ([`Samples`]), taken by the awaiting task, or by the
//! lanes themselves from [`SharedSamples`] (`Evaluation::run_shared`).

use std::collections::HashMap;
use std::fmt::Display;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use super::grading::grading;
use crate::running::{Made, Source, lock};
use crate::shard::Shard;
use grader_core::score::EvaluationResult;

/// Something an evaluation grades: anything with an id, unique within the evaluation.
///
/// The id is what a resumed run recognizes a sample by, and what decides its shard.
///
/// ```
/// use grader_eval::Sample;
///
/// struct Question { id: u32, text: String, answer: String }
///
/// impl Sample for Question {
///     fn id(&self) -> String {
///         format!("q{}", self.id)
///     }
/// }
///
/// // Pairs of (id, anything) are samples too.
/// assert_eq!(("q1", "What is 2 + 2?").id(), "q1");
/// ```
pub trait Sample {
    /// The sample's id.
    fn id(&self) -> String;
}

impl<K: Display, T> Sample for (K, T) {
    fn id(&self) -> String {
        self.0.to_string()
    }
}

/// A sample to grade, with its id and the epoch.
pub(super) type Pair<S> = (Arc<S>, Arc<str>, u32);

/// The (sample, id, epoch) pairs a run grades, in order: every epoch of each sample in the
/// run's shard that the output does not hold yet.
pub(super) struct Samples<It, S> {
    pub(super) samples: std::iter::Fuse<It>,
    /// The epochs the output holds of each sample id.
    pub(super) done: HashMap<String, Vec<u32>>,
    pub(super) shard: Shard,
    pub(super) epochs: u32,
    /// The sample whose epochs are being taken, with its id and next epoch.
    pub(super) current: Option<Pair<S>>,
    /// Gradings skipped because the output holds their lines.
    pub(super) resumed: usize,
    /// Samples skipped because another shard grades them.
    pub(super) other_shards: usize,
}

impl<It: Iterator<Item = S>, S: Sample> Iterator for Samples<It, S> {
    type Item = Pair<S>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((sample, id, epoch)) = &mut self.current {
                let done = self.done.get(&**id);
                while *epoch <= self.epochs {
                    let this = *epoch;
                    *epoch += 1;
                    if done.is_some_and(|done| done.contains(&this)) {
                        self.resumed += 1;
                    } else {
                        return Some((Arc::clone(sample), Arc::clone(id), this));
                    }
                }
                self.current = None;
            }
            let sample = self.samples.next()?;
            let id = sample.id();
            if self.shard.contains(&id) {
                self.current = Some((Arc::new(sample), id.into(), 1));
            } else {
                // Another shard's sample is not resumed: this run was never going to grade it.
                self.other_shards += 1;
            }
        }
    }
}

/// The samples, and the next pair, taken ahead so that the lane taking the last pairs knows
/// they are the last.
pub(super) struct Ahead<It, S> {
    pub(super) samples: Samples<It, S>,
    pub(super) next: Option<Pair<S>>,
}

/// The samples and the grading function of
/// [`Evaluation::run_shared`](super::Evaluation::run_shared), for its lanes to make gradings from.
pub(super) struct SharedSamples<It, S, F> {
    pub(super) samples: Mutex<Ahead<It, S>>,
    /// What the samples' iterator panicked with (it is not asked again).
    pub(super) panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
    pub(super) grade: F,
}

impl<It, S, F, Fut, E> Source for SharedSamples<It, S, F>
where
    It: Iterator<Item = S> + Send + 'static,
    S: Sample + Send + Sync + 'static,
    F: Fn(Arc<S>, u32) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<EvaluationResult, E>> + Send + 'static,
    E: Display + 'static,
{
    fn make(&self, n: usize, into: &mut Vec<Made>) -> (usize, bool) {
        // The pairs are taken under the lock, and the gradings made outside it, so lanes make
        // theirs side by side.
        let mut pairs = Vec::with_capacity(n);
        let ended = {
            let mut guard = lock(&self.samples);
            let Ahead { samples, next } = &mut *guard;
            let mut panic = lock(&self.panic);
            if panic.is_some() {
                return (0, true);
            }
            let taken = std::panic::catch_unwind(AssertUnwindSafe(|| {
                pairs.extend(next.take());
                while pairs.len() < n
                    && let Some(pair) = samples.next()
                {
                    pairs.push(pair);
                }
                *next = samples.next();
            }));
            if let Err(payload) = taken {
                *panic = Some(payload);
            }
            panic.is_some() || next.is_none()
        };
        // The grading function's calls are caught one by one (a panic is that grading's line);
        // what could still unwind here (a panic payload whose destructor panics) ends the
        // samples as the iterator's panic would, and the run re-raises it.
        let before = into.len();
        let made = std::panic::catch_unwind(AssertUnwindSafe(|| {
            into.extend(pairs.into_iter().map(|(sample, id, epoch)| Made {
                grading: Box::pin(grading(&self.grade, sample, Arc::clone(&id), epoch)),
                id,
                epoch,
            }));
        }));
        if let Err(payload) = made {
            let mut panic = lock(&self.panic);
            match panic.as_ref() {
                None => *panic = Some(payload),
                Some(_) => std::mem::forget(payload),
            }
            return (into.len() - before, true);
        }
        (into.len() - before, ended)
    }

    fn take_panic(&self) -> Option<Box<dyn std::any::Any + Send>> {
        lock(&self.panic).take()
    }

    fn counts(&self) -> (usize, usize) {
        let samples = &lock(&self.samples).samples;
        (samples.resumed, samples.other_shards)
    }
}
