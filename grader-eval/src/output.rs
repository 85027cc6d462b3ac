//! Where a run's lines go: a local file opened for appending, or (feature `object-store`)
//! numbered chunks in object storage; and what the output already holds, for resuming. Where
//! merged lines go: a local file, or one object.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::line::{Entry, Line, read_lines};
use super::shard::Shard;
use crate::error::EvalError;

/// Opens a run's output: resumes from what it holds (a local file, or the chunks of this
/// run's shard at an object store URL) and returns the epochs done of each sample id, whether
/// a torn last line was cut off, and where the next lines go.
pub(super) async fn open(
    output: &Path,
    #[cfg_attr(not(feature = "object-store"), allow(unused_variables))] shard: Shard,
    #[cfg(feature = "object-store")] options: super::store::StoreOptions,
) -> Result<(HashMap<String, Vec<u32>>, bool, Sink), EvalError> {
    #[cfg(feature = "object-store")]
    if let Some(url) = super::store::StoreUrl::of_path(output) {
        let (done, writer) = super::store::open_run(&url?, shard, options).await?;
        return Ok((done, false, Sink::Store(Box::new(writer))));
    }
    let (done, torn_line) = resume(output)?;
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(output)
        .map_err(|source| EvalError::Io {
            path: output.to_owned(),
            source,
        })?;
    Ok((done, torn_line, Sink::File(Arc::new(SharedFile::new(file)))))
}

/// Reads what an existing results file already holds, cutting off a torn last line. Returns
/// the epochs done of each sample id and whether a torn line was removed.
pub(super) fn resume(path: &Path) -> Result<(HashMap<String, Vec<u32>>, bool), EvalError> {
    let mut done: HashMap<String, Vec<u32>> = HashMap::new();
    // Only a regular file holds lines to resume from: a device or a pipe (`/dev/full`, a FIFO)
    // may never end, and reading it would not either.
    if !std::fs::metadata(path).is_ok_and(|meta| meta.is_file()) {
        return Ok((done, false));
    }
    let mut torn = None;
    for entry in read_lines(path)? {
        match entry? {
            Entry::Line(line) => {
                let Line { id, epoch, .. } = *line;
                done.entry(id).or_default().push(epoch);
            }
            Entry::Torn { offset } => torn = Some(offset),
        }
    }
    if let Some(offset) = torn {
        let io = |source| EvalError::Io {
            path: path.to_owned(),
            source,
        };
        let file = OpenOptions::new().write(true).open(path).map_err(io)?;
        file.set_len(offset).map_err(io)?;
        file.sync_all().map_err(io)?;
    }
    Ok((done, torn.is_some()))
}

/// A run's local output file, shared by the awaiting task and the lanes on the worker
/// threads: each appends whole lines, a poll's worth in one `write`, under the lock, so lines
/// never interleave (on any file system) and a crash tears at most the last line.
///
/// After a failed write nothing more is written (what follows a torn write would be a torn
/// line in the middle of the file, which resume could not cut off); after [`close`](Self::close)
/// neither, so that no lane still finishing a poll writes after its run is gone.
pub(super) struct SharedFile {
    state: Mutex<FileState>,
}

pub(super) struct FileState {
    file: File,
    /// The first write's failure, until the awaiting task reports it.
    error: Option<std::io::Error>,
    /// Whether a write has failed: nothing is written after.
    failed: bool,
    closed: bool,
}

impl SharedFile {
    pub(super) fn new(file: File) -> Self {
        SharedFile {
            state: Mutex::new(FileState {
                file,
                error: None,
                failed: false,
                closed: false,
            }),
        }
    }

    pub(super) fn state(&self) -> std::sync::MutexGuard<'_, FileState> {
        // A panic while the lock is held can only come from `write_all`, which leaves the
        // state as consistent as a failed write does.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends `bytes` (whole lines), or returns false when they were not written: this write
    /// failed (its error kept for [`error`](Self::error)), an earlier one did, or the run is
    /// closed.
    pub(super) fn append(&self, bytes: &[u8]) -> bool {
        Self::append_locked(&mut self.state(), bytes)
    }

    /// As [`append`](Self::append) if no one else is writing; `None` (nothing done) if
    /// someone is.
    pub(super) fn try_append(&self, bytes: &[u8]) -> Option<bool> {
        let mut state = match self.state.try_lock() {
            Ok(state) => state,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        Some(Self::append_locked(&mut state, bytes))
    }

    fn append_locked(state: &mut FileState, bytes: &[u8]) -> bool {
        if state.failed || state.closed {
            return false;
        }
        match state.file.write_all(bytes) {
            Ok(()) => true,
            Err(error) => {
                state.failed = true;
                state.error = Some(error);
                false
            }
        }
    }

    /// Why lines were not written: the failed write's error (given once; later calls describe
    /// it without the source).
    pub(super) fn error(&self) -> std::io::Error {
        let mut state = self.state();
        state.error.take().unwrap_or_else(|| {
            std::io::Error::other(if state.closed {
                "the run was closed"
            } else {
                "an earlier write to the file failed"
            })
        })
    }

    /// Writes nothing more from now on; a write in progress ends first.
    pub(super) fn close(&self) {
        self.state().closed = true;
    }
}

/// Where a run's lines go: a local file opened for appending, or chunks in object storage.
pub(super) enum Sink {
    File(Arc<SharedFile>),
    #[cfg(feature = "object-store")]
    Store(Box<super::store::ChunkWriter>),
}

/// A sink's failure: a local file's I/O error, or object storage's own error.
pub(super) enum SinkError {
    Io(std::io::Error),
    #[cfg(feature = "object-store")]
    Store(super::store::StoreError),
}

impl SinkError {
    pub(super) fn into_eval(self, path: &Path) -> EvalError {
        match self {
            SinkError::Io(source) => EvalError::Io {
                path: path.to_owned(),
                source,
            },
            #[cfg(feature = "object-store")]
            SinkError::Store(error) => EvalError::Store(error),
        }
    }
}

impl Sink {
    /// Writes `lines` whole lines (`bytes`).
    #[cfg_attr(not(feature = "object-store"), allow(unused_variables))]
    pub(super) async fn write(&mut self, bytes: &[u8], lines: usize) -> Result<(), SinkError> {
        match self {
            Sink::File(file) => {
                if file.append(bytes) {
                    Ok(())
                } else {
                    Err(SinkError::Io(file.error()))
                }
            }
            #[cfg(feature = "object-store")]
            Sink::Store(writer) => writer.write(bytes, lines).await.map_err(SinkError::Store),
        }
    }

    /// The local file that lanes may append their lines to themselves.
    pub(super) fn shared_file(&self) -> Option<Arc<SharedFile>> {
        match self {
            Sink::File(file) => Some(Arc::clone(file)),
            #[cfg(feature = "object-store")]
            Sink::Store(_) => None,
        }
    }

    /// Resolves when written lines wait to be uploaded (never for a file).
    pub(super) async fn due(&self) {
        match self {
            Sink::File(_) => std::future::pending().await,
            #[cfg(feature = "object-store")]
            Sink::Store(writer) => writer.due().await,
        }
    }

    /// Uploads the lines waiting (nothing for a file).
    pub(super) async fn upload(&mut self) -> Result<(), EvalError> {
        match self {
            Sink::File(_) => Ok(()),
            #[cfg(feature = "object-store")]
            Sink::Store(writer) => Ok(writer.upload().await?),
        }
    }

    /// Nothing for a file (each write went straight to it); for object storage, uploads what
    /// waits and waits for every upload.
    pub(super) async fn finish(&mut self) -> Result<(), SinkError> {
        match self {
            // Each write went straight to the file: there is nothing to flush.
            Sink::File(_) => Ok(()),
            #[cfg(feature = "object-store")]
            Sink::Store(writer) => writer.finish().await.map_err(SinkError::Store),
        }
    }
}

/// Where [`merge`](super::merge) writes: a local file (replaced), or (feature `object-store`)
/// one object, stored whole once every line is written.
pub(super) enum MergeOutput {
    File(BufWriter<File>),
    #[cfg(feature = "object-store")]
    Store(super::store::ObjectWriter),
}

impl MergeOutput {
    /// Creates `output`. An object store URL is checked before any input is read: the bucket
    /// must be reachable, hold no chunks under the URL, and the URL must not be an input.
    #[cfg_attr(not(feature = "object-store"), allow(unused_variables))]
    pub(super) fn create(output: &Path, inputs: &[PathBuf]) -> Result<Self, EvalError> {
        #[cfg(feature = "object-store")]
        if let Some(url) = super::store::StoreUrl::of_path(output) {
            let url = url?;
            if inputs
                .iter()
                .filter_map(|input| super::store::StoreUrl::of_path(input))
                .any(|input| input.as_ref() == Ok(&url))
            {
                return Err(super::store::StoreError::InvalidUrl {
                    url: url.to_string(),
                    why: "the output is also an input".to_owned(),
                }
                .into());
            }
            let writer =
                super::store::ObjectWriter::create(&url, super::store::StoreOptions::default())?;
            return Ok(MergeOutput::Store(writer));
        }
        let file = File::create(output).map_err(|source| EvalError::Io {
            path: output.to_owned(),
            source,
        })?;
        Ok(MergeOutput::File(BufWriter::new(file)))
    }

    /// Writes whole lines.
    pub(super) fn write(&mut self, output: &Path, bytes: &[u8]) -> Result<(), EvalError> {
        match self {
            MergeOutput::File(file) => file.write_all(bytes).map_err(|source| EvalError::Io {
                path: output.to_owned(),
                source,
            }),
            #[cfg(feature = "object-store")]
            MergeOutput::Store(writer) => Ok(writer.write(bytes)?),
        }
    }

    /// Flushes the file, or stores the object.
    pub(super) fn finish(self, output: &Path) -> Result<(), EvalError> {
        match self {
            MergeOutput::File(mut file) => file.flush().map_err(|source| EvalError::Io {
                path: output.to_owned(),
                source,
            }),
            #[cfg(feature = "object-store")]
            MergeOutput::Store(writer) => Ok(writer.finish()?),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("grader-shared-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        let path = dir.join(name);
        let _ = std::fs::remove_file(&path);
        path
    }

    fn appending(path: &Path) -> SharedFile {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("open for appending");
        SharedFile::new(file)
    }

    /// While one writer holds the file, another is told so (and writes nothing) rather than
    /// waiting; then it writes.
    #[test]
    fn a_busy_file_is_reported_not_waited_for() {
        let path = scratch("busy.jsonl");
        let file = appending(&path);
        {
            let _held = file.state();
            let busy = std::thread::scope(|s| s.spawn(|| file.try_append(b"b\n")).join());
            assert_eq!(busy.expect("the writer thread"), None);
        }
        assert!(file.append(b"a\n"));
        assert_eq!(file.try_append(b"b\n"), Some(true));
        assert_eq!(std::fs::read(&path).expect("the file"), b"a\nb\n");
    }

    /// After a failed write nothing more is written, and the failure is reported with its
    /// cause once; after the run is closed, nothing is written either.
    #[test]
    fn nothing_is_written_after_a_failure_or_the_close() {
        let path = scratch("failed.jsonl");
        std::fs::write(&path, b"kept\n").expect("a file");
        // Opened for reading only, so that every write fails.
        let file = SharedFile::new(File::open(&path).expect("open"));
        assert!(!file.append(b"x\n"));
        let error = file.error();
        assert!(
            error.raw_os_error().is_some(),
            "the write's own error: {error}"
        );
        assert_eq!(file.try_append(b"y\n"), Some(false));
        assert!(file.error().to_string().contains("an earlier write"));

        let path = scratch("closed.jsonl");
        let file = appending(&path);
        assert!(file.append(b"a\n"));
        file.close();
        assert!(!file.append(b"b\n"));
        assert!(file.error().to_string().contains("closed"));
        assert_eq!(std::fs::read(&path).expect("the file"), b"a\n");
    }
}
