//! `grader export --inspect`: an evaluation as an Inspect AI eval log, for `inspect view` and
//! `inspect_ai.log.read_eval_log`.
//!
//! The log is Inspect AI's JSON log format (version 2, as Inspect AI 0.3 writes with
//! `write_eval_log(log, format="json")`):
//!
//! - one sample per (sample, epoch), the first line of each as in `summary`; a sample whose
//!   grading failed (or whose result is marked `isError`) carries the message as its `error`
//!   and no scores, so it is never counted as a 0;
//! - the scores of a sample: `reward` (the result's reward; as its explanation, its `content`
//!   and the weighted breakdown, `- tests: 0.7 × 0.0000 = 0.0000` a subscore; its `info` in the
//!   metadata), and one per top-level subscore under the subscore's name (a subscore named
//!   `reward` becomes `reward (subscore)`), whose explanation is what a person reads first: a
//!   penalty's `penalty −0.5: fired` (or `not fired`), then a judge's `reason` or an `error`,
//!   or else the reason the terminal gives (`exit code 1: FAILED (failures=1)`, `timed out
//!   after 10s`) and the command's output, long output cut to its first and last lines as in
//!   the report, or else its children with their values and reasons, as a judge's criteria;
//!   its metadata holds the weight, the whole `info` and the subscore's children;
//! - the results: for each score, `mean` and `stderr` over the samples, each sample's scored
//!   epochs first reduced to their mean, as Inspect AI computes them for a scorer with
//!   `metrics=[mean(), stderr()]` and `epochs_reducer=["mean"]` (grader-core's
//!   [`grader_eval::metrics`], which match Inspect AI's); the header names those
//!   metrics and that reducer, so Inspect AI's `recompute_metrics` gives the same numbers; and
//!   the per-sample reductions.
//!
//! There is no model, prompt or transcript in a result file: each sample's `input` and `target`
//! are empty and the model is `--model` (`none/none` unless given).
//!
//! The files are read twice (once for the metrics, which come before the samples in the log,
//! once to write the samples), so memory stays bounded by one line plus a few numbers per
//! result; standard input cannot be read twice and is refused.
//!
//! `inspect view` lists a `.json` log only when its file name starts with a timestamp, as
//! Inspect AI names its logs: given a folder as `--output`, the log is written there as
//! `<created>_<task>_<id>.json`.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use grader_core::SubScore;
use grader_eval::metrics;
use serde_json::{Map, Value, json};
use sha2::Digest as _;

use crate::duplicates::{Chosen, OnConflict, key_of};
use crate::input::parse_size;
use crate::records::{self, Record};
use crate::report::excerpt;
use crate::{CliError, EXIT_OK};

/// The score every sample has: the result's reward.
pub const REWARD: &str = "reward";

/// Arguments of `grader export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// Result files (JSON Lines); several are merged.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Write an Inspect AI eval log (JSON, log format version 2).
    #[arg(long, required = true)]
    pub inspect: bool,
    /// Where to write the log: a file, or a folder to write it in under the name Inspect AI
    /// gives its logs (which `inspect view` needs to list it). Not one of the files: that
    /// would replace the results.
    #[arg(short, long)]
    pub output: PathBuf,
    /// The task's name in the log [default: the first file's name without its extension].
    #[arg(long)]
    pub task: Option<String>,
    /// The model's name in the log.
    #[arg(long, default_value = "none/none")]
    pub model: String,
    /// The longest line read.
    #[arg(long, default_value = "64M", value_parser = parse_size)]
    pub max_line: usize,
    /// When lines of one (sample, epoch) differ: keep the first line read, the last, or stop
    /// with an error (nothing written). Either way they are counted and the first few named.
    #[arg(long, value_enum, default_value_t = OnConflict::First)]
    pub on_conflict: OnConflict,
}

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

/// What the first pass gathers: the samples in order and every score's values per sample.
#[derive(Debug, Default)]
struct Tally {
    /// Sample ids in order of first appearance.
    samples: Vec<String>,
    sample_index: HashMap<String, usize>,
    /// Score names in order of first appearance, `reward` first.
    scores: Vec<String>,
    score_index: HashMap<String, usize>,
    /// Per score, per sample index: the values of its scored epochs.
    values: Vec<HashMap<usize, Vec<f64>>>,
    results: usize,
    scored: usize,
    errored: usize,
    epochs: u32,
}

impl Tally {
    fn add(&mut self, score: &str, sample: usize, value: f64) {
        let index = match self.score_index.get(score) {
            Some(index) => *index,
            None => {
                self.scores.push(score.to_owned());
                self.values.push(HashMap::new());
                self.score_index
                    .insert(score.to_owned(), self.scores.len() - 1);
                self.scores.len() - 1
            }
        };
        self.values[index].entry(sample).or_default().push(value);
    }

    fn push(&mut self, id: &str, epoch: u32, record: &Record) {
        let sample = match self.sample_index.get(id) {
            Some(index) => *index,
            None => {
                self.samples.push(id.to_owned());
                self.sample_index
                    .insert(id.to_owned(), self.samples.len() - 1);
                self.samples.len() - 1
            }
        };
        self.results += 1;
        self.epochs = self.epochs.max(epoch);
        let Some(reward) = record.reward().filter(|r| r.is_finite()) else {
            self.errored += 1;
            return;
        };
        self.scored += 1;
        self.add(REWARD, sample, reward);
        let subscores = record
            .result
            .as_ref()
            .and_then(|r| r.subscores.as_deref())
            .unwrap_or_default();
        let mut named = HashSet::new();
        for sub in subscores {
            // A name given twice in one result counts once, as it is written once.
            if named.insert(sub.name()) {
                self.add(&score_name(sub.name()), sample, sub.value());
            }
        }
    }

    /// Per score, each sample's epochs reduced to their mean, samples in order.
    fn reduced(&self) -> Vec<Vec<(usize, f64)>> {
        let mut order: Vec<usize> = Vec::new();
        self.values
            .iter()
            .map(|per_sample| {
                order.clear();
                order.extend(per_sample.keys().copied());
                order.sort_unstable();
                order
                    .iter()
                    .map(|sample| (*sample, metrics::mean(&per_sample[sample])))
                    .collect()
            })
            .collect()
    }
}

/// Runs `grader export`.
///
/// # Errors
/// When a file cannot be read (or is standard input) or the log cannot be written, or a file
/// holds lines that are not results, or the log would be written over one of the files.
pub fn run(args: &ExportArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<u8, CliError> {
    if let Some(stdin) = args.files.iter().find(|path| path.as_os_str() == "-") {
        return Err(CliError::Read {
            path: stdin.clone(),
            source: std::io::Error::other(
                "export reads its files twice, and standard input cannot be read again",
            ),
        });
    }
    // A first reading: which line of each (sample, epoch) counts.
    let mut chosen = Chosen::read(&args.files, args.max_line, args.on_conflict, err)?;
    // Then the numbers the header holds.
    let mut tally = Tally::default();
    let reading = records::for_each_record(&args.files, args.max_line, |record, path, n| {
        let key = key_of(&record, path, n);
        if chosen.chosen(&key) {
            tally.push(&key.0, key.1, &record);
        }
    })?;
    reading.finish(err)?;

    let created = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let task = args.task.clone().unwrap_or_else(|| {
        args.files[0]
            .file_stem()
            .map_or_else(|| "grader".to_owned(), |s| s.to_string_lossy().into_owned())
    });
    let eval_id = eval_id(&created, &args.files);
    let path = if args.output.is_dir() {
        args.output.join(file_name(&created, &task, &eval_id))
    } else {
        args.output.clone()
    };
    // Before the file is created, which would empty an input read again below.
    crate::input::refuse_output_among_inputs(&path, &args.files)?;
    let write_error = |source| CliError::Write {
        path: path.clone(),
        source,
    };
    let file = File::create(&path).map_err(write_error)?;
    let mut log = BufWriter::with_capacity(1 << 20, file);
    let reduced = tally.reduced();
    write_header(&mut log, args, &tally, &reduced, &created, &task, &eval_id)
        .map_err(write_error)?;

    // Last: the samples, one line of the files at a time.
    chosen.rewind();
    let mut first = true;
    let mut failure = None;
    let reading = records::for_each_record(&args.files, args.max_line, |record, path, n| {
        if failure.is_some() {
            return;
        }
        let (id, epoch) = key_of(&record, path, n);
        if !chosen.chosen(&(id.clone(), epoch)) {
            return;
        }
        let written = (|| -> std::io::Result<()> {
            if !first {
                log.write_all(b",")?;
            }
            first = false;
            serde_json::to_writer(&mut log, &sample(&id, epoch, &record))?;
            Ok(())
        })();
        if let Err(error) = written {
            failure = Some(error);
        }
    })?;
    if let Some(error) = failure {
        return Err(write_error(error));
    }
    // The files were read once already: a line that changed between the passes is still
    // reported, not silently written.
    reading.finish(err)?;
    write_reductions(&mut log, &tally, &reduced).map_err(write_error)?;
    log.write_all(b"}\n").map_err(write_error)?;
    log.into_inner()
        .map_err(|error| write_error(error.into_error()))?
        .sync_all()
        .map_err(write_error)?;
    if !viewer_lists(&path) {
        writeln!(
            err,
            "grader: note: `inspect view` lists a .json log only when its name starts with a \
             timestamp (2026-01-02T03-04-05…); give a folder as --output to have it named so"
        )?;
    }
    writeln!(
        out,
        "{}: Inspect AI eval log of {} results ({} samples, {} scored, {} errored)",
        path.display(),
        tally.results,
        tally.samples.len(),
        tally.scored,
        tally.errored
    )?;
    Ok(EXIT_OK)
}

/// An id for the log, as Inspect AI's are: 22 URL-safe characters, here from the creation
/// time and the files' names.
fn eval_id(created: &str, files: &[PathBuf]) -> String {
    let mut hash = sha2::Sha256::new();
    hash.update(created.as_bytes());
    for file in files {
        hash.update(file.as_os_str().as_encoded_bytes());
        hash.update([0]);
    }
    let text = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(hash.finalize());
    text.chars()
        .filter(char::is_ascii_alphanumeric)
        .take(22)
        .collect()
}

/// The name Inspect AI gives a log file: `2026-01-02T03-04-05+00-00_task_id.json`.
fn file_name(created: &str, task: &str, eval_id: &str) -> String {
    let stamp = created.replace(':', "-").replace('Z', "+00-00");
    let task: String = task
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{stamp}_{task}_{eval_id}.json")
}

/// Everything before the samples: version, status, eval spec, plan, results, stats.
fn write_header(
    log: &mut impl Write,
    args: &ExportArgs,
    tally: &Tally,
    reduced: &[Vec<(usize, f64)>],
    created: &str,
    task: &str,
    eval_id: &str,
) -> std::io::Result<()> {
    let metric_definitions = json!([{"name": "inspect_ai/mean"}, {"name": "inspect_ai/stderr"}]);
    let scorers: Vec<Value> = tally
        .scores
        .iter()
        .map(|name| json!({"name": name, "metrics": metric_definitions}))
        .collect();
    let scores: Vec<Value> = tally
        .scores
        .iter()
        .zip(reduced)
        .map(|(name, per_sample)| {
            let values: Vec<f64> = per_sample.iter().map(|(_, value)| *value).collect();
            json!({
                "name": name,
                "scorer": name,
                "reducer": "mean",
                "scored_samples": values.len(),
                "unscored_samples": tally.samples.len() - values.len(),
                "params": {},
                "metrics": {
                    "mean": {"name": "mean", "value": metrics::mean(&values), "params": {}},
                    "stderr": {"name": "stderr", "value": metrics::stderr(&values), "params": {}},
                },
            })
        })
        .collect();
    let header = json!({
        "version": 2,
        "status": "success",
        "eval": {
            "eval_id": eval_id,
            "run_id": eval_id,
            "created": created,
            "task": task,
            "task_id": eval_id,
            "task_version": 0,
            "task_attribs": {},
            "task_args": {},
            "task_args_passed": {},
            "dataset": {"name": task, "samples": tally.samples.len()},
            "model": args.model,
            "model_generate_config": {},
            "model_args": {},
            "config": {"epochs": tally.epochs.max(1), "epochs_reducer": ["mean"]},
            "packages": {"grader-cli": env!("CARGO_PKG_VERSION")},
            "metadata": {
                "source": "grader export --inspect",
                "files": args.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
            },
            "scorers": scorers,
        },
        "plan": {"name": "plan", "steps": [], "config": {}},
        "results": {
            // As Inspect AI counts them: every sample in every epoch the run asked for (the
            // most any sample has), so a sample with fewer epochs shows as missing ones.
            "total_samples": tally.samples.len() * tally.epochs.max(1) as usize,
            "completed_samples": tally.scored,
            "scores": scores,
        },
        "stats": {"started_at": "", "completed_at": "", "model_usage": {}, "role_usage": {}},
        "invalidated": false,
        "tags": [],
        "metadata": {},
    });
    let Value::Object(map) = header else {
        unreachable!("json! of an object is an object")
    };
    // The header's fields, then the samples' key: the object stays open for the samples.
    log.write_all(b"{")?;
    for (key, value) in &map {
        serde_json::to_writer(&mut *log, key)?;
        log.write_all(b":")?;
        serde_json::to_writer(&mut *log, value)?;
        log.write_all(b",")?;
    }
    log.write_all(b"\"samples\":[")
}

/// After the samples: each score's per-sample reductions.
fn write_reductions(
    log: &mut impl Write,
    tally: &Tally,
    reduced: &[Vec<(usize, f64)>],
) -> std::io::Result<()> {
    log.write_all(b"],\"reductions\":[")?;
    for (index, (name, per_sample)) in tally.scores.iter().zip(reduced).enumerate() {
        if index > 0 {
            log.write_all(b",")?;
        }
        let samples: Vec<Value> = per_sample
            .iter()
            .map(|(sample, value)| json!({"value": value, "sample_id": tally.samples[*sample]}))
            .collect();
        serde_json::to_writer(
            &mut *log,
            &json!({"scorer": name, "reducer": "mean", "samples": samples}),
        )?;
    }
    log.write_all(b"]")
}

/// One sample of the log.
fn sample(id: &str, epoch: u32, record: &Record) -> Value {
    let mut sample = json!({
        "id": id,
        "epoch": epoch,
        "input": "",
        "target": "",
        "messages": [],
        "metadata": {},
    });
    if let Some(duration) = record.duration_secs.filter(|d| d.is_finite()) {
        sample["total_time"] = json!(duration);
        sample["working_time"] = json!(duration);
    }
    match (record.reward().filter(|r| r.is_finite()), &record.result) {
        (Some(reward), Some(result)) => {
            let mut scores = Map::new();
            scores.insert(
                REWARD.to_owned(),
                json!({
                    "value": reward,
                    "explanation": reward_explanation(reward, result),
                    "metadata": {"info": result.info},
                }),
            );
            for sub in result.subscores.as_deref().unwrap_or_default() {
                let name = score_name(sub.name());
                if !scores.contains_key(&name) {
                    scores.insert(name, subscore(sub));
                }
            }
            sample["scores"] = Value::Object(scores);
        }
        _ => {
            let message = record
                .error_text()
                .unwrap_or_else(|| "no result".to_owned());
            sample["error"] = json!({
                "message": message,
                "traceback": message,
                "traceback_ansi": message,
            });
            if let Some(result) = &record.result {
                sample["metadata"] = json!({"result": result});
            }
        }
    }
    sample
}

fn subscore(sub: &SubScore) -> Value {
    let empty = Map::new();
    let info = sub.info().unwrap_or(&empty);
    let mut metadata = json!({"weight": sub.weight(), "info": info});
    if let Some(children) = sub.children() {
        metadata["children"] = json!(children);
    }
    let explanation = subscore_explanation(sub, info);
    json!({
        "value": sub.value(),
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

/// How many subscores the reward's explanation lists; the others are counted (each is a score
/// of its own).
const BREAKDOWN_LINES: usize = 20;

/// The reward's explanation: the result's content, then the weighted breakdown, one top-level
/// subscore a line (`- tests: 0.7 × 0.0000 = 0.0000`), the first [`BREAKDOWN_LINES`] of them.
fn reward_explanation(reward: f64, result: &grader_core::EvaluationResult) -> Option<String> {
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
            lines.push(format!(
                "- … and {} more subscores (each a score of its own)",
                subscores.len() - BREAKDOWN_LINES
            ));
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

/// Whether `path` names a log `inspect view` lists: a file name starting with a timestamp.
#[must_use]
pub fn viewer_lists(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let bytes = name.as_bytes();
    bytes.len() >= 19
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && bytes[4] == b'-'
        && bytes[10] == b'T'
        && std::path::Path::new(name.as_ref())
            .extension()
            .is_some_and(|ext| ext == "json")
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
        let text = reward_explanation(result.reward(), &result).expect("an explanation");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + BREAKDOWN_LINES + 1, "{text}");
        assert_eq!(lines[1], "- check 0: 0.0001 × 1.0000 = 0.0001");
        assert_eq!(
            lines[BREAKDOWN_LINES + 1],
            "- … and 9980 more subscores (each a score of its own)"
        );
    }
}
