//! Reading result files: one JSON document (`.json`) or JSON Lines, read one line at a time in
//! bounded memory.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::CliError;

/// The longest line read by default, in bytes (64 MiB): a longer one is reported, not loaded.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 << 20;

/// The most a line may cost once parsed by default, in bytes (256 MiB, as grader-core's
/// [`parsed_cost`](grader_core::cost::parsed_cost) counts it: its bytes and 160 bytes a JSON
/// value): a line beyond it is reported, not parsed. A 60 MB line of 30 million tiny numbers
/// took `validate` and `summary` 2.2 GB, and `show` 6.4 GB, to read; it is refused now.
pub const DEFAULT_MAX_PARSED_BYTES: usize = 256 << 20;

/// How much of a line the commands read: its bytes (`--max-line`) and what it costs once
/// parsed (`--max-parsed`). A line past either is reported with its file and number, and
/// skipped: never loaded, or never parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::Args)]
pub struct LineLimits {
    /// The longest line read; a longer one is reported and skipped without being loaded.
    #[arg(long, default_value = "64M", value_parser = parse_size)]
    pub max_line: usize,
    /// The most one line may cost once parsed (its bytes and 160 bytes for each JSON value in
    /// it); a line beyond it is reported and skipped without being parsed.
    #[arg(long, default_value = "256M", value_parser = parse_size)]
    pub max_parsed: usize,
}

impl Default for LineLimits {
    fn default() -> Self {
        LineLimits {
            max_line: DEFAULT_MAX_LINE_BYTES,
            max_parsed: DEFAULT_MAX_PARSED_BYTES,
        }
    }
}

/// How a file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One JSON document: a result, possibly pretty-printed over many lines.
    Json,
    /// One JSON value per line.
    Lines,
}

impl Format {
    /// `.json` files are one document; anything else (`.jsonl`, `.ndjson`, standard input) is
    /// read as lines.
    #[must_use]
    pub fn of(path: &Path) -> Format {
        match path.extension().and_then(|ext| ext.to_str()) {
            Some(ext) if ext.eq_ignore_ascii_case("json") => Format::Json,
            _ => Format::Lines,
        }
    }
}

/// Opens `path` for reading (`-` is standard input). With the feature `object-store` (on by
/// default), an `s3://`, `gs://` or `az://` URL is read from object storage: the one object it
/// names, or every chunk of every shard an evaluation wrote under it (see grader-core's
/// `grader_eval::store`), with credentials from the environment. A sharded run with no chunks from
/// some of its shards is read as far as it goes, with a note on standard error naming them.
///
/// # Errors
/// [`CliError::Read`] when it cannot be opened; [`CliError::Store`] when object storage
/// cannot be listed or read.
pub fn open(path: &Path) -> Result<Box<dyn Read>, CliError> {
    if path == Path::new("-") {
        return Ok(Box::new(io::stdin()));
    }
    #[cfg(feature = "object-store")]
    if let Some(url) = grader_eval::store::StoreUrl::of_path(path) {
        let url = url?;
        let reader = grader_eval::store::open(&url)?;
        if let Some(missing) = reader.missing_shards() {
            // Not an error: a run still going is read as far as it got. But a summary of part
            // of a run should not pass for the whole.
            eprintln!("grader: note: {url}: {missing}");
        }
        return Ok(Box::new(reader));
    }
    File::open(path)
        .map(|file| Box::new(file) as Box<dyn Read>)
        .map_err(|source| CliError::Read {
            path: path.to_owned(),
            source,
        })
}

/// Reads a whole (single-document) file.
///
/// # Errors
/// [`CliError::Read`] when it cannot be read.
pub fn read_all(path: &Path) -> Result<Vec<u8>, CliError> {
    let mut bytes = Vec::new();
    open(path)?
        .read_to_end(&mut bytes)
        .map_err(read_error(path))?;
    Ok(bytes)
}

/// One line of a JSON Lines file.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// The line's bytes, without the newline (and without a `\r` before it).
    Text(&'a [u8]),
    /// A line longer than the limit; its bytes were skipped, not kept.
    TooLong {
        /// Its length in bytes.
        bytes: u64,
    },
}

/// Reads JSON Lines one line at a time, keeping at most one line (up to a limit) in memory.
///
/// ```
/// use grader_cli::input::{Line, Lines};
///
/// let mut lines = Lines::new(&b"{\"a\":1}\r\n\n123456789\n"[..], 8);
/// assert_eq!(lines.next_line()?, Some((1, Line::Text(b"{\"a\":1}"))));
/// assert_eq!(lines.next_line()?, Some((2, Line::Text(b""))));
/// assert_eq!(lines.next_line()?, Some((3, Line::TooLong { bytes: 9 })));
/// assert_eq!(lines.next_line()?, None);
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Lines<R> {
    reader: BufReader<R>,
    buffer: Vec<u8>,
    max_bytes: usize,
    number: u64,
    terminated: bool,
}

impl<R: Read> Lines<R> {
    /// Lines of `reader`; a line longer than `max_bytes` is skipped as [`Line::TooLong`].
    pub fn new(reader: R, max_bytes: usize) -> Self {
        Lines {
            reader: BufReader::with_capacity(256 << 10, reader),
            buffer: Vec::new(),
            max_bytes,
            number: 0,
            terminated: true,
        }
    }

    /// Whether the last line returned ended with a newline (a last line without one may be a
    /// write cut short).
    #[must_use]
    pub fn terminated(&self) -> bool {
        self.terminated
    }

    /// The next line and its number (from 1), or `None` at the end. A last line without a
    /// newline is a line.
    ///
    /// # Errors
    /// When reading fails.
    pub fn next_line(&mut self) -> io::Result<Option<(u64, Line<'_>)>> {
        self.buffer.clear();
        let mut length: u64 = 0;
        let mut too_long = false;
        let mut saw_any = false;
        let mut found_end_of_line = false;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(chunk) => chunk,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            };
            if chunk.is_empty() {
                if !saw_any {
                    return Ok(None);
                }
                break;
            }
            saw_any = true;
            let (part, found_newline) = match memchr::memchr(b'\n', chunk) {
                Some(at) => (&chunk[..at], true),
                None => (chunk, false),
            };
            length += part.len() as u64;
            if !too_long {
                if self.buffer.len() + part.len() > self.max_bytes {
                    too_long = true;
                    self.buffer = Vec::new();
                } else {
                    self.buffer.extend_from_slice(part);
                }
            }
            let used = part.len() + usize::from(found_newline);
            self.reader.consume(used);
            if found_newline {
                found_end_of_line = true;
                break;
            }
        }
        self.number += 1;
        self.terminated = found_end_of_line;
        if too_long {
            return Ok(Some((self.number, Line::TooLong { bytes: length })));
        }
        if self.buffer.last() == Some(&b'\r') {
            self.buffer.pop();
        }
        Ok(Some((self.number, Line::Text(&self.buffer))))
    }
}

/// Opens `path` as JSON Lines.
///
/// # Errors
/// [`CliError::Read`] when it cannot be opened.
pub fn lines(path: &Path, max_bytes: usize) -> Result<Lines<Box<dyn Read>>, CliError> {
    Ok(Lines::new(open(path)?, max_bytes))
}

/// Refuses an `output` that is one of the `inputs`: the same path, or (when both exist) the
/// same file by another path (`./x.jsonl`, a symbolic or hard link), or, for standard input
/// (`-`), the file standard input is read from (`grader report - -o in.jsonl < in.jsonl`: the
/// device and inode of standard input are the output's). Writing it would replace the results
/// being read with a page, a log or a merge of them.
///
/// # Errors
/// [`CliError::Invalid`] naming the output, and the input where it is spelt otherwise.
pub fn refuse_output_among_inputs(output: &Path, inputs: &[PathBuf]) -> Result<(), CliError> {
    for input in inputs {
        let same = if input.as_os_str() == "-" {
            stdin_is(output)
        } else {
            input == output || same_file::is_same_file(input, output).unwrap_or(false)
        };
        if same {
            let also = if input == output {
                String::new()
            } else if input.as_os_str() == "-" {
                " (standard input is read from it)".to_owned()
            } else {
                format!(" ({})", input.display())
            };
            return Err(CliError::Invalid(format!(
                "{}: the output is also an input{also}",
                output.display()
            )));
        }
    }
    Ok(())
}

/// Whether standard input is read from the file `path` (the same device and inode), when
/// `path` exists.
fn stdin_is(path: &Path) -> bool {
    match (
        same_file::Handle::stdin(),
        same_file::Handle::from_path(path),
    ) {
        (Ok(stdin), Ok(output)) => stdin == output,
        _ => false,
    }
}

/// A read error on `path` as a [`CliError`].
pub(crate) fn read_error(path: &Path) -> impl FnOnce(io::Error) -> CliError + '_ {
    move |source| {
        // Object storage's errors name their URL themselves.
        #[cfg(feature = "object-store")]
        let source = match source.downcast::<grader_eval::store::StoreError>() {
            Ok(error) => return CliError::Store(error),
            Err(source) => source,
        };
        CliError::Read {
            path: PathBuf::from(path),
            source,
        }
    }
}

/// Whether a line holds nothing but whitespace (blank lines of JSON Lines are skipped).
#[must_use]
pub fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// Parses a byte size such as `64M`, `1G`, `500k` or `1048576` (binary multiples).
///
/// ```
/// assert_eq!(grader_cli::input::parse_size("64M"), Ok(64 << 20));
/// assert!(grader_cli::input::parse_size("lots").is_err());
/// ```
///
/// # Errors
/// A message when `text` is not a size.
pub fn parse_size(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let (digits, shift) = match text.char_indices().last() {
        Some((at, 'k' | 'K')) => (&text[..at], 10),
        Some((at, 'm' | 'M')) => (&text[..at], 20),
        Some((at, 'g' | 'G')) => (&text[..at], 30),
        _ => (text, 0),
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("`{text}` is not a size (e.g. 64M, 1G, 1048576)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `step` bytes per read, so lines cross buffer refills.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(out.len()).min(self.bytes.len());
            out[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    fn all(bytes: &[u8], step: usize, max: usize) -> Vec<(u64, Result<Vec<u8>, u64>, bool)> {
        let mut lines = Lines::new(Trickle { bytes, step }, max);
        let mut found = Vec::new();
        while let Some((number, line)) = lines.next_line().expect("in-memory reads succeed") {
            let line = match line {
                Line::Text(text) => Ok(text.to_vec()),
                Line::TooLong { bytes } => Err(bytes),
            };
            found.push((number, line, lines.terminated()));
        }
        found
    }

    #[test]
    fn lines_are_the_same_whatever_the_read_sizes() {
        let text = b"first\nsecond line\r\n\nx123456789012\nlast";
        let expected = vec![
            (1, Ok(b"first".to_vec()), true),
            (2, Ok(b"second line".to_vec()), true),
            (3, Ok(Vec::new()), true),
            (4, Err(13), true),
            (5, Ok(b"last".to_vec()), false),
        ];
        for step in [1, 2, 3, 7, 64] {
            assert_eq!(all(text, step, 12), expected, "reads of {step} bytes");
        }
        assert!(all(b"", 1, 10).is_empty());
        assert_eq!(all(b"\n", 1, 10), vec![(1, Ok(Vec::new()), true)]);
    }

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("1k"), Ok(1024));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("17"), Ok(17));
        assert!(parse_size("0").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
    }
}
