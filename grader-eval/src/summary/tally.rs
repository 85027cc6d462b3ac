//! The statistics of a summary: how each line adds to the running sums ([`Totals`], by its
//! [`Outcome`]), and the per-sample values reduced and averaged one sample at a time, in the
//! order of their ids ([`Tally`]), into a [`Summary`].

use std::collections::BTreeMap;

use indexmap::IndexSet;

use super::options::{Reducer, SummaryOptions};
use super::spill::Entry;
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

/// The running sums (grading time, errors by kind) and the subscores' names.
#[derive(Debug, Default)]
pub(super) struct Totals {
    pub(super) errors: BTreeMap<String, usize>,
    /// The subscores' names, numbered in the order first seen (a line's subscores refer to a
    /// name by its number). A name seen only in lines left out has no statistics.
    pub(super) subscores: IndexSet<String>,
    pub(super) durations: Neumaier,
}

impl Totals {
    /// Adds a line's grading time, and its error kind.
    pub(super) fn add(&mut self, duration_secs: f64, outcome: Outcome) {
        self.durations.add(duration_secs);
        if let Some(kind) = outcome.error() {
            match self.errors.get_mut(kind) {
                Some(count) => *count += 1,
                None => {
                    self.errors.insert(kind.to_owned(), 1);
                }
            }
        }
    }

    /// The number of a subscore's name.
    pub(super) fn name(&mut self, name: &str) -> usize {
        match self.subscores.get_index_of(name) {
            Some(index) => index,
            None => self.subscores.insert_full(name.to_owned()).0,
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
    /// The highest reward scored.
    highest: Option<f64>,
    /// By subscore name's number: the mean over samples of each sample's mean over its epochs
    /// that have it.
    subscores: Vec<RunningMean>,
    /// The sample at hand's subscores (name, epoch order, value), and one name's values.
    sub_scratch: Vec<(u32, usize, f64)>,
    values_scratch: Vec<f64>,
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
            highest: None,
            subscores: Vec::new(),
            sub_scratch: Vec::new(),
            values_scratch: Vec::new(),
        }
    }

    /// Adds each subscore of a sample: its mean over the sample's lines that have it (the
    /// scored ones; `entries` are the lines kept, `subs` their subscores).
    fn sample_subscores(&mut self, entries: &[Entry], subs: &[(u32, f64)]) {
        self.sub_scratch.clear();
        for (order, entry) in entries.iter().enumerate() {
            let start = entry.subs as usize;
            let own = subs
                .get(start..start + entry.nsubs as usize)
                .unwrap_or_default();
            self.sub_scratch
                .extend(own.iter().map(|&(name, value)| (name, order, value)));
        }
        // By name, each name's values in the order of the epochs.
        self.sub_scratch
            .sort_unstable_by_key(|&(name, order, _)| (name, order));
        for group in self.sub_scratch.chunk_by(|a, b| a.0 == b.0) {
            let name = group[0].0 as usize;
            self.values_scratch.clear();
            self.values_scratch
                .extend(group.iter().map(|&(_, _, value)| value));
            if self.subscores.len() <= name {
                self.subscores.resize_with(name + 1, RunningMean::default);
            }
            self.subscores[name].push(metrics::mean(&self.values_scratch));
        }
    }

    /// Adds a sample: its lines kept, by epoch (the reward NaN for an errored line), and their
    /// subscores.
    pub(super) fn sample(&mut self, entries: &[Entry], subs: &[(u32, f64)]) {
        self.sample_subscores(entries, subs);
        // Every epoch, the errored ones as NaN: the reducers leave them out, but `majority`
        // counts them as votes for no value (D26), so that an error never helps the agent.
        self.scratch.clear();
        self.scratch
            .extend(entries.iter().map(|entry| entry.reward));
        for &reward in self.scratch.iter().filter(|reward| !reward.is_nan()) {
            self.highest = Some(self.highest.map_or(reward, |highest| highest.max(reward)));
        }
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
        // One set of resampled means for both bootstrap figures; an invalid level leaves the
        // standard error as it is and the interval NaN.
        let (bootstrap_stderr, ci_bootstrap) =
            match metrics::bootstrap(&headline, options.level, options.resamples, options.seed) {
                Ok(both) => (both.stderr, both.interval),
                Err(_) => (
                    metrics::bootstrap_stderr(&headline, options.resamples, options.seed),
                    nan,
                ),
            };
        let reward = RewardStats {
            n: headline.len(),
            mean: metrics::mean(&headline),
            std: metrics::std(&headline),
            stderr: metrics::stderr(&headline),
            bootstrap_stderr,
            ci_bootstrap,
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
            .zip(&self.subscores)
            .filter(|(_, mean)| mean.count() > 0)
            .map(|(name, mean)| {
                let count = usize::try_from(mean.count()).unwrap_or(usize::MAX);
                let mean = mean.mean();
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
            highest_reward: self.highest,
            options,
        }
    }
}
