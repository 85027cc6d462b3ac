//! `grader export --inspect`: an evaluation as an Inspect AI eval log, for `inspect view` and
//! `inspect_ai.log.read_eval_log`.
//!
//! Two formats, by the output's extension (a folder gets a `.eval` log unless `--format json`):
//!
//! - `.eval` (`eval.rs`): Inspect AI's own format, a zip of the header, one entry per sample and
//!   the samples' summaries, which Inspect AI and its viewer read a piece at a time: the one to
//!   use for a large run (`inspect view` lists 100 000 results from it);
//! - `.json` (`json.rs`): Inspect AI's JSON log (version 2, as `write_eval_log(log,
//!   format="json")` writes), one JSON document that the viewer reads whole: for small runs,
//!   or for reading with tools other than Inspect AI.
//!
//! What is in them is the same (see [`sample`] for a sample):
//!
//! - one sample per (sample, epoch), the first line of each as in `summary`; a sample whose
//!   grading failed (or whose result is marked `isError`) carries the message as its `error`
//!   and no scores, so it is never counted as a 0;
//! - the scores of a sample: `reward` (the result's reward, explained by the result's
//!   `content` and the weighted breakdown) and one per top-level subscore under the
//!   subscore's name (a subscore named `reward` becomes `reward (subscore)`), explained by
//!   what a person reads first (a penalty's `penalty −0.5: fired`, a judge's reason, the
//!   terminal's reason and the command's output, or its children); at most [`SCORE_LIMIT`]
//!   scores, the first names met: a subscore past them is kept whole in the reward's metadata
//!   (`other_subscores`), and the command says how many were;
//! - the sample's input, target and answer when its line holds them (the runner writes them
//!   when the sample gives them), else Inspect AI's empty input and target, and the log's
//!   viewer settings hide the columns no sample fills;
//! - each sample's start and end when its line records when its grading started, and the
//!   run's (the first start, the last end) in the log's stats; when no line records one, the
//!   time the files were last written stands for both ends of the run;
//! - the results: for each score, `mean` and `stderr` over the samples, each sample's scored
//!   epochs first reduced to their mean, as Inspect AI computes them for a scorer with
//!   `metrics=[mean(), stderr()]` and `epochs_reducer=["mean"]` ([`grader_eval::metrics`],
//!   which match Inspect AI's); the header names those metrics and that reducer, so Inspect
//!   AI's `recompute_metrics` gives the same numbers; and the per-sample reductions.
//!
//! There is no model or transcript in a result file: the model is `--model` (`none/none`
//! unless given).
//!
//! The files are read twice (once for the metrics, which come before the samples in the log,
//! once to write the samples), so memory stays bounded by one line plus a few numbers per
//! result; standard input cannot be read twice and is refused.
//!
//! `inspect view` lists a `.json` log only when its file name starts with a timestamp, as
//! Inspect AI names its logs (a `.eval` log whatever its name): given a folder as `--output`,
//! the log is written there as `<created>_<task>_<id>.eval` (or `.json`).

mod eval;
mod json;
pub mod sample;

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use base64::Engine as _;
use grader_eval::metrics;
use serde_json::{Map, Value, json};
use sha2::Digest as _;

use crate::duplicates::{Chosen, OnConflict, key_of};
use crate::input::LineLimits;
use crate::records::{self, Record};
use crate::{CliError, EXIT_OK};

pub use sample::{REWARD, explanation, log_id, score_name, shown_value};

/// The most scores a log has, the reward included: Inspect AI's viewer shows each as a column
/// and its header lists each with its metrics, so a result of thousands of subscores would
/// make a log it cannot show. The subscores past them stay in each sample, whole.
pub const SCORE_LIMIT: usize = 100;

/// Which of Inspect AI's log formats to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// The `.eval` zip, read a piece at a time: for large runs.
    Eval,
    /// One JSON document, read whole.
    Json,
}

impl LogFormat {
    fn extension(self) -> &'static str {
        match self {
            LogFormat::Eval => "eval",
            LogFormat::Json => "json",
        }
    }
}

/// Arguments of `grader export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// Result files (JSON Lines); several are merged.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Write an Inspect AI eval log: `.eval` (Inspect AI's zip, which its viewer reads a sample
    /// at a time: for large runs) or `.json` (one JSON document, log format version 2).
    #[arg(long, required = true)]
    pub inspect: bool,
    /// Where to write the log: a file named `.eval` or `.json`, or a folder to write it in
    /// under the name Inspect AI gives its logs. Not one of the files: that would replace the
    /// results.
    #[arg(short, long)]
    pub output: PathBuf,
    /// The log's format [default: the output's extension; `eval` in a folder].
    #[arg(long, value_enum)]
    pub format: Option<LogFormat>,
    /// The task's name in the log [default: the first file's name without its extension].
    #[arg(long)]
    pub task: Option<String>,
    /// The model's name in the log.
    #[arg(long, default_value = "none/none")]
    pub model: String,
    /// How much of a line is read: its bytes and what it costs once parsed.
    #[command(flatten)]
    pub limits: LineLimits,
    /// When lines of one (sample, epoch) differ: keep the first line read, the last, or stop
    /// with an error (nothing written). Either way they are counted and the first few named.
    #[arg(long, value_enum, default_value_t = OnConflict::First)]
    pub on_conflict: OnConflict,
}

/// The format to write at `output` (a folder when `is_dir`): `given`, or the extension's.
///
/// ```
/// use grader_cli::export::{LogFormat, log_format};
/// use std::path::Path;
///
/// assert_eq!(log_format(Path::new("run.eval"), false, None).unwrap(), LogFormat::Eval);
/// assert_eq!(log_format(Path::new("run.json"), false, None).unwrap(), LogFormat::Json);
/// assert_eq!(log_format(Path::new("logs"), true, None).unwrap(), LogFormat::Eval);
/// assert!(log_format(Path::new("run.zip"), false, None).is_err());
/// assert!(log_format(Path::new("run.json"), false, Some(LogFormat::Eval)).is_err());
/// ```
///
/// # Errors
/// [`CliError::Usage`] when a file's extension is neither `.eval` nor `.json` (and no format is
/// given), or is the other format's.
pub fn log_format(
    output: &Path,
    is_dir: bool,
    given: Option<LogFormat>,
) -> Result<LogFormat, CliError> {
    if is_dir {
        return Ok(given.unwrap_or(LogFormat::Eval));
    }
    let named = match output.extension().and_then(|ext| ext.to_str()) {
        Some("eval") => Some(LogFormat::Eval),
        Some("json") => Some(LogFormat::Json),
        _ => None,
    };
    match (named, given) {
        (Some(named), Some(given)) if named != given => Err(CliError::Usage(format!(
            "{}: --format {} but the name ends in .{}; Inspect AI reads a log by its extension",
            output.display(),
            given.extension(),
            named.extension()
        ))),
        (Some(format), _) | (None, Some(format)) => Ok(format),
        (None, None) => Err(CliError::Usage(format!(
            "{}: name the log .eval (Inspect AI's zip, read a sample at a time: for large \
             runs) or .json (one JSON document), or give a folder",
            output.display()
        ))),
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
    /// Subscore names past [`SCORE_LIMIT`], which are no score of their own.
    left_out: HashSet<String>,
    results: usize,
    scored: usize,
    errored: usize,
    epochs: u32,
    /// The first grading's start and the last one's end, of the lines that record them.
    started: Option<SystemTime>,
    completed: Option<SystemTime>,
    /// How many results have each of input, target and answer.
    texts: [usize; 3],
}

impl Tally {
    fn add(&mut self, score: &str, sample: usize, value: f64) {
        let index = match self.score_index.get(score) {
            Some(index) => *index,
            None if self.scores.len() >= SCORE_LIMIT => {
                if !self.left_out.contains(score) {
                    self.left_out.insert(score.to_owned());
                }
                return;
            }
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
        if let Some((started, ended)) = sample::times(record) {
            self.started = Some(self.started.map_or(started, |s| s.min(started)));
            self.completed = Some(self.completed.map_or(ended, |c| c.max(ended)));
        }
        let texts = &record.texts;
        for (count, text) in self
            .texts
            .iter_mut()
            .zip([&texts.input, &texts.target, &texts.answer])
        {
            *count += usize::from(text.as_deref().is_some_and(|t| !t.is_empty()));
        }
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
                self.add(&score_name(sub.name()), sample, sample::shown_value(sub));
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

/// The log being written, in either format.
enum Log {
    Json(json::JsonLog),
    Eval(Box<eval::EvalLog>),
}

/// Runs `grader export`.
///
/// # Errors
/// When a file cannot be read (or is standard input) or the log cannot be written, or a file
/// holds lines that are not results, or the log would be written over one of the files, or
/// the output's name says no format.
pub fn run(args: &ExportArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<u8, CliError> {
    if let Some(stdin) = args.files.iter().find(|path| path.as_os_str() == "-") {
        return Err(CliError::Read {
            path: stdin.clone(),
            source: std::io::Error::other(
                "export reads its files twice, and standard input cannot be read again",
            ),
        });
    }
    let in_folder = args.output.is_dir();
    if !in_folder {
        // First: an output that is one of the inputs says so, whatever its name.
        crate::input::refuse_output_among_inputs(&args.output, &args.files)?;
    }
    let format = log_format(&args.output, in_folder, args.format)?;
    // A first reading: which line of each (sample, epoch) counts.
    let mut chosen = Chosen::read(&args.files, args.limits, args.on_conflict, err)?;
    // Then the numbers the header holds.
    let mut tally = Tally::default();
    let reading = records::for_each_record(&args.files, args.limits, |record, path, n| {
        let key = key_of(&record, path, n);
        if chosen.chosen(&key) {
            tally.push(&log_id(&key.0), key.1, &record);
        }
    })?;
    reading.finish(err)?;
    if tally.started.is_none() {
        // No line records its start (lines written before the runner recorded it, or by the
        // HUD SDK): the time the files were last written stands for both ends, so that the
        // viewer shows a time and a duration of 0 rather than none it can read.
        let written = args
            .files
            .iter()
            .filter_map(|file| std::fs::metadata(file).and_then(|m| m.modified()).ok())
            .max();
        (tally.started, tally.completed) = (written, written);
    }

    let created = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let task = args.task.clone().unwrap_or_else(|| {
        args.files[0]
            .file_stem()
            .map_or_else(|| "grader".to_owned(), |s| s.to_string_lossy().into_owned())
    });
    let eval_id = eval_id(&created, &args.files);
    let path = if in_folder {
        args.output
            .join(file_name(&created, &task, &eval_id, format.extension()))
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
    let reduced = tally.reduced();
    let header = header(args, &tally, &reduced, &created, &task, &eval_id);
    let mut log = match format {
        LogFormat::Json => Log::Json(json::JsonLog::start(file, &header).map_err(write_error)?),
        LogFormat::Eval => Log::Eval(Box::new(
            eval::EvalLog::start(file, header).map_err(write_error)?,
        )),
    };

    // Then the samples, one line of the files at a time.
    chosen.rewind();
    let mut failure = None;
    let is_score = |name: &str| tally.score_index.contains_key(name);
    let reading = records::for_each_record(&args.files, args.limits, |record, path, n| {
        if failure.is_some() {
            return;
        }
        let (id, epoch) = key_of(&record, path, n);
        if !chosen.chosen(&(id.clone(), epoch)) {
            return;
        }
        let safe = log_id(&id);
        let sample = sample::sample(&safe, &id, epoch, &record, &args.model, &is_score);
        let written = match &mut log {
            Log::Json(log) => log.sample(&sample),
            Log::Eval(log) => log.sample(&safe, epoch, &sample),
        };
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
    let reductions = |out: &mut dyn Write| write_reductions(out, &tally, &reduced);
    let file = match log {
        Log::Json(log) => log.finish(reductions),
        Log::Eval(log) => log.finish(reductions),
    }
    .map_err(write_error)?;
    file.sync_all().map_err(write_error)?;
    notes(&path, &tally, err)?;
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

/// What the reader of the log should know: a name the viewer does not list, subscores that
/// are no score of their own.
fn notes(path: &Path, tally: &Tally, err: &mut dyn Write) -> std::io::Result<()> {
    if !viewer_lists(path) {
        writeln!(
            err,
            "grader: note: `inspect view` lists a .json log only when its name starts with a \
             timestamp (2026-01-02T03-04-05…); give a folder as --output to have it named so, \
             or write a .eval log"
        )?;
    }
    if !tally.left_out.is_empty() {
        writeln!(
            err,
            "grader: note: {} subscore names: Inspect AI's viewer shows each score as a \
             column, so the log has the reward and the first {} of them as scores; the other \
             {} are in each sample's `reward` score, metadata `other_subscores` (nothing is \
             left out)",
            tally.scores.len() - 1 + tally.left_out.len(),
            tally.scores.len() - 1,
            tally.left_out.len()
        )?;
    }
    Ok(())
}

/// The header: version, status, eval spec, plan, results, stats (everything but the samples
/// and the reductions), in Inspect AI's order.
fn header(
    args: &ExportArgs,
    tally: &Tally,
    reduced: &[Vec<(usize, f64)>],
    created: &str,
    task: &str,
    eval_id: &str,
) -> Map<String, Value> {
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
    let mut eval = json!({
        "eval_id": eval_id,
        "run_id": eval_id,
        "created": created,
        "task": task,
        "task_id": eval_id,
        "task_version": 0,
        "task_attribs": {},
        "task_args": {},
        "task_args_passed": {},
        // The ids, which `read_eval_log_samples` reads the samples by.
        "dataset": {"name": task, "samples": tally.samples.len(), "sample_ids": tally.samples},
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
    });
    // The sample list's columns that no sample fills, hidden (the viewer shows Input and
    // Target whether or not there is anything in them).
    let hidden: Vec<Value> = ["input", "target", "answer"]
        .into_iter()
        .zip(tally.texts)
        .filter(|(_, count)| *count == 0)
        .map(|(id, _)| json!({"id": id, "visible": false}))
        .collect();
    if !hidden.is_empty() {
        eval["viewer"] = json!({"task_samples_view": {"name": "grader", "columns": hidden}});
    }
    let time = |time: Option<SystemTime>| time.map(sample::inspect_time).unwrap_or_default();
    let header = json!({
        "version": 2,
        "status": "success",
        "eval": eval,
        "plan": {"name": "plan", "steps": [], "config": {}},
        "results": {
            // As Inspect AI counts them: every sample in every epoch the run asked for (the
            // most any sample has), so a sample with fewer epochs shows as missing ones.
            "total_samples": tally.samples.len() * tally.epochs.max(1) as usize,
            "completed_samples": tally.scored,
            "scores": scores,
        },
        "stats": {
            "started_at": time(tally.started),
            "completed_at": time(tally.completed),
            "model_usage": {},
            "role_usage": {},
        },
        "invalidated": false,
        "tags": [],
        "metadata": {},
    });
    match header {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Each score's per-sample reductions, as a JSON array.
fn write_reductions(
    log: &mut dyn Write,
    tally: &Tally,
    reduced: &[Vec<(usize, f64)>],
) -> std::io::Result<()> {
    log.write_all(b"[")?;
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

/// The name Inspect AI gives a log file: `2026-01-02T03-04-05+00-00_task_id.eval`.
fn file_name(created: &str, task: &str, eval_id: &str, extension: &str) -> String {
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
    format!("{stamp}_{task}_{eval_id}.{extension}")
}

/// Whether `path` names a log `inspect view` lists: a `.eval` log, or a `.json` log whose
/// file name starts with a timestamp.
///
/// ```
/// use grader_cli::export::viewer_lists;
/// use std::path::Path;
///
/// assert!(viewer_lists(Path::new("run.eval")));
/// assert!(viewer_lists(Path::new("2026-01-02T03-04-05+00-00_task_x.json")));
/// assert!(!viewer_lists(Path::new("run.json")));
/// ```
#[must_use]
pub fn viewer_lists(path: &Path) -> bool {
    if path.extension().is_some_and(|ext| ext == "eval") {
        return true;
    }
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
