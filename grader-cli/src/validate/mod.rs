//! `grader validate`: checks result files against the wire format.
//!
//! A result is checked as SPEC R1–R3, D2 and D11 say: a JSON object whose `reward` is a finite
//! number (or, with no `reward`, whose `score` is: hud's grade frame and `run.evaluation` say
//! the reward so; a result with neither must be marked `isError`), `done` and `isError` booleans, `content` a string or null, `info` an object, and
//! `subscores` null or an array of subscores; a subscore has exactly `name` (a string),
//! `weight` (a finite number), `value` (a number in `[0, 1]`), `children` (null or subscores)
//! and `info` (null or an object; `metadata` is accepted for it). Other fields of a result are
//! allowed. JSON has no NaN or infinity, so a file holding `NaN`, `Infinity` or a number too
//! large for a double is reported as such.
//!
//! A line whose first key is `"v"` is an evaluation line (grader-eval's `Line`): its
//! version, `id`, `epoch`, `duration_secs` and `error` are checked, and its `result` as above.
//! `{}` is what hud keeps of a rollout that failed before launch: a valid line that records no
//! grade, counted as *not graded*. A line of one of hud's span files is a span: the grade frame
//! of a task's `evaluate` step is checked as a result; other spans are counted and left alone
//! ([`crate::spans`]).
//!
//! Every problem is reported with its line and JSON path. Lines are read one at a time (a line
//! longer than `--max-line` is reported and skipped without being loaded, and one that would
//! cost more than `--max-parsed` once parsed without being parsed), so memory stays flat
//! whatever the file's size. A line that parses as grader-core's `EvaluationResult` is valid:
//! the type is the authority, and the detailed walk only runs to explain a line it rejects.
//!
//! The reference's warnings (duplicate subscore names, positive weights not summing to about 1,
//! subscores that do not add up to the reward) are reported as warnings: they do not fail the
//! check unless `--strict`.
//!
//! Each file ends with a verdict ([`Report::verdict`]) that names the form its results were
//! read as (`reward` or hud's `score`; a file of both gets a warning where the second form
//! appears) and keeps two kinds of "error" apart:
//! *invalid* results, whose format is wrong (they fail the check), and *grading errors*, valid
//! lines that record a grading that failed (an evaluation line's `error`, or `isError`), which
//! are data, not problems, and are only counted.
//!
//! The walk over a rejected line's JSON, which says where and why, is `walk`.

use std::fmt::{self, Display, Formatter};
use std::io::Write;
use std::path::{Path, PathBuf};

use grader_core::EvaluationResult;
use serde_json::Value;

use grader_eval::line::{FormError, RewardForm, settle_line, settle_result};

mod walk;

use walk::{check_line, check_result, child_path, json_path, warnings};

use crate::input::{self, Format, Line, LineLimits};
use crate::records;
use crate::text::one_line;
use crate::{CliError, EXIT_INVALID, EXIT_OK};

/// Arguments of `grader validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// Files to check: `.json` is one result, anything else JSON Lines (`-` reads standard
    /// input).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// How much of a line is read: its bytes and what it costs once parsed. A line past either
    /// is a problem, skipped without being loaded or parsed.
    #[command(flatten)]
    pub limits: LineLimits,
    /// Print at most this many problems per file (all are counted).
    #[arg(long, default_value_t = 50)]
    pub max_problems: usize,
    /// Count the reference's warnings as problems.
    #[arg(long)]
    pub strict: bool,
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The data does not follow the wire format.
    Error,
    /// The reference would warn (the data is still readable).
    Warning,
}

/// One finding: where it is and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The line (from 1) in a JSON Lines file; `None` for a `.json` document.
    pub line: Option<u64>,
    /// Where in the line's JSON, as a path such as `$.subscores[1].value`.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// Whether it is an error or a warning.
    pub severity: Severity,
}

impl Display for Problem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        if self.severity == Severity::Warning {
            f.write_str("warning: ")?;
        }
        write!(f, "{}: {}", one_line(&self.path), one_line(&self.message))
    }
}

/// What checking one file found.
#[derive(Debug, Default)]
pub struct Report {
    /// Results read (valid or not).
    pub results: u64,
    /// Of those, results (lines) that do not follow the wire format: each has one error or
    /// more.
    pub invalid: u64,
    /// Errors found: problems with the data's format.
    pub errors: u64,
    /// Warnings found.
    pub warnings: u64,
    /// Valid results that record a failed grading: an evaluation line with an `error`, or a
    /// result with `isError` set. Not a problem of the file (the grading failed, not the
    /// format); `grader summary` counts them apart from the scored results.
    pub grading_errors: u64,
    /// Valid results whose reward was read from `reward` (grader's and the HUD SDK's
    /// `EvaluationResult`).
    pub reward_form: u64,
    /// Valid results whose reward was read from `score`, having no `reward` (hud's grade frame
    /// and `run.evaluation`).
    pub score_form: u64,
    /// Of the grading errors, lines that are `{}`: what hud keeps of a rollout that failed
    /// before launch (not graded).
    pub ungraded: u64,
    /// Lines that are spans of hud's traces but no grade (the steps of a rollout).
    pub spans: u64,
}

impl Report {
    /// The one-line verdict on a file, as `grader validate` prints it after the file's name:
    /// invalid results (format problems) and grading errors (valid lines recording a failed
    /// grading) are said apart.
    ///
    /// ```
    /// use grader_cli::validate::Report;
    ///
    /// let report = Report {
    ///     results: 5, invalid: 1, errors: 2, warnings: 0, grading_errors: 3,
    ///     reward_form: 0, score_form: 4, ungraded: 1, spans: 0,
    /// };
    /// assert_eq!(
    ///     report.verdict(false),
    ///     "5 results read as hud's grade frame (`score` is the reward): 1 invalid \
    ///      (2 format error(s)), 0 warning(s); \
    ///      3 grading error(s) recorded (valid lines: a failed grading, isError, or 1 not \
    ///      graded: `{}`, hud's evaluation of a rollout that failed before launch)"
    /// );
    /// ```
    #[must_use]
    pub fn verdict(&self, strict: bool) -> String {
        let bad = self.errors + if strict { self.warnings } else { 0 };
        let forms = match (self.reward_form, self.score_form) {
            (0, 0) => String::new(),
            (_, 0) => " read as EvaluationResult (`reward`)".to_owned(),
            (0, _) => " read as hud's grade frame (`score` is the reward)".to_owned(),
            (reward, score) => format!(
                " of two forms ({reward} EvaluationResult with `reward`, {score} hud's grade \
                 frame with `score`)"
            ),
        };
        format!(
            "{} {}{forms}: {} invalid ({} format error(s)), {} warning(s){}{}{}",
            self.results,
            if self.results == 1 {
                "result"
            } else {
                "results"
            },
            self.invalid,
            self.errors,
            self.warnings,
            if self.grading_errors > 0 && self.ungraded > 0 {
                format!(
                    "; {} grading error(s) recorded (valid lines: a failed grading, isError, or \
                     {} not graded: `{{}}`, hud's evaluation of a rollout that failed before \
                     launch)",
                    self.grading_errors, self.ungraded
                )
            } else if self.grading_errors > 0 {
                format!(
                    "; {} grading error(s) recorded (valid lines: a failed grading or isError)",
                    self.grading_errors
                )
            } else {
                String::new()
            },
            if self.spans > 0 {
                format!(
                    "; {} other span(s) of hud's traces (steps, not grades)",
                    self.spans
                )
            } else {
                String::new()
            },
            if bad > 0 { "" } else { ": valid" }
        )
    }
}

/// Runs `grader validate`.
///
/// # Errors
/// When a file cannot be read or the output cannot be written.
pub fn run(args: &ValidateArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let mut failed = false;
    for path in &args.files {
        let mut shown = 0usize;
        let mut hidden = 0u64;
        let mut sink = |problem: Problem| -> std::io::Result<()> {
            if shown < args.max_problems {
                shown += 1;
                writeln!(out, "{}: {problem}", path.display())
            } else {
                hidden += 1;
                Ok(())
            }
        };
        let report = check_file(path, args.limits, &mut sink)?;
        if hidden > 0 {
            writeln!(
                out,
                "{}: … {hidden} more not shown (--max-problems)",
                path.display()
            )?;
        }
        let bad = report.errors + if args.strict { report.warnings } else { 0 };
        failed |= bad > 0;
        writeln!(out, "{}: {}", path.display(), report.verdict(args.strict))?;
    }
    Ok(if failed { EXIT_INVALID } else { EXIT_OK })
}

/// Checks one file, handing each problem to `sink` as it is found.
///
/// # Errors
/// When the file cannot be read, or `sink` fails.
pub fn check_file(
    path: &Path,
    limits: LineLimits,
    sink: &mut dyn FnMut(Problem) -> std::io::Result<()>,
) -> Result<Report, CliError> {
    let max_line = limits.max_line;
    let mut report = Report::default();
    let mut emit = |problem: Problem, report: &mut Report| {
        match problem.severity {
            Severity::Error => report.errors += 1,
            Severity::Warning => report.warnings += 1,
        }
        sink(problem)
    };
    let mut first_form = None;
    let mut mixed = false;
    let mut tally = |mut checked: Checked, report: &mut Report| {
        if checked.span_without_grade {
            report.spans += 1;
            return Ok(());
        }
        report.results += 1;
        report.ungraded += u64::from(checked.ungraded);
        report.grading_errors += u64::from(checked.grading_error);
        if let Some(form) = checked.form {
            match form {
                RewardForm::Score => report.score_form += 1,
                _ => report.reward_form += 1,
            }
            match first_form {
                None => first_form = Some((form, checked.line)),
                // Said once, where the second form first appears.
                Some((first, at)) if first != form && !mixed => {
                    mixed = true;
                    {
                        checked.problems.push(Problem {
                            line: checked.line,
                            path: "$".to_owned(),
                            message: format!(
                                "this file mixes result forms: this result is {}, {} is {}; \
                                 each is read with its own field as the reward",
                                form.describe(),
                                at.map_or_else(
                                    || "the first".to_owned(),
                                    |at| format!("line {at}")
                                ),
                                first.describe()
                            ),
                            severity: Severity::Warning,
                        });
                    }
                }
                Some(_) => {}
            }
        }
        report.invalid += u64::from(
            checked
                .problems
                .iter()
                .any(|problem| problem.severity == Severity::Error),
        );
        checked
            .problems
            .into_iter()
            .try_for_each(|problem| emit(problem, report))
    };
    if Format::of(path) == Format::Json {
        let bytes = input::read_all(path)?;
        tally(check_bounded(&bytes, None, limits.max_parsed), &mut report)?;
        return Ok(report);
    }
    let mut lines = input::lines(path, max_line)?;
    while let Some((number, line)) = lines.next_line().map_err(input::read_error(path))? {
        let checked = match line {
            Line::Text(bytes) if input::is_blank(bytes) => continue,
            Line::Text(bytes) => check_bounded(bytes, Some(number), limits.max_parsed),
            Line::TooLong { bytes } => Checked {
                problems: vec![Problem {
                    line: Some(number),
                    path: "$".to_owned(),
                    message: format!(
                        "the line is {bytes} bytes, longer than the limit of {max_line} \
                         (--max-line); not checked"
                    ),
                    severity: Severity::Error,
                }],
                line: Some(number),
                ..Checked::default()
            },
        };
        tally(checked, &mut report)?;
    }
    Ok(report)
}

/// Checks one result's JSON text; `line` is its line number, if it is a line of a file.
///
/// ```
/// use grader_cli::validate::check_result_bytes;
///
/// assert!(check_result_bytes(br#"{"reward": 1.0, "subscores": [{"name": "a", "value": 1}]}"#, None).is_empty());
/// let problems = check_result_bytes(br#"{"subscores": [{"name": "a", "value": 2}]}"#, Some(7));
/// assert_eq!(problems[0].to_string(), "line 7: $.subscores[0].value: value 2 is outside [0, 1]");
/// ```
#[must_use]
pub fn check_result_bytes(bytes: &[u8], line: Option<u64>) -> Vec<Problem> {
    check(bytes, line).problems
}

/// What checking one result found.
#[derive(Default)]
struct Checked {
    problems: Vec<Problem>,
    /// A valid result that records a failed grading.
    grading_error: bool,
    /// The field a valid result's reward was read from.
    form: Option<RewardForm>,
    /// The line checked, in a JSON Lines file.
    line: Option<u64>,
    /// A valid `{}`: not graded.
    ungraded: bool,
    /// A span of hud's that is no grade: not a result.
    span_without_grade: bool,
}

/// What the JSON path of a span's grade frame is.
const SPAN_GRADE_PATH: &str = "$.attributes[\"hud.payload\"].task_call.result";

/// Checks one line as [`check`] does, first refusing one that would cost more than
/// `max_parsed` bytes once parsed, and reading `{}` and hud's spans.
fn check_bounded(bytes: &[u8], line: Option<u64>, max_parsed: usize) -> Checked {
    let problem = |message: String| Checked {
        problems: vec![Problem {
            line,
            path: "$".to_owned(),
            message,
            severity: Severity::Error,
        }],
        line,
        ..Checked::default()
    };
    if let Err(error) = grader_core::cost::check(bytes, max_parsed) {
        return problem(format!(
            "the line would take {error} (--max-parsed); not checked"
        ));
    }
    if bytes
        .trim_ascii()
        .strip_prefix(b"{")
        .and_then(|rest| rest.strip_suffix(b"}"))
        .is_some_and(|inside| inside.trim_ascii().is_empty())
    {
        return Checked {
            grading_error: true,
            ungraded: true,
            line,
            ..Checked::default()
        };
    }
    if crate::spans::is_span(bytes) {
        let span: crate::spans::Span = match serde_json::from_slice(bytes) {
            Ok(span) => span,
            Err(error) => return problem(format!("a span of hud's that does not read: {error}")),
        };
        let mut traces = crate::spans::Traces::default();
        let grade = traces
            .push(&span, 0)
            .or_else(|| traces.finish())
            .and_then(|trace| trace.grade);
        let Some((frame, _)) = grade else {
            return Checked {
                span_without_grade: true,
                line,
                ..Checked::default()
            };
        };
        let frame = serde_json::to_vec(&frame).unwrap_or_default();
        let mut checked = check(&frame, line);
        for problem in &mut checked.problems {
            problem.path = format!("{SPAN_GRADE_PATH}{}", &problem.path[1..]);
        }
        return checked;
    }
    check(bytes, line)
}

fn check(bytes: &[u8], line: Option<u64>) -> Checked {
    let invalid = |problems| Checked {
        problems,
        line,
        ..Checked::default()
    };
    let problem = |path: String, message: String, severity| Problem {
        line,
        path,
        message,
        severity,
    };
    let evaluation = records::is_evaluation_line(bytes);
    // Fast path: what the type accepts is valid.
    let typed_error = if evaluation {
        match serde_json::from_slice::<grader_eval::Line>(bytes) {
            Ok(mut parsed) => {
                let form = match settle_line(bytes, &mut parsed) {
                    Ok(form) => form,
                    Err(error) => return invalid(vec![form_problem(&error, "$.result", line)]),
                };
                let grading_error =
                    parsed.error.is_some() || parsed.result.as_ref().is_some_and(|r| r.is_error());
                let problems = parsed
                    .result
                    .map(|result| warnings(&result, "$.result"))
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(path, message)| problem(path, message, Severity::Warning))
                    .collect();
                return Checked {
                    problems,
                    grading_error,
                    form,
                    line,
                    ..Checked::default()
                };
            }
            Err(error) => error,
        }
    } else {
        match serde_json::from_slice::<EvaluationResult>(bytes) {
            Ok(mut result) => {
                let form = match settle_result(bytes, &mut result) {
                    Ok(form) => form,
                    Err(error) => return invalid(vec![form_problem(&error, "$", line)]),
                };
                return Checked {
                    problems: warnings(&result, "$")
                        .into_iter()
                        .map(|(path, message)| problem(path, message, Severity::Warning))
                        .collect(),
                    grading_error: result.is_error(),
                    form,
                    line,
                    ..Checked::default()
                };
            }
            Err(error) => error,
        }
    };
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(error) => {
            return invalid(vec![problem(
                "$".to_owned(),
                syntax_message(bytes, &error),
                Severity::Error,
            )]);
        }
    };
    let mut found = Vec::new();
    if evaluation {
        check_line(&value, &mut found);
    } else {
        check_result(&value, "$", &mut found);
    }
    if found.is_empty() {
        // The walk found nothing the type rejects: say what the type said, where it said it.
        let typed = if evaluation {
            serde_path_to_error::deserialize::<_, grader_eval::Line>(&value).map(drop)
        } else {
            serde_path_to_error::deserialize::<_, EvaluationResult>(&value).map(drop)
        };
        let (path, message) = match typed {
            Err(error) => (json_path(error.path()), error.inner().to_string()),
            Ok(()) => ("$".to_owned(), typed_error.to_string()),
        };
        found.push((path, message));
    }
    invalid(
        found
            .into_iter()
            .map(|(path, message)| problem(path, message, Severity::Error))
            .collect(),
    )
}

/// A result whose reward cannot be read, as a problem at `path` (the result) or its `score`.
fn form_problem(error: &FormError, path: &str, line: Option<u64>) -> Problem {
    let path = match error {
        FormError::NoReward => path.to_owned(),
        _ => child_path(path, "score"),
    };
    Problem {
        line,
        path,
        message: error.to_string(),
        severity: Severity::Error,
    }
}

/// A JSON syntax error, said plainly: NaN and infinities named as such.
fn syntax_message(bytes: &[u8], error: &serde_json::Error) -> String {
    if error.is_eof() {
        return format!("the JSON ends too early, the line looks truncated ({error})");
    }
    records::non_finite_message(bytes, error).unwrap_or_else(|| format!("not valid JSON: {error}"))
}
