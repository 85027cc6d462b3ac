//! The statistics of a summary: how each line adds to the running sums ([`Totals`], by its
//! [`Outcome`]), and the per-sample values reduced and averaged one sample at a time, in the
//! order of their ids ([`Tally`]), into a [`Summary`].

use std::collections::BTreeMap;

use indexmap::IndexMap;

use super::options::{Reducer, SummaryOptions};
use super::{ReducerStat, RewardStats, SubscoreStat, Summary};
use crate::line::{ErrorKind, Line};
use crate::metrics::{self, Interval, RunningMean};
use grader_core::grade::Neumaier;

/// How a line ended, as its contribution to the running sums needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    Scored,
    Failed,
    Panicked,
    /// A result marked `isError`, or without a finite reward.
    IsError,
}

impl Outcome {
    pub(super) const ALL: [Outcome; 4] = [
        Outcome::Scored,
        Outcome::Failed,
        Outcome::Panicked,
        Outcome::IsError,
    ];

    pub(super) fn of(line: &Line, reward: Option<f64>) -> Self {
        match (reward, &line.error) {
            (Some(_), _) => Outcome::Scored,
            (None, Some(error)) => match error.kind {
                ErrorKind::Failed => Outcome::Failed,
                ErrorKind::Panicked => Outcome::Panicked,
            },
            (None, None) => Outcome::IsError,
        }
    }

    /// Its key in [`Summary::errors`], `None` for a scored line.
    pub(super) fn error(self) -> Option<&'static str> {
        match self {
            Outcome::Scored => None,
            Outcome::Failed => Some("failed"),
            Outcome::Panicked => Some("panicked"),
            Outcome::IsError => Some("is_error"),
        }
    }
}

/// The running sums: grading time, errors by kind, subscores.
#[derive(Debug, Default)]
pub(super) struct Totals {
    pub(super) errors: BTreeMap<String, usize>,
    /// By name, in the order first seen (a logged line refers to a name by its place): how
    /// many scored lines have it, and the sum of its values. A name seen only in lines that
    /// turned out to be duplicates has a count of 0.
    pub(super) subscores: IndexMap<String, (usize, Neumaier)>,
    pub(super) durations: Neumaier,
}

impl Totals {
    /// Adds a line's grading time, and its error kind or its subscores.
    pub(super) fn add(
        &mut self,
        duration_secs: f64,
        outcome: Outcome,
        subscores: impl IntoIterator<Item = (usize, f64)>,
    ) {
        self.durations.add(duration_secs);
        if let Some(kind) = outcome.error() {
            match self.errors.get_mut(kind) {
                Some(count) => *count += 1,
                None => {
                    self.errors.insert(kind.to_owned(), 1);
                }
            }
            return;
        }
        for (name, value) in subscores {
            if let Some((_, (count, sum))) = self.subscores.get_index_mut(name) {
                *count += 1;
                sum.add(value);
            }
        }
    }

    /// The number of a subscore's name.
    pub(super) fn name(&mut self, name: &str) -> usize {
        match self.subscores.get_index_of(name) {
            Some(index) => index,
            None => {
                self.subscores
                    .insert_full(name.to_owned(), (0, Neumaier::default()))
                    .0
            }
        }
    }
}

/// The per-sample statistics, computed one sample at a time in the order of their ids.
pub(super) struct Tally {
    threshold: f64,
    headline: Reducer,
    reducers: Vec<(Reducer, RunningMean)>,
    /// pass@k for `k` from 1.
    pass_at: Vec<RunningMean>,
    /// The headline reducer's value of each sample that has one, for the bootstrap.
    values: Vec<f64>,
    samples: usize,
    lines: usize,
    scored: usize,
    errored_samples: usize,
    epochs: u32,
    /// How many samples have each number of lines.
    lengths: BTreeMap<usize, usize>,
    /// The rewards of the sample at hand by epoch, NaN for an errored one.
    scratch: Vec<f64>,
}

impl Tally {
    /// A tally of at most `samples` samples.
    pub(super) fn new(options: &SummaryOptions, samples: usize) -> Self {
        Tally {
            threshold: options.threshold,
            headline: options.reducer,
            reducers: options
                .reducers
                .iter()
                .map(|reducer| (*reducer, RunningMean::default()))
                .collect(),
            pass_at: Vec::new(),
            // Reserved at once: the pages past the samples seen are never touched, and the
            // values are not copied as they grow.
            values: Vec::with_capacity(samples),
            samples: 0,
            lines: 0,
            scored: 0,
            errored_samples: 0,
            epochs: 0,
            lengths: BTreeMap::new(),
            scratch: Vec::new(),
        }
    }

    /// Adds a sample: its rewards by epoch, NaN for an errored line.
    pub(super) fn sample(&mut self, rewards: impl Iterator<Item = f64>) {
        // Every epoch, the errored ones as NaN: the reducers leave them out, but `majority`
        // counts them as votes for no value (D26), so that an error never helps the agent.
        self.scratch.clear();
        self.scratch.extend(rewards);
        let lines = self.scratch.len();
        let scored = self
            .scratch
            .iter()
            .filter(|reward| !reward.is_nan())
            .count();
        self.samples += 1;
        self.lines += lines;
        self.scored += scored;
        if scored == 0 {
            self.errored_samples += 1;
        }
        self.epochs = self.epochs.max(u32::try_from(lines).unwrap_or(u32::MAX));
        *self.lengths.entry(lines).or_default() += 1;
        if scored == 0 {
            // No reducer is defined for a sample with no scored epoch.
            return;
        }
        let values = &self.scratch[..];
        self.values
            .extend(self.headline.reduce(values, self.threshold));
        // pass@k is undefined past the scored epochs.
        for k in 1..=scored {
            if self.pass_at.len() < k {
                self.pass_at.push(RunningMean::default());
            }
            if let Some(value) = Reducer::PassAt(k).reduce(values, self.threshold) {
                self.pass_at[k - 1].push(value);
            }
        }
        for (reducer, mean) in &mut self.reducers {
            if let Some(value) = reducer.reduce(values, self.threshold) {
                mean.push(value);
            }
        }
    }

    pub(super) fn summary(
        self,
        options: SummaryOptions,
        totals: Totals,
        duplicates: usize,
    ) -> Summary {
        let stat = |reducer: Reducer, mean: Option<&RunningMean>| ReducerStat {
            reducer,
            samples: mean.map_or(0, |mean| {
                usize::try_from(mean.count()).unwrap_or(usize::MAX)
            }),
            mean: mean.map_or(0.0, RunningMean::mean),
        };
        let headline = self.values;
        let binary = headline.iter().all(|v| *v == 0.0 || *v == 1.0);
        // The options' level was checked by nobody; an invalid one gives NaN bounds rather
        // than a panic or a made-up interval.
        let nan = Interval {
            lower: f64::NAN,
            upper: f64::NAN,
        };
        let reward = RewardStats {
            n: headline.len(),
            mean: metrics::mean(&headline),
            std: metrics::std(&headline),
            stderr: metrics::stderr(&headline),
            bootstrap_stderr: metrics::bootstrap_stderr(&headline, options.resamples, options.seed),
            ci_bootstrap: metrics::ci_bootstrap(
                &headline,
                options.level,
                options.resamples,
                options.seed,
            )
            .unwrap_or(nan),
            ci_t: metrics::ci_t(&headline, options.level).unwrap_or(nan),
            ci_wilson: if binary {
                metrics::ci_wilson(&headline, options.level).ok()
            } else {
                None
            },
            pass_rate: metrics::pass_rate(&headline, options.threshold),
        };
        drop(headline);
        let epochs = self.epochs;
        let expected = options.epochs.unwrap_or(epochs) as usize;
        let incomplete_samples = self.lengths.range(..expected).map(|(_, count)| count).sum();
        let pass_at_k = (1..=epochs as usize)
            .map(|k| stat(Reducer::PassAt(k), self.pass_at.get(k - 1)))
            .collect();
        let reducers = self
            .reducers
            .iter()
            .map(|(reducer, mean)| stat(*reducer, Some(mean)))
            .collect();
        let subscores = totals
            .subscores
            .into_iter()
            .filter(|(_, (count, _))| *count > 0)
            .map(|(name, (count, sum))| {
                let mean = sum.total() / count as f64;
                (name, SubscoreStat { count, mean })
            })
            .collect();
        Summary {
            samples: self.samples,
            epochs,
            incomplete_samples,
            lines: self.lines,
            scored: self.scored,
            errored: self.lines - self.scored,
            errors: totals.errors,
            errored_samples: self.errored_samples,
            duplicates,
            conflicts: 0,
            conflicting: Vec::new(),
            reward,
            pass_at_k,
            reducers,
            subscores,
            grading_secs: totals.durations.total(),
            options,
        }
    }
}
