//! Results in object storage (feature `object-store`): an evaluation's output, every input and
//! the output of [`merge`](super::merge), and every input of the summary may be an `s3://`,
//! `gs://` or `az://` URL.
//!
//! # Layout
//!
//! Object stores do not append, so a run writes its lines as numbered **chunk objects**, one
//! folder per shard, under the URL it is given:
//!
//! ```text
//! s3://bucket/evals/run-7/part-0-of-4/chunk-000000.jsonl
//! s3://bucket/evals/run-7/part-0-of-4/chunk-000001.jsonl
//! s3://bucket/evals/run-7/part-1-of-4/chunk-000000.jsonl
//! ...
//! ```
//!
//! Each chunk holds whole lines (each ending in a newline), in the order they finished. An
//! unsharded run writes `part-0-of-1/`. A run buffers the lines that finish and uploads them
//! as the next chunk once [`StoreOptions::upload_every`] lines are waiting, once the oldest
//! has waited its interval, and at the end (also on Ctrl-C). Up to [`UPLOADS_IN_FLIGHT`]
//! uploads are in flight at once, beside the gradings (a store answers a `PUT` in tens of
//! milliseconds, in which a run grades thousands of lines).
//!
//! # Guarantees
//!
//! - **A crash loses at most the lines not yet stored**: those waiting in the buffer and those
//!   of the chunks in flight. A chunk is one `PUT`, which the stores make atomic: a chunk is
//!   there whole or not at all, so there are no torn lines in a store.
//! - **Resume redoes exactly what was lost.** Running again with the same URL and shard lists
//!   the shard's chunks, skips every (sample, epoch) they hold, and writes the next chunks
//!   after the highest number found (a chunk lost in flight leaves a gap in the numbers, which
//!   nothing needs filled). A chunk whose `PUT` succeeded on the store but whose answer was
//!   lost is found on resume like any other, so no line is written twice.
//! - **One shard setting per URL.** A run refuses a URL holding parts of a different number
//!   of shards ([`StoreError::ShardMismatch`]), and reading refuses a URL that mixes them
//!   ([`StoreError::MixedShards`]): their samples would overlap.
//! - **Readers see every chunk of every shard**: [`open`] (and with it
//!   [`read_lines`](super::line::read_lines), [`merge`](super::merge) and
//!   [`summarize_files`](super::summarize_files)) lists the URL and reads the chunks by shard,
//!   then by number. A URL naming one object (a results file uploaded as it is) is read as
//!   that file.
//! - **A merge stores one object, whole or not at all.** [`merge`](super::merge) into a URL
//!   stores the merged lines as the object the URL names (one `PUT`, or a multipart upload of
//!   10 MiB parts above that, streamed in bounded memory), readable by every reader as the
//!   local merged file would be. A merge that fails stores nothing and leaves an object
//!   already there as it was; a URL with chunks under it is refused
//!   ([`StoreError::OutputHoldsRun`]).
//! - **Credentials** come only from where `object_store` looks for them: the environment
//!   (`AWS_*`, `GOOGLE_*`, `AZURE_*` variables, such as `AWS_ACCESS_KEY_ID`,
//!   `AWS_SECRET_ACCESS_KEY`, `AWS_ENDPOINT`, `AWS_ALLOW_HTTP`, `GOOGLE_APPLICATION_CREDENTIALS`,
//!   `AZURE_STORAGE_ACCOUNT_NAME`), instance metadata, and web identity tokens. A URL holding
//!   credentials (`s3://key:secret@bucket`) or a query string is refused. Error messages name
//!   the URL and never the credentials: the values of the environment's secret variables and
//!   the query strings of the HTTP addresses in the store's messages are elided.
//!
//! Where Inspect AI differs: writing its log to S3, it rewrites the whole log object every
//! `log_buffer` samples (10 to 100 by default), so each flush costs more as the run grows;
//! here an upload writes only the new lines, as a new object.
//!
//! A run writing to a URL needs a tokio runtime with I/O and timers enabled (`enable_all`, as
//! `#[tokio::main]` builds it); readers bring their own.
//!
//! Two runs of the same shard writing to one URL at the same time overwrite each other's
//! chunks, as two runs appending to one local file would mix their lines: give each run its
//! own shard.
//!
//! ```no_run
//! use grader_eval::store::{StoreOptions, StoreUrl};
//! use grader_eval::{Evaluation, SummaryOptions};
//! use grader_core::text::exact_match;
//! use grader_core::{Grade, SubScore};
//! use std::time::Duration;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let url = StoreUrl::parse("s3://my-bucket/evals/run-7")?;
//! assert_eq!(url.to_string(), "s3://my-bucket/evals/run-7");
//! let samples = vec![("q1", ("Paris", "paris"))];
//! let report = Evaluation::new("s3://my-bucket/evals/run-7")
//!     .store_options(StoreOptions::default().upload_every(500, Duration::from_secs(5)))
//!     .run(samples, |sample, _epoch| async move {
//!         let (answer, reference) = sample.1;
//!         let exact = SubScore::new("exact", exact_match(answer, reference))?;
//!         Ok::<_, Box<dyn std::error::Error>>(Grade::from_subscores([exact])?)
//!     })
//!     .await?;
//! let summary = Evaluation::summarize("s3://my-bucket/evals/run-7".as_ref(), SummaryOptions::default())?;
//! # Ok(()) }
//! ```
//
// The files: this one holds the module's documentation and `StoreOptions`; `url.rs` where a
// URL points and how to reach its store; `chunks.rs` the layout under a URL (the shards'
// parts and their numbered chunks) and how it is listed and read; `writer.rs` the writers (a
// run's chunks, and one merged object); `reader.rs` the reader of every chunk or of one
// object; `messages.rs` what an error says (on one line, credentials elided).

use std::time::Duration;

mod chunks;
mod messages;
mod reader;
mod url;
mod writer;

pub use crate::error::StoreError;
pub use chunks::MissingShards;
pub use messages::elide;
pub use reader::{StoreReader, missing_shards, open, open_with};
pub use url::{SCHEMES, StoreUrl};
pub use writer::UPLOADS_IN_FLIGHT;
pub(crate) use writer::{ChunkWriter, ObjectWriter, open_run};

/// How a run writes to object storage, and how hard requests are retried.
///
/// ```
/// use grader_eval::store::StoreOptions;
/// use std::time::Duration;
///
/// let options = StoreOptions::default()
///     .upload_every(200, Duration::from_secs(2))
///     .retries(3, Duration::from_secs(20));
/// assert_eq!(options.upload_lines(), 200);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoreOptions {
    upload_lines: usize,
    upload_interval: Duration,
    max_retries: usize,
    retry_timeout: Duration,
}

impl Default for StoreOptions {
    /// A chunk every 1000 lines or 10 seconds; `object_store`'s retries (10 retries within 3
    /// minutes, with exponential backoff).
    fn default() -> Self {
        StoreOptions {
            upload_lines: 1000,
            upload_interval: Duration::from_secs(10),
            max_retries: 10,
            retry_timeout: Duration::from_secs(180),
        }
    }
}

impl StoreOptions {
    /// Uploads a chunk once `lines` lines (at least one) are waiting, or once the oldest has
    /// waited `interval`. A crash loses at most about this much work. Lines that finish
    /// together go into one chunk, so a chunk may hold a few more than `lines`.
    #[must_use]
    pub fn upload_every(mut self, lines: usize, interval: Duration) -> Self {
        self.upload_lines = lines.max(1);
        self.upload_interval = interval;
        self
    }

    /// Retries a failed request (a network error, a server error, throttling) at most
    /// `max_retries` times and for at most `timeout` from the first attempt. `0` gives up at
    /// the first failure.
    #[must_use]
    pub fn retries(mut self, max_retries: usize, timeout: Duration) -> Self {
        self.max_retries = max_retries;
        self.retry_timeout = timeout;
        self
    }

    /// The number of waiting lines that makes a chunk.
    #[must_use]
    pub fn upload_lines(&self) -> usize {
        self.upload_lines
    }

    /// The longest a finished line waits before its chunk is uploaded.
    #[must_use]
    pub fn upload_interval(&self) -> Duration {
        self.upload_interval
    }
}
