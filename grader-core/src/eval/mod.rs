//! Evaluations: grading many samples, streaming one JSONL line per (sample, epoch), and
//! summarizing the lines honestly.
//!
//! - [`Line`] is one line of an evaluation's file (versioned, stable); [`line::read_lines`]
//!   reads a file back, detecting a last line torn by a crash.
//! - [`Summary`] (built from lines of one file or several with [`SummaryBuilder`]) keeps
//!   scored and errored results apart and reports the mean, standard errors, confidence
//!   intervals, pass rate, pass@k, epoch reducers and per-subscore means; as a value (serde)
//!   and as a terminal table (`Display`).
//! - [`metrics`] holds the formulas, as pure functions over slices, following Inspect AI;
//!   [`value`] reads letter grades and other non-numeric score values as numbers, as Inspect
//!   AI's `value_to_float` does.
//! - [`Evaluation`] (feature `eval`) runs a grading function over samples with bounded
//!   concurrency, resumes an interrupted run, shards a run across machines, and stops cleanly
//!   on Ctrl-C; [`merge`] joins the shards' files.
//! - `store` (feature `object-store`) puts an evaluation's output, and the inputs of
//!   [`merge`] and the summary, in object storage: `s3://`, `gs://` and `az://` URLs, written
//!   as numbered chunks per shard.

pub mod line;
pub mod metrics;
#[cfg(feature = "eval")]
mod output;
#[cfg(feature = "eval")]
mod run;
#[cfg(feature = "eval")]
mod running;
#[cfg(feature = "eval")]
pub mod shard;
#[cfg(feature = "object-store")]
pub mod store;
pub mod summary;
pub mod value;
mod write;

pub use line::{ErrorKind, LINE_VERSION, Line, LineError};
#[cfg(feature = "eval")]
pub use run::{
    EvalError, Evaluation, INTERRUPTED_EXIT_STATUS, MergeReport, RunReport, Sample, merge,
};
#[cfg(feature = "eval")]
pub use shard::{Shard, ShardEnvError};
pub use summary::{Reducer, Summary, SummaryBuilder, SummaryOptions, summarize_files};
