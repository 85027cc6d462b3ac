//! What a run grades: [`Sample`]s, and the (sample, epoch) pairs of them that the run's
//! shard holds and its output lacks ([`Samples`]), taken by the awaiting task, or by the
//! lanes themselves from [`SharedSamples`] (`Evaluation::run_shared`).

use std::collections::HashMap;
use std::fmt::Display;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::grading::{Texts, grading};
use crate::running::{Made, Source, Tally, lock};
use crate::shard::Shard;
use grader_core::score::EvaluationResult;

/// Something an evaluation grades: anything with an id, unique within the evaluation.
///
/// The id is what a resumed run recognizes a sample by, and what decides its shard.
///
/// A sample may also say what the agent was given (its [`input`](Sample::input)), what was
/// expected ([`target`](Sample::target)) and what the agent answered
/// ([`answer`](Sample::answer)): each one given is written into the sample's lines (as
/// `input`, `target` and `answer`, beside the result), and `grader export --inspect` shows
/// them as the Inspect AI sample's input, target and answer. None is written by default.
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
///     fn input(&self) -> Option<String> {
///         Some(self.text.clone())
///     }
///     fn target(&self) -> Option<String> {
///         Some(self.answer.clone())
///     }
/// }
///
/// let question = Question { id: 1, text: "What is 2 + 2?".into(), answer: "4".into() };
/// assert_eq!(question.target().as_deref(), Some("4"));
/// // Pairs of (id, anything) are samples too, with no texts unless given (see `with_input`).
/// assert_eq!(("q1", "What is 2 + 2?").id(), "q1");
/// assert_eq!(("q1", "What is 2 + 2?").input(), None);
/// ```
pub trait Sample {
    /// The sample's id.
    fn id(&self) -> String;

    /// What the agent was given (a prompt, a task statement), to show beside the scores;
    /// `None` (the default) writes none.
    fn input(&self) -> Option<String> {
        None
    }

    /// What the sample expected (a reference answer), to show beside the scores; `None` (the
    /// default) writes none.
    fn target(&self) -> Option<String> {
        None
    }

    /// What the agent answered, when the sample holds it (a graded transcript's last answer);
    /// `None` (the default) writes none.
    fn answer(&self) -> Option<String> {
        None
    }

    /// This sample with `input` as its [`input`](Sample::input): a [`Described`] sample, whose
    /// `with_target` and `with_answer` give the others.
    ///
    /// ```
    /// use grader_eval::Sample;
    ///
    /// let sample = ("q1", 4)
    ///     .with_input("What is 2 + 2?")
    ///     .with_target("4")
    ///     .with_answer("four");
    /// assert_eq!(sample.id(), "q1");
    /// assert_eq!(sample.input().as_deref(), Some("What is 2 + 2?"));
    /// assert_eq!(sample.target().as_deref(), Some("4"));
    /// assert_eq!(sample.answer().as_deref(), Some("four"));
    /// // The sample itself is still there, for the grading function.
    /// assert_eq!(sample.1, 4);
    /// ```
    fn with_input(self, input: impl Into<String>) -> Described<Self>
    where
        Self: Sized,
    {
        Described::new(self).with_input(input)
    }

    /// This sample with `target` as its [`target`](Sample::target) (see
    /// [`with_input`](Sample::with_input)).
    fn with_target(self, target: impl Into<String>) -> Described<Self>
    where
        Self: Sized,
    {
        Described::new(self).with_target(target)
    }

    /// This sample with `answer` as its [`answer`](Sample::answer) (see
    /// [`with_input`](Sample::with_input)).
    fn with_answer(self, answer: impl Into<String>) -> Described<Self>
    where
        Self: Sized,
    {
        Described::new(self).with_answer(answer)
    }
}

/// A sample with its input, target and answer given beside it (made by
/// [`Sample::with_input`] and the others); it dereferences to the sample, so the grading
/// function reads it as before. A text given here replaces the sample's own.
///
/// ```
/// use grader_eval::{Described, Sample};
///
/// let sample = Described::new(("q7", "the question's data")).with_target("42");
/// assert_eq!(sample.id(), "q7");
/// assert_eq!(sample.target().as_deref(), Some("42"));
/// assert_eq!(sample.input(), None);
/// assert_eq!(sample.0, "q7");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Described<S> {
    sample: S,
    input: Option<String>,
    target: Option<String>,
    answer: Option<String>,
}

impl<S> Described<S> {
    /// `sample` with none of its texts replaced yet.
    #[must_use]
    pub fn new(sample: S) -> Self {
        Described {
            sample,
            input: None,
            target: None,
            answer: None,
        }
    }

    /// With `input` as the sample's input.
    #[must_use]
    pub fn with_input(mut self, input: impl Into<String>) -> Self {
        self.input = Some(input.into());
        self
    }

    /// With `target` as the sample's target.
    #[must_use]
    pub fn with_target(mut self, target: impl Into<String>) -> Self {
        self.target = Some(target.into());
        self
    }

    /// With `answer` as the agent's answer.
    #[must_use]
    pub fn with_answer(mut self, answer: impl Into<String>) -> Self {
        self.answer = Some(answer.into());
        self
    }

    /// The sample itself.
    #[must_use]
    pub fn into_inner(self) -> S {
        self.sample
    }
}

impl<S> std::ops::Deref for Described<S> {
    type Target = S;

    fn deref(&self) -> &S {
        &self.sample
    }
}

impl<S: Sample> Sample for Described<S> {
    fn id(&self) -> String {
        self.sample.id()
    }

    fn input(&self) -> Option<String> {
        self.input.clone().or_else(|| self.sample.input())
    }

    fn target(&self) -> Option<String> {
        self.target.clone().or_else(|| self.sample.target())
    }

    fn answer(&self) -> Option<String> {
        self.answer.clone().or_else(|| self.sample.answer())
    }
}

/// The input, target and answer `sample` gives, as its lines carry them.
pub(super) fn texts_of<S: Sample + ?Sized>(sample: &S) -> Texts {
    let texts = [sample.input(), sample.target(), sample.answer()];
    texts.iter().any(Option::is_some).then(|| Box::new(texts))
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

/// The samples' iterator, and the next sample of the run's shard (with its id) taken ahead so
/// that the lane taking the last samples knows they are the last.
pub(super) struct Ahead<It, S> {
    samples: std::iter::Fuse<It>,
    next: Option<(S, String)>,
}

/// The samples and the grading function of
/// [`Evaluation::run_shared`](super::Evaluation::run_shared), for its lanes to make gradings
/// from. Only the iterator is behind a lock, and a lane holds it only to take samples (with
/// their ids, to keep those of its shard): each sample's resumed epochs, pairs and gradings are
/// made outside it, side by side with the other lanes (on 16 cores the lanes waited on this
/// lock when it covered making the pairs).
pub(super) struct SharedSamples<It, S, F> {
    samples: Mutex<Ahead<It, S>>,
    /// The epochs the output holds of each sample id.
    done: HashMap<String, Vec<u32>>,
    shard: Shard,
    epochs: u32,
    /// Gradings skipped because the output holds their lines.
    resumed: AtomicUsize,
    /// Samples skipped because another shard grades them.
    other_shards: AtomicUsize,
    /// What the samples' iterator (or a sample's id) panicked with (it is not asked again).
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
    grade: F,
}

impl<It, S, F> SharedSamples<It, S, F> {
    /// The samples of a run (none taken yet) and its grading function, for the lanes.
    pub(super) fn new(samples: Samples<It, S>, grade: F) -> Self {
        let Samples {
            samples,
            done,
            shard,
            epochs,
            current: _,
            resumed,
            other_shards,
        } = samples;
        SharedSamples {
            samples: Mutex::new(Ahead {
                samples,
                next: None,
            }),
            done,
            shard,
            epochs: epochs.max(1),
            resumed: AtomicUsize::new(resumed),
            other_shards: AtomicUsize::new(other_shards),
            panic: Mutex::new(None),
            grade,
        }
    }

    /// Records a panic of the samples (the first; a later one is forgotten, as its payload's
    /// destructor could panic again).
    fn panicked(&self, payload: Box<dyn std::any::Any + Send>) {
        let mut panic = lock(&self.panic);
        match panic.as_ref() {
            None => *panic = Some(payload),
            Some(_) => std::mem::forget(payload),
        }
    }
}

impl<It: Iterator<Item = S>, S: Sample, F> SharedSamples<It, S, F> {
    /// Takes up to `n` samples of the run's shard, with their ids, under the lock (a sample's
    /// `id` is asked there, so that a panic of it ends the samples exactly there, as the
    /// iterator's would); counts `epochs` gradings for each in `tally` (the most each can give;
    /// those it does not give are taken back after); says whether the samples ended (or
    /// panicked).
    fn take(&self, n: usize, tally: &Tally) -> (Vec<(S, String)>, bool) {
        let mut taken = Vec::with_capacity(n);
        let mut guard = lock(&self.samples);
        let Ahead { samples, next } = &mut *guard;
        if lock(&self.panic).is_some() {
            return (taken, true);
        }
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
            // The next sample of the run's shard, with its id.
            let mut next_of_shard = || {
                for sample in samples.by_ref() {
                    let id = sample.id();
                    if self.shard.contains(&id) {
                        return Some((sample, id));
                    }
                    // Another shard's sample is not resumed: this run was never going to grade it.
                    self.other_shards.fetch_add(1, Ordering::Relaxed);
                }
                None
            };
            taken.extend(next.take());
            while taken.len() < n
                && let Some(sample) = next_of_shard()
            {
                taken.push(sample);
            }
            *next = next_of_shard();
        }));
        // Counted under the samples' lock, before any is made (see `Tally::taken`).
        tally.taken(taken.len().saturating_mul(self.epochs as usize));
        let ended = next.is_none();
        let panicked = result.is_err();
        if let Err(payload) = result {
            // Recorded before the lock is let go: no other lane asks the iterator again.
            self.panicked(payload);
        }
        drop(guard);
        (taken, ended || panicked)
    }

    /// The (sample, id, epoch) pairs of `taken`, in order: every epoch the output does not
    /// hold yet.
    fn pairs(&self, taken: Vec<(S, String)>, pairs: &mut Vec<Pair<S>>) {
        for (sample, id) in taken {
            let done = self.done.get(&id);
            let sample = Arc::new(sample);
            let id: Arc<str> = id.into();
            for epoch in 1..=self.epochs {
                if done.is_some_and(|done| done.contains(&epoch)) {
                    self.resumed.fetch_add(1, Ordering::Relaxed);
                } else {
                    pairs.push((Arc::clone(&sample), Arc::clone(&id), epoch));
                }
            }
        }
    }
}

impl<It, S, F, Fut, E> Source for SharedSamples<It, S, F>
where
    It: Iterator<Item = S> + Send + 'static,
    S: Sample + Send + Sync + 'static,
    F: Fn(Arc<S>, u32) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<EvaluationResult, E>> + Send + 'static,
    E: Display + 'static,
{
    fn make(&self, n: usize, into: &mut Vec<Made>, tally: &Tally) -> (usize, bool) {
        // Samples are taken under the lock, and their pairs and gradings made outside it, so
        // lanes make theirs side by side. Samples of other shards, or whose epochs are all in
        // the output, give none: more are taken until `n` are made (a sample's epochs may take
        // it past `n`) or the samples end.
        let before = into.len();
        let mut pairs = Vec::with_capacity(n);
        loop {
            let made = into.len() - before;
            let wanted = n.saturating_sub(made).div_ceil(self.epochs as usize).max(1);
            let (taken, ended) = self.take(wanted, tally);
            let counted = taken.len().saturating_mul(self.epochs as usize);
            self.pairs(taken, &mut pairs);
            // The grading function's calls are caught one by one (a panic is that grading's
            // line); what could still unwind here (a panic payload whose destructor panics)
            // ends the samples as the iterator's panic would, and the run re-raises it.
            let this = into.len();
            let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
                into.extend(pairs.drain(..).map(|(sample, id, epoch)| Made {
                    grading: Box::pin(grading(
                        &self.grade,
                        texts_of::<S>,
                        sample,
                        Arc::clone(&id),
                        epoch,
                    )),
                    id,
                    epoch,
                }));
            }));
            // Counted as `epochs` a sample: the pairs not made from them are taken back.
            tally.not_made(counted - (into.len() - this));
            if let Err(payload) = result {
                self.panicked(payload);
                return (into.len() - before, true);
            }
            if ended || into.len() - before >= n {
                return (into.len() - before, ended);
            }
        }
    }

    fn take_panic(&self) -> Option<Box<dyn std::any::Any + Send>> {
        lock(&self.panic).take()
    }

    fn counts(&self) -> (usize, usize) {
        (
            self.resumed.load(Ordering::Relaxed),
            self.other_shards.load(Ordering::Relaxed),
        )
    }
}
