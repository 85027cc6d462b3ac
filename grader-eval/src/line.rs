//! One line of an evaluation's JSONL file: [`Line`], and reading such files back.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use grader_core::score::EvaluationResult;

/// The version written in every [`Line`]'s `v` field. A reader refuses lines of a version it
/// does not know.
pub const LINE_VERSION: u32 = 1;

/// The outcome of grading one sample once (one epoch): one line of an evaluation's JSONL file.
///
/// On disk, with the keys in this order (`error` is `null` for a graded sample, `result` is
/// `null` for a failed one):
///
/// ```json
/// {"v":1,"id":"q17","epoch":1,"duration_secs":0.0021,"error":null,"result":{"reward":1.0,…}}
/// ```
///
/// `epoch` counts from 1. A line is *scored* when it has a result whose `isError` is false;
/// anything else counts as errored in a [`Summary`](super::Summary) and is never averaged in
/// as a 0.
///
/// ```
/// use grader_core::EvaluationResult;
/// use grader_eval::Line;
///
/// let line = Line::graded("q17", 1, EvaluationResult::from_reward(0.5)?, 0.25);
/// let text = serde_json::to_string(&line)?;
/// assert!(text.starts_with(r#"{"v":1,"id":"q17","epoch":1,"duration_secs":0.25,"error":null,"#));
/// let back: Line = serde_json::from_str(&text)?;
/// assert_eq!(back, line);
/// assert_eq!(back.reward(), Some(0.5));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// The line format's version, [`LINE_VERSION`].
    #[serde(rename = "v", deserialize_with = "known_version")]
    pub version: u32,
    /// The sample's id, unique within the evaluation.
    pub id: String,
    /// Which grading of the sample this is, from 1.
    pub epoch: u32,
    /// How long the grading took, in seconds, from its future's first poll.
    pub duration_secs: f64,
    /// Why the grading failed, if it did.
    pub error: Option<LineError>,
    /// What the grading returned, if it succeeded.
    pub result: Option<EvaluationResult>,
}

fn known_version<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    let version = u32::deserialize(deserializer)?;
    if version == LINE_VERSION {
        Ok(version)
    } else {
        Err(serde::de::Error::custom(format!(
            "line format version {version} is not supported (this reader knows {LINE_VERSION})"
        )))
    }
}

/// Why grading a sample failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineError {
    /// What kind of failure it was.
    pub kind: ErrorKind,
    /// The error's message (or the panic's).
    pub message: String,
}

/// What kind of failure a [`LineError`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// The grading function returned an error.
    Failed,
    /// The grading function panicked.
    Panicked,
}

impl Line {
    /// The line of a sample graded in `duration_secs` seconds.
    #[must_use]
    pub fn graded(
        id: impl Into<String>,
        epoch: u32,
        result: EvaluationResult,
        duration_secs: f64,
    ) -> Self {
        Line {
            version: LINE_VERSION,
            id: id.into(),
            epoch,
            duration_secs,
            error: None,
            result: Some(result),
        }
    }

    /// The line of a sample whose grading failed.
    #[must_use]
    pub fn failed(
        id: impl Into<String>,
        epoch: u32,
        kind: ErrorKind,
        message: impl Into<String>,
        duration_secs: f64,
    ) -> Self {
        Line {
            version: LINE_VERSION,
            id: id.into(),
            epoch,
            duration_secs,
            error: Some(LineError {
                kind,
                message: message.into(),
            }),
            result: None,
        }
    }

    /// The reward, when the line is scored: a result without `isError` and no error.
    #[must_use]
    pub fn reward(&self) -> Option<f64> {
        match (&self.error, &self.result) {
            (None, Some(result)) if !result.is_error && result.reward().is_finite() => {
                Some(result.reward())
            }
            _ => None,
        }
    }

    /// The line as JSON followed by a newline, as it is written to a file.
    ///
    /// # Errors
    /// When the result holds something serde_json cannot write (a map with non-string keys
    /// in `extra`, which parsing never produces).
    pub fn to_json_line(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut bytes = Vec::with_capacity(512);
        super::write::write_line(&mut bytes, self)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
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
    /// A complete line (one ending in a newline) is not a valid [`Line`].
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
    Store(#[from] super::store::StoreError),
    /// The summary of the lines could not write or read its temporary files
    /// ([`summarize_files`](super::summarize_files)).
    #[error(transparent)]
    Spill(#[from] super::summary::SpillError),
}

/// A read error as a [`LinesError`]: an object store's own error when it is one.
fn read_error(path: &Path, source: std::io::Error) -> LinesError {
    #[cfg(feature = "object-store")]
    let source = match source.downcast::<super::store::StoreError>() {
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
/// Every complete line must be a valid [`Line`]; a last line without its newline is reported
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
    match super::store::StoreUrl::of_path(path) {
        Some(url) => Ok(Some(Box::new(super::store::open(&url?)?))),
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
            return Some(
                serde_json::from_slice::<Line>(text)
                    .map(|line| Entry::Line(Box::new(line)))
                    .map_err(|error| {
                        self.finished = true;
                        LinesError::Corrupt {
                            path: self.path.clone(),
                            line_number: self.line_number,
                            message: error.to_string(),
                        }
                    }),
            );
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_lines_have_no_reward_nor_do_error_results() {
        let failed = Line::failed("a", 2, ErrorKind::Panicked, "boom", 0.0);
        assert_eq!(failed.reward(), None);
        let text = String::from_utf8(failed.to_json_line().expect("serializes")).expect("UTF-8");
        assert_eq!(
            text,
            "{\"v\":1,\"id\":\"a\",\"epoch\":2,\"duration_secs\":0.0,\
             \"error\":{\"kind\":\"panicked\",\"message\":\"boom\"},\"result\":null}\n"
        );
        let mut result = EvaluationResult::from_reward(0.0).expect("a finite reward");
        result.is_error = true;
        assert_eq!(Line::graded("a", 1, result, 0.0).reward(), None);
    }

    #[test]
    fn unknown_versions_are_refused() {
        let error = serde_json::from_str::<Line>(
            r#"{"v":2,"id":"a","epoch":1,"duration_secs":0,"error":null,"result":null}"#,
        )
        .expect_err("version 2 is refused");
        assert!(error.to_string().contains("version 2"), "{error}");
    }
}
