//! The crate's error types, below every module that returns them: [`EvalError`] (the
//! runner's, which wraps the others), [`LinesError`] (reading an evaluation's lines),
//! [`StoreError`] (object storage), [`ShardEnvError`] (the shard from a scheduler's
//! environment, with the names of the variables it speaks of), [`SpillError`] (the summary's
//! temporary files) and [`FormError`] (a result whose reward cannot be read). Each is public
//! where its module is, through a re-export (`grader_eval::EvalError`, `line::LinesError`,
//! `store::StoreError`, `shard::ShardEnvError`, `summary::SpillError`, `line::FormError`);
//! this module imports none of the others, so that all of them can import it.

use std::io;
use std::path::PathBuf;

/// An evaluation could not run (or merge) at all. A sample's failure is not one of these: it
/// is written on the sample's line and the run goes on.
#[cfg(feature = "run")]
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// Reading or writing a results file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A results file holds a line that is not an evaluation line (other than a torn last
    /// line, which is redone).
    #[error(transparent)]
    Lines(#[from] LinesError),
    /// A shard that is not `i/n` with `i < n`.
    #[error("shard `{shard}` is not `i/n` with 0 <= i < n")]
    InvalidShard {
        /// The rejected shard.
        shard: String,
    },
    /// The shard could not be read from the environment
    /// ([`Shard::from_env`](crate::Shard::from_env)).
    #[error(transparent)]
    ShardEnv(#[from] ShardEnvError),
    /// Object storage failed (feature `object-store`): the message names the URL, never a
    /// credential.
    #[cfg(feature = "object-store")]
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A line could not be written as JSON.
    #[error("sample `{id}`: cannot write its line: {source}")]
    Serialize {
        /// The sample.
        id: String,
        /// Why.
        source: serde_json::Error,
    },
    /// Lines of one (sample, epoch) differ across the inputs of a merge told to fail on that
    /// ([`OnConflict::Fail`](crate::OnConflict::Fail)): nothing was written.
    #[error(
        "{count} (sample, epoch) pair(s) have lines that differ: {}{}; nothing was written \
         (keep the first or the last line read of each)",
        named.join(", "),
        if *count > named.len() { format!(" and {} more", count - named.len()) } else { String::new() }
    )]
    Conflicts {
        /// How many pairs.
        count: usize,
        /// The first few, as `id epoch N (K lines)`.
        named: Vec<String>,
    },
    /// Gradings were cancelled under the run, not by it (the runtime they ran on shut down
    /// while the run was awaited elsewhere): their (sample, epoch) pairs have no line. What
    /// was written stays; running again resumes.
    #[error(
        "{path}: {cancelled} gradings were cancelled under the run (their runtime shut down){left}; \
         {written} lines were written. Run the same evaluation again to resume.",
        left = if *.samples_left { ", and samples not yet taken were left ungraded" } else { "" }
    )]
    Cancelled {
        /// The output.
        path: PathBuf,
        /// Gradings cancelled, without a line.
        cancelled: usize,
        /// Lines this run wrote.
        written: usize,
        /// Samples were left that no grading had been made for, so not counted in
        /// `cancelled` (most likely with
        /// [`Evaluation::run_shared`](crate::Evaluation::run_shared), whose workers take the
        /// samples as they go; [`Evaluation::run`](crate::Evaluation::run) makes gradings up
        /// to 256 ahead, and counts those it made).
        samples_left: bool,
    },
}

/// An evaluation's JSONL file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LinesError {
    /// Reading failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A complete line (one ending in a newline) is not a valid [`Line`](crate::Line).
    #[error("{path}:{line_number}: not an evaluation line: {message}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The line's number, from 1.
        line_number: u64,
        /// Why it does not parse.
        message: String,
    },
    /// An object store URL could not be read (feature `object-store`).
    #[cfg(feature = "object-store")]
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The summary of the lines could not write or read its temporary files
    /// ([`summarize_files`](super::summarize_files)).
    #[error(transparent)]
    Spill(#[from] SpillError),
}

/// Something went wrong with object storage. Every variant names the URL concerned, never a
/// credential.
#[cfg(feature = "object-store")]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Not a URL this crate can use (shown with any credentials and query string elided).
    #[error("{url}: not a usable object store URL: {why}")]
    InvalidUrl {
        /// The URL, credentials elided.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// The store could not be set up from the environment (a missing region or account,
    /// say).
    #[error("{url}: cannot set up the object store from the environment: {message}")]
    Config {
        /// The URL.
        url: String,
        /// Why, credentials elided.
        message: String,
    },
    /// A request failed: the bucket does not exist, access was denied, the network failed
    /// (after the retries of [`StoreOptions::retries`](crate::store::StoreOptions::retries)).
    #[error("{url}: cannot {action}: {message}")]
    Request {
        /// The URL of the prefix or object concerned.
        url: String,
        /// What was being done (`list the chunks`, `upload the chunk`, `read the chunk`).
        action: &'static str,
        /// Why, credentials elided.
        message: String,
    },
    /// The URL holds the parts of a run with another number of shards than this run's.
    #[error(
        "{url}: holds {found}/ from a run in {found_count} shards, but this run is shard \
         {shard}: use the same shard count as the run that wrote it, or another URL"
    )]
    ShardMismatch {
        /// The URL.
        url: String,
        /// A part found there (`part-0-of-3`).
        found: String,
        /// Its number of shards.
        found_count: u32,
        /// This run's shard (`i/n`).
        shard: String,
    },
    /// The URL holds parts of runs with different numbers of shards.
    #[error("{url}: holds parts of runs in {counts:?} shards; read them from separate URLs")]
    MixedShards {
        /// The URL.
        url: String,
        /// The shard counts found.
        counts: Vec<u32>,
    },
    /// The URL given as the output of [`merge`](super::merge) holds chunks of a run:
    /// readers would read those rather than the merged object.
    #[error(
        "{url}: holds {found}/ from an evaluation, which readers would read instead of the \
         merged object: choose another URL"
    )]
    OutputHoldsRun {
        /// The URL.
        url: String,
        /// A part found there (`part-0-of-3`).
        found: String,
    },
    /// There is neither an object nor any chunk at the URL.
    #[error("{url}: no results there (neither an object nor part-*-of-*/chunk-*.jsonl under it)")]
    Empty {
        /// The URL.
        url: String,
    },
    /// A chunk holds something that is not whole evaluation lines.
    #[error("{url}:{line_number}: not an evaluation line: {message}")]
    Corrupt {
        /// The chunk's URL.
        url: String,
        /// The line's number in the chunk, from 1.
        line_number: u64,
        /// Why.
        message: String,
    },
}

/// The variable [`Shard::from_env`](crate::Shard::from_env) reads an explicit `i/n` from; it
/// wins over every scheduler's variables.
#[cfg(feature = "run")]
pub const SHARD_VAR: &str = "GRADER_SHARD";

/// The variable [`Shard::from_env`](crate::Shard::from_env) reads the number of shards from
/// where the scheduler does not say it: Kubernetes Indexed Jobs (set it to the Job's
/// `completions`) and AWS Batch array jobs (set it to the array `size`). Where the scheduler
/// does say it (Slurm), it must agree.
#[cfg(feature = "run")]
pub const SHARD_COUNT_VAR: &str = "GRADER_SHARD_COUNT";

/// The shard could not be read from the environment. Every variant names the variables
/// involved and their values.
#[cfg(feature = "run")]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShardEnvError {
    /// None of the variables is set.
    #[error(
        "no shard in the environment: set GRADER_SHARD=i/n, or run as a Kubernetes Indexed Job \
         (JOB_COMPLETION_INDEX, with GRADER_SHARD_COUNT), a Slurm job array \
         (SLURM_ARRAY_TASK_ID) or an AWS Batch array job (AWS_BATCH_JOB_ARRAY_INDEX, with \
         GRADER_SHARD_COUNT)"
    )]
    NotSet,
    /// A variable holds something that is not what it should.
    #[error("{variable}={value:?}: {why}")]
    Invalid {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        why: String,
    },
    /// A scheduler's index is set but nothing says how many shards there are.
    #[error(
        "{index_variable}={index} is set but the number of shards is not: set {SHARD_COUNT_VAR} to {hint}"
    )]
    MissingCount {
        /// The index variable that was found.
        index_variable: &'static str,
        /// Its value.
        index: String,
        /// Where the count comes from for this scheduler.
        hint: &'static str,
    },
    /// Variables that disagree: an index outside the count, two schedulers' indexes, or a count
    /// that is not the scheduler's.
    #[error("inconsistent shard settings: {0}")]
    Inconsistent(String),
}

/// A summary's temporary files could not be written or read back (a full disk, a missing or
/// read-only directory). The summary is not computed rather than computed from part of the
/// lines.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot write or read the summary's temporary files in {} (TMPDIR sets another \
     directory): {source}",
    dir.display()
)]
#[non_exhaustive]
pub struct SpillError {
    /// The directory the files are made in.
    pub dir: PathBuf,
    /// Why.
    #[source]
    pub source: io::Error,
}

/// A result that does not say its reward in a form that can be read
/// ([`line::settle_result`](crate::line::settle_result) and
/// [`line::settle_line`](crate::line::settle_line)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormError {
    /// Neither `reward` nor `score`, and the result is not marked `isError`: nothing says what
    /// it scored, and reading it as 0 would make up a failure.
    #[error(
        "neither `reward` nor `score`: a result says its reward as `reward` (grader's and the \
         HUD SDK's EvaluationResult) or `score` (hud's grade frame and `run.evaluation`)"
    )]
    NoReward,
    /// `score` (read as the reward, there being no `reward`) is not a number.
    #[error("`score` must be a finite number, found {kind}: {text}")]
    ScoreNotANumber {
        /// What it is: `a string`, `a boolean`, `null`…
        kind: &'static str,
        /// Its JSON text (at most 80 bytes of it).
        text: String,
    },
    /// `score` is a number too large for a double: not a finite reward.
    #[error("`score` {text} is not a finite number (too large for a double)")]
    ScoreNotFinite {
        /// Its JSON text (at most 80 bytes of it).
        text: String,
    },
}
