//! One line of a results file, whoever wrote it.
//!
//! This is the one place that knows what a line holds; `show`, `summary`, `diff` and `report`
//! see only [`Record`], and turn it into grader-core's evaluation [`Line`] where they need the
//! summary. A line is either
//!
//! - an evaluation line (grader-core's [`Line`]: `{"v":1,"id":…,"epoch":…,"result":…}`), or
//! - a bare `EvaluationResult`, as the HUD Python SDK writes with `model_dump_json()`; its
//!   sample id is its `sample_id` field when it has one, and its epoch 1; `{}`, what hud 0.6.21
//!   keeps as `run.evaluation` of a rollout that failed before launch (`Grade.ungraded()`), is
//!   a record with no reward (not graded), never a refused line and never a 0; or
//! - one of hud's spans (`hud/telemetry`, a span file as hud writes it): the spans of one
//!   rollout's trace make one record ([`crate::spans`]), read by [`read`] and [`Traces`].
//!
//! A result says its reward as `reward` (grader's and the HUD SDK's `EvaluationResult`) or as
//! `score` with no `reward` (hud's grade frame, the reply to `tasks.grade`, and
//! `run.evaluation`, what hud keeps of a rollout): both are read, the form is recorded in
//! [`Record::form`], and a result with neither (not marked `isError`) is refused rather than
//! read as 0.

use std::path::{Path, PathBuf};

use grader_core::EvaluationResult;
use grader_eval::line::{FormError, RewardForm, settle_line, settle_result};
use grader_eval::{ErrorKind, Line};
use serde_json::Value;

use crate::CliError;
use crate::input::{self, Format, LineLimits};
use crate::spans::{Span, Trace, Traces};
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
    /// The field the reward was read from; `None` without a reward to read (a failed grading,
    /// or a result marked `isError` with neither field).
    pub form: Option<RewardForm>,
    /// When the grading started (RFC 3339), when the line says.
    pub started_at: Option<String>,
    /// The sample's input, target and the agent's answer, when the line holds them.
    pub texts: SampleTexts,
}

/// What an evaluation line may hold of its sample besides the result: its input, target and
/// the agent's answer (written when the sample gives them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SampleTexts {
    /// What the agent was given.
    pub input: Option<String>,
    /// What was expected.
    pub target: Option<String>,
    /// What the agent answered.
    pub answer: Option<String>,
}

/// A line that is not a result.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// Not JSON, or not shaped as a result or an evaluation line.
    #[error("{message}")]
    Json {
        /// What is wrong, said plainly (NaN and infinities named as such).
        message: String,
        /// serde's error.
        #[source]
        source: serde_json::Error,
    },
    /// A result whose reward cannot be read.
    #[error(transparent)]
    Form(#[from] FormError),
    /// A line that would cost more than the budget once parsed (`--max-parsed`): not parsed.
    #[error("{0} (--max-parsed); not read")]
    TooCostly(#[from] grader_core::cost::CostError),
}

impl RecordError {
    /// Whether the JSON ended too early (a line cut short).
    #[must_use]
    pub fn is_eof(&self) -> bool {
        matches!(self, RecordError::Json { source, .. } if source.is_eof())
    }

    fn json(bytes: &[u8], source: serde_json::Error) -> Self {
        RecordError::Json {
            message: non_finite_message(bytes, &source).unwrap_or_else(|| source.to_string()),
            source,
        }
    }
}

/// What a JSON error means when it is a NaN, an infinity or a number too large for a double
/// where a number belongs (Python's `json.dumps` writes `NaN` and `Infinity`, which JSON does
/// not have); `None` for any other error.
pub(crate) fn non_finite_message(bytes: &[u8], error: &serde_json::Error) -> Option<String> {
    if error.to_string().starts_with("number out of range") {
        return Some(format!(
            "a number too large for a double: scores and rewards must be finite ({error})"
        ));
    }
    // serde_json counts columns in bytes from 1, on the error's line.
    let start = line_start(bytes, error.line()) + error.column().saturating_sub(1);
    let rest = bytes.get(start..).unwrap_or_default();
    [
        "NaN",
        "-NaN",
        "Infinity",
        "-Infinity",
        "+Infinity",
        "inf",
        "-inf",
        "nan",
    ]
    .into_iter()
    .find(|token| rest.starts_with(token.as_bytes()))
    .map(|token| {
        format!("`{token}` is not JSON: scores and rewards must be finite numbers ({error})")
    })
}

/// The byte offset where line `line` (from 1) of `bytes` starts.
fn line_start(bytes: &[u8], line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    memchr::memchr_iter(b'\n', bytes)
        .nth(line - 2)
        .map_or(bytes.len(), |at| at + 1)
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

/// What `hud` keeps as `run.evaluation` of a rollout that never ran (`Grade.ungraded()` in
/// `hud/eval/run.py`): an empty object.
pub const UNGRADED: &str = "not graded: hud wrote `{}` (a rollout that failed before launch)";

/// How the error of a record hud did not grade begins.
const NOT_GRADED: &str = "not graded: ";

/// Whether `bytes` is an empty JSON object, `{}`.
fn is_empty_object(bytes: &[u8]) -> bool {
    bytes
        .trim_ascii()
        .strip_prefix(b"{")
        .and_then(|rest| rest.strip_suffix(b"}"))
        .is_some_and(|inside| inside.trim_ascii().is_empty())
}

/// One line read: a record, or one of hud's spans, which make a record with the other spans
/// of their trace ([`Traces`]).
#[derive(Debug)]
pub enum Read {
    /// A result, an evaluation line or `{}`.
    Record(Record),
    /// A span of hud's.
    Span(Span),
}

/// Reads one line as [`parse`] does, and spans too, refusing a line that would cost more than
/// `max_parsed` bytes once parsed (before parsing it).
///
/// ```
/// use grader_cli::records::{Read, read};
///
/// assert!(matches!(read(br#"{"reward": 1.0}"#, 1 << 20), Ok(Read::Record(_))));
/// let zeros = format!("{{\"reward\": 0, \"info\": {{\"x\": [{}0]}}}}", "0,".repeat(10_000));
/// let error = read(zeros.as_bytes(), 1 << 20).unwrap_err();
/// assert!(error.to_string().contains("--max-parsed"), "{error}");
/// ```
///
/// # Errors
/// As [`parse`], and [`RecordError::TooCostly`].
pub fn read(bytes: &[u8], max_parsed: usize) -> Result<Read, RecordError> {
    grader_core::cost::check(bytes, max_parsed)?;
    if crate::spans::is_span(bytes) {
        let span: Span =
            serde_json::from_slice(bytes).map_err(|error| RecordError::json(bytes, error))?;
        return Ok(Read::Span(span));
    }
    parse(bytes).map(Read::Record)
}

/// Reads one line.
///
/// ```
/// use grader_eval::line::RewardForm;
///
/// let record = grader_cli::records::parse(br#"{"reward": 0.5, "sample_id": "q1"}"#)?;
/// assert_eq!(record.sample.as_deref(), Some("q1"));
/// assert_eq!(record.result.map(|r| r.reward()), Some(0.5));
///
/// let line = br#"{"v":1,"id":"q2","epoch":3,"duration_secs":0.1,"error":null,"result":{"reward":1.0}}"#;
/// let record = grader_cli::records::parse(line)?;
/// assert_eq!((record.sample.as_deref(), record.epoch), (Some("q2"), Some(3)));
///
/// // hud's grade frame: its score is the reward.
/// let record = grader_cli::records::parse(br#"{"done": true, "isError": false, "score": 0.75}"#)?;
/// assert_eq!((record.reward(), record.form), (Some(0.75), Some(RewardForm::Score)));
///
/// let error = grader_cli::records::parse(br#"{"done": true}"#).unwrap_err();
/// assert!(error.to_string().starts_with("neither `reward` nor `score`"));
/// # Ok::<(), grader_cli::records::RecordError>(())
/// ```
///
/// # Errors
/// When the line is neither an evaluation line nor a result, or is a result with neither
/// `reward` nor `score` (not marked `isError`), or a `score` that is not a finite number.
pub fn parse(bytes: &[u8]) -> Result<Record, RecordError> {
    if is_evaluation_line(bytes) {
        let mut line: Line =
            serde_json::from_slice(bytes).map_err(|error| RecordError::json(bytes, error))?;
        let form = settle_line(bytes, &mut line)?;
        return Ok(Record {
            sample: Some(line.id),
            epoch: Some(line.epoch),
            result: line.result,
            error: line.error.map(|error| (error.kind, error.message)),
            duration_secs: Some(line.duration_secs),
            form,
            started_at: line.started_at,
            texts: SampleTexts {
                input: line.input,
                target: line.target,
                answer: line.answer,
            },
        });
    }
    if is_empty_object(bytes) {
        return Ok(Record::ungraded(None, UNGRADED.to_owned()));
    }
    let mut result: EvaluationResult =
        serde_json::from_slice(bytes).map_err(|error| RecordError::json(bytes, error))?;
    let form = settle_result(bytes, &mut result)?;
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
        form,
        started_at: None,
        texts: SampleTexts::default(),
    })
}

impl Record {
    /// A record of a sample that was not graded: no result, and why.
    fn ungraded(sample: Option<String>, why: String) -> Record {
        Record {
            sample,
            epoch: None,
            result: None,
            error: Some((ErrorKind::Failed, why)),
            duration_secs: None,
            form: None,
            started_at: None,
            texts: SampleTexts::default(),
        }
    }

    /// The record of a rollout's trace: its last grade frame, read as a result with its `score`
    /// as the reward (its sample the run's id, its input the prompt, its answer what was
    /// sent), or, when it has none, a record with no reward saying why.
    ///
    /// # Errors
    /// When the grade frame is not a result.
    pub fn from_trace(trace: Trace) -> Result<Record, RecordError> {
        let Trace {
            run_id,
            prompt,
            grade,
            graded_at,
            error,
            ..
        } = trace;
        let Some((frame, answer)) = grade else {
            let why = match error {
                Some(error) => format!("not graded: {error}"),
                None => "not graded: the trace has no grade".to_owned(),
            };
            let mut record = Record::ungraded(Some(run_id), why);
            record.texts.input = prompt;
            return Ok(record);
        };
        let bytes = serde_json::to_vec(&frame).unwrap_or_default();
        let mut record = parse(&bytes)?;
        record.sample = Some(run_id);
        record.started_at = graded_at;
        record.texts.input = prompt;
        record.texts.answer = answer;
        Ok(record)
    }

    /// Whether hud did not grade it (`{}`, or a trace with no grade).
    #[must_use]
    pub fn is_not_graded(&self) -> bool {
        self.result.is_none()
            && self
                .error
                .as_ref()
                .is_some_and(|(_, message)| message.starts_with(NOT_GRADED))
    }

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
        let mut line = match (self.error, self.result) {
            (Some((kind, message)), _) => Line::failed(id, epoch, kind, message, duration),
            (None, Some(result)) => Line::graded(id, epoch, result, duration),
            (None, None) => Line::failed(id, epoch, ErrorKind::Failed, "no result", duration),
        };
        line.started_at = self.started_at;
        (line.input, line.target, line.answer) =
            (self.texts.input, self.texts.target, self.texts.answer);
        line
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
    /// Files that hold results of both forms (`reward` and hud's `score`), each said in a line.
    pub mixed: Vec<String>,
    /// Records of samples hud did not grade (`{}`, or a trace with no grade), as `file:line`:
    /// counted as errored, never as 0, and named in a note.
    pub not_graded: Vec<String>,
}

/// How many results of a file had each form, and where the second form first appeared.
#[derive(Debug, Default)]
struct Forms {
    first: Option<RewardForm>,
    reward: u64,
    score: u64,
    /// The first line whose form is not the first line's.
    switch: Option<u64>,
}

impl Forms {
    fn add(&mut self, form: Option<RewardForm>, number: u64) {
        let Some(form) = form else { return };
        match form {
            RewardForm::Score => self.score += 1,
            _ => self.reward += 1,
        }
        match self.first {
            None => self.first = Some(form),
            Some(first) if first != form && self.switch.is_none() => self.switch = Some(number),
            Some(_) => {}
        }
    }

    /// The warning for a file of both forms.
    fn mixed(&self, path: &Path) -> Option<String> {
        let switch = self.switch?;
        Some(format!(
            "{}: results of two forms: {} with `reward`, {} with `score` and no `reward` \
             (hud's grade frame), the second form from line {switch}; each is read with its own \
             field as the reward",
            path.display(),
            self.reward,
            self.score
        ))
    }
}

impl Reading {
    /// Reports files of mixed forms and torn lines on `err` as warnings; fails when any line was bad.
    ///
    /// # Errors
    /// [`CliError::Invalid`] listing the bad lines (the first ten).
    pub fn finish(self, err: &mut dyn std::io::Write) -> Result<(), CliError> {
        for mixed in &self.mixed {
            writeln!(err, "grader: warning: {}", crate::text::one_line(mixed))?;
        }
        if let Some(first) = self.not_graded.first() {
            let more = match self.not_graded.len() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            };
            writeln!(
                err,
                "grader: note: {} not graded by hud (`{{}}`, what hud keeps of a rollout that \
                 failed before launch, or a trace with no grade): counted as errored, not as 0: \
                 {}{more}",
                match self.not_graded.len() {
                    1 => "1 result".to_owned(),
                    n => format!("{n} results"),
                },
                crate::text::one_line(first)
            )?;
        }
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
/// memory (a line past `limits` is reported, not loaded or parsed), hud's span files
/// included (each trace one record, at the line of its grade). Lines that are not records are
/// collected in the returned [`Reading`], not fatal.
///
/// # Errors
/// When a file cannot be read.
pub fn for_each_record(
    files: &[PathBuf],
    limits: LineLimits,
    mut each: impl FnMut(Record, &Path, u64),
) -> Result<Reading, CliError> {
    let mut reading = Reading::default();
    for path in files {
        let mut forms = Forms::default();
        if Format::of(path) == Format::Json {
            let bytes = input::read_all(path)?;
            match read(&bytes, limits.max_parsed) {
                Ok(Read::Record(record)) => {
                    if record.is_not_graded() {
                        reading.not_graded.push(format!("{}:1", path.display()));
                    }
                    each(record, path, 1);
                }
                Ok(Read::Span(span)) => {
                    let mut traces = Traces::default();
                    let trace = traces.push(&span, 1).or_else(|| traces.finish());
                    if let Some(trace) = trace {
                        emit_trace(trace, path, &mut reading, &mut forms, &mut each);
                    }
                }
                Err(error) => reading
                    .bad
                    .push(one_line(&format!("{}: {error}", path.display()))),
            }
            continue;
        }
        let mut lines = input::lines(path, limits.max_line)?;
        let mut traces = Traces::default();
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
            match read(bytes, limits.max_parsed) {
                Ok(Read::Record(record)) => {
                    if record.is_not_graded() {
                        reading
                            .not_graded
                            .push(format!("{}:{number}", path.display()));
                    }
                    forms.add(record.form, number);
                    each(record, path, number);
                }
                Ok(Read::Span(span)) => {
                    if let Some(trace) = traces.push(&span, number) {
                        emit_trace(trace, path, &mut reading, &mut forms, &mut each);
                    }
                }
                Err(error) if error.is_eof() && !lines.terminated() => {
                    reading.torn.push(format!("{}:{number}", path.display()));
                }
                Err(error) => reading
                    .bad
                    .push(one_line(&format!("{}:{number}: {error}", path.display()))),
            }
        }
        if let Some(trace) = traces.finish() {
            emit_trace(trace, path, &mut reading, &mut forms, &mut each);
        }
        reading.mixed.extend(forms.mixed(path));
    }
    Ok(reading)
}

/// Hands the record of a finished trace to `each`, or counts its grade as a bad line.
fn emit_trace(
    trace: Trace,
    path: &Path,
    reading: &mut Reading,
    forms: &mut Forms,
    each: &mut impl FnMut(Record, &Path, u64),
) {
    let line = trace.line;
    match Record::from_trace(trace) {
        Ok(record) => {
            if record.is_not_graded() {
                reading
                    .not_graded
                    .push(format!("{}:{line}", path.display()));
            }
            forms.add(record.form, line);
            each(record, path, line);
        }
        Err(error) => reading.bad.push(one_line(&format!(
            "{}:{line}: the trace's grade: {error}",
            path.display()
        ))),
    }
}
