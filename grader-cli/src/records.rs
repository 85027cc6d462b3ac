//! One line of a results file, whoever wrote it.
//!
//! This is the one place that knows what a line holds; `show`, `summary`, `diff` and `report`
//! see only [`Record`], and turn it into grader-core's evaluation [`Line`] where they need the
//! summary. A line is either
//!
//! - an evaluation line (grader-core's [`Line`]: `{"v":1,"id":…,"epoch":…,"result":…}`), or
//! - a bare `EvaluationResult`, as the HUD Python SDK writes with `model_dump_json()`; its
//!   sample id is its `sample_id` field when it has one, and its epoch 1.

use std::path::{Path, PathBuf};

use grader_core::EvaluationResult;
use grader_eval::{ErrorKind, Line};
use serde_json::Value;

use crate::CliError;
use crate::input::{self, Format};
use crate::text::one_line;

/// What one line says about one sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The sample's id, when the line names it.
    pub sample: Option<String>,
    /// The epoch (repetition) of the sample, from 1, when the line says.
    pub epoch: Option<u32>,
    /// The result, unless grading failed.
    pub result: Option<EvaluationResult>,
    /// Why grading failed, when it did: the failure's kind and message.
    pub error: Option<(ErrorKind, String)>,
    /// How long the grading took, in seconds, when the line says.
    pub duration_secs: Option<f64>,
}

/// Whether `bytes` is an evaluation line: a JSON object whose first key is `"v"`, as
/// grader-core writes them. Anything else is read as a bare result.
#[must_use]
pub fn is_evaluation_line(bytes: &[u8]) -> bool {
    let mut rest = bytes.trim_ascii_start();
    let Some(after_brace) = rest.strip_prefix(b"{") else {
        return false;
    };
    rest = after_brace.trim_ascii_start();
    rest.starts_with(b"\"v\"")
}

/// Reads one line.
///
/// ```
/// let record = grader_cli::records::parse(br#"{"reward": 0.5, "sample_id": "q1"}"#)?;
/// assert_eq!(record.sample.as_deref(), Some("q1"));
/// assert_eq!(record.result.map(|r| r.reward()), Some(0.5));
///
/// let line = br#"{"v":1,"id":"q2","epoch":3,"duration_secs":0.1,"error":null,"result":{"reward":1.0}}"#;
/// let record = grader_cli::records::parse(line)?;
/// assert_eq!((record.sample.as_deref(), record.epoch), (Some("q2"), Some(3)));
/// # Ok::<(), serde_json::Error>(())
/// ```
///
/// # Errors
/// When the line is neither an evaluation line nor a result.
pub fn parse(bytes: &[u8]) -> Result<Record, serde_json::Error> {
    if is_evaluation_line(bytes) {
        let line: Line = serde_json::from_slice(bytes)?;
        return Ok(Record {
            sample: Some(line.id),
            epoch: Some(line.epoch),
            result: line.result,
            error: line.error.map(|error| (error.kind, error.message)),
            duration_secs: Some(line.duration_secs),
        });
    }
    let result: EvaluationResult = serde_json::from_slice(bytes)?;
    let sample = result.extra.get("sample_id").as_ref().and_then(id_text);
    let epoch = result
        .extra
        .get("epoch")
        .as_ref()
        .and_then(Value::as_u64)
        .and_then(|epoch| u32::try_from(epoch).ok())
        .filter(|epoch| *epoch > 0);
    Ok(Record {
        sample,
        epoch,
        result: Some(result),
        error: None,
        duration_secs: None,
    })
}

impl Record {
    /// The reward, when the record is scored (a result without `isError`, no failure).
    #[must_use]
    pub fn reward(&self) -> Option<f64> {
        match (&self.error, &self.result) {
            (None, Some(result)) if !result.is_error => Some(result.reward()),
            _ => None,
        }
    }

    /// Why the record has no reward, in a few words, when it has none.
    #[must_use]
    pub fn error_text(&self) -> Option<String> {
        if let Some((kind, message)) = &self.error {
            let kind = match kind {
                ErrorKind::Failed => "failed",
                ErrorKind::Panicked => "panicked",
                _ => "error",
            };
            return Some(format!("{kind}: {message}"));
        }
        let result = self.result.as_ref()?;
        if !result.is_error {
            return None;
        }
        let why = result
            .info
            .get("error")
            .map(|error| match error {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            })
            .or_else(|| result.content.clone())
            .unwrap_or_else(|| "the result is marked isError".to_owned());
        Some(format!("isError: {why}"))
    }

    /// The sample's id, or `fallback` (such as `file:line`) when the line names none.
    #[must_use]
    pub fn sample_or(&self, fallback: impl FnOnce() -> String) -> String {
        self.sample.clone().unwrap_or_else(fallback)
    }

    /// The record as an evaluation [`Line`] for grader-core's summary, under sample id `id`.
    #[must_use]
    pub fn into_line(self, id: String) -> Line {
        let epoch = self.epoch.unwrap_or(1);
        let duration = self.duration_secs.unwrap_or(0.0);
        match (self.error, self.result) {
            (Some((kind, message)), _) => Line::failed(id, epoch, kind, message, duration),
            (None, Some(result)) => Line::graded(id, epoch, result, duration),
            (None, None) => Line::failed(id, epoch, ErrorKind::Failed, "no result", duration),
        }
    }
}

/// An id as text: a string as it is, a number in decimal.
fn id_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// What reading files of records found besides the records.
#[derive(Debug, Default)]
pub struct Reading {
    /// Lines that are not records, as `file:line: why`.
    pub bad: Vec<String>,
    /// Last lines cut short (no newline, not JSON), skipped, as `file:line`.
    pub torn: Vec<String>,
}

impl Reading {
    /// Reports torn lines on `err` as warnings; fails when any line was bad.
    ///
    /// # Errors
    /// [`CliError::Invalid`] listing the bad lines (the first ten).
    pub fn finish(self, err: &mut dyn std::io::Write) -> Result<(), CliError> {
        for torn in &self.torn {
            writeln!(
                err,
                "grader: warning: {torn}: the last line is incomplete (a write cut short?); skipped"
            )?;
        }
        if self.bad.is_empty() {
            return Ok(());
        }
        let shown: Vec<&str> = self.bad.iter().take(10).map(String::as_str).collect();
        let more = self.bad.len() - shown.len();
        Err(CliError::Invalid(format!(
            "{} line(s) are not results{}:\n  {}\n(`grader validate` says what is wrong with each)",
            self.bad.len(),
            if more > 0 {
                format!(" ({more} not listed)")
            } else {
                String::new()
            },
            shown.join("\n  ")
        )))
    }
}

/// Reads every record of `files` in order, handing each to `each` with its file and line
/// number. A `.json` file is one record (line 1); other files are JSON Lines, read in bounded
/// memory. Lines that are not records are collected in the returned [`Reading`], not fatal.
///
/// # Errors
/// When a file cannot be read.
pub fn for_each_record(
    files: &[PathBuf],
    max_line: usize,
    mut each: impl FnMut(Record, &Path, u64),
) -> Result<Reading, CliError> {
    let mut reading = Reading::default();
    for path in files {
        if Format::of(path) == Format::Json {
            let bytes = input::read_all(path)?;
            match parse(&bytes) {
                Ok(record) => each(record, path, 1),
                Err(error) => reading
                    .bad
                    .push(one_line(&format!("{}: {error}", path.display()))),
            }
            continue;
        }
        let mut lines = input::lines(path, max_line)?;
        while let Some((number, line)) = lines.next_line().map_err(input::read_error(path))? {
            let bytes = match line {
                input::Line::Text(bytes) if input::is_blank(bytes) => continue,
                input::Line::Text(bytes) => bytes,
                input::Line::TooLong { bytes } => {
                    reading.bad.push(format!(
                        "{}:{number}: {bytes} bytes, longer than --max-line",
                        path.display()
                    ));
                    continue;
                }
            };
            match parse(bytes) {
                Ok(record) => each(record, path, number),
                Err(error) if error.is_eof() && !lines.terminated() => {
                    reading.torn.push(format!("{}:{number}", path.display()));
                }
                Err(error) => reading
                    .bad
                    .push(one_line(&format!("{}:{number}: {error}", path.display()))),
            }
        }
    }
    Ok(reading)
}
