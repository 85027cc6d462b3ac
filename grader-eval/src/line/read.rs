//! Reading an evaluation's JSONL file back: [`read_lines`] and the [`Entry`]s it yields, a
//! last line torn by a crash told apart from the lines before it. With the feature
//! `object-store`, the file may be an object store URL (through the `store` module, which
//! writes and reads lines in the format of [`Line`] below this one).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use super::Line;
use crate::error::LinesError;
#[cfg(feature = "object-store")]
use crate::error::StoreError;

/// A read error as a [`LinesError`]: an object store's own error when it is one.
fn read_error(path: &Path, source: std::io::Error) -> LinesError {
    #[cfg(feature = "object-store")]
    let source = match source.downcast::<StoreError>() {
        Ok(store) => return LinesError::Store(store),
        Err(source) => source,
    };
    LinesError::Io {
        path: path.to_owned(),
        source,
    }
}

/// What is in an evaluation's JSONL file, as read by [`read_lines`].
#[derive(Debug)]
pub enum Entry {
    /// A complete, valid line.
    Line(Box<Line>),
    /// The file ends in a line without its newline: a write cut short by a crash. It holds
    /// the byte offset where that line starts (the length to truncate the file to).
    Torn {
        /// Where the torn line starts.
        offset: u64,
    },
}

/// Reads an evaluation's JSONL file line by line, without loading it whole.
///
/// Every complete line must be a valid [`Line`] (a result in hud's form, `score` without
/// `reward`, is read with its score as the reward: see [`settle_line`](super::settle_line)); a last line without its newline is reported
/// as [`Entry::Torn`] whatever it holds, because its write may not have finished. Empty lines
/// are skipped. With the feature `object-store`, `path` may also be an `s3://`, `gs://` or
/// `az://` URL: the lines of every chunk of every shard written there, or of the one object it
/// names (see the `store` module).
///
/// ```no_run
/// use grader_eval::line::{Entry, read_lines};
///
/// for entry in read_lines("results.jsonl".as_ref())? {
///     if let Entry::Line(line) = entry? {
///         println!("{} epoch {}: {:?}", line.id, line.epoch, line.reward());
///     }
/// }
/// # Ok::<(), grader_eval::line::LinesError>(())
/// ```
///
/// # Errors
/// [`LinesError::Io`] when the file cannot be opened; each item is an error when reading
/// fails or a complete line does not parse.
pub fn read_lines(path: &Path) -> Result<Lines, LinesError> {
    let reader: Box<dyn Read + Send> = match open_url(path)? {
        Some(reader) => reader,
        None => Box::new(File::open(path).map_err(|source| LinesError::Io {
            path: path.to_owned(),
            source,
        })?),
    };
    Ok(Lines {
        path: path.to_owned(),
        reader: BufReader::with_capacity(1 << 16, reader),
        buffer: Vec::new(),
        offset: 0,
        line_number: 0,
        finished: false,
    })
}

/// An object store URL opened for reading (feature `object-store`), or `None` for a local
/// path.
#[cfg(feature = "object-store")]
fn open_url(path: &Path) -> Result<Option<Box<dyn Read + Send>>, LinesError> {
    match crate::store::StoreUrl::of_path(path) {
        Some(url) => Ok(Some(Box::new(crate::store::open(&url?)?))),
        None => Ok(None),
    }
}

#[cfg(not(feature = "object-store"))]
#[allow(clippy::unnecessary_wraps)]
fn open_url(_path: &Path) -> Result<Option<Box<dyn Read + Send>>, LinesError> {
    Ok(None)
}

/// The iterator [`read_lines`] returns.
pub struct Lines {
    path: PathBuf,
    reader: BufReader<Box<dyn Read + Send>>,
    buffer: Vec<u8>,
    offset: u64,
    line_number: u64,
    finished: bool,
}

impl std::fmt::Debug for Lines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lines")
            .field("path", &self.path)
            .field("offset", &self.offset)
            .field("line_number", &self.line_number)
            .finish_non_exhaustive()
    }
}

impl Iterator for Lines {
    type Item = Result<Entry, LinesError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.finished {
            self.buffer.clear();
            let start = self.offset;
            let read = match self.reader.read_until(b'\n', &mut self.buffer) {
                Ok(read) => read,
                Err(source) => {
                    self.finished = true;
                    return Some(Err(read_error(&self.path, source)));
                }
            };
            if read == 0 {
                self.finished = true;
                return None;
            }
            self.offset += read as u64;
            self.line_number += 1;
            if self.buffer.last() != Some(&b'\n') {
                self.finished = true;
                return Some(Ok(Entry::Torn { offset: start }));
            }
            let text = &self.buffer[..self.buffer.len() - 1];
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let read = serde_json::from_slice::<Line>(text)
                .map_err(|error| error.to_string())
                .and_then(|mut line| {
                    // A result in hud's form (`score`) is read with its score as the reward.
                    super::settle_line(text, &mut line).map_err(|error| error.to_string())?;
                    Ok(Entry::Line(Box::new(line)))
                });
            return Some(read.map_err(|message| {
                self.finished = true;
                LinesError::Corrupt {
                    path: self.path.clone(),
                    line_number: self.line_number,
                    message,
                }
            }));
        }
        None
    }
}
