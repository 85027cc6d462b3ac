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

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt as _;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt as _, PutPayload, RetryConfig};

use super::line::Line;
use super::shard::Shard;
pub use crate::error::StoreError;

/// The URL schemes read and written through object storage.
pub const SCHEMES: [&str; 3] = ["s3", "gs", "az"];

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

/// Where an object store URL points: scheme, bucket (or container) and prefix. Its `Display`
/// is the URL.
///
/// ```
/// use grader_eval::store::StoreUrl;
///
/// let url = StoreUrl::parse("gs://bucket/evals/run-1/")?;
/// assert_eq!(url.to_string(), "gs://bucket/evals/run-1");
/// assert!(StoreUrl::is_url("az://container/x"));
/// assert!(!StoreUrl::is_url("results/x.jsonl"));
/// let refused = StoreUrl::parse("s3://AKIA:hunter2@bucket/x").unwrap_err();
/// assert!(!refused.to_string().contains("hunter2"));
/// # Ok::<(), grader_eval::store::StoreError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreUrl {
    scheme: &'static str,
    bucket: String,
    prefix: ObjectPath,
}

impl StoreUrl {
    /// Whether `text` starts with one of the [`SCHEMES`] and `://`: such a path is read and
    /// written through object storage. (A local folder named `s3:` is reached as `./s3:/…`.)
    #[must_use]
    pub fn is_url(text: &str) -> bool {
        SCHEMES.iter().any(|scheme| {
            text.strip_prefix(scheme)
                .is_some_and(|rest| rest.starts_with("://"))
        })
    }

    /// The URL of `path` when it is one ([`is_url`](Self::is_url)), parsed.
    #[must_use]
    pub fn of_path(path: &std::path::Path) -> Option<Result<StoreUrl, StoreError>> {
        let text = path.to_str()?;
        Self::is_url(text).then(|| Self::parse(text))
    }

    /// Parses `scheme://bucket/prefix` (the prefix may be empty; a trailing `/` is ignored).
    ///
    /// # Errors
    /// [`StoreError::InvalidUrl`] for another scheme, a missing bucket or one with a character
    /// other than letters, digits, `.`, `-` and `_`, credentials or a query string in the URL,
    /// or a prefix with empty, `.` or `..` segments or a control character.
    pub fn parse(text: &str) -> Result<StoreUrl, StoreError> {
        let invalid = |why: &str| StoreError::InvalidUrl {
            url: redact_url(text),
            why: why.to_owned(),
        };
        let (scheme, rest) = text
            .split_once("://")
            .ok_or_else(|| invalid("expected scheme://bucket/prefix"))?;
        let scheme = SCHEMES
            .iter()
            .copied()
            .find(|known| *known == scheme)
            .ok_or_else(|| invalid("the scheme must be s3, gs or az"))?;
        if rest.contains('@') {
            return Err(invalid(
                "credentials do not belong in the URL: they are read from the environment",
            ));
        }
        if rest.contains('?') || rest.contains('#') {
            return Err(invalid("a query string or fragment is not allowed"));
        }
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(invalid("the bucket is missing"));
        }
        // The store's client reads the bucket as a URL's host, which drops a port and strips
        // tabs and line breaks: a bucket it would read differently is refused here.
        if let Some(bad) = bucket
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')))
        {
            return Err(invalid(&format!(
                "the bucket may hold only letters, digits, `.`, `-` and `_`, not {:?}",
                bad
            )));
        }
        if prefix.chars().any(char::is_control) {
            return Err(invalid("the prefix holds a control character"));
        }
        let prefix = prefix.trim_end_matches('/');
        let prefix = ObjectPath::parse(prefix).map_err(|error| invalid(&error.to_string()))?;
        Ok(StoreUrl {
            scheme,
            bucket: bucket.to_owned(),
            prefix,
        })
    }

    /// The URL of an object of this store.
    fn object_url(&self, location: &ObjectPath) -> String {
        format!("{}://{}/{location}", self.scheme, self.bucket)
    }

    /// The folder of a shard's chunks.
    fn part(&self, shard: Shard) -> ObjectPath {
        self.prefix
            .clone()
            .join(part_name(shard.index(), shard.count()))
    }

    /// The store, configured from the environment.
    fn connect(&self, options: &StoreOptions) -> Result<Arc<dyn ObjectStore>, StoreError> {
        let retry = RetryConfig {
            max_retries: options.max_retries,
            retry_timeout: options.retry_timeout,
            ..RetryConfig::default()
        };
        let root = format!("{}://{}", self.scheme, self.bucket);
        let built: object_store::Result<Arc<dyn ObjectStore>> = match self.scheme {
            "s3" => object_store::aws::AmazonS3Builder::from_env()
                .with_url(root)
                .with_retry(retry)
                .build()
                .map(|store| Arc::new(store) as Arc<dyn ObjectStore>),
            "gs" => object_store::gcp::GoogleCloudStorageBuilder::from_env()
                .with_url(root)
                .with_retry(retry)
                .build()
                .map(|store| Arc::new(store) as Arc<dyn ObjectStore>),
            _ => object_store::azure::MicrosoftAzureBuilder::from_env()
                .with_url(root)
                .with_retry(retry)
                .build()
                .map(|store| Arc::new(store) as Arc<dyn ObjectStore>),
        };
        built.map_err(|error| StoreError::Config {
            url: self.to_string(),
            message: describe(&error),
        })
    }

    fn request(
        &self,
        location: &ObjectPath,
        action: &'static str,
    ) -> impl Fn(object_store::Error) -> StoreError + use<> {
        let url = self.object_url(location);
        move |error| StoreError::Request {
            url: url.clone(),
            action,
            message: describe(&error),
        }
    }
}

impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme, self.bucket)?;
        if !self.prefix.as_ref().is_empty() {
            write!(f, "/{}", self.prefix)?;
        }
        Ok(())
    }
}

/// How many bytes the merging thread hands the uploading thread at a time.
const PIECE_BYTES: usize = 256 << 10;

/// The size of each part of a multipart upload, and the most an object written whole holds
/// (the stores' parts must be at least 5 MiB, the last excepted).
const PART_BYTES: usize = 10 << 20;

/// What the merging thread hands the uploading thread.
enum Piece {
    Data(Bytes),
    /// Everything was handed over: store the object. (The channel closing without it means
    /// the merge failed: nothing is stored.)
    End,
}

/// Writes one object at a URL from synchronous code: the output of [`merge`](super::merge).
///
/// The bytes go to a thread of the writer's own, which stores them with one `PUT` when they
/// are fewer than 10 MiB and as a multipart upload of 10 MiB parts otherwise (a few parts in
/// flight, so memory stays bounded whatever the size). Either way the object appears whole
/// when [`finish`](Self::finish) succeeds, and not at all when the writing fails or the
/// writer is dropped unfinished: an object already there stays as it was.
pub(crate) struct ObjectWriter {
    url: StoreUrl,
    buffer: Vec<u8>,
    data: Option<SyncSender<Piece>>,
    uploader: Option<JoinHandle<Result<(), StoreError>>>,
}

impl fmt::Debug for ObjectWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectWriter")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl ObjectWriter {
    /// Opens the object `url` names for writing. Checks first that the bucket can be listed
    /// and holds no chunks under the URL (readers would read those instead of the object).
    ///
    /// # Errors
    /// [`StoreError::InvalidUrl`] for a URL naming no object (a bucket alone);
    /// [`StoreError::OutputHoldsRun`] when chunks are there; [`StoreError::Request`] when the
    /// bucket cannot be listed (it does not exist, access is denied).
    pub(crate) fn create(url: &StoreUrl, options: StoreOptions) -> Result<Self, StoreError> {
        if url.prefix.as_ref().is_empty() {
            return Err(StoreError::InvalidUrl {
                url: url.to_string(),
                why: "name the object to write: scheme://bucket/path/merged.jsonl".to_owned(),
            });
        }
        Self::create_in(url.connect(&options)?, url, PART_BYTES)
    }

    /// As [`create`](Self::create), in a store already connected, with parts of `part_bytes`.
    fn create_in(
        store: Arc<dyn ObjectStore>,
        url: &StoreUrl,
        part_bytes: usize,
    ) -> Result<Self, StoreError> {
        let (ready_tx, ready_rx) = sync_channel::<Result<(), StoreError>>(1);
        let (data_tx, data_rx) = sync_channel::<Piece>(4);
        let thread_url = url.clone();
        let uploader = std::thread::Builder::new()
            .name("grader-store-write".to_owned())
            .spawn(move || upload_object(&store, &thread_url, part_bytes, &ready_tx, &data_rx))
            .map_err(|error| StoreError::Config {
                url: url.to_string(),
                message: format!("cannot start the uploading thread: {error}"),
            })?;
        let mut writer = ObjectWriter {
            url: url.clone(),
            buffer: Vec::with_capacity(PIECE_BYTES),
            data: Some(data_tx),
            uploader: Some(uploader),
        };
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(writer),
            Ok(Err(error)) => Err(error),
            Err(_) => Err(writer.failure()),
        }
    }

    /// Adds `bytes` to the object.
    ///
    /// # Errors
    /// [`StoreError::Request`] when an upload failed.
    pub(crate) fn write(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= PIECE_BYTES {
            self.send_buffer()?;
        }
        Ok(())
    }

    fn send_buffer(&mut self) -> Result<(), StoreError> {
        let piece = Bytes::from(std::mem::replace(
            &mut self.buffer,
            Vec::with_capacity(PIECE_BYTES),
        ));
        self.send(Piece::Data(piece))
    }

    fn send(&mut self, piece: Piece) -> Result<(), StoreError> {
        let sent = self
            .data
            .as_ref()
            .is_some_and(|data| data.send(piece).is_ok());
        if sent {
            Ok(())
        } else {
            // The uploading thread stopped: it says why.
            Err(self.failure())
        }
    }

    /// Stores the object and waits until it is stored.
    ///
    /// # Errors
    /// [`StoreError::Request`] when an upload failed: nothing is stored then.
    pub(crate) fn finish(mut self) -> Result<(), StoreError> {
        if !self.buffer.is_empty() {
            self.send_buffer()?;
        }
        self.send(Piece::End)?;
        self.data = None;
        match self.uploader.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            _ => Err(self.stopped()),
        }
    }

    /// Why the uploading thread stopped, once it has.
    fn failure(&mut self) -> StoreError {
        self.data = None;
        match self.uploader.take().map(JoinHandle::join) {
            Some(Ok(Err(error))) => error,
            _ => self.stopped(),
        }
    }

    fn stopped(&self) -> StoreError {
        StoreError::Request {
            url: self.url.to_string(),
            action: "upload the object",
            message: "the uploading thread stopped".to_owned(),
        }
    }
}

impl Drop for ObjectWriter {
    /// A writer dropped unfinished stores nothing (its multipart upload is aborted), and its
    /// thread is joined.
    fn drop(&mut self) {
        self.data = None;
        if let Some(uploader) = self.uploader.take() {
            let _ = uploader.join();
        }
    }
}

/// The uploading thread of an [`ObjectWriter`]: checks the URL, tells `ready`, then stores
/// what `data` brings as one object once [`Piece::End`] comes.
fn upload_object(
    store: &Arc<dyn ObjectStore>,
    url: &StoreUrl,
    part_bytes: usize,
    ready: &SyncSender<Result<(), StoreError>>,
    data: &Receiver<Piece>,
) -> Result<(), StoreError> {
    // A worker thread runs the part uploads while this one waits for the merge's bytes.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let error = StoreError::Config {
                url: url.to_string(),
                message: format!("cannot start a runtime: {error}"),
            };
            let _ = ready.send(Err(error.clone()));
            return Err(error);
        }
    };
    runtime.block_on(async {
        let checked = list_chunks(&**store, url).await.and_then(|chunks| {
            chunks.first().map_or(Ok(()), |chunk| {
                Err(StoreError::OutputHoldsRun {
                    url: url.to_string(),
                    found: part_name(chunk.index, chunk.count),
                })
            })
        });
        let failed_check = checked.is_err();
        let _ = ready.send(checked);
        if failed_check {
            // The error went to the caller.
            return Ok(());
        }
        let failed = url.request(&url.prefix, "upload the object");
        let mut pending: Vec<Bytes> = Vec::new();
        let mut pending_bytes = 0;
        let mut multipart: Option<object_store::WriteMultipart> = None;
        let outcome = async {
            loop {
                match data.recv() {
                    Ok(Piece::Data(bytes)) => {
                        if let Some(upload) = &mut multipart {
                            upload
                                .wait_for_capacity(UPLOADS_IN_FLIGHT)
                                .await
                                .map_err(&failed)?;
                            upload.put(bytes);
                            continue;
                        }
                        pending_bytes += bytes.len();
                        pending.push(bytes);
                        if pending_bytes >= part_bytes {
                            let upload = store.put_multipart(&url.prefix).await.map_err(&failed)?;
                            let mut upload = object_store::WriteMultipart::new_with_chunk_size(
                                upload, part_bytes,
                            );
                            for bytes in pending.drain(..) {
                                upload.put(bytes);
                            }
                            multipart = Some(upload);
                        }
                    }
                    Ok(Piece::End) => {
                        return match multipart.take() {
                            Some(upload) => upload.finish().await.map(drop).map_err(&failed),
                            None => store
                                .put(&url.prefix, pending.drain(..).collect::<PutPayload>())
                                .await
                                .map(drop)
                                .map_err(&failed),
                        };
                    }
                    // The merge failed: store nothing.
                    Err(_) => return Ok(()),
                }
            }
        }
        .await;
        if let Some(upload) = multipart {
            // Unfinished (a failure, or the merge gave up): leave no parts behind.
            let _ = upload.abort().await;
        }
        outcome
    })
}

fn part_name(index: u32, count: u32) -> String {
    format!("part-{index}-of-{count}")
}

fn chunk_name(number: u64) -> String {
    format!("chunk-{number:06}.jsonl")
}

/// One chunk object found under a URL.
#[derive(Debug, Clone)]
struct Chunk {
    index: u32,
    count: u32,
    number: u64,
    location: ObjectPath,
}

/// `part-I-of-N/chunk-K.jsonl` right under `prefix`, parsed.
fn parse_chunk(prefix: &ObjectPath, location: &ObjectPath) -> Option<Chunk> {
    let mut rest = location.prefix_match(prefix)?;
    let part = rest.next()?;
    let chunk = rest.next()?;
    if rest.next().is_some() {
        return None;
    }
    let (index, count) = part.as_ref().strip_prefix("part-")?.split_once("-of-")?;
    let number = chunk
        .as_ref()
        .strip_prefix("chunk-")?
        .strip_suffix(".jsonl")?;
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    // At most 18 digits, so that the chunk after it is still numbered (a writer makes one
    // chunk at a time from 0: no run reaches 10^18).
    if !(digits(index) && digits(count) && digits(number)) || number.len() > 18 {
        return None;
    }
    let chunk = Chunk {
        index: index.parse().ok()?,
        count: count.parse().ok()?,
        number: number.parse().ok()?,
        location: location.clone(),
    };
    (chunk.index < chunk.count).then_some(chunk)
}

/// Every chunk under the URL, by shard and then by number.
async fn list_chunks(store: &dyn ObjectStore, url: &StoreUrl) -> Result<Vec<Chunk>, StoreError> {
    let prefix = (!url.prefix.as_ref().is_empty()).then_some(&url.prefix);
    let mut listing = store.list(prefix);
    let mut chunks = Vec::new();
    while let Some(meta) = listing.next().await {
        let meta = meta.map_err(|error| StoreError::Request {
            url: url.to_string(),
            action: "list the chunks",
            message: describe(&error),
        })?;
        if let Some(chunk) = parse_chunk(&url.prefix, &meta.location) {
            chunks.push(chunk);
        }
    }
    chunks.sort_by_key(|chunk| (chunk.count, chunk.index, chunk.number));
    Ok(chunks)
}

/// The lines of one chunk, which must end in a newline.
fn chunk_lines(url: &str, bytes: &[u8]) -> Result<Vec<Line>, StoreError> {
    let corrupt = |line_number, message: String| StoreError::Corrupt {
        url: url.to_owned(),
        line_number,
        message,
    };
    if !bytes.is_empty() && bytes.last() != Some(&b'\n') {
        let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
        return Err(corrupt(
            lines + 1,
            "the chunk does not end in a newline".to_owned(),
        ));
    }
    let mut lines = Vec::new();
    for (number, text) in bytes.split(|&b| b == b'\n').enumerate() {
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let line = serde_json::from_slice::<Line>(text)
            .map_err(|error| corrupt(number as u64 + 1, error.to_string()))?;
        lines.push(line);
    }
    Ok(lines)
}

/// How many chunks are fetched at once when a run resumes or a reader reads ahead.
const FETCH_AHEAD: usize = 8;

/// How many chunks a run uploads at once.
pub const UPLOADS_IN_FLIGHT: usize = 4;

/// A chunk's whole content.
async fn fetch_whole(
    store: &dyn ObjectStore,
    url: &StoreUrl,
    chunk: Chunk,
) -> Result<(Chunk, Bytes), StoreError> {
    let read = url.request(&chunk.location, "read the chunk");
    let bytes = store
        .get(&chunk.location)
        .await
        .map_err(&read)?
        .bytes()
        .await
        .map_err(&read)?;
    Ok((chunk, bytes))
}

/// Writes a run's lines as chunks of one shard's part (see the [module](self) docs).
pub(crate) struct ChunkWriter {
    store: Arc<dyn ObjectStore>,
    url: StoreUrl,
    part: ObjectPath,
    next: u64,
    pending: Vec<u8>,
    pending_lines: usize,
    oldest: Option<tokio::time::Instant>,
    options: StoreOptions,
    /// The uploads in flight, oldest first.
    uploading: std::collections::VecDeque<tokio::task::JoinHandle<Result<(), StoreError>>>,
}

impl fmt::Debug for ChunkWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChunkWriter")
            .field("url", &self.url)
            .field("next", &self.next)
            .field("pending_lines", &self.pending_lines)
            .finish_non_exhaustive()
    }
}

impl Drop for ChunkWriter {
    /// A run dropped mid-way does not leave its uploads running.
    fn drop(&mut self) {
        for upload in self.uploading.drain(..) {
            upload.abort();
        }
    }
}

/// Opens a run's output at `url` for `shard`: checks the shard setting, reads what the
/// shard's chunks already hold (the epochs done of each sample id), and returns the writer of
/// the next chunks.
pub(crate) async fn open_run(
    url: &StoreUrl,
    shard: Shard,
    options: StoreOptions,
) -> Result<(HashMap<String, Vec<u32>>, ChunkWriter), StoreError> {
    open_run_in(url.connect(&options)?, url, shard, options).await
}

/// As [`open_run`], in a store already connected.
async fn open_run_in(
    store: Arc<dyn ObjectStore>,
    url: &StoreUrl,
    shard: Shard,
    options: StoreOptions,
) -> Result<(HashMap<String, Vec<u32>>, ChunkWriter), StoreError> {
    let chunks = list_chunks(&*store, url).await?;
    if let Some(other) = chunks.iter().find(|chunk| chunk.count != shard.count()) {
        return Err(StoreError::ShardMismatch {
            url: url.to_string(),
            found: part_name(other.index, other.count),
            found_count: other.count,
            shard: format!("{}/{}", shard.index(), shard.count()),
        });
    }
    let mut done: HashMap<String, Vec<u32>> = HashMap::new();
    let mut next = 0;
    let own: Vec<Chunk> = chunks
        .into_iter()
        .filter(|chunk| chunk.index == shard.index())
        .collect();
    {
        let mut fetched = futures_util::stream::iter(own)
            .map(|chunk| fetch_whole(&*store, url, chunk))
            .buffered(FETCH_AHEAD);
        while let Some(fetched) = fetched.next().await {
            let (chunk, bytes) = fetched?;
            for line in chunk_lines(&url.object_url(&chunk.location), &bytes)? {
                done.entry(line.id).or_default().push(line.epoch);
            }
            next = next.max(chunk.number + 1);
        }
    }
    let writer = ChunkWriter {
        store,
        url: url.clone(),
        part: url.part(shard),
        next,
        pending: Vec::new(),
        pending_lines: 0,
        oldest: None,
        options,
        uploading: std::collections::VecDeque::new(),
    };
    Ok((done, writer))
}

impl ChunkWriter {
    /// Adds `lines` whole lines (`bytes`, each ending in a newline); uploads them as a chunk
    /// when enough are waiting or the oldest has waited long enough.
    pub(crate) async fn write(&mut self, bytes: &[u8], lines: usize) -> Result<(), StoreError> {
        if lines == 0 {
            return Ok(());
        }
        self.pending.extend_from_slice(bytes);
        self.pending_lines += lines;
        let now = tokio::time::Instant::now();
        let oldest = *self.oldest.get_or_insert(now);
        if self.pending_lines >= self.options.upload_lines
            || now.duration_since(oldest) >= self.options.upload_interval
        {
            self.upload().await?;
        }
        Ok(())
    }

    /// Resolves when the waiting lines are due for upload (never when none are waiting).
    pub(crate) async fn due(&self) {
        match self.oldest {
            Some(oldest) => tokio::time::sleep_until(oldest + self.options.upload_interval).await,
            None => std::future::pending().await,
        }
    }

    /// Starts uploading the waiting lines as the next chunk, once fewer than
    /// [`UPLOADS_IN_FLIGHT`] uploads are in flight. The error of an upload that failed is
    /// returned here, or by [`finish`](Self::finish).
    pub(crate) async fn upload(&mut self) -> Result<(), StoreError> {
        while let Some(oldest) = self.uploading.front() {
            if !oldest.is_finished() && self.uploading.len() < UPLOADS_IN_FLIGHT {
                break;
            }
            self.wait_oldest().await?;
        }
        if self.pending_lines == 0 {
            return Ok(());
        }
        let location = self.part.clone().join(chunk_name(self.next));
        let payload = PutPayload::from(Bytes::from(std::mem::take(&mut self.pending)));
        self.pending_lines = 0;
        self.oldest = None;
        self.next += 1;
        let store = Arc::clone(&self.store);
        let failed = self.url.request(&location, "upload the chunk");
        self.uploading.push_back(tokio::spawn(async move {
            store
                .put(&location, payload)
                .await
                .map(drop)
                .map_err(failed)
        }));
        Ok(())
    }

    /// Waits for the oldest upload in flight, if any.
    async fn wait_oldest(&mut self) -> Result<(), StoreError> {
        let Some(upload) = self.uploading.pop_front() else {
            return Ok(());
        };
        match upload.await {
            Ok(result) => result,
            Err(join) => Err(StoreError::Request {
                url: self.url.to_string(),
                action: "upload the chunk",
                message: join.to_string(),
            }),
        }
    }

    /// Uploads whatever is waiting and waits until every chunk is stored.
    pub(crate) async fn finish(&mut self) -> Result<(), StoreError> {
        self.upload().await?;
        while !self.uploading.is_empty() {
            self.wait_oldest().await?;
        }
        Ok(())
    }
}

/// Opens the evaluation lines at `url` for reading, as one stream of JSON Lines: every chunk
/// of every shard (by shard, then by number), or the one object the URL names when there are
/// no chunks under it.
///
/// The requests run on a thread of the reader's own, which fetches a few chunks ahead of the
/// reading (bounded; one object is streamed) and is stopped and joined when the reader is
/// dropped, so this works inside or outside an async runtime.
///
/// # Errors
/// [`StoreError`] when the URL is not usable, the store cannot be listed (a missing bucket,
/// denied access), holds the parts of runs with different shard counts, or holds nothing at
/// the URL. Reading then returns an [`io::Error`] wrapping a [`StoreError`] when a chunk
/// cannot be fetched.
pub fn open(url: &StoreUrl) -> Result<StoreReader, StoreError> {
    open_with(url, StoreOptions::default())
}

/// The shards of the sharded run at `url` that have no chunk there, as [`open`] would find
/// them ([`StoreReader::missing_shards`]), listing the URL and reading nothing: for a caller
/// that reads the URL some other way (as [`merge`](super::merge) does) and wants to say so.
///
/// # Errors
/// [`StoreError`] when the URL is not usable, the store cannot be listed, or it holds the
/// parts of runs with different shard counts (as [`open`]).
pub fn missing_shards(url: &StoreUrl) -> Result<Option<MissingShards>, StoreError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| StoreError::Config {
            url: url.to_string(),
            message: format!("cannot start a runtime: {error}"),
        })?;
    runtime.block_on(async {
        let store = url.connect(&StoreOptions::default())?;
        Ok(MissingShards::of(&list_run(&*store, url).await?))
    })
}

/// The chunks at `url` as a reader reads them: [`list_chunks`], refusing chunks of runs with
/// different shard counts.
async fn list_run(store: &dyn ObjectStore, url: &StoreUrl) -> Result<Vec<Chunk>, StoreError> {
    let chunks = list_chunks(store, url).await?;
    let mut counts: Vec<u32> = chunks.iter().map(|chunk| chunk.count).collect();
    counts.dedup();
    if counts.len() > 1 {
        return Err(StoreError::MixedShards {
            url: url.to_string(),
            counts,
        });
    }
    Ok(chunks)
}

/// As [`open`], with the retries of `options`.
///
/// # Errors
/// As [`open`].
pub fn open_with(url: &StoreUrl, options: StoreOptions) -> Result<StoreReader, StoreError> {
    let (ready_tx, ready_rx) = sync_channel::<Result<Option<MissingShards>, StoreError>>(1);
    let (data_tx, data_rx) = sync_channel::<Result<Bytes, StoreError>>(4);
    let shown = url.to_string();
    let url = url.clone();
    let fetcher = std::thread::Builder::new()
        .name("grader-store-read".to_owned())
        .spawn(move || fetch(&url, options, &ready_tx, &data_tx))
        .map_err(|error| StoreError::Config {
            url: shown.clone(),
            message: format!("cannot start the reading thread: {error}"),
        })?;
    let mut reader = StoreReader {
        data: Some(data_rx),
        current: Bytes::new(),
        fetcher: Some(fetcher),
        missing: None,
    };
    match ready_rx.recv() {
        Ok(Ok(missing)) => {
            reader.missing = missing;
            Ok(reader)
        }
        Ok(Err(error)) => Err(error),
        Err(_) => {
            reader.stop();
            Err(StoreError::Config {
                url: shown,
                message: "the reading thread stopped".to_owned(),
            })
        }
    }
}

/// Lists and streams the objects at `url` into `data`, telling `ready` how listing went.
fn fetch(
    url: &StoreUrl,
    options: StoreOptions,
    ready: &SyncSender<Result<Option<MissingShards>, StoreError>>,
    data: &SyncSender<Result<Bytes, StoreError>>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = ready.send(Err(StoreError::Config {
                url: url.to_string(),
                message: format!("cannot start a runtime: {error}"),
            }));
            return;
        }
    };
    runtime.block_on(async {
        let listed = async {
            let store = url.connect(&options)?;
            let chunks = list_run(&*store, url).await?;
            if chunks.is_empty() && url.prefix.as_ref().is_empty() {
                // A bucket is not an object (a store answers a read of its root with the
                // bucket's listing).
                return Err(StoreError::Empty {
                    url: url.to_string(),
                });
            }
            if chunks.is_empty() {
                // No chunks: the URL may name one object.
                let read = url.request(&url.prefix, "read the object");
                match store.head(&url.prefix).await {
                    Ok(_) => {}
                    Err(object_store::Error::NotFound { .. }) => {
                        return Err(StoreError::Empty {
                            url: url.to_string(),
                        });
                    }
                    Err(error) => return Err(read(error)),
                }
            }
            Ok((store, chunks))
        }
        .await;
        let (store, chunks) = match listed {
            Ok(found) => {
                let missing = MissingShards::of(&found.1);
                if let Some(missing) = &missing {
                    tracing::warn!(url = %url, "{missing}");
                }
                let _ = ready.send(Ok(missing));
                found
            }
            Err(error) => {
                let _ = ready.send(Err(error));
                return;
            }
        };
        if chunks.is_empty() {
            // One object, streamed: it may be larger than memory.
            let read = url.request(&url.prefix, "read the object");
            let mut stream = match store.get(&url.prefix).await {
                Ok(result) => result.into_stream(),
                Err(error) => {
                    let _ = data.send(Err(read(error)));
                    return;
                }
            };
            while let Some(piece) = stream.next().await {
                let failed = piece.is_err();
                if data.send(piece.map_err(&read)).is_err() || failed {
                    // The reader is gone, or the error is delivered: stop.
                    return;
                }
            }
            return;
        }
        // Chunks are small: a few are fetched whole ahead of the reader.
        let mut fetched = futures_util::stream::iter(chunks)
            .map(|chunk| fetch_whole(&*store, url, chunk))
            .buffered(FETCH_AHEAD);
        while let Some(fetched) = fetched.next().await {
            let failed = fetched.is_err();
            if data.send(fetched.map(|(_, bytes)| bytes)).is_err() || failed {
                return;
            }
        }
    });
}

/// The lines at an object store URL as one byte stream ([`open`]).
pub struct StoreReader {
    data: Option<Receiver<Result<Bytes, StoreError>>>,
    current: Bytes,
    fetcher: Option<JoinHandle<()>>,
    missing: Option<MissingShards>,
}

/// The shards of a sharded run that have no chunk at its URL: not started yet, stopped
/// before their first upload, or given no samples (a shard uploads nothing until it has a
/// line). What is read is then only part of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MissingShards {
    /// The first missing shards' indexes, in order (up to [`MissingShards::LISTED`]).
    pub first: Vec<u32>,
    /// How many shards are missing.
    pub missing: u32,
    /// How many shards the run has.
    pub count: u32,
}

impl MissingShards {
    /// How many of the missing shards' indexes are listed.
    pub const LISTED: usize = 10;

    /// The shards missing from `chunks` (sorted by count, then shard; of one count), if any.
    fn of(chunks: &[Chunk]) -> Option<MissingShards> {
        let count = chunks.first()?.count;
        let mut present: Vec<u32> = chunks.iter().map(|chunk| chunk.index).collect();
        present.dedup();
        let missing = count - u32::try_from(present.len()).unwrap_or(count);
        if missing == 0 {
            return None;
        }
        // At most `present.len() + LISTED` indexes are looked at, however many shards.
        let mut first = Vec::new();
        let mut seen = present.iter().peekable();
        let mut index = 0;
        while first.len() < Self::LISTED && index < count {
            if seen.next_if_eq(&&index).is_none() {
                first.push(index);
            }
            index += 1;
        }
        Some(MissingShards {
            first,
            missing,
            count,
        })
    }
}

impl fmt::Display for MissingShards {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let listed: Vec<String> = self.first.iter().map(u32::to_string).collect();
        let more = self.missing as usize - self.first.len().min(self.missing as usize);
        write!(
            f,
            "no chunks from shard{} {}{} of {}: not started yet, stopped before the first \
             upload, or given no samples; what is read is part of the run",
            if self.missing == 1 { "" } else { "s" },
            listed.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            },
            self.count
        )
    }
}

impl fmt::Debug for StoreReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreReader")
            .field("buffered", &self.current.len())
            .field("missing", &self.missing)
            .finish_non_exhaustive()
    }
}

impl StoreReader {
    /// The shards of the run at the URL that have no chunk there (none for one object, or for
    /// a run with chunks from every shard). Also logged as a warning (`tracing`) when opened.
    #[must_use]
    pub fn missing_shards(&self) -> Option<&MissingShards> {
        self.missing.as_ref()
    }

    fn stop(&mut self) {
        // Closing the channel makes the fetching thread stop at its next piece.
        self.data = None;
        if let Some(fetcher) = self.fetcher.take() {
            let _ = fetcher.join();
        }
    }
}

impl Drop for StoreReader {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Read for StoreReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            let Some(data) = &self.data else {
                return Ok(0);
            };
            match data.recv() {
                Ok(Ok(bytes)) => self.current = bytes,
                Ok(Err(error)) => {
                    self.stop();
                    return Err(io::Error::other(error));
                }
                // The thread finished: everything was read.
                Err(_) => {
                    self.stop();
                    return Ok(0);
                }
            }
        }
        let n = out.len().min(self.current.len());
        out[..n].copy_from_slice(&self.current.split_to(n));
        Ok(n)
    }
}

/// The names of the environment variables whose values are never shown: any `AWS_`,
/// `GOOGLE_`, `AZURE_` or `OBJECT_STORE_` variable whose name speaks of a secret, key, token,
/// password, SAS or credential.
fn is_secret_variable(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    ["AWS_", "GOOGLE_", "AZURE_", "OBJECT_STORE_"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
        && ["SECRET", "KEY", "TOKEN", "PASSWORD", "SAS", "CREDENTIAL"]
            .iter()
            .any(|word| name.contains(word))
}

/// A store error's message with its causes, credentials elided, led by what it most likely
/// means, with an XML error document from the store shortened to its code and message, on
/// one line.
fn describe(error: &object_store::Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    // An answer's body may span lines (or end with a line break): an error is one line.
    let message = shorten_xml(&elide(&message))
        .split(['\n', '\r'])
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let meaning = if message.contains("NoSuchBucket") {
        Some("the bucket does not exist")
    } else if message.contains("ContainerNotFound") {
        Some("the container does not exist")
    } else if matches!(
        error,
        object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. }
    ) || [
        "403 Forbidden",
        "AccessDenied",
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
    ]
    .iter()
    .any(|code| message.contains(code))
    {
        Some("access denied")
    } else if message.contains("error sending request") || message.contains("timed out") {
        Some("network error")
    } else {
        None
    };
    match meaning {
        Some(meaning) => format!("{meaning} ({message})"),
        None => message,
    }
}

/// `text` with an XML error document (`<Error><Code>…</Code><Message>…</Message>…`) replaced
/// by `Code: Message`, the message cut at its first line break (Azure adds its request id and
/// time on the lines after).
fn shorten_xml(text: &str) -> String {
    let Some(start) = text.find("<?xml").or_else(|| text.find("<Error>")) else {
        return text.to_owned();
    };
    let field = |name: &str| {
        let open = format!("<{name}>");
        let close = format!("</{name}>");
        let from = text[start..].find(&open)? + start + open.len();
        let to = text[from..].find(&close)? + from;
        Some(text[from..to].to_owned())
    };
    let mut short = text[..start].trim_end().to_owned();
    match (field("Code"), field("Message")) {
        (Some(code), Some(message)) => {
            let message = message.lines().next().unwrap_or_default().trim_end();
            short.push_str(&format!(" {code}: {message}"));
        }
        (Some(code), None) => short.push_str(&format!(" {code}")),
        _ => return text.to_owned(),
    }
    short
}

/// `text` with the values of secret environment variables replaced by `***`, and the query
/// strings and user info of the HTTP addresses in it elided.
pub fn elide(text: &str) -> String {
    elide_with(text, std::env::vars_os())
}

/// [`elide`] with the environment's variables given.
fn elide_with(
    text: &str,
    variables: impl IntoIterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> String {
    let mut text = text.to_owned();
    for (name, value) in variables {
        let (Some(name), Some(value)) = (name.to_str(), value.to_str()) else {
            continue;
        };
        // Shorter values are no secret worth the name, and replacing them would mangle
        // the message around them (a secret `test` inside `test-results`).
        if value.len() >= 8 && is_secret_variable(name) && text.contains(value) {
            text = text.replace(value, "***");
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = ["http://", "https://"]
        .iter()
        .filter_map(|scheme| rest.find(scheme))
        .min()
    {
        out.push_str(&rest[..at]);
        let address = &rest[at..];
        let end = address
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | '"' | '\'' | '>' | ','))
            .unwrap_or(address.len());
        out.push_str(&redact_url(&address[..end]));
        rest = &address[end..];
    }
    out.push_str(rest);
    out
}

/// A URL with its user info and query string elided.
fn redact_url(url: &str) -> String {
    let (url, had_query) = match url.split_once(['?', '#']) {
        Some((before, _)) => (before, true),
        None => (url, false),
    };
    let mut shown = match url.split_once("://") {
        Some((scheme, rest)) => {
            let authority_end = rest.find('/').unwrap_or(rest.len());
            match rest[..authority_end].rfind('@') {
                Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
                None => url.to_owned(),
            }
        }
        None => url.to_owned(),
    };
    if had_query {
        shown.push_str("?***");
    }
    if shown.chars().any(char::is_control) {
        // A line break or tab in a URL would split or blur the message that shows it.
        shown = shown
            .chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect();
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_strictly_and_never_show_credentials() {
        let url = StoreUrl::parse("s3://bucket/a/b/").expect("a URL");
        assert_eq!(url.to_string(), "s3://bucket/a/b");
        assert_eq!(
            url.part(Shard::new(2, 5).expect("a shard")).as_ref(),
            "a/b/part-2-of-5"
        );
        assert_eq!(
            StoreUrl::parse("az://c").expect("a URL").to_string(),
            "az://c"
        );
        for bad in [
            "s3://",
            "s3:///x",
            "ftp://b/x",
            "s3://b/a//c",
            "s3://b/../x",
        ] {
            assert!(StoreUrl::parse(bad).is_err(), "{bad}");
        }
        for secret in [
            "s3://AKIA:hunter2@b/x",
            "az://c/x?sig=hunter2",
            "gs://b/x#hunter2",
        ] {
            let error = StoreUrl::parse(secret).expect_err(secret).to_string();
            assert!(!error.contains("hunter2"), "{error}");
        }
        assert!(!StoreUrl::is_url("./s3://b"));
        assert!(StoreUrl::is_url("gs://b"));
    }

    #[test]
    fn addresses_in_messages_lose_their_query_strings_and_user_info() {
        let text = "error sending request for url (https://acct.blob.core.windows.net/c/x?sig=abc&se=1): \
                    refused by http://user:pw@host:9/p, see https://docs/";
        assert_eq!(
            elide(text),
            "error sending request for url (https://acct.blob.core.windows.net/c/x?***): \
             refused by http://***@host:9/p, see https://docs/"
        );
    }

    #[test]
    fn urls_the_client_would_read_as_another_bucket_are_refused_on_one_line() {
        for bad in [
            "s3://evals:9999/one.jsonl",
            "s3://ev\nals/one.jsonl",
            "gs://ev\tals/x",
            "s3://ev als/x",
            "az://c/a\nb",
            "s3://b/a\r",
        ] {
            let error = StoreUrl::parse(bad).expect_err(bad).to_string();
            assert!(
                !error.contains(['\n', '\r', '\t']),
                "{bad:?} gave {error:?}"
            );
            assert!(error.contains("not a usable object store URL"), "{error}");
        }
        assert_eq!(
            StoreUrl::parse("s3://my-bucket.v2_x/a")
                .expect("a URL")
                .to_string(),
            "s3://my-bucket.v2_x/a"
        );
    }

    #[test]
    fn only_secrets_long_enough_to_be_keys_are_elided() {
        let vars = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(name, value)| (name.into(), value.into()))
                .collect::<Vec<(std::ffi::OsString, std::ffi::OsString)>>()
        };
        let text = "s3://test-results/x: refused with wJalrXUtnFEMI/K7MDENG, encryption true";
        assert_eq!(
            elide_with(
                text,
                vars(&[
                    ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG"),
                    ("AWS_ACCESS_KEY_ID", "test"),
                    ("AWS_SSE_BUCKET_KEY_ENABLED", "true"),
                    ("HOME_SECRET_OF_ANOTHER_TOOL", "encryption"),
                ])
            ),
            "s3://test-results/x: refused with ***, encryption true"
        );
    }

    #[test]
    fn shards_without_chunks_are_named() {
        let chunks = |pairs: &[(u32, u64)]| -> Vec<Chunk> {
            pairs
                .iter()
                .map(|&(index, number)| Chunk {
                    index,
                    count: 5,
                    number,
                    location: ObjectPath::from("x"),
                })
                .collect()
        };
        assert_eq!(MissingShards::of(&[]), None);
        assert_eq!(
            MissingShards::of(&chunks(&[(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)])),
            None
        );
        let missing = MissingShards::of(&chunks(&[(1, 0), (1, 1), (3, 0)])).expect("missing");
        assert_eq!(
            (missing.first.as_slice(), missing.missing),
            (&[0, 2, 4][..], 3)
        );
        assert_eq!(
            missing.to_string(),
            "no chunks from shards 0, 2, 4 of 5: not started yet, stopped before the first \
             upload, or given no samples; what is read is part of the run"
        );
        // A run of very many shards is not walked through: the first few are listed.
        let huge = [Chunk {
            index: 3,
            count: u32::MAX,
            number: 0,
            location: ObjectPath::from("x"),
        }];
        let missing = MissingShards::of(&huge).expect("missing");
        assert_eq!(missing.first, [0, 1, 2, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(missing.missing, u32::MAX - 1);
        assert!(
            missing.to_string().starts_with(&format!(
                "no chunks from shards 0, 1, 2, 4, 5, 6, 7, 8, 9, 10 and {} more of {}",
                u32::MAX - 11,
                u32::MAX
            )),
            "{missing}"
        );
    }

    #[test]
    fn a_store_error_whose_answer_spans_lines_is_described_on_one_line() {
        let error = object_store::Error::Generic {
            store: "GCS",
            source: "PUT failed - 400 Bad Request:\r\n{\"error\": \"invalid\"}\n\n  more\r".into(),
        };
        assert_eq!(
            describe(&error),
            "Generic GCS error: PUT failed - 400 Bad Request: {\"error\": \"invalid\"} more"
        );
    }

    #[test]
    fn error_documents_are_shortened_to_code_and_message() {
        let text = "GET http://h/b?*** - 404 Not Found: <?xml version=\"1.0\"?>\n<Error><Code>\
                    NoSuchBucket</Code><Message>The bucket does not exist</Message><RequestId>x\
                    </RequestId></Error>";
        assert_eq!(
            shorten_xml(text),
            "GET http://h/b?*** - 404 Not Found: NoSuchBucket: The bucket does not exist"
        );
        assert_eq!(shorten_xml("no document"), "no document");
        let azure = "404 Not Found: <?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>\
                     ContainerNotFound</Code><Message>The specified container does not exist.\n\
                     RequestId:319e\nTime:2026-01-01T00:00:00Z</Message></Error>";
        assert_eq!(
            shorten_xml(azure),
            "404 Not Found: ContainerNotFound: The specified container does not exist."
        );
    }

    #[test]
    fn only_chunks_right_under_the_prefix_are_chunks() {
        let prefix = ObjectPath::from("runs/7");
        let parse = |text: &str| parse_chunk(&prefix, &ObjectPath::from(text));
        let chunk = parse("runs/7/part-1-of-3/chunk-000017.jsonl").expect("a chunk");
        assert_eq!((chunk.index, chunk.count, chunk.number), (1, 3, 17));
        assert!(parse("runs/7/part-1-of-3/chunk-1234567.jsonl").is_some());
        let largest = parse("runs/7/part-1-of-3/chunk-999999999999999999.jsonl").expect("a chunk");
        assert_eq!(largest.number + 1, 10u64.pow(18));
        // A number whose next chunk could not be numbered is not one of ours.
        assert!(parse("runs/7/part-1-of-3/chunk-18446744073709551615.jsonl").is_none());
        for other in [
            "runs/7/part-3-of-3/chunk-000001.jsonl",
            "runs/7/part-1-of-3/x/chunk-000001.jsonl",
            "runs/7/part-1-of-3/chunk-000001.json",
            "runs/7/part-a-of-3/chunk-000001.jsonl",
            "runs/7/chunk-000001.jsonl",
            "runs/70/part-0-of-1/chunk-000001.jsonl",
        ] {
            assert!(parse(other).is_none(), "{other}");
        }
        assert_eq!(chunk_name(17), "chunk-000017.jsonl");
    }

    fn line_bytes(id: &str) -> Vec<u8> {
        Line::failed(id, 1, super::super::ErrorKind::Failed, "x", 0.0)
            .to_json_line()
            .expect("serializes")
    }

    #[test]
    fn chunks_are_numbered_in_order_and_resume_skips_what_they_hold_even_past_a_gap() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let store: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
            let url = StoreUrl::parse("s3://b/runs/1").expect("a URL");
            let shard = Shard::new(1, 2).expect("a shard");
            let options = StoreOptions::default().upload_every(10, Duration::from_secs(60));
            let (done, mut writer) = open_run_in(Arc::clone(&store), &url, shard, options)
                .await
                .expect("an empty prefix opens");
            assert!(done.is_empty());
            // 25 lines, 3 of them finishing together at the end of the first chunk.
            for i in 0..22 {
                let lines = if i == 8 { 3 } else { 1 };
                let bytes: Vec<u8> = (0..lines)
                    .flat_map(|k| line_bytes(&format!("s{i}-{k}")))
                    .collect();
                writer.write(&bytes, lines).await.expect("written");
            }
            writer.finish().await.expect("finished");
            let listed = list_chunks(&*store, &url).await.expect("listed");
            let sizes: Vec<(u64, usize)> = futures_util::future::join_all(
                listed
                    .iter()
                    .map(|chunk| fetch_whole(&*store, &url, chunk.clone())),
            )
            .await
            .into_iter()
            .map(|fetched| {
                let (chunk, bytes) = fetched.expect("fetched");
                (
                    chunk.number,
                    chunk_lines("u", &bytes).expect("whole lines").len(),
                )
            })
            .collect();
            // The first chunk takes the 3 lines that finished together whole.
            assert_eq!(sizes, [(0, 11), (1, 10), (2, 3)]);
            assert!(
                listed
                    .iter()
                    .all(|chunk| chunk.location.as_ref().starts_with("runs/1/part-1-of-2/"))
            );

            // A chunk lost (in flight when the run died): resume skips the others' lines and
            // numbers after the highest.
            store.delete(&listed[1].location).await.expect("deleted");
            let (done, mut writer) = open_run_in(Arc::clone(&store), &url, shard, options)
                .await
                .expect("reopened");
            assert_eq!(done.len(), 14);
            assert!(done.contains_key("s8-2") && !done.contains_key("s9-0"));
            writer.write(&line_bytes("late"), 1).await.expect("written");
            writer.finish().await.expect("finished");
            let numbers: Vec<u64> = list_chunks(&*store, &url)
                .await
                .expect("listed")
                .iter()
                .map(|chunk| chunk.number)
                .collect();
            assert_eq!(numbers, [0, 2, 3]);

            // Another shard count is refused, naming the URL and the part found.
            let error = open_run_in(store, &url, Shard::new(0, 3).expect("a shard"), options)
                .await
                .expect_err("another shard count");
            let text = error.to_string();
            assert!(
                text.starts_with("s3://b/runs/1: holds part-1-of-2/"),
                "{text}"
            );
        });
    }

    fn stored(store: &Arc<dyn ObjectStore>, key: &str) -> Option<Vec<u8>> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let got = store.get(&ObjectPath::from(key)).await.ok()?;
            Some(got.bytes().await.expect("the object's bytes").to_vec())
        })
    }

    #[test]
    fn an_object_is_stored_whole_on_finish_in_parts_when_large_and_not_at_all_when_dropped() {
        let store: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        let url = StoreUrl::parse("s3://b/merged.jsonl").expect("a URL");
        // Small: one PUT, nothing stored before the end.
        let mut writer = ObjectWriter::create_in(Arc::clone(&store), &url, 4096).expect("opens");
        writer.write(b"one\n").expect("written");
        writer.write(b"two\n").expect("written");
        assert_eq!(stored(&store, "merged.jsonl"), None, "not before the end");
        writer.finish().expect("stored");
        assert_eq!(
            stored(&store, "merged.jsonl").as_deref(),
            Some(&b"one\ntwo\n"[..])
        );

        // Large (in parts of 1000 bytes): the same bytes in the same order.
        let line: Vec<u8> = (0..99u8).map(|i| b'a' + i % 26).chain([b'\n']).collect();
        let mut writer = ObjectWriter::create_in(Arc::clone(&store), &url, 1000).expect("opens");
        for _ in 0..5000 {
            writer.write(&line).expect("written");
        }
        writer.finish().expect("stored");
        let bytes = stored(&store, "merged.jsonl").expect("stored");
        assert_eq!(bytes.len(), 500_000);
        assert!(bytes.chunks(100).all(|chunk| chunk == line.as_slice()));

        // Dropped unfinished, past the first part: the object stays as it was.
        let mut writer = ObjectWriter::create_in(Arc::clone(&store), &url, 1000).expect("opens");
        for _ in 0..10_000 {
            writer
                .write(b"replacement line that never lands\n")
                .expect("written");
        }
        drop(writer);
        assert_eq!(
            stored(&store, "merged.jsonl").map(|b| b.len()),
            Some(500_000)
        );

        // A URL with a run's chunks under it is refused before anything is written.
        let run = StoreUrl::parse("s3://b/runs/1").expect("a URL");
        let key = ObjectPath::from("runs/1/part-0-of-2/chunk-000000.jsonl");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        runtime
            .block_on(store.put(&key, PutPayload::from_static(b"")))
            .expect("put");
        let error = ObjectWriter::create_in(Arc::clone(&store), &run, 1000).expect_err("refused");
        assert_eq!(
            error.to_string(),
            "s3://b/runs/1: holds part-0-of-2/ from an evaluation, which readers would read \
             instead of the merged object: choose another URL"
        );
        assert_eq!(stored(&store, "runs/1"), None);
    }

    #[test]
    fn chunks_hold_whole_lines() {
        let line = Line::failed("a", 1, super::super::ErrorKind::Failed, "x", 0.0);
        let mut bytes = line.to_json_line().expect("serializes");
        bytes.extend_from_slice(&bytes.clone());
        assert_eq!(chunk_lines("u", &bytes).expect("whole lines").len(), 2);
        bytes.pop();
        let error = chunk_lines("s3://b/c", &bytes).expect_err("torn");
        assert!(error.to_string().starts_with("s3://b/c:2:"), "{error}");
    }
}
