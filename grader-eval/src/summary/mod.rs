//! The summary of an evaluation: [`Summary`], computed from [`Line`](crate::Line)s streamed
//! from one file or several (shards) with [`SummaryBuilder`].
//
// The files: this one holds the summary's value (`Summary` and its statistics' types);
// `options.rs` what it computes (`SummaryOptions`, `Reducer`, `Keep`); `builder.rs` the
// accumulation of lines (`SummaryBuilder`, in memory and past its budget through `spill.rs`);
// `resolve.rs` which line of a (sample, epoch) counts, and the conflicts; `tally.rs` the
// statistics computed from it, one sample at a time; `table.rs` the terminal table.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::metrics::Interval;

mod builder;
mod options;
mod resolve;
mod spill;
mod table;
mod tally;

pub use crate::error::SpillError;
pub use builder::{SummaryBuilder, summarize_files};
pub use options::{Keep, Reducer, SummaryOptions, UnknownReducer};

/// The headline statistics of the per-sample values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewardStats {
    /// How many samples the statistics are over (samples with a defined reduced value).
    pub n: usize,
    /// [`metrics::mean`](crate::metrics::mean).
    pub mean: f64,
    /// [`metrics::std`](crate::metrics::std).
    pub std: f64,
    /// [`metrics::stderr`](crate::metrics::stderr).
    pub stderr: f64,
    /// [`metrics::bootstrap_stderr`](crate::metrics::bootstrap_stderr).
    pub bootstrap_stderr: f64,
    /// [`metrics::ci_bootstrap`](crate::metrics::ci_bootstrap) at the options' level and seed.
    pub ci_bootstrap: Interval,
    /// [`metrics::ci_t`](crate::metrics::ci_t) at the options' level.
    pub ci_t: Interval,
    /// [`metrics::ci_wilson`](crate::metrics::ci_wilson), only when every value is 0 or 1.
    pub ci_wilson: Option<Interval>,
    /// [`metrics::pass_rate`](crate::metrics::pass_rate) at the options' threshold.
    pub pass_rate: f64,
}

/// One reducer's result over the samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReducerStat {
    /// The reducer.
    pub reducer: Reducer,
    /// Samples for which it is defined.
    pub samples: usize,
    /// The mean over those samples of the reduced values (0.0 when there are none).
    pub mean: f64,
}

/// One top-level subscore's statistics over the samples: as the reward with the default
/// reducer, and as Inspect AI shows a score, each sample's epochs are reduced to their mean
/// first, so that a sample with more epochs weighs no more. `grader diff`, the HTML report and
/// the Inspect AI export give the same number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscoreStat {
    /// Samples with a scored line that has a subscore of this name.
    pub count: usize,
    /// The mean over those samples of each one's mean value over its scored lines that have
    /// it.
    pub mean: f64,
}

/// A (sample, epoch) whose lines say different things.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conflict {
    /// The sample.
    pub id: String,
    /// The epoch.
    pub epoch: u32,
    /// How many lines it has.
    pub lines: usize,
}

/// What an evaluation came to: counts kept apart (scored, errored, duplicated) and the
/// statistics of the scored results. Errored lines are counted, never averaged in as 0.
///
/// The headline metrics are over samples: each sample's scored epochs are first reduced to one
/// value by [`SummaryOptions::reducer`] (the mean by default, as Inspect AI), and a sample with
/// no scored epoch is left out and counted in `errored_samples`. Samples are taken in the order
/// of their ids, so a summary does not depend on the order lines were written in, nor on how
/// they were split between files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Summary {
    /// The options the summary was computed with.
    pub options: SummaryOptions,
    /// Distinct sample ids seen.
    pub samples: usize,
    /// The largest number of epochs seen for one sample.
    pub epochs: u32,
    /// Samples with fewer lines (scored or errored) than the epochs asked for
    /// ([`SummaryOptions::epochs`], else [`epochs`](Self::epochs)): an unfinished or
    /// interrupted run. Each is reduced over the epochs it has, so its pass@k for larger `k` is
    /// undefined and left out. The table warns about them.
    #[serde(default)]
    pub incomplete_samples: usize,
    /// Distinct (sample, epoch) lines seen.
    pub lines: usize,
    /// Lines with a usable reward.
    pub scored: usize,
    /// Lines without one (a failure, a panic, or a result with `isError`).
    pub errored: usize,
    /// Errored lines by kind: `failed`, `panicked`, `is_error` (a result marked `isError`).
    pub errors: BTreeMap<String, usize>,
    /// Samples with no scored epoch at all.
    pub errored_samples: usize,
    /// Lines left out because another line of their (sample, epoch) counts (the first or the
    /// last read, as [`SummaryOptions::keep`] says).
    pub duplicates: usize,
    /// (sample, epoch) pairs whose lines say different things (their
    /// [`Line::fingerprint`](crate::Line::fingerprint)s differ): which line counts changes the
    /// summary. Pairs whose duplicates are identical are not counted here.
    #[serde(default)]
    pub conflicts: usize,
    /// The first few of those pairs (at most [`Summary::CONFLICTS_NAMED`]), in the order of
    /// their sample ids.
    #[serde(default)]
    pub conflicting: Vec<Conflict>,
    /// Statistics of the per-sample values.
    pub reward: RewardStats,
    /// pass@k averaged over the samples with at least `k` scored epochs, for `k` from 1 to
    /// [`epochs`](Self::epochs).
    pub pass_at_k: Vec<ReducerStat>,
    /// Each reducer of [`SummaryOptions::reducers`] averaged over the samples.
    pub reducers: Vec<ReducerStat>,
    /// Each top-level subscore's mean over the samples (each sample's scored epochs that have
    /// it reduced to their mean first), by name.
    pub subscores: BTreeMap<String, SubscoreStat>,
    /// Total grading time of the lines, in seconds (a sum over concurrent gradings).
    pub grading_secs: f64,
    /// The highest reward of the scored lines counted; `None` when none is scored.
    #[serde(default)]
    pub highest_reward: Option<f64>,
}

impl Summary {
    /// How many conflicting (sample, epoch) pairs a summary names in
    /// [`conflicting`](Self::conflicting).
    pub const CONFLICTS_NAMED: usize = 5;
}
