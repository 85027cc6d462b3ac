//! Evaluations: grading many samples with `grader-core`'s graders, streaming one JSONL line
//! per (sample, epoch), and summarizing the lines honestly.
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
//! - [`Evaluation`] (feature `run`, on by default) runs a grading function over samples with bounded
//!   concurrency, resumes an interrupted run, shards a run across machines, and stops cleanly
//!   on Ctrl-C; [`merge`] joins the shards' files ([`merge_resolving`] choosing what to do when
//!   two lines of one (sample, epoch) differ).
//! - `store` (feature `object-store`) puts an evaluation's output, and the inputs of
//!   [`merge`] and the summary, in object storage: `s3://`, `gs://` and `az://` URLs, written
//!   as numbered chunks per shard.
//!
//! Features:
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `run` | on | the runner [`Evaluation`], [`merge`] and [`Shard`] (tokio's signal support for Ctrl-C); the line type, the summary and the metrics need no feature |
//! | `progress` | off | a progress bar for [`Evaluation`] on a terminal (indicatif); implies `run` |
//! | `object-store` | off | `s3://`, `gs://` and `az://` outputs and inputs (the `object_store` crate, with its HTTP and TLS stack); implies `run` |
#![cfg_attr(docsrs, feature(doc_cfg))]

// How the modules sit: each imports only from those below it (the architecture test in
// `tests/tests/architecture.rs` fails on any circle), and each big concept is a folder whose
// `mod.rs` re-exports its parts, so that every public path stays where it was.
// - At the bottom: `error` (every error type the others return or wrap), the line format
//   (`line/mod.rs`, and `line/write.rs` writing it), `metrics` and `value`.
// - Above them: `shard`; `store` (a URL, its chunk layout, the writers and the reader); reading
//   lines back (`line/read.rs`, through the store for URLs).
// - Then `output` (where a run's lines go, and what they already hold) and `summary` (its
//   options, the accumulation of lines, the statistics and the table).
// - On top: `running` (the gradings in flight: the awaiting task's side, the lanes and their
//   output), and `run` (the runner, `Evaluation`, and `merge`).

mod error;
pub mod line;
pub mod metrics;
#[cfg(feature = "run")]
mod output;
#[cfg(feature = "run")]
mod run;
#[cfg(feature = "run")]
mod running;
#[cfg(feature = "run")]
pub mod shard;
#[cfg(feature = "object-store")]
pub mod store;
pub mod summary;
pub mod value;

#[cfg(feature = "run")]
pub use error::EvalError;
pub use line::{ErrorKind, LINE_VERSION, Line, LineError};
#[cfg(feature = "run")]
pub use run::{
    Described, Evaluation, INTERRUPTED_EXIT_STATUS, MergeReport, OnConflict, RunReport, Sample,
    merge, merge_resolving,
};
#[cfg(feature = "run")]
pub use shard::{Shard, ShardEnvError};
pub use summary::{Reducer, Summary, SummaryBuilder, SummaryOptions, summarize_files};
