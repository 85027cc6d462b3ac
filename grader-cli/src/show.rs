//! `grader show`: the readable tree of a result, or of each line of a JSON Lines file.
//!
//! The tree is grader-core's `Display` of an `EvaluationResult` (`{:#}` with `--params`), made
//! safe for a terminal (see [`terminal_safe`]) and coloured only when asked.
//!
//! The tree gives each subscore one line, with the last line of a command's output or the start
//! of a reason. `--full` prints after the tree the whole texts it cut ([`full_texts`]): each
//! subscore's `stdout`, `stderr`, `error`, `reason` and `explanation`, and any other text in
//! its info longer than a line; `--subscore NAME` does so for the subscores of that name only.
//! These texts are made terminal-safe the same way (tabs and line breaks kept).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

use grader_core::{EvaluationResult, SubScore};

use crate::input::{self, Format, Line, LineLimits};
use crate::records::{self, Read, Record};
use crate::spans::Traces;
use crate::text::{self, one_line, paint, terminal_safe};
use crate::{CliError, EXIT_OK};

/// Arguments of `grader show`.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// A result (`.json`), or JSON Lines with one result per line (`-` reads standard input).
    pub file: PathBuf,
    /// Also show each grader's `_parameters`.
    #[arg(long)]
    pub params: bool,
    /// Names, weights and values only: every subscore's info left out, as the SDK's
    /// `SubScore.to_summary()` does.
    #[arg(long, conflicts_with = "params")]
    pub summary: bool,
    /// After the tree, print the whole texts it cuts to one line: every subscore's stdout,
    /// stderr, error, reason and explanation, and any other text in its info longer than a
    /// line (control characters escaped).
    #[arg(long, conflicts_with = "summary")]
    pub full: bool,
    /// As `--full`, for the subscores with this name only (at any depth); repeatable.
    #[arg(long, value_name = "NAME", conflicts_with = "summary")]
    pub subscore: Vec<String>,
    /// JSON Lines: only these lines (numbered from 1); repeat or separate with commas.
    /// (A `.json` file is one document, shown whole.)
    #[arg(long, value_delimiter = ',')]
    pub line: Vec<u64>,
    /// JSON Lines: only the samples with this id; repeat or separate with commas.
    #[arg(long, value_delimiter = ',')]
    pub sample: Vec<String>,
    /// How much of a line is read: its bytes and what it costs once parsed (the tree of a
    /// line takes about three times what it costs parsed to print).
    #[command(flatten)]
    pub limits: LineLimits,
}

/// How to render a result.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    /// Show `_parameters` (the `{:#}` form).
    pub params: bool,
    /// Leave out every subscore's info.
    pub summary: bool,
    /// Use ANSI colours.
    pub color: bool,
}

/// Runs `grader show`.
///
/// # Errors
/// When the file cannot be read, or (for a `.json` file) is not a result.
pub fn run(args: &ShowArgs, color: bool, out: &mut dyn Write) -> Result<u8, CliError> {
    let style = Style {
        params: args.params,
        summary: args.summary,
        color,
    };
    let full = (args.full || !args.subscore.is_empty()).then_some(args.subscore.as_slice());
    let show_record = |record: &Record| {
        let mut text = render_record(record, style);
        if let (Some(only), Some(result)) = (full, &record.result) {
            text.push_str(&full_texts(result, only, color));
        }
        text
    };
    if Format::of(&args.file) == Format::Json {
        // One document (a result, or one evaluation line): the filters do not apply.
        let bytes = input::read_all(&args.file)?;
        let not_a_result = |error: &dyn std::fmt::Display| {
            CliError::Invalid(one_line(&format!(
                "{}: not a result: {error} (`grader validate` says more)",
                args.file.display()
            )))
        };
        let record = match records::read(&bytes, args.limits.max_parsed) {
            Ok(Read::Record(record)) => record,
            Ok(Read::Span(span)) => {
                let mut traces = Traces::default();
                let trace = traces.push(&span, 1).or_else(|| traces.finish());
                match trace.map(Record::from_trace) {
                    Some(Ok(record)) => record,
                    Some(Err(error)) => return Err(not_a_result(&error)),
                    None => return Err(not_a_result(&"an empty trace")),
                }
            }
            Err(error) => return Err(not_a_result(&error)),
        };
        if record.sample.is_some() && record.epoch.is_some() {
            out.write_all(heading(&record, 1, color).as_bytes())?;
        }
        out.write_all(show_record(&record).as_bytes())?;
        return Ok(EXIT_OK);
    }

    let mut lines = input::lines(&args.file, args.limits.max_line)?;
    let mut first = true;
    let mut bad = Vec::new();
    let mut traces = Traces::default();
    let mut show = |record: Record, number: u64, out: &mut dyn Write| -> std::io::Result<()> {
        if !args.line.is_empty() && !args.line.contains(&number) {
            return Ok(());
        }
        if !args.sample.is_empty()
            && !record
                .sample
                .as_ref()
                .is_some_and(|id| args.sample.contains(id))
        {
            return Ok(());
        }
        if !first {
            writeln!(out)?;
        }
        first = false;
        out.write_all(heading(&record, number, color).as_bytes())?;
        out.write_all(show_record(&record).as_bytes())
    };
    while let Some((number, line)) = lines.next_line().map_err(input::read_error(&args.file))? {
        let wanted = args.line.is_empty() || args.line.contains(&number);
        if !wanted && args.line.iter().all(|&wanted| wanted < number) {
            break;
        }
        let bytes = match line {
            Line::Text(bytes) if input::is_blank(bytes) => continue,
            // A line not asked for is not read, unless it is a span: a trace's record needs
            // every span of it.
            Line::Text(bytes) if !wanted && !crate::spans::is_span(bytes) => continue,
            Line::Text(bytes) => bytes,
            Line::TooLong { bytes } => {
                bad.push(format!(
                    "line {number}: {bytes} bytes, longer than --max-line; skipped"
                ));
                continue;
            }
        };
        match records::read(bytes, args.limits.max_parsed) {
            Ok(Read::Record(record)) => show(record, number, out)?,
            Ok(Read::Span(span)) => {
                if let Some(trace) = traces.push(&span, number) {
                    show_trace(trace, &mut bad, &mut |record, number| {
                        show(record, number, out)
                    })?;
                }
            }
            Err(error) => bad.push(one_line(&format!("line {number}: not a result: {error}"))),
        }
    }
    if let Some(trace) = traces.finish() {
        show_trace(trace, &mut bad, &mut |record, number| {
            show(record, number, out)
        })?;
    }
    if bad.is_empty() {
        return Ok(EXIT_OK);
    }
    Err(CliError::Invalid(format!(
        "{}: {} line(s) could not be shown:\n  {}",
        one_line(&args.file.display().to_string()),
        bad.len(),
        bad.join("\n  ")
    )))
}

/// Shows the record of a finished trace, or says why its grade is not a result.
fn show_trace(
    trace: crate::spans::Trace,
    bad: &mut Vec<String>,
    show: &mut dyn FnMut(Record, u64) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let number = trace.line;
    match Record::from_trace(trace) {
        Ok(record) => show(record, number),
        Err(error) => {
            bad.push(one_line(&format!(
                "line {number}: the trace's grade is not a result: {error}"
            )));
            Ok(())
        }
    }
}

fn heading(record: &Record, number: u64, color: bool) -> String {
    let mut title = format!("line {number}");
    if let Some(sample) = &record.sample {
        // On one line: a sample id's line break would print a line of its own that reads as
        // the tool's (a forged `reward 1.0000`).
        title = format!("sample {}", one_line(sample));
        if let Some(epoch) = record.epoch {
            title.push_str(&format!(", epoch {epoch}"));
        }
        title.push_str(&format!(" (line {number})"));
    }
    format!("{}\n", paint(&format!("── {title}"), text::DIM, color))
}

fn render_record(record: &Record, style: Style) -> String {
    let mut text = String::new();
    if let Some(result) = &record.result {
        text.push_str(&render(result, style));
    }
    if let Some(error) = record.error_text() {
        // On one line, as every error the command prints.
        let line = paint(
            &format!("error: {}", one_line(&error)),
            text::ERROR,
            style.color,
        );
        text.push_str(&line);
        text.push('\n');
    }
    if text.is_empty() {
        text.push_str("no result\n");
    }
    text
}

/// The readable tree of `result`, safe for a terminal.
///
/// ```
/// use grader_cli::show::{Style, render};
/// use grader_core::{Grade, SubScore};
///
/// let result = Grade::from_subscores([SubScore::new("tests\u{1b}[2J", 1.0)?])?;
/// let text = render(&result, Style::default());
/// assert!(text.starts_with("reward 1.0000\n"));
/// assert!(text.contains("tests\\u{1b}[2J"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
pub fn render(result: &EvaluationResult, style: Style) -> String {
    // Names are escaped before the tree is laid out, so that its columns stay aligned; the
    // whole text is made safe again afterwards (escaping twice changes nothing).
    let mut result = result.clone();
    if let Some(subscores) = result.subscores.as_mut() {
        subscores
            .iter_mut()
            .for_each(|sub| rebuild(sub, style.summary));
    }
    let text = if style.params {
        format!("{result:#}")
    } else {
        result.to_string()
    };
    let safe = terminal_safe(&text);
    if style.color { colorize(&safe) } else { safe }
}

/// The info keys whose text `--full` always prints whole (when not empty).
const FULL_KEYS: [&str; 5] = ["stdout", "stderr", "error", "reason", "explanation"];
/// A text elsewhere in info is printed whole when it is longer than this (the tree's cut), or
/// holds a line break.
const ONE_LINE_CHARS: usize = 72;

/// The whole texts of `result`'s subscores that the tree cuts: for each subscore (depth
/// first, or only those named in `only` when it is not empty), its `stdout`, `stderr`,
/// `error`, `reason` and `explanation`, and any other string in its info longer than a line,
/// each under a heading with the subscore's path; a name in `only` that no subscore has is
/// said so. Terminal-safe as [`terminal_safe`], with tabs kept and `\r\n` read as a line
/// break.
///
/// ```
/// use grader_cli::show::full_texts;
/// use grader_core::{Grade, SubScore, info_from_value};
///
/// let stdout = "test_a ... ok\ntest_b ... FAIL\n\x1b[31m1 failed\x1b[0m\n";
/// let info = info_from_value(serde_json::json!({"exit_code": 1, "stdout": stdout, "stderr": ""}))?;
/// let result = Grade::from_subscores([SubScore::new("tests", 0.0)?.with_info(info)])?;
/// assert_eq!(
///     full_texts(&result, &[], false),
///     "── tests › stdout\ntest_a ... ok\ntest_b ... FAIL\n\\u{1b}[31m1 failed\\u{1b}[0m\n",
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
pub fn full_texts(result: &EvaluationResult, only: &[String], color: bool) -> String {
    fn walk<'a>(
        sub: &'a SubScore,
        path: &mut Vec<&'a str>,
        only: &[String],
        color: bool,
        text: &mut String,
        found: &mut BTreeSet<&'a str>,
    ) {
        path.push(sub.name());
        let wanted = only.is_empty() || only.iter().any(|name| name == sub.name());
        if wanted {
            found.insert(sub.name());
        }
        if wanted && let Some(info) = sub.info() {
            for (key, value) in info {
                let Some(body) = value.as_str() else { continue };
                let long = body.contains('\n') || body.chars().count() > ONE_LINE_CHARS;
                if body.is_empty() || !(FULL_KEYS.contains(&key.as_str()) || long) {
                    continue;
                }
                let names: Vec<String> = path.iter().map(|name| one_line(name)).collect();
                let title = format!("── {} › {}", names.join(" › "), one_line(key));
                text.push_str(&paint(&title, text::DIM, color));
                text.push('\n');
                text.push_str(&block_safe(body));
                if !body.ends_with('\n') {
                    text.push('\n');
                }
            }
        }
        for child in sub.children().unwrap_or_default() {
            walk(child, path, only, color, text, found);
        }
        path.pop();
    }
    let mut text = String::new();
    let mut path = Vec::new();
    let mut found = BTreeSet::new();
    for sub in result.subscores() {
        walk(sub, &mut path, only, color, &mut text, &mut found);
    }
    for name in only.iter().filter(|name| !found.contains(name.as_str())) {
        let note = format!("── no subscore named {}", one_line(name));
        text.push_str(&paint(&note, text::DIM, color));
        text.push('\n');
    }
    text
}

/// A block of output made safe for a terminal: as [`terminal_safe`], but tabs are kept and a
/// `\r\n` line ending is a line break.
fn block_safe(body: &str) -> String {
    body.replace("\r\n", "\n")
        .split('\t')
        .map(terminal_safe)
        .collect::<Vec<_>>()
        .join("\t")
}

/// Escapes the name of `sub` and of all its descendants for a terminal, and removes their
/// info when `strip` (the `--summary` form).
fn rebuild(sub: &mut SubScore, strip: bool) {
    let children = sub.children().map(|children| {
        let mut children = children.to_vec();
        children.iter_mut().for_each(|child| rebuild(child, strip));
        children
    });
    let mut rebuilt = if strip {
        SubScore::new(sub.name(), sub.value())
            .and_then(|bare| bare.with_weight(sub.weight()))
            .unwrap_or_else(|_| sub.clone())
    } else {
        sub.clone()
    };
    rebuilt = rebuilt.with_name(one_line(sub.name()));
    if let Some(children) = children {
        rebuilt = rebuilt.with_children(children);
    }
    *sub = rebuilt;
}

/// Colours the rendered tree: the reward line bold, each value by how high it is, errors red.
fn colorize(text: &str) -> String {
    let mut colored = String::with_capacity(text.len() + text.len() / 4);
    for (index, line) in text.split_inclusive('\n').enumerate() {
        if index == 0 {
            let body = line.trim_end_matches('\n');
            colored.push_str(&paint(body, text::HEADING, true));
            colored.push_str(&line[body.len()..]);
            continue;
        }
        colored.push_str(&colorize_line(line));
    }
    colored
}

fn colorize_line(line: &str) -> String {
    // A subscore line reads `… weight  W  value V.VVVV  reason`; the value is the first
    // `value ` after the first `  weight `.
    let Some(weight_at) = line.find("  weight ") else {
        return line.to_owned();
    };
    let Some(value_at) = line[weight_at..]
        .find("  value ")
        .map(|at| weight_at + at + 8)
    else {
        return line.to_owned();
    };
    let value_end = line[value_at..]
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map_or(line.len(), |at| value_at + at);
    let Ok(value) = line[value_at..value_end].parse::<f64>() else {
        return line.to_owned();
    };
    let rest = &line[value_end..];
    let rest = match rest.find("  error: ").or_else(|| rest.find("  timed out")) {
        Some(at) => {
            let body = rest[at..].trim_end_matches('\n');
            format!(
                "{}{}{}",
                &rest[..at],
                paint(body, text::ERROR, true),
                &rest[at + body.len()..]
            )
        }
        None => rest.to_owned(),
    };
    format!(
        "{}{}{}",
        &line[..value_at],
        paint(&line[value_at..value_end], text::value_style(value), true),
        rest
    )
}
