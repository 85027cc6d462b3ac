//! One sample of the Inspect AI log, built from one line of the results, and its summary (the
//! row `inspect view` lists, in a `.eval` log): the scores and what explains them, the
//! sample's input, target and answer when the line holds them, and its start and end.

use std::time::{Duration, SystemTime};

use grader_core::SubScore;
use serde_json::{Map, Value, json};

use crate::records::Record;
use crate::report::excerpt;

/// The score every sample has: the result's reward.
pub const REWARD: &str = "reward";

/// The name a score has in the log for a top-level subscore.
///
/// ```
/// use grader_cli::export::score_name;
///
/// assert_eq!(score_name("tests"), "tests");
/// assert_eq!(score_name("reward"), "reward (subscore)");
/// ```
#[must_use]
pub fn score_name(subscore: &str) -> String {
    if subscore == REWARD {
        format!("{REWARD} (subscore)")
    } else {
        subscore.to_owned()
    }
}

/// The id a sample has in the log: its own, or, when that cannot be part of a file name (a
/// path separator, `..`, a control or bidirectional formatting character, or nothing at
/// all), a safe one made from it: each such character an underscore, the dots of an id with
/// `..` too, then `~` and 8 hex digits of the original's SHA-256, so that two ids never become
/// one. A `.eval` log names each sample's entry after it (`samples/{id}_epoch_{epoch}.json`, as
/// Inspect AI's reader finds it by id); the original is kept in the sample's metadata
/// (`sample_id`).
///
/// ```
/// use grader_cli::export::log_id;
///
/// assert_eq!(log_id("q17"), "q17");
/// assert_eq!(log_id("café 3.1"), "café 3.1");
/// let safe = log_id("../../../tmp/x");
/// assert!(safe.starts_with("_________tmp_x~") && safe.len() == "_________tmp_x~".len() + 8, "{safe}");
/// assert!(log_id("a\u{1b}]0;t\u{7}").starts_with("a_]0;t_~"));
/// assert_ne!(log_id("a/b"), log_id("a\\b"));
/// ```
#[must_use]
pub fn log_id(id: &str) -> std::borrow::Cow<'_, str> {
    use sha2::Digest as _;
    let unsafe_char = |c: char| {
        matches!(c, '/' | '\\') || c.is_control() || grader_core::report::is_bidi_control(c)
    };
    let dots = id.contains("..");
    if !id.is_empty() && !dots && !id.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(id);
    }
    let mut safe: String = id
        .chars()
        .map(|c| {
            if unsafe_char(c) || (dots && c == '.') {
                '_'
            } else {
                c
            }
        })
        .collect();
    let digest = sha2::Sha256::digest(id.as_bytes());
    safe.push('~');
    for byte in &digest[..4] {
        safe.push_str(&format!("{byte:02x}"));
    }
    std::borrow::Cow::Owned(safe)
}

/// When a line's grading started and ended, when it says (a `started_at` in RFC 3339 UTC and a
/// finite duration).
#[must_use]
pub(super) fn times(record: &Record) -> Option<(SystemTime, SystemTime)> {
    let started = humantime::parse_rfc3339_weak(record.started_at.as_deref()?).ok()?;
    let duration = record
        .duration_secs
        .filter(|d| d.is_finite() && *d >= 0.0)
        .and_then(|d| Duration::try_from_secs_f64(d).ok())?;
    Some((started, started.checked_add(duration)?))
}

/// A time as Inspect AI writes one (Python's `isoformat()` of a UTC time).
#[must_use]
pub(super) fn inspect_time(time: SystemTime) -> String {
    let text = humantime::format_rfc3339_micros(time).to_string();
    match text.strip_suffix('Z') {
        Some(bare) => format!("{bare}+00:00"),
        None => text,
    }
}

/// One sample of the log, `id` its [`log_id`] (`original` the line's). `is_score` says which
/// scores the log has (the reward and the first subscore names, up to the limit): the
/// subscores that are not go whole into the reward's metadata, under `other_subscores`.
pub(super) fn sample(
    id: &str,
    original: &str,
    epoch: u32,
    record: &Record,
    model: &str,
    is_score: &dyn Fn(&str) -> bool,
) -> Map<String, Value> {
    let texts = &record.texts;
    let mut sample = Map::new();
    sample.insert("id".into(), json!(id));
    sample.insert("epoch".into(), json!(epoch));
    // Inspect AI's own empty form where there is none: the log's viewer settings hide the
    // column when no sample has one.
    sample.insert("input".into(), json!(texts.input.as_deref().unwrap_or("")));
    sample.insert(
        "target".into(),
        json!(texts.target.as_deref().unwrap_or("")),
    );
    sample.insert("messages".into(), json!([]));
    if let Some(answer) = &texts.answer {
        sample.insert(
            "output".into(),
            json!({
                "model": model,
                "choices": [{
                    "message": {"role": "assistant", "content": answer, "source": "generate"},
                    "stop_reason": "stop",
                }],
                "completion": answer,
            }),
        );
    }
    // The id as the results have it, where the log's had to be another.
    let metadata = if id == original {
        json!({})
    } else {
        json!({"sample_id": original})
    };
    sample.insert("metadata".into(), metadata);
    if let Some((started, ended)) = times(record) {
        sample.insert("started_at".into(), json!(inspect_time(started)));
        sample.insert("completed_at".into(), json!(inspect_time(ended)));
    }
    if let Some(duration) = record.duration_secs.filter(|d| d.is_finite()) {
        sample.insert("total_time".into(), json!(duration));
        sample.insert("working_time".into(), json!(duration));
    }
    match (record.reward().filter(|r| r.is_finite()), &record.result) {
        (Some(reward), Some(result)) => {
            let subscores = result.subscores.as_deref().unwrap_or_default();
            let mut metadata = json!({"info": result.info});
            let others: Vec<&SubScore> = subscores
                .iter()
                .filter(|sub| !is_score(&score_name(sub.name())))
                .collect();
            if !others.is_empty() {
                metadata["other_subscores"] = json!(others);
            }
            let mut score = json!({
                "value": reward,
                "explanation": reward_explanation(reward, result, others.len()),
                "metadata": metadata,
            });
            if let Some(answer) = &texts.answer {
                score["answer"] = json!(answer);
            }
            let mut scores = Map::new();
            scores.insert(REWARD.to_owned(), score);
            for sub in subscores {
                let name = score_name(sub.name());
                if is_score(&name) && !scores.contains_key(&name) {
                    scores.insert(name, subscore(sub));
                }
            }
            sample.insert("scores".into(), Value::Object(scores));
        }
        _ => {
            let message = record
                .error_text()
                .unwrap_or_else(|| "no result".to_owned());
            sample.insert(
                "error".into(),
                json!({
                    "message": message,
                    "traceback": message,
                    "traceback_ansi": message,
                }),
            );
            if let Some(result) = &record.result {
                sample.insert("metadata".into(), json!({"result": result}));
            }
        }
    }
    sample
}

/// How long a text in a summary is at most, in characters, as Inspect AI thins a summary's
/// input and target.
const SUMMARY_TEXT: usize = 5120;

/// How long a score's explanation (or answer) is in a summary, in characters. Inspect AI
/// keeps 1 024; the viewer lists the summaries of every sample at once and shows a score's
/// whole explanation from the sample itself, so a shorter one keeps the list of a large run
/// quick to read (a command's output in each explanation made the summaries of 100 000
/// results 143 MB).
const SUMMARY_EXPLANATION: usize = 300;

/// The summary of `sample` (what `EvalSample.summary()` gives in Inspect AI): the row the
/// viewer lists, its texts and explanations cut short, each score's metadata left to the
/// sample but for its weight.
pub(super) fn summary(sample: &Map<String, Value>) -> Value {
    let mut summary = Map::new();
    for key in ["id", "epoch"] {
        if let Some(value) = sample.get(key) {
            summary.insert(key.into(), value.clone());
        }
    }
    for key in ["input", "target"] {
        let text = sample.get(key).and_then(Value::as_str).unwrap_or_default();
        summary.insert(key.into(), json!(cut(text, SUMMARY_TEXT)));
    }
    summary.insert("metadata".into(), json!({}));
    if let Some(Value::Object(scores)) = sample.get("scores") {
        let thin: Map<String, Value> = scores
            .iter()
            .map(|(name, score)| {
                let mut thin = json!({"value": score["value"]});
                if let Some(answer) = score.get("answer").and_then(Value::as_str) {
                    thin["answer"] = json!(cut(answer, SUMMARY_EXPLANATION));
                }
                if let Some(explanation) = score.get("explanation").and_then(Value::as_str) {
                    thin["explanation"] = json!(cut(explanation, SUMMARY_EXPLANATION));
                }
                if let Some(weight) = score.pointer("/metadata/weight") {
                    thin["metadata"] = json!({"weight": weight});
                }
                (name.clone(), thin)
            })
            .collect();
        summary.insert("scores".into(), Value::Object(thin));
    }
    for key in ["started_at", "completed_at", "total_time", "working_time"] {
        if let Some(value) = sample.get(key) {
            summary.insert(key.into(), value.clone());
        }
    }
    if let Some(message) = sample.get("error").and_then(|error| error.get("message")) {
        summary.insert("error".into(), message.clone());
    }
    summary.insert("completed".into(), json!(true));
    summary.insert("message_count".into(), json!(0));
    Value::Object(summary)
}

/// `text`, or its first `max` characters and a note that it was cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}...\n(content truncated)", &text[..at]),
    }
}

/// The value a subscore's score shows: its value, or, for a penalty (a negative weight), its
/// signed effect on the reward, `weight × value` (`−0.5` when a penalty of weight `−0.5`
/// fired, `0` when it did not). Inspect AI's viewer colours and averages a score by its value:
/// a fired penalty's value of 1 read as a pass, and its mean as a pass rate. The effect reads
/// as what it is, and its mean is how much the penalty took off the reward on average (the
/// reward's own score is unchanged). The subscore's value stays in the score's metadata.
///
/// ```
/// use grader_core::SubScore;
/// use grader_cli::export::shown_value;
///
/// let fired = SubScore::new("tests_edited", 1.0)?.with_weight(-0.5)?;
/// assert_eq!(shown_value(&fired), -0.5);
/// let quiet = SubScore::new("tests_edited", 0.0)?.with_weight(-0.5)?;
/// assert_eq!(shown_value(&quiet).to_bits(), 0.0_f64.to_bits()); // 0, never −0
/// assert_eq!(shown_value(&SubScore::new("tests", 0.25)?), 0.25);
/// # Ok::<(), grader_core::ScoreError>(())
/// ```
#[must_use]
pub fn shown_value(sub: &SubScore) -> f64 {
    if sub.weight() < 0.0 {
        // `+ 0.0` makes a −0 (a penalty that did not fire) a plain 0.
        sub.weight() * sub.value() + 0.0
    } else {
        sub.value()
    }
}

fn subscore(sub: &SubScore) -> Value {
    let empty = Map::new();
    let info = sub.info().unwrap_or(&empty);
    let mut metadata = json!({"weight": sub.weight(), "info": info});
    if sub.weight() < 0.0 {
        metadata["value"] = json!(sub.value());
    }
    if let Some(children) = sub.children() {
        metadata["children"] = json!(children);
    }
    let explanation = subscore_explanation(sub, info);
    json!({
        "value": shown_value(sub),
        "explanation": explanation,
        "metadata": metadata,
    })
}

/// What explains a subscore, first line first: a penalty says whether it fired (`penalty −0.5:
/// fired`); then a judge's reason or an error as it was given, or else the reason the terminal
/// gives (`exit code 1: FAILED (failures=1)`, `timed out after 10s`) and the command's output,
/// or else its children.
fn subscore_explanation(sub: &SubScore, info: &Map<String, Value>) -> Option<String> {
    let mut parts = Vec::new();
    if sub.weight() < 0.0 {
        parts.push(if sub.value() > 0.0 {
            format!(
                "penalty {}: fired",
                crate::text::signed(sub.weight() * sub.value())
            )
        } else {
            format!("penalty {}: not fired", crate::text::signed(sub.weight()))
        });
    }
    let own = ["reason", "explanation", "error"]
        .into_iter()
        .find_map(|key| info.get(key).and_then(Value::as_str));
    if let Some(own) = own {
        parts.push(own.to_owned());
    } else {
        if let Some(reason) = grader_core::report::subscore_reason(sub) {
            parts.push(reason);
        }
        parts.extend(output_blocks(info));
        if parts.is_empty()
            && let Some(children) = sub.children().and_then(children_explanation)
        {
            parts.push(children);
        }
    }
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// How many subscores the reward's explanation lists; the others are counted.
pub(super) const BREAKDOWN_LINES: usize = 20;

/// The reward's explanation: the result's content, then the weighted breakdown, one top-level
/// subscore a line (`- tests: 0.7 × 0.0000 = 0.0000`), the first [`BREAKDOWN_LINES`] of them;
/// `others` of them are not scores of their own in the log, but in the reward's metadata.
pub(super) fn reward_explanation(
    reward: f64,
    result: &grader_core::EvaluationResult,
    others: usize,
) -> Option<String> {
    let subscores = result.subscores.as_deref().unwrap_or_default();
    let mut parts: Vec<String> = result.content.iter().cloned().collect();
    if !subscores.is_empty() {
        let mut lines = vec![format!("reward {reward:.4} = Σ weight × value:")];
        for sub in subscores.iter().take(BREAKDOWN_LINES) {
            let penalty = if sub.weight() < 0.0 { " (penalty)" } else { "" };
            lines.push(format!(
                "- {}{penalty}: {} × {:.4} = {}",
                sub.name(),
                crate::text::signed(sub.weight()),
                sub.value(),
                crate::text::signed_fixed(sub.weight() * sub.value()),
            ));
        }
        if subscores.len() > BREAKDOWN_LINES {
            let more = subscores.len() - BREAKDOWN_LINES;
            lines.push(if others == 0 {
                format!("- … and {more} more subscores (each a score of its own)")
            } else {
                format!(
                    "- … and {more} more subscores ({others} of them in this score's metadata, \
                     `other_subscores`, the others each a score of its own)"
                )
            });
        }
        parts.push(lines.join("\n"));
    }
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// A subscore's children as a Markdown list, each with its weight, value and what explains it
/// (a judge's criteria with their reasons).
fn children_explanation(children: &[SubScore]) -> Option<String> {
    if children.is_empty() {
        return None;
    }
    let empty = Map::new();
    let lines: Vec<String> = children
        .iter()
        .map(|child| {
            let why = explanation(child.info().unwrap_or(&empty))
                .map(|text| format!(": {}", text.replace('\n', "\n  ")))
                .unwrap_or_default();
            format!(
                "- **{}** (weight {}): {}{why}",
                child.name(),
                child.weight(),
                child.value()
            )
        })
        .collect();
    Some(lines.join("\n"))
}

/// What a person reads first about a subscore (Markdown, as Inspect AI's viewer shows
/// explanations): a judge's reason, an error, or a command's exit code and output.
///
/// ```
/// use serde_json::json;
///
/// let info = json!({"exit_code": 1, "stdout": "", "stderr": "FAILED (failures=1)\n"});
/// let text = grader_cli::export::explanation(info.as_object().unwrap()).unwrap();
/// assert_eq!(text, "exit code 1\n\nstderr:\n```\nFAILED (failures=1)\n```");
/// ```
#[must_use]
pub fn explanation(info: &Map<String, Value>) -> Option<String> {
    for key in ["reason", "explanation", "error"] {
        if let Some(Value::String(text)) = info.get(key) {
            return Some(text.clone());
        }
    }
    let mut parts = Vec::new();
    if let Some(code) = info.get("exit_code") {
        parts.push(format!("exit code {code}"));
    }
    if info.get("timed_out") == Some(&Value::Bool(true)) {
        parts.push("timed out".to_owned());
    }
    parts.extend(output_blocks(info));
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// A command's `stdout` and `stderr`, each a fenced block (long output cut to its first and
/// last lines, as in the report), the empty ones left out.
fn output_blocks(info: &Map<String, Value>) -> Vec<String> {
    let mut parts = Vec::new();
    for stream in ["stdout", "stderr"] {
        let Some(Value::String(text)) = info.get(stream) else {
            continue;
        };
        if text.is_empty() {
            continue;
        }
        let cut = excerpt(text);
        let mut shown = cut.head.to_owned();
        if !cut.tail.is_empty() {
            if !shown.ends_with('\n') {
                shown.push('\n');
            }
            shown.push_str(&format!(
                "⋯ {} lines ({} bytes) not shown ⋯\n{}",
                cut.lines_left_out, cut.bytes_left_out, cut.tail
            ));
        }
        if let Some(dropped) = info
            .get(&format!("{stream}_dropped_bytes"))
            .and_then(Value::as_u64)
        {
            parts.push(format!(
                "{stream} ({dropped} bytes dropped by the grader's output budget):"
            ));
        } else {
            parts.push(format!("{stream}:"));
        }
        let fence = "`".repeat(longest_backtick_run(&shown).max(2) + 1);
        let body = shown.strip_suffix('\n').unwrap_or(&shown);
        let last = parts.len() - 1;
        parts[last] = format!("{}\n{fence}\n{body}\n{fence}", parts[last]);
    }
    parts
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rewards_breakdown_lists_a_few_subscores_and_counts_the_rest() {
        let subscores: Vec<SubScore> = (0..10_000)
            .map(|i| SubScore::new(format!("check {i}"), 1.0).expect("a valid subscore"))
            .collect();
        let result = grader_core::Grade::from_subscores(subscores).expect("a grade");
        let text = reward_explanation(result.reward(), &result, 9_901).expect("an explanation");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + BREAKDOWN_LINES + 1, "{text}");
        assert_eq!(lines[1], "- check 0: 0.0001 × 1.0000 = 0.0001");
        assert_eq!(
            lines[BREAKDOWN_LINES + 1],
            "- … and 9980 more subscores (9901 of them in this score's metadata, \
             `other_subscores`, the others each a score of its own)"
        );
    }

    #[test]
    fn texts_are_cut_on_a_character_boundary() {
        assert_eq!(cut("héllo", 10), "héllo");
        assert_eq!(cut("héllo", 2), "hé...\n(content truncated)");
    }

    #[test]
    fn times_are_written_as_inspect_ai_writes_them() {
        let time = humantime::parse_rfc3339("2026-01-02T03:04:05.678901Z").expect("a time");
        assert_eq!(inspect_time(time), "2026-01-02T03:04:05.678901+00:00");
    }
}
