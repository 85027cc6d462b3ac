//! Writing to object storage: a run's lines as the numbered chunks of its shard's part
//! ([`ChunkWriter`], opened by [`open_run`], which reads what the part already holds for
//! resuming), and one object written whole from synchronous code ([`ObjectWriter`], the output
//! of a merge).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use bytes::Bytes;
use futures_util::StreamExt as _;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt as _, PutPayload};

use super::StoreOptions;
use super::chunks::{
    Chunk, FETCH_AHEAD, chunk_lines, chunk_name, fetch_whole, list_chunks, part_name,
};
use super::url::StoreUrl;
use crate::error::StoreError;
use crate::shard::Shard;

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

/// Writes one object at a URL from synchronous code: the output of [`merge`](crate::merge).
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

/// How many chunks a run uploads at once.
pub const UPLOADS_IN_FLIGHT: usize = 4;

/// Writes a run's lines as chunks of one shard's part (see the [module](super) docs).
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::line::Line;

    fn line_bytes(id: &str) -> Vec<u8> {
        Line::failed(id, 1, crate::ErrorKind::Failed, "x", 0.0)
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
}
