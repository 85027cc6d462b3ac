//! Reading from object storage: [`open`] a URL as one stream of lines (every chunk of every
//! shard, or the one object it names), fetched ahead on a thread of the reader's own
//! ([`StoreReader`]); and [`missing_shards`], which only lists.

use std::fmt;
use std::io::{self, Read};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use bytes::Bytes;
use futures_util::StreamExt as _;
use object_store::ObjectStoreExt as _;

use super::StoreOptions;
use super::chunks::{FETCH_AHEAD, MissingShards, fetch_whole, list_run};
use super::url::StoreUrl;
use crate::error::StoreError;

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
/// that reads the URL some other way (as [`merge`](crate::merge) does) and wants to say so.
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
