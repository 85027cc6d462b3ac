//! The summary of an evaluation: [`Summary`], computed from [`Line`]s streamed from one file or
//! several (shards) with [`SummaryBuilder`].

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::str::FromStr;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::line::{ErrorKind, Line};
use super::metrics::{self, Interval, RunningMean};
use grader_core::grade::Neumaier;

mod spill;

pub use crate::error::SpillError;

/// How one sample's scored epochs become one value (Inspect AI's epoch reducers).
///
/// Written as a string: `mean`, `median`, `mode`, `max`, `majority`, `at_least_K`, `pass_at_K`
/// (`K` a count; the threshold is the summary's).
///
/// ```
/// use grader_eval::Reducer;
///
/// let reducer: Reducer = "pass_at_2".parse()?;
/// assert_eq!(reducer, Reducer::PassAt(2));
/// assert_eq!(reducer.to_string(), "pass_at_2");
/// assert_eq!(reducer.reduce(&[1.0, 0.0, 0.0], 1.0), Some(2.0 / 3.0));
/// # Ok::<(), grader_eval::summary::UnknownReducer>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
#[non_exhaustive]
pub enum Reducer {
    /// [`metrics::mean`].
    Mean,
    /// [`metrics::median`].
    Median,
    /// [`metrics::mode`].
    Mode,
    /// [`metrics::max`].
    Max,
    /// [`metrics::majority`]: undefined when no value has a strict majority.
    ///
    /// Where it differs: in a summary the votes are the sample's scored epochs, and an
    /// errored (unscored) epoch is left out of the total. Inspect AI's `majority` counts
    /// unscored epochs in the total, so there `[1, 1, NaN, NaN]` has no majority (NaN) where
    /// here it is 1: an epoch that failed to grade says nothing about the answer, and an
    /// error is reported as an error (the summary counts them), never as a withheld vote.
    Majority,
    /// [`metrics::at_least`] with this `k`.
    AtLeast(usize),
    /// [`metrics::pass_at`] with this `k`: undefined for fewer than `k` scored epochs.
    PassAt(usize),
}

impl Reducer {
    /// Reduces one sample's scored epochs; `None` when the reducer is undefined for them.
    #[must_use]
    pub fn reduce(self, values: &[f64], threshold: f64) -> Option<f64> {
        if values.is_empty() {
            return None;
        }
        match self {
            // Unscored (NaN) values are left out, as by every reducer (Inspect AI's too).
            Reducer::Mean => metrics::collect(values).map(|values| metrics::mean(&values)),
            Reducer::Median => metrics::median(values),
            Reducer::Mode => metrics::mode(values),
            Reducer::Max => metrics::max(values),
            Reducer::Majority => metrics::majority(values),
            Reducer::AtLeast(k) => metrics::at_least(values, k, threshold),
            Reducer::PassAt(k) => metrics::pass_at(values, k, threshold),
        }
    }
}

impl fmt::Display for Reducer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reducer::Mean => f.write_str("mean"),
            Reducer::Median => f.write_str("median"),
            Reducer::Mode => f.write_str("mode"),
            Reducer::Max => f.write_str("max"),
            Reducer::Majority => f.write_str("majority"),
            Reducer::AtLeast(k) => write!(f, "at_least_{k}"),
            Reducer::PassAt(k) => write!(f, "pass_at_{k}"),
        }
    }
}

/// A string that names no [`Reducer`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown reducer `{0}` (expected mean, median, mode, max, majority, at_least_K or pass_at_K)"
)]
pub struct UnknownReducer(pub String);

impl FromStr for Reducer {
    type Err = UnknownReducer;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let count = |rest: &str| rest.parse::<usize>().ok().filter(|k| *k > 0);
        match text {
            "mean" => Ok(Reducer::Mean),
            "median" => Ok(Reducer::Median),
            "mode" => Ok(Reducer::Mode),
            "max" => Ok(Reducer::Max),
            "majority" => Ok(Reducer::Majority),
            _ => {
                if let Some(k) = text.strip_prefix("at_least_").and_then(count) {
                    Ok(Reducer::AtLeast(k))
                } else if let Some(k) = text.strip_prefix("pass_at_").and_then(count) {
                    Ok(Reducer::PassAt(k))
                } else {
                    Err(UnknownReducer(text.to_owned()))
                }
            }
        }
    }
}

impl From<Reducer> for String {
    fn from(reducer: Reducer) -> String {
        reducer.to_string()
    }
}

impl TryFrom<String> for Reducer {
    type Error = UnknownReducer;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        text.parse()
    }
}

/// What a [`Summary`] computes, and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SummaryOptions {
    /// A reward at or above it passes (pass rate, pass@k, `at_least`). 1.0 by default.
    pub threshold: f64,
    /// The confidence intervals' level. 0.95 by default.
    pub level: f64,
    /// Bootstrap resamples. 1 000 by default, as Inspect AI.
    pub resamples: usize,
    /// The bootstrap's seed. 0 by default.
    pub seed: u64,
    /// How each sample's epochs become the one value the headline metrics are computed over.
    /// [`Reducer::Mean`] by default, as Inspect AI.
    pub reducer: Reducer,
    /// The reducers reported beside it. Mean, median, mode, max and majority by default;
    /// pass@k is always reported for every `k` up to the number of epochs.
    pub reducers: Vec<Reducer>,
    /// The number of epochs the run asked for: samples with fewer lines are counted in
    /// [`Summary::incomplete_samples`] and warned about. `None` (the default) takes the
    /// largest number seen for one sample.
    #[serde(default)]
    pub epochs: Option<u32>,
}

impl Default for SummaryOptions {
    fn default() -> Self {
        SummaryOptions {
            threshold: 1.0,
            level: 0.95,
            resamples: 1000,
            seed: 0,
            reducer: Reducer::Mean,
            reducers: vec![
                Reducer::Mean,
                Reducer::Median,
                Reducer::Mode,
                Reducer::Max,
                Reducer::Majority,
            ],
            epochs: None,
        }
    }
}

impl SummaryOptions {
    /// The same options with another pass threshold.
    #[must_use]
    pub fn threshold(mut self, threshold: f64) -> Self {
        self.threshold = threshold;
        self
    }

    /// The same options with another bootstrap seed.
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The same options expecting `epochs` epochs per sample (see
    /// [`epochs`](Self::epochs)).
    ///
    /// ```
    /// use grader_core::EvaluationResult;
    /// use grader_eval::{Line, Summary, SummaryOptions};
    ///
    /// let line = |id: &str, epoch| Line::graded(id, epoch, EvaluationResult::default(), 0.1);
    /// let lines = [line("a", 1), line("a", 2), line("b", 1)];
    /// let summary = Summary::from_lines(lines.clone(), SummaryOptions::default());
    /// assert_eq!((summary.epochs, summary.incomplete_samples), (2, 1)); // b has one of two
    /// let summary = Summary::from_lines(lines, SummaryOptions::default().epochs(3));
    /// assert_eq!(summary.incomplete_samples, 2);
    /// assert!(summary.to_string().contains("2 samples have fewer than 3 epochs"));
    /// ```
    #[must_use]
    pub fn epochs(mut self, epochs: u32) -> Self {
        self.epochs = Some(epochs);
        self
    }

    /// The same options with another headline reducer.
    #[must_use]
    pub fn reducer(mut self, reducer: Reducer) -> Self {
        self.reducer = reducer;
        self
    }
}

/// The headline statistics of the per-sample values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewardStats {
    /// How many samples the statistics are over (samples with a defined reduced value).
    pub n: usize,
    /// [`metrics::mean`].
    pub mean: f64,
    /// [`metrics::std`].
    pub std: f64,
    /// [`metrics::stderr`].
    pub stderr: f64,
    /// [`metrics::bootstrap_stderr`].
    pub bootstrap_stderr: f64,
    /// [`metrics::ci_bootstrap`] at the options' level and seed.
    pub ci_bootstrap: Interval,
    /// [`metrics::ci_t`] at the options' level.
    pub ci_t: Interval,
    /// [`metrics::ci_wilson`], only when every value is 0 or 1.
    pub ci_wilson: Option<Interval>,
    /// [`metrics::pass_rate`] at the options' threshold.
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

/// One top-level subscore's statistics over the scored lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscoreStat {
    /// Scored lines that have a subscore of this name.
    pub count: usize,
    /// The mean of its value over those lines.
    pub mean: f64,
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
    /// Lines for a (sample, epoch) already seen; the first one counts, these are ignored.
    pub duplicates: usize,
    /// Statistics of the per-sample values.
    pub reward: RewardStats,
    /// pass@k averaged over the samples with at least `k` scored epochs, for `k` from 1 to
    /// [`epochs`](Self::epochs).
    pub pass_at_k: Vec<ReducerStat>,
    /// Each reducer of [`SummaryOptions::reducers`] averaged over the samples.
    pub reducers: Vec<ReducerStat>,
    /// Each top-level subscore's mean value over the scored lines, by name.
    pub subscores: BTreeMap<String, SubscoreStat>,
    /// Total grading time of the lines, in seconds (a sum over concurrent gradings).
    pub grading_secs: f64,
}

impl Summary {
    /// The summary of `lines` (from one file, several, or memory), computed in memory: 24 bytes
    /// a line and the ids once, never a temporary file. For more lines than memory holds, push
    /// them to a [`SummaryBuilder`], which spills to disk past its budget.
    ///
    /// ```
    /// use grader_core::EvaluationResult;
    /// use grader_eval::{ErrorKind, Line, Summary, SummaryOptions};
    ///
    /// let lines = [
    ///     Line::graded("a", 1, EvaluationResult::from_reward(1.0)?, 0.1),
    ///     Line::graded("b", 1, EvaluationResult::from_reward(0.0)?, 0.1),
    ///     Line::failed("c", 1, ErrorKind::Failed, "judge unreachable", 0.1),
    /// ];
    /// let summary = Summary::from_lines(lines, SummaryOptions::default());
    /// assert_eq!((summary.scored, summary.errored), (2, 1));
    /// assert_eq!(summary.reward.mean, 0.5); // the error is not a 0
    /// println!("{summary}");
    /// # Ok::<(), grader_core::RewardError>(())
    /// ```
    pub fn from_lines(lines: impl IntoIterator<Item = Line>, options: SummaryOptions) -> Self {
        let mut builder = SummaryBuilder::new(options);
        builder.budget = usize::MAX;
        for line in lines {
            builder.push(line);
        }
        builder.in_memory()
    }
}

/// The summary of one or more evaluation files (the shards of a run, say) read together,
/// streamed line by line with a [`SummaryBuilder`] (so its memory is flat in the files' size).
/// A torn last line of a file is left out.
///
/// ```no_run
/// use grader_eval::{SummaryOptions, summarize_files};
///
/// let summary = summarize_files(&["part-0.jsonl", "part-1.jsonl"], SummaryOptions::default())?;
/// println!("{summary}");
/// # Ok::<(), grader_eval::line::LinesError>(())
/// ```
///
/// # Errors
/// When a file cannot be read or holds a complete line that is not an evaluation line, or
/// when the summary's temporary files cannot be written ([`LinesError::Spill`]).
///
/// [`LinesError::Spill`]: super::line::LinesError::Spill
pub fn summarize_files<P: AsRef<std::path::Path>>(
    paths: &[P],
    options: SummaryOptions,
) -> Result<Summary, super::line::LinesError> {
    let mut builder = SummaryBuilder::new(options);
    for path in paths {
        for entry in super::line::read_lines(path.as_ref())? {
            if let super::line::Entry::Line(line) = entry? {
                builder.push(*line);
            }
        }
    }
    Ok(builder.finish()?)
}

/// One line as a summary keeps it in memory: 24 bytes.
#[derive(Debug, Clone, Copy)]
struct Kept {
    /// The sample, as its index in [`Run::ids`].
    sample: u32,
    epoch: u32,
    /// The reward, or NaN for a line without one (a reward is always finite).
    reward: f64,
    /// Its place in the log of lines that may be duplicates ([`spill::NOT_LOGGED`] when it
    /// is not there).
    logged: u64,
}

/// Builds a [`Summary`] from lines pushed one at a time, in memory bounded by
/// [`MEMORY_BUDGET`](Self::MEMORY_BUDGET) plus 8 bytes a sample.
///
/// Of each line it keeps only what the metrics need (24 bytes), of each sample its id once and
/// which epochs it has; subscore means and the grading time are running sums. Past the budget
/// it sorts what it holds by sample id and epoch and writes it to a temporary file (a run),
/// then starts again empty; [`finish`](Self::finish) merges the runs one sample at a time, so
/// only the headline value of each sample stays in memory (8 bytes a sample: the bootstrap
/// draws from them at random). Below the budget no file is made.
///
/// The temporary files are made in [`std::env::temp_dir`] (`TMPDIR` on Unix), have no name
/// (nothing is left behind, even by a killed process) and are closed when the builder is
/// finished or dropped. The runs take 20 bytes a line and each sample's id once per run; the
/// lines pushed after the first spill take 10 bytes more, and 9 per subscore, in a log.
///
/// The summary is the same, bit for bit, whether or not anything was spilled: the first line
/// of a (sample, epoch) counts, samples are taken in the order of their ids' bytes, and the
/// running sums add the lines in the order they came.
///
/// ```
/// use grader_core::EvaluationResult;
/// use grader_eval::{Line, SummaryBuilder, SummaryOptions};
///
/// let mut builder = SummaryBuilder::new(SummaryOptions::default());
/// for (id, epoch, reward) in [("b", 1, 1.0), ("a", 1, 0.0), ("a", 1, 1.0)] {
///     builder.push(Line::graded(id, epoch, EvaluationResult::from_reward(reward)?, 0.5));
/// }
/// let summary = builder.finish()?;
/// assert_eq!((summary.samples, summary.duplicates), (2, 1)); // the first line of a counts
/// assert_eq!(summary.reward.mean, 0.5);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SummaryBuilder {
    options: SummaryOptions,
    /// The lines pushed since the last spill (all of them when nothing was spilled).
    run: Run,
    /// The size of `run`, in bytes, past which it is spilled.
    budget: usize,
    /// Where the temporary files go; [`std::env::temp_dir`] when `None`.
    dir: Option<std::path::PathBuf>,
    /// How many runs are merged at once.
    fan_in: usize,
    /// The runs written and the log, once anything was spilled.
    spilled: Option<Spilled>,
    /// Why spilling failed; nothing is kept after it.
    failure: Option<SpillError>,
    duplicates: usize,
    /// The running sums over the lines that are known to be the first of their (sample, epoch).
    totals: Totals,
    /// A logged line being built.
    logged: spill::Logged,
}

/// The lines of one run: the ids of its samples once, which epochs each has, and the lines.
#[derive(Debug, Default)]
struct Run {
    ids: Ids,
    /// Per sample, the epochs 1 to 64 seen, as bits.
    epochs_seen: Vec<u64>,
    /// The (sample, epoch) pairs seen with an epoch outside 1 to 64, as `sample << 32 | epoch`.
    other_epochs_seen: HashSet<u64, foldhash::fast::RandomState>,
    kept: Vec<Kept>,
}

impl Run {
    /// The sample's number, or `None` when this run has a line for the (sample, epoch).
    fn insert(&mut self, id: &str, epoch: u32) -> Option<u32> {
        let sample = self.ids.intern(id);
        if sample as usize == self.epochs_seen.len() {
            self.epochs_seen.push(0);
        }
        let new = match epoch {
            1..=64 => {
                let seen = &mut self.epochs_seen[sample as usize];
                let bit = 1_u64 << (epoch - 1);
                let new = *seen & bit == 0;
                *seen |= bit;
                new
            }
            _ => self
                .other_epochs_seen
                .insert((u64::from(sample) << 32) | u64::from(epoch)),
        };
        new.then_some(sample)
    }

    /// About how many bytes the run holds.
    fn size(&self) -> usize {
        // Per sample: where its id ends, its epoch bits, its slot in the table of ids.
        const PER_SAMPLE: usize = size_of::<usize>() + size_of::<u64>() + size_of::<u32>() + 1;
        self.kept.len() * size_of::<Kept>()
            + self.ids.bytes.len()
            + self.ids.len() * PER_SAMPLE
            + self.other_epochs_seen.len() * 2 * size_of::<u64>()
    }

    /// Sorts the lines: samples in the order of their ids' bytes, each one's by epoch.
    fn sort(&mut self) {
        let rank = self.ids.ranks();
        self.kept
            .sort_unstable_by_key(|line| (rank[line.sample as usize], line.epoch));
    }

    /// Writes the run to a new file in `dir`, sorted, and empties it.
    fn spill(&mut self, dir: &std::path::Path) -> std::io::Result<std::fs::File> {
        self.sort();
        let mut out = spill::RunWriter::create(dir)?;
        for group in self.kept.chunk_by(|a, b| a.sample == b.sample) {
            let id = Ids::get(&self.ids.bytes, &self.ids.ends, group[0].sample);
            out.sample(
                id,
                group.iter().map(|line| spill::Entry {
                    epoch: line.epoch,
                    reward: line.reward,
                    logged: line.logged,
                }),
            )?;
        }
        let file = out.finish()?;
        self.ids.clear();
        self.epochs_seen.clear();
        self.other_epochs_seen.clear();
        self.kept.clear();
        Ok(file)
    }
}

/// What was spilled.
#[derive(Debug)]
struct Spilled {
    dir: std::path::PathBuf,
    /// The runs, in the order of their lines.
    runs: Vec<std::fs::File>,
    /// The samples of each run, added up: at least the number of samples.
    samples: usize,
    /// The lines of every run but the first, as they add to the running sums.
    log: spill::Log,
}

/// How a line ended, as its contribution to the running sums needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Scored,
    Failed,
    Panicked,
    /// A result marked `isError`, or without a finite reward.
    IsError,
}

impl Outcome {
    const ALL: [Outcome; 4] = [
        Outcome::Scored,
        Outcome::Failed,
        Outcome::Panicked,
        Outcome::IsError,
    ];

    fn of(line: &Line, reward: Option<f64>) -> Self {
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
    fn error(self) -> Option<&'static str> {
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
struct Totals {
    errors: BTreeMap<String, usize>,
    /// By name, in the order first seen (a logged line refers to a name by its place): how
    /// many scored lines have it, and the sum of its values. A name seen only in lines that
    /// turned out to be duplicates has a count of 0.
    subscores: IndexMap<String, (usize, Neumaier)>,
    durations: Neumaier,
}

impl Totals {
    /// Adds a line's grading time, and its error kind or its subscores.
    fn add(
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
    fn name(&mut self, name: &str) -> usize {
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

/// Sample ids, each once, numbered from 0 in the order first seen: their bytes one after the
/// other in one buffer, and a table of their numbers.
#[derive(Default)]
struct Ids {
    bytes: Vec<u8>,
    /// Where each id ends in `bytes`; it starts where the one before ends.
    ends: Vec<usize>,
    table: hashbrown::HashTable<u32>,
    hasher: foldhash::fast::RandomState,
}

impl fmt::Debug for Ids {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ids").field("len", &self.len()).finish()
    }
}

impl Ids {
    fn len(&self) -> usize {
        self.ends.len()
    }

    /// Forgets every id, keeping the memory for the next ones.
    fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.table.clear();
    }

    fn get<'a>(bytes: &'a [u8], ends: &[usize], index: u32) -> &'a [u8] {
        let index = index as usize;
        let start = if index == 0 { 0 } else { ends[index - 1] };
        &bytes[start..ends[index]]
    }

    /// The id's number, given it if it is new.
    fn intern(&mut self, id: &str) -> u32 {
        use std::hash::BuildHasher as _;

        let Ids {
            bytes,
            ends,
            table,
            hasher,
        } = self;
        let hash = hasher.hash_one(id.as_bytes());
        if let Some(&index) = table.find(hash, |&i| Ids::get(bytes, ends, i) == id.as_bytes()) {
            return index;
        }
        let index = u32::try_from(ends.len()).unwrap_or(u32::MAX);
        bytes.extend_from_slice(id.as_bytes());
        ends.push(bytes.len());
        table.insert_unique(hash, index, |&i| hasher.hash_one(Ids::get(bytes, ends, i)));
        index
    }

    /// Each sample's position in the order of the ids.
    fn ranks(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..u32::try_from(self.len()).unwrap_or(u32::MAX)).collect();
        order.sort_unstable_by(|&a, &b| {
            Ids::get(&self.bytes, &self.ends, a).cmp(Ids::get(&self.bytes, &self.ends, b))
        });
        let mut rank = vec![0_u32; self.len()];
        for (position, index) in order.into_iter().enumerate() {
            rank[index as usize] = u32::try_from(position).unwrap_or(u32::MAX);
        }
        rank
    }
}

impl SummaryBuilder {
    /// How many bytes of lines a builder holds before it writes them to a temporary file:
    /// 8 MiB, about 180 000 lines of two epochs a sample with 25-byte ids (the size of a
    /// line's JSON does not matter).
    pub const MEMORY_BUDGET: usize = 8 << 20;

    /// An empty builder, spilling past [`MEMORY_BUDGET`](Self::MEMORY_BUDGET) into
    /// [`std::env::temp_dir`].
    #[must_use]
    pub fn new(options: SummaryOptions) -> Self {
        SummaryBuilder {
            options,
            run: Run::default(),
            budget: Self::MEMORY_BUDGET,
            dir: None,
            fan_in: spill::FAN_IN,
            spilled: None,
            failure: None,
            duplicates: 0,
            totals: Totals::default(),
            logged: spill::Logged::default(),
        }
    }

    /// The same builder spilling past `budget` bytes into `dir`, merging `fan_in` runs at once:
    /// small inputs then take the paths of large ones.
    #[cfg(test)]
    fn spilling(mut self, budget: usize, dir: &std::path::Path, fan_in: usize) -> Self {
        self.budget = budget;
        self.dir = Some(dir.to_owned());
        self.fan_in = fan_in;
        self
    }

    /// Adds a line. A second line for the same (sample, epoch) is counted as a duplicate and
    /// otherwise ignored.
    ///
    /// Past the memory budget this writes to a temporary file; should that fail, the error is
    /// kept for [`finish`](Self::finish) to return and later lines are ignored.
    pub fn push(&mut self, line: Line) {
        if self.failure.is_some() {
            return;
        }
        let Some(sample) = self.run.insert(&line.id, line.epoch) else {
            self.duplicates += 1;
            return;
        };
        let reward = line.reward();
        let outcome = Outcome::of(&line, reward);
        let subscores = match outcome {
            Outcome::Scored => line
                .result
                .as_ref()
                .and_then(|result| result.subscores.as_deref())
                .unwrap_or_default(),
            _ => &[],
        };
        let logged = match &mut self.spilled {
            // Nothing was spilled: this run is the first, and the line the first of its
            // (sample, epoch).
            None => {
                let totals = &mut self.totals;
                totals.durations.add(line.duration_secs);
                if let Some(kind) = outcome.error() {
                    *totals.errors.entry(kind.to_owned()).or_default() += 1;
                }
                for sub in subscores {
                    let stat = match totals.subscores.get_mut(sub.name()) {
                        Some(stat) => stat,
                        None => totals.subscores.entry(sub.name().to_owned()).or_default(),
                    };
                    stat.0 += 1;
                    stat.1.add(sub.value());
                }
                spill::NOT_LOGGED
            }
            // An earlier run may hold the (sample, epoch): the line is counted at the end, if
            // it is the first.
            Some(spilled) => {
                let logged = &mut self.logged;
                logged.duration_secs = line.duration_secs;
                logged.outcome = outcome as u8;
                logged.subscores.clear();
                for sub in subscores {
                    logged
                        .subscores
                        .push((self.totals.name(sub.name()), sub.value()));
                }
                match spilled.log.push(logged) {
                    Ok(at) => at,
                    Err(source) => {
                        self.fail(source);
                        return;
                    }
                }
            }
        };
        self.run.kept.push(Kept {
            sample,
            epoch: line.epoch,
            reward: reward.unwrap_or(f64::NAN),
            logged,
        });
        if self.run.size() >= self.budget {
            self.spill();
        }
    }

    fn dir(&self) -> std::path::PathBuf {
        self.dir.clone().unwrap_or_else(std::env::temp_dir)
    }

    /// Keeps the first failure and lets go of everything held.
    fn fail(&mut self, source: std::io::Error) {
        self.failure = Some(SpillError {
            dir: self.dir(),
            source,
        });
        self.run = Run::default();
        self.spilled = None;
    }

    /// Writes the run held to a new file.
    fn spill(&mut self) {
        let result = match &mut self.spilled {
            Some(spilled) => {
                spilled.samples += self.run.ids.len();
                self.run
                    .spill(&spilled.dir)
                    .map(|run| spilled.runs.push(run))
            }
            None => {
                let dir = self.dir();
                spill::Log::create(&dir).and_then(|log| {
                    let samples = self.run.ids.len();
                    let run = self.run.spill(&dir)?;
                    self.spilled = Some(Spilled {
                        dir,
                        runs: vec![run],
                        samples,
                        log,
                    });
                    Ok(())
                })
            }
        };
        if let Err(source) = result {
            self.fail(source);
        }
    }

    /// The summary of every line pushed.
    ///
    /// # Errors
    /// When lines were spilled and writing or reading the temporary files failed: a summary
    /// of part of the lines is never given.
    pub fn finish(mut self) -> Result<Summary, SpillError> {
        if let Some(failure) = self.failure.take() {
            return Err(failure);
        }
        let Some(spilled) = self.spilled.take() else {
            return Ok(self.in_memory());
        };
        let SummaryBuilder {
            options,
            mut run,
            duplicates,
            mut totals,
            fan_in,
            ..
        } = self;
        let Spilled {
            dir,
            mut runs,
            samples,
            log,
        } = spilled;
        let fail = |source| SpillError {
            dir: dir.clone(),
            source,
        };
        let samples = samples + run.ids.len();
        if !run.kept.is_empty() {
            runs.push(run.spill(&dir).map_err(fail)?);
        }
        drop(run);
        let mut dropped = Vec::new();
        let mut merge = spill::Merge::new(runs, &dir, fan_in, &mut dropped).map_err(fail)?;
        let mut tally = Tally::new(&options, samples);
        let (mut id, mut entries) = (Vec::new(), Vec::new());
        while merge
            .next(&mut id, &mut entries, &mut dropped)
            .map_err(fail)?
        {
            tally.sample(entries.iter().map(|entry| entry.reward));
        }
        drop(merge);
        let duplicates = duplicates + dropped.len();
        dropped.sort_unstable();
        log.replay(&dropped, |line| {
            let outcome = Outcome::ALL
                .get(usize::from(line.outcome))
                .copied()
                .unwrap_or(Outcome::IsError);
            totals.add(line.duration_secs, outcome, line.subscores.iter().copied());
        })
        .map_err(fail)?;
        Ok(tally.summary(options, totals, duplicates))
    }

    /// The summary of the lines held, when nothing was spilled.
    fn in_memory(self) -> Summary {
        let SummaryBuilder {
            options,
            mut run,
            duplicates,
            totals,
            ..
        } = self;
        run.sort();
        let mut tally = Tally::new(&options, run.ids.len());
        for group in run.kept.chunk_by(|a, b| a.sample == b.sample) {
            tally.sample(group.iter().map(|line| line.reward));
        }
        drop(run);
        tally.summary(options, totals, duplicates)
    }
}

/// The per-sample statistics, computed one sample at a time in the order of their ids.
struct Tally {
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
    /// The scored rewards of the sample at hand.
    scratch: Vec<f64>,
}

impl Tally {
    /// A tally of at most `samples` samples.
    fn new(options: &SummaryOptions, samples: usize) -> Self {
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
    fn sample(&mut self, rewards: impl Iterator<Item = f64>) {
        self.scratch.clear();
        let mut lines = 0;
        for reward in rewards {
            lines += 1;
            if !reward.is_nan() {
                self.scratch.push(reward);
            }
        }
        self.samples += 1;
        self.lines += lines;
        self.scored += self.scratch.len();
        if self.scratch.is_empty() {
            self.errored_samples += 1;
        }
        self.epochs = self.epochs.max(u32::try_from(lines).unwrap_or(u32::MAX));
        *self.lengths.entry(lines).or_default() += 1;
        let values = &self.scratch[..];
        self.values
            .extend(self.headline.reduce(values, self.threshold));
        // pass@k is undefined past the scored epochs.
        for k in 1..=values.len() {
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

    fn summary(self, options: SummaryOptions, totals: Totals, duplicates: usize) -> Summary {
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
            reward,
            pass_at_k,
            reducers,
            subscores,
            grading_secs: totals.durations.total(),
            options,
        }
    }
}

impl Summary {
    /// What each row of the table means, one `(row, meaning)` pair per kind of row shown, with
    /// this summary's threshold and reducer filled in. The table prints it under `legend:`.
    #[must_use]
    pub fn legend(&self) -> Vec<(String, String)> {
        let threshold = self.options.threshold;
        let reducer = self.options.reducer;
        let mut legend = vec![
            (
                "reward".to_owned(),
                format!(
                    "each sample's scored epochs reduced to one value by {reducer}, then \
                     averaged over the samples; penalties can make a reward negative"
                ),
            ),
            (
                "pass rate".to_owned(),
                format!(
                    "share of samples whose reduced reward is ≥ {threshold}{}",
                    if reducer == Reducer::Mean {
                        " (with the mean: every scored epoch passed)"
                    } else {
                        ""
                    }
                ),
            ),
        ];
        if !self.pass_at_k.is_empty() {
            legend.push((
                "pass_at_k".to_owned(),
                format!(
                    "chance that at least one of k epochs drawn from a sample passes \
                     (≥ {threshold}), averaged over the samples with k scored epochs; pass_at_1 \
                     is a sample's share of passing epochs, averaged"
                ),
            ));
        }
        for stat in &self.reducers {
            let meaning = match stat.reducer {
                Reducer::Mean => "the mean of a sample's epochs".to_owned(),
                Reducer::Median => "the median of a sample's epochs".to_owned(),
                Reducer::Mode => {
                    "a sample's most frequent epoch value (on a tie, the one in the earliest epoch)"
                        .to_owned()
                }
                Reducer::Max => "a sample's best epoch".to_owned(),
                Reducer::Majority => "the value held by more than half of a sample's epochs \
                                      (a sample without one is left out of n)"
                    .to_owned(),
                Reducer::AtLeast(k) => {
                    format!("1 when at least {k} of a sample's epochs pass (≥ {threshold}), else 0")
                }
                Reducer::PassAt(k) => format!("pass_at_{k}, as above"),
            };
            if stat.reducer != reducer {
                legend.push((
                    stat.reducer.to_string(),
                    format!("{meaning}, averaged over the samples"),
                ));
            }
        }
        if !self.subscores.is_empty() {
            legend.push((
                "subscores".to_owned(),
                "each top-level subscore's mean value over the scored lines that have it"
                    .to_owned(),
            ));
        }
        legend.push((
            "n".to_owned(),
            "how many samples (or, for subscores, lines) the value is over".to_owned(),
        ));
        legend
    }
}

impl fmt::Display for Summary {
    /// A terminal table: counts (with a warning for samples that have fewer epochs than asked
    /// for), the headline metrics, pass@k, the other reducers, subscores, then a legend.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let options = &self.options;
        let percent = options.level * 100.0;
        let interval = |i: &Interval| format!("[{:.4}, {:.4}]", i.lower, i.upper);
        let plural = |n: u32| if n == 1 { "" } else { "s" };
        let expected = options.epochs.unwrap_or(self.epochs);
        let mut rows: Vec<(String, String)> = vec![(
            "samples".into(),
            format!(
                "{} ({} with no score), {}",
                self.samples,
                self.errored_samples,
                if expected == self.epochs {
                    format!("{} epoch{}", self.epochs, plural(self.epochs))
                } else {
                    format!(
                        "{expected} epoch{} asked for, at most {} seen",
                        plural(expected),
                        self.epochs
                    )
                }
            ),
        )];
        if self.incomplete_samples > 0 {
            rows.push((
                "warning".into(),
                format!(
                    "{} sample{} {} fewer than {expected} epoch{} (an unfinished or interrupted \
                     run: run it again to finish); each is reduced over the epochs it has",
                    self.incomplete_samples,
                    if self.incomplete_samples == 1 {
                        ""
                    } else {
                        "s"
                    },
                    if self.incomplete_samples == 1 {
                        "has"
                    } else {
                        "have"
                    },
                    plural(expected),
                ),
            ));
        }
        rows.extend([
            (
                "results".into(),
                format!(
                    "{} scored, {} errored{}{}",
                    self.scored,
                    self.errored,
                    if self.errors.is_empty() {
                        String::new()
                    } else {
                        let kinds: Vec<String> = self
                            .errors
                            .iter()
                            .map(|(k, n)| format!("{k} {n}"))
                            .collect();
                        format!(" ({})", kinds.join(", "))
                    },
                    if self.duplicates > 0 {
                        format!(", {} duplicates ignored", self.duplicates)
                    } else {
                        String::new()
                    }
                ),
            ),
            (
                "reward".into(),
                format!(
                    "{:.4} ± {:.4} stderr (bootstrap {:.4}), std {:.4} ({} of epochs, n={})",
                    self.reward.mean,
                    self.reward.stderr,
                    self.reward.bootstrap_stderr,
                    self.reward.std,
                    options.reducer,
                    self.reward.n
                ),
            ),
            (
                format!("{percent}% CI"),
                format!(
                    "bootstrap {} t {}{}",
                    interval(&self.reward.ci_bootstrap),
                    interval(&self.reward.ci_t),
                    self.reward
                        .ci_wilson
                        .as_ref()
                        .map(|i| format!(" Wilson {}", interval(i)))
                        .unwrap_or_default()
                ),
            ),
            (
                format!("pass rate (≥ {})", options.threshold),
                format!("{:.4} (n={})", self.reward.pass_rate, self.reward.n),
            ),
        ]);
        // The headline reducer's row would repeat the reward's mean.
        let others = self
            .reducers
            .iter()
            .filter(|s| s.reducer != options.reducer);
        for stat in self.pass_at_k.iter().chain(others) {
            rows.push((
                stat.reducer.to_string(),
                format!("{:.4} (n={})", stat.mean, stat.samples),
            ));
        }
        if !self.subscores.is_empty() {
            rows.push(("subscores".into(), String::new()));
        }
        for (name, stat) in &self.subscores {
            rows.push((
                format!("  {name}"),
                format!("{:.4} (n={})", stat.mean, stat.count),
            ));
        }
        let width = rows
            .iter()
            .map(|(k, _)| k.chars().count())
            .max()
            .unwrap_or(0);
        for (key, value) in rows {
            let pad = width - key.chars().count();
            writeln!(f, "{key}{:pad$}  {value}", "")?;
        }
        writeln!(f, "legend:")?;
        let legend = self.legend();
        let width = legend
            .iter()
            .map(|(k, _)| k.chars().count())
            .max()
            .unwrap_or(0);
        for (key, meaning) in legend {
            let pad = width - key.chars().count();
            writeln!(f, "  {key}{:pad$}  {meaning}", "")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use grader_core::EvaluationResult;

    fn graded(id: &str, epoch: u32, reward: f64) -> Line {
        let result = EvaluationResult::from_reward(reward).expect("a finite reward");
        Line::graded(id, epoch, result, 0.0)
    }

    /// Random lines: ids from a small set, mostly epochs 1 to 4 but also 0, past 64 and the
    /// largest, failures, panics, results marked `isError`, subscores, grading times whose sum
    /// depends on the order they are added in.
    fn random_lines(rng: &mut rand_chacha::ChaCha8Rng) -> Vec<Line> {
        use rand::Rng;

        let mut lines = Vec::new();
        for _ in 0..rng.random_range(0..300) {
            let id = format!("s{}", rng.random_range(0..60));
            let epoch = if rng.random_bool(0.1) {
                [0, 65, 100, u32::MAX][rng.random_range(0..4)]
            } else {
                rng.random_range(1..5)
            };
            let duration = rng.random::<f64>() * 10.0;
            lines.push(match rng.random_range(0..20) {
                0 => Line::failed(&*id, epoch, ErrorKind::Failed, "no", duration),
                1 => Line::failed(&*id, epoch, ErrorKind::Panicked, "boom", duration),
                2 => {
                    let mut result = EvaluationResult::from_reward(0.5).expect("finite");
                    result.is_error = true;
                    Line::graded(id, epoch, result, duration)
                }
                _ => {
                    let reward = f64::from(rng.random_range(0..5_u8)) / 4.0 - 0.25;
                    let mut result = EvaluationResult::from_reward(reward).expect("finite");
                    let names = ["tests", "style", "judge"];
                    result.subscores = Some(
                        names[..rng.random_range(0..=names.len())]
                            .iter()
                            .map(|name| {
                                grader_core::SubScore::new(*name, rng.random::<f64>())
                                    .expect("valid")
                            })
                            .collect(),
                    );
                    Line::graded(id, epoch, result, duration)
                }
            });
        }
        lines
    }

    /// Pushes `lines` into a builder spilling past `budget` bytes into `dir`.
    fn spilled(
        lines: &[Line],
        budget: usize,
        dir: &std::path::Path,
        fan_in: usize,
    ) -> (usize, Result<Summary, SpillError>) {
        let mut builder =
            SummaryBuilder::new(SummaryOptions::default()).spilling(budget, dir, fan_in);
        for line in lines {
            builder.push(line.clone());
        }
        let runs = builder
            .spilled
            .as_ref()
            .map_or(0, |spilled| spilled.runs.len());
        (runs, builder.finish())
    }

    /// What a summary keeps of lines pushed in any order, against the plain reading: every
    /// sample's first line per epoch, samples by id, epochs in order, sums in the order the
    /// lines came. Spilled to many small runs (merged a few at a time), the same summary.
    #[test]
    fn the_compact_builder_keeps_what_the_plain_reading_would() {
        use rand::SeedableRng;
        use rand::seq::SliceRandom;

        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for round in 0..40 {
            let lines = random_lines(&mut rng);
            // The plain reading, first line of each (sample, epoch) wins.
            let mut plain: BTreeMap<String, BTreeMap<u32, Option<f64>>> = BTreeMap::new();
            let mut duplicates = 0;
            let mut durations = Vec::new();
            let mut subscores: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            for line in &lines {
                let epochs = plain.entry(line.id.clone()).or_default();
                match epochs.entry(line.epoch) {
                    std::collections::btree_map::Entry::Occupied(_) => duplicates += 1,
                    std::collections::btree_map::Entry::Vacant(slot) => {
                        slot.insert(line.reward());
                        durations.push(line.duration_secs);
                        if line.reward().is_some() {
                            for sub in line
                                .result
                                .as_ref()
                                .and_then(|r| r.subscores.as_deref())
                                .unwrap_or_default()
                            {
                                subscores
                                    .entry(sub.name().to_owned())
                                    .or_default()
                                    .push(sub.value());
                            }
                        }
                    }
                }
            }
            let means: Vec<f64> = plain
                .values()
                .map(|e| e.values().flatten().copied().collect::<Vec<f64>>())
                .filter(|v| !v.is_empty())
                .map(|v| metrics::mean(&v))
                .collect();
            let summary = Summary::from_lines(lines.clone(), SummaryOptions::default());
            assert_eq!(summary.samples, plain.len(), "round {round}");
            assert_eq!(summary.duplicates, duplicates, "round {round}");
            assert_eq!(summary.lines, lines.len() - duplicates, "round {round}");
            assert_eq!(summary.reward.n, means.len(), "round {round}");
            assert_eq!(summary.reward.mean, metrics::mean(&means), "round {round}");
            assert_eq!(
                summary.reward.ci_bootstrap,
                metrics::ci_bootstrap(&means, 0.95, 1000, 0).expect("a level"),
                "round {round}: samples in the order of their ids"
            );
            assert_eq!(
                summary.grading_secs,
                grader_core::grade::neumaier_sum(durations.iter().copied()),
                "round {round}: the grading times added in the order of the lines"
            );
            let subscore_means: BTreeMap<String, f64> = subscores
                .iter()
                .map(|(name, values)| (name.clone(), metrics::mean(values)))
                .collect();
            assert_eq!(
                summary
                    .subscores
                    .iter()
                    .map(|(name, stat)| (name.clone(), stat.mean))
                    .collect::<BTreeMap<_, _>>(),
                subscore_means,
                "round {round}"
            );
            let json = serde_json::to_string(&summary).expect("a summary as JSON");
            // Through temporary files: the same summary, bit for bit.
            for (budget, fan_in) in [
                (usize::MAX, spill::FAN_IN),
                (600, spill::FAN_IN),
                (300, 3),
                (300, 2),
            ] {
                let (runs, spilled) = spilled(&lines, budget, dir.path(), fan_in);
                if budget < 1000 && lines.len() > 30 {
                    let least = if budget == 300 { 3 } else { 1 };
                    assert!(
                        runs >= least,
                        "round {round}: {runs} runs under a budget of {budget}"
                    );
                } else if budget == usize::MAX {
                    assert_eq!(runs, 0, "round {round}: nothing spilled below the budget");
                }
                let spilled = spilled.expect("a summary through temporary files");
                assert_eq!(
                    serde_json::to_string(&spilled).ok().as_ref(),
                    Some(&json),
                    "round {round}, budget {budget}, {runs} runs merged {fan_in} at a time"
                );
            }
            // Another order of the same distinct lines: the same summary.
            let mut distinct: Vec<Line> = Vec::new();
            let mut taken = std::collections::HashSet::new();
            for line in lines {
                if taken.insert((line.id.clone(), line.epoch)) {
                    distinct.push(line);
                }
            }
            distinct.shuffle(&mut rng);
            let mut again = Summary::from_lines(distinct, SummaryOptions::default());
            again.duplicates = summary.duplicates;
            again.grading_secs = summary.grading_secs;
            again.subscores.clone_from(&summary.subscores);
            assert_eq!(
                serde_json::to_string(&again).ok(),
                serde_json::to_string(&summary).ok(),
                "round {round}"
            );
        }
        assert_eq!(
            std::fs::read_dir(dir.path())
                .expect("the directory")
                .count(),
            0,
            "the temporary files have no name"
        );
    }

    /// The open files in `dir` of this process (on Linux, where `/proc/self/fd` tells them).
    #[cfg(target_os = "linux")]
    fn open_files_in(dir: &std::path::Path) -> usize {
        std::fs::read_dir("/proc/self/fd")
            .expect("the open files")
            .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
            .filter(|target| target.starts_with(dir))
            .count()
    }

    #[test]
    fn spill_files_are_gone_after_finish_and_after_a_drop_without_it() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let dir = dir.path().canonicalize().expect("a path");
        let lines: Vec<Line> = (0..500)
            .map(|i| graded(&format!("sample-{}", i % 200), 1 + i / 200, 0.5))
            .collect();
        for finish in [true, false] {
            let mut builder =
                SummaryBuilder::new(SummaryOptions::default()).spilling(2_000, &dir, 4);
            for line in &lines {
                builder.push(line.clone());
            }
            let runs = builder
                .spilled
                .as_ref()
                .map_or(0, |spilled| spilled.runs.len());
            assert!(runs > 4, "{runs} runs");
            // No file in the directory has a name; each run is open, and the log.
            assert_eq!(std::fs::read_dir(&dir).expect("the directory").count(), 0);
            #[cfg(target_os = "linux")]
            assert_eq!(open_files_in(&dir), runs + 1);
            if finish {
                let summary = builder.finish().expect("a summary");
                assert_eq!((summary.samples, summary.lines), (200, 500));
            } else {
                drop(builder);
            }
            #[cfg(target_os = "linux")]
            assert_eq!(open_files_in(&dir), 0, "finished: {finish}");
            assert_eq!(std::fs::read_dir(&dir).expect("the directory").count(), 0);
        }
    }

    #[test]
    fn a_spill_that_fails_is_an_error_naming_the_directory_not_a_partial_summary() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let missing = dir.path().join("missing");
        let lines: Vec<Line> = (0..100).map(|i| graded(&format!("s{i}"), 1, 1.0)).collect();
        let (runs, summary) = spilled(&lines, 500, &missing, spill::FAN_IN);
        assert_eq!(runs, 0);
        let error = summary.expect_err("no directory to spill to");
        assert_eq!(error.dir, missing);
        assert_eq!(error.source.kind(), std::io::ErrorKind::NotFound);
        let message = error.to_string();
        assert!(message.contains(&*missing.to_string_lossy()), "{message}");
        assert!(message.contains("TMPDIR"), "{message}");
        // Below the budget nothing is written, so nothing can fail.
        let (runs, summary) = spilled(&lines, usize::MAX, &missing, spill::FAN_IN);
        assert_eq!(runs, 0);
        assert_eq!(summary.expect("a summary in memory").samples, 100);
    }

    #[test]
    fn a_new_builder_holds_a_few_mebibytes_before_it_spills() {
        let mut builder = SummaryBuilder::new(SummaryOptions::default());
        for i in 0..50_000 {
            builder.push(graded(&format!("sample-{i:06}"), 1, 1.0));
        }
        assert!(builder.spilled.is_none(), "50 000 lines stay in memory");
        assert!(builder.run.size() < SummaryBuilder::MEMORY_BUDGET);
        assert!(builder.run.size() > 50_000 * size_of::<Kept>());
    }

    #[test]
    fn duplicates_are_told_at_every_epoch_number() {
        let mut lines = Vec::new();
        for epoch in [0, 1, 63, 64, 65, 100, u32::MAX] {
            lines.push(graded("a", epoch, 1.0));
            lines.push(graded("b", epoch, 0.0));
            lines.push(graded("a", epoch, 0.0)); // a duplicate: the first line wins
        }
        let summary = Summary::from_lines(lines, SummaryOptions::default());
        assert_eq!(
            (summary.samples, summary.lines, summary.duplicates),
            (2, 14, 7)
        );
        assert_eq!(summary.epochs, 7);
        assert_eq!(summary.reward.mean, 0.5);
    }

    #[test]
    fn errors_are_counted_not_averaged_and_duplicates_ignored() {
        let summary = Summary::from_lines(
            [
                graded("a", 1, 1.0),
                graded("a", 2, 0.0),
                graded("a", 2, 1.0),
                Line::failed("b", 1, ErrorKind::Panicked, "boom", 0.0),
                graded("c", 1, 1.0),
                Line::failed("c", 2, ErrorKind::Failed, "no", 0.0),
            ],
            SummaryOptions::default(),
        );
        assert_eq!(summary.samples, 3);
        assert_eq!(summary.lines, 5);
        assert_eq!(summary.duplicates, 1);
        assert_eq!((summary.scored, summary.errored), (3, 2));
        assert_eq!(summary.errored_samples, 1);
        // a: mean(1, 0) = 0.5; c: mean(1) = 1.0; b has no score.
        assert_eq!(summary.reward.n, 2);
        assert_eq!(summary.reward.mean, 0.75);
        assert_eq!(summary.pass_at_k[0].mean, 0.75);
        assert_eq!(summary.pass_at_k[1].samples, 1);
        assert_eq!(summary.errors["panicked"], 1);
        assert!(summary.to_string().contains("3 scored, 2 errored"));
    }

    #[test]
    fn samples_with_fewer_epochs_than_asked_are_counted_and_warned_about() {
        let lines = || {
            [
                graded("a", 1, 1.0),
                graded("a", 2, 1.0),
                Line::failed("b", 1, ErrorKind::Failed, "no", 0.0),
                Line::failed("b", 2, ErrorKind::Failed, "no", 0.0),
                graded("c", 2, 0.0),
            ]
        };
        // By default the largest number seen is the one asked for; errored lines count as done.
        let summary = Summary::from_lines(lines(), SummaryOptions::default());
        assert_eq!((summary.epochs, summary.incomplete_samples), (2, 1));
        let text = summary.to_string();
        let warning = text
            .lines()
            .find(|line| line.starts_with("warning"))
            .expect("a warning row");
        assert!(
            warning.contains("1 sample has fewer than 2 epochs (an unfinished or interrupted run"),
            "{text}"
        );
        let samples = text.lines().next().unwrap_or_default();
        assert!(samples.starts_with("samples "), "{text}");
        assert!(
            samples.ends_with(" 3 (1 with no score), 2 epochs"),
            "{text}"
        );

        let summary = Summary::from_lines(lines(), SummaryOptions::default().epochs(3));
        assert_eq!(summary.incomplete_samples, 3);
        let text = summary.to_string();
        assert!(
            text.contains("3 epochs asked for, at most 2 seen"),
            "{text}"
        );
        assert!(
            text.contains("3 samples have fewer than 3 epochs"),
            "{text}"
        );

        let complete = Summary::from_lines(
            [graded("a", 1, 1.0), graded("a", 2, 0.0)],
            SummaryOptions::default(),
        );
        assert_eq!(complete.incomplete_samples, 0);
        assert!(!complete.to_string().contains("warning"));
    }

    #[test]
    fn every_row_is_explained_once_and_the_headline_reducer_is_not_repeated() {
        let mut result = EvaluationResult::from_reward(1.0).expect("finite");
        result.subscores = Some(vec![
            grader_core::SubScore::new("tests", 1.0).expect("valid"),
        ]);
        let summary = Summary::from_lines(
            [
                Line::graded("a", 1, result, 0.0),
                graded("a", 2, 0.0),
                graded("b", 1, 1.0),
                graded("b", 2, 1.0),
            ],
            SummaryOptions::default(),
        );
        let text = summary.to_string();
        let (table, legend) = text.split_once("legend:\n").expect("a legend");
        let labels: Vec<&str> = table
            .lines()
            .map(|line| line.split("  ").next().unwrap_or_default())
            .collect();
        assert_eq!(
            labels,
            [
                "samples",
                "results",
                "reward",
                "95% CI",
                "pass rate (≥ 1)",
                "pass_at_1",
                "pass_at_2",
                "median",
                "mode",
                "max",
                "majority",
                "subscores",
                "",
            ],
            "{text}"
        );
        assert!(
            !table.contains("mean ("),
            "no row labelled by the mean twice: {text}"
        );
        assert!(table.contains("(mean of epochs, n=2)"), "{text}");
        for term in [
            "reward",
            "pass rate",
            "pass_at_k",
            "median",
            "mode",
            "max",
            "majority",
            "subscores",
            "n",
        ] {
            assert_eq!(
                legend
                    .lines()
                    .filter(|line| line.trim_start().starts_with(&format!("{term} ")))
                    .count(),
                1,
                "{term} explained once: {legend}"
            );
        }
        assert!(
            legend.contains("penalties can make a reward negative"),
            "{legend}"
        );
        // Another headline reducer: the mean gets a row and an explanation of its own.
        let summary = Summary::from_lines(
            [graded("a", 1, 1.0), graded("a", 2, 0.0)],
            SummaryOptions::default().reducer(Reducer::Max),
        );
        let text = summary.to_string();
        assert!(text.contains("\nmean "), "{text}");
        assert!(!text.contains("\nmax "), "{text}");
        assert!(text.contains("(max of epochs, n=1)"), "{text}");
    }

    #[test]
    fn reducer_names_round_trip() {
        for name in [
            "mean",
            "median",
            "mode",
            "max",
            "majority",
            "at_least_3",
            "pass_at_1",
        ] {
            assert_eq!(
                name.parse::<Reducer>().expect("a reducer name").to_string(),
                name
            );
        }
        assert!("pass_at_0".parse::<Reducer>().is_err());
        assert!("avg".parse::<Reducer>().is_err());
    }
}
