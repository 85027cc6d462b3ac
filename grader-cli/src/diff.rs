//! `grader diff`: what changed between two evaluations of the same samples.
//!
//! Samples are paired by id. For each sample the reward is its scored epochs' mean. The report
//! gives each side's summary mean (grader-core's, as `grader summary` prints it), the paired
//! change in mean over the samples scored on both sides with its t confidence interval, the
//! per-sample reward changes (largest first), new and fixed errors, and the top-level
//! subscores that crossed the pass threshold on the same (sample, epoch).
//!
//! `--fail-if-worse` exits 1 when the whole interval is below zero: the new mean is lower
//! beyond the interval. With fewer than two paired samples there is no interval, and the
//! command says so without failing.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use grader_core::eval::{SummaryBuilder, metrics};
use serde::Serialize;

use crate::records::{self, Record};
use crate::summary::SummaryFlags;
use crate::text::terminal_safe;
use crate::{CliError, EXIT_INVALID, EXIT_OK};

/// Arguments of `grader diff`.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The results before (JSON Lines).
    pub base: PathBuf,
    /// The results after.
    pub new: PathBuf,
    /// Exit 1 when the new mean is lower than the base's beyond the confidence interval.
    #[arg(long)]
    pub fail_if_worse: bool,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
    /// List at most this many entries per section in the table (all are in `--json`).
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// How each side's summary is computed; `--threshold` is also what a subscore must reach
    /// to pass.
    #[command(flatten)]
    pub flags: SummaryFlags,
}

/// One side's rewards and subscores, by sample.
#[derive(Debug, Default)]
struct Side {
    /// Sample id → epoch → what that grading gave.
    samples: BTreeMap<String, BTreeMap<u32, Epoch>>,
}

#[derive(Debug)]
struct Epoch {
    reward: Option<f64>,
    error: Option<String>,
    subscores: Vec<(String, f64)>,
}

impl Side {
    /// The sample's reward: the mean of its scored epochs.
    fn reward(&self, id: &str) -> Option<f64> {
        let rewards: Vec<f64> = self
            .samples
            .get(id)?
            .values()
            .filter_map(|e| e.reward)
            .collect();
        (!rewards.is_empty()).then(|| metrics::mean(&rewards))
    }

    /// The sample's first error, when no epoch of it is scored.
    fn error(&self, id: &str) -> Option<&str> {
        let epochs = self.samples.get(id)?;
        if epochs.values().any(|e| e.reward.is_some()) {
            return None;
        }
        epochs.values().find_map(|e| e.error.as_deref())
    }
}

/// A sample whose reward changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RewardChange {
    /// The sample.
    pub sample: String,
    /// Its reward before.
    pub base: f64,
    /// Its reward after.
    pub new: f64,
}

/// A sample that errored on one side only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorChange {
    /// The sample.
    pub sample: String,
    /// The error (on the side where it errored).
    pub error: String,
}

/// A subscore that crossed the pass threshold.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flip {
    /// The sample.
    pub sample: String,
    /// The epoch.
    pub epoch: u32,
    /// The subscore's name.
    pub subscore: String,
    /// Its value before.
    pub base: f64,
    /// Its value after.
    pub new: f64,
}

/// The paired change in mean.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeanChange {
    /// Samples scored on both sides.
    pub paired: usize,
    /// The mean of the per-sample differences (new − base).
    pub delta: f64,
    /// Its t confidence interval, when there are at least two pairs.
    pub ci: Option<[f64; 2]>,
    /// The interval's level.
    pub level: f64,
}

impl MeanChange {
    /// Whether the new mean is lower beyond the interval (the interval is below zero).
    #[must_use]
    pub fn worse(&self) -> bool {
        self.ci.is_some_and(|[_, upper]| upper < 0.0)
    }

    /// Whether the new mean is higher beyond the interval.
    #[must_use]
    pub fn better(&self) -> bool {
        self.ci.is_some_and(|[lower, _]| lower > 0.0)
    }
}

/// Everything `grader diff` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The base's summary mean and counts.
    pub base: SideStats,
    /// The new side's.
    pub new: SideStats,
    /// The paired change in mean.
    pub change: MeanChange,
    /// Samples whose reward changed, largest change first.
    pub reward_changes: Vec<RewardChange>,
    /// Samples scored in the base that errored in the new results.
    pub new_errors: Vec<ErrorChange>,
    /// Samples that errored in the base and are scored in the new results.
    pub fixed_errors: Vec<ErrorChange>,
    /// Subscores that went from passing to failing.
    pub newly_failing: Vec<Flip>,
    /// Subscores that went from failing to passing.
    pub newly_passing: Vec<Flip>,
    /// Samples only in the base.
    pub only_in_base: Vec<String>,
    /// Samples only in the new results.
    pub only_in_new: Vec<String>,
}

/// One side's headline numbers, from grader-core's summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideStats {
    /// The file.
    pub file: PathBuf,
    /// Distinct samples.
    pub samples: usize,
    /// Scored lines.
    pub scored: usize,
    /// Errored lines.
    pub errored: usize,
    /// The summary's mean.
    pub mean: f64,
}

fn read_side(
    path: &Path,
    flags: &SummaryFlags,
    err: &mut dyn Write,
) -> Result<(Side, SideStats), CliError> {
    let mut side = Side::default();
    let mut builder = SummaryBuilder::new(flags.options());
    let files = [path.to_owned()];
    let reading = records::for_each_record(&files, flags.max_line, |record, path, number| {
        let id = record.sample_or(|| format!("line {number}"));
        let epoch = record.epoch.unwrap_or(1);
        side.samples
            .entry(id.clone())
            .or_default()
            .entry(epoch)
            .or_insert_with(|| epoch_of(&record));
        builder.push(record.into_line(id));
        let _ = path;
    })?;
    reading.finish(err)?;
    let summary = builder.finish();
    let stats = SideStats {
        file: path.to_owned(),
        samples: summary.samples,
        scored: summary.scored,
        errored: summary.errored,
        mean: summary.reward.mean,
    };
    Ok((side, stats))
}

fn epoch_of(record: &Record) -> Epoch {
    let subscores = record
        .result
        .as_ref()
        .and_then(|result| result.subscores.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|sub| (sub.name().to_owned(), sub.value()))
        .collect();
    Epoch {
        reward: record.reward(),
        error: record.error_text(),
        subscores,
    }
}

/// Compares two result files.
///
/// # Errors
/// When a file cannot be read or holds lines that are not results.
pub fn compare(args: &DiffArgs, err: &mut dyn Write) -> Result<Comparison, CliError> {
    let (base, base_stats) = read_side(&args.base, &args.flags, err)?;
    let (new, new_stats) = read_side(&args.new, &args.flags, err)?;
    let threshold = args.flags.threshold;

    let mut deltas = Vec::new();
    let mut reward_changes = Vec::new();
    let mut new_errors = Vec::new();
    let mut fixed_errors = Vec::new();
    let mut newly_failing = Vec::new();
    let mut newly_passing = Vec::new();
    let mut only_in_base = Vec::new();
    for (id, base_epochs) in &base.samples {
        let Some(new_epochs) = new.samples.get(id) else {
            only_in_base.push(id.clone());
            continue;
        };
        match (base.reward(id), new.reward(id)) {
            (Some(before), Some(after)) => {
                deltas.push(after - before);
                if before != after {
                    reward_changes.push(RewardChange {
                        sample: id.clone(),
                        base: before,
                        new: after,
                    });
                }
            }
            (Some(_), None) => new_errors.push(ErrorChange {
                sample: id.clone(),
                error: new.error(id).unwrap_or("no result").to_owned(),
            }),
            (None, Some(_)) => fixed_errors.push(ErrorChange {
                sample: id.clone(),
                error: base.error(id).unwrap_or("no result").to_owned(),
            }),
            (None, None) => {}
        }
        for (epoch, before) in base_epochs {
            let Some(after) = new_epochs.get(epoch) else {
                continue;
            };
            for (name, was) in &before.subscores {
                let Some((_, now)) = after.subscores.iter().find(|(n, _)| n == name) else {
                    continue;
                };
                let flip = || Flip {
                    sample: id.clone(),
                    epoch: *epoch,
                    subscore: name.clone(),
                    base: *was,
                    new: *now,
                };
                match (*was >= threshold, *now >= threshold) {
                    (true, false) => newly_failing.push(flip()),
                    (false, true) => newly_passing.push(flip()),
                    _ => {}
                }
            }
        }
    }
    let only_in_new = new
        .samples
        .keys()
        .filter(|id| !base.samples.contains_key(*id))
        .cloned()
        .collect();
    reward_changes.sort_by(|a, b| {
        let size = |c: &RewardChange| (c.new - c.base).abs();
        size(b)
            .total_cmp(&size(a))
            .then_with(|| a.sample.cmp(&b.sample))
    });
    let level = args.flags.level;
    // One pair has no spread to judge by (the t interval would have zero width).
    let ci = (deltas.len() >= 2)
        .then(|| metrics::ci_t(&deltas, level).ok())
        .flatten()
        .filter(|i| i.lower.is_finite() && i.upper.is_finite())
        .map(|i| [i.lower, i.upper]);
    Ok(Comparison {
        base: base_stats,
        new: new_stats,
        change: MeanChange {
            paired: deltas.len(),
            delta: metrics::mean(&deltas),
            ci,
            level,
        },
        reward_changes,
        new_errors,
        fixed_errors,
        newly_failing,
        newly_passing,
        only_in_base,
        only_in_new,
    })
}

/// Runs `grader diff`.
///
/// # Errors
/// As [`compare`], or when the output cannot be written.
pub fn run(args: &DiffArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<u8, CliError> {
    let comparison = compare(args, err)?;
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &comparison).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        out.write_all(terminal_safe(&table(&comparison, args.limit)).as_bytes())?;
    }
    if args.fail_if_worse && comparison.change.worse() {
        writeln!(
            err,
            "grader: the new mean is lower beyond the {}% interval",
            comparison.change.level * 100.0
        )?;
        return Ok(EXIT_INVALID);
    }
    Ok(EXIT_OK)
}

/// The comparison as a terminal table, each list cut to `limit` entries.
#[must_use]
pub fn table(c: &Comparison, limit: usize) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    for (label, side) in [("base", &c.base), ("new", &c.new)] {
        let _ = writeln!(
            text,
            "{label:<4}  {}: {} samples, {} scored, {} errored, mean {:.4}",
            side.file.display(),
            side.samples,
            side.scored,
            side.errored,
            side.mean
        );
    }
    let change = &c.change;
    let verdict = if change.worse() {
        "worse"
    } else if change.better() {
        "better"
    } else if change.ci.is_some() {
        "no significant change"
    } else {
        "too few paired samples for an interval"
    };
    let _ = write!(
        text,
        "change in mean (paired, n={}): {:+.4}",
        change.paired, change.delta
    );
    if let Some([lower, upper]) = change.ci {
        let _ = write!(
            text,
            ", {}% CI [{lower:+.4}, {upper:+.4}]",
            change.level * 100.0
        );
    }
    let _ = writeln!(text, ": {verdict}");

    let mut section = |title: &str, rows: Vec<String>| {
        if rows.is_empty() {
            return;
        }
        let _ = writeln!(text, "\n{title} ({}):", rows.len());
        for row in rows.iter().take(limit) {
            let _ = writeln!(text, "  {row}");
        }
        if rows.len() > limit {
            let _ = writeln!(text, "  … {} more (--limit, --json)", rows.len() - limit);
        }
    };
    section(
        "reward changes, largest first",
        c.reward_changes
            .iter()
            .map(|r| {
                format!(
                    "{}  {:.4} → {:.4}  ({:+.4})",
                    r.sample,
                    r.base,
                    r.new,
                    r.new - r.base
                )
            })
            .collect(),
    );
    let errors = |list: &[ErrorChange]| {
        list.iter()
            .map(|e| format!("{}  {}", e.sample, one_line(&e.error)))
            .collect()
    };
    section("new errors", errors(&c.new_errors));
    section("fixed errors", errors(&c.fixed_errors));
    let flips = |list: &[Flip], what: &str| {
        list.iter()
            .map(|f| {
                format!(
                    "{} (epoch {})  {}: {what} ({:.4} → {:.4})",
                    f.sample, f.epoch, f.subscore, f.base, f.new
                )
            })
            .collect()
    };
    section(
        "subscores now failing",
        flips(&c.newly_failing, "pass → fail"),
    );
    section(
        "subscores now passing",
        flips(&c.newly_passing, "fail → pass"),
    );
    section("samples only in base", c.only_in_base.clone());
    section("samples only in new", c.only_in_new.clone());
    text
}

/// `text` on one line, at most 100 characters.
fn one_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c == '\n' { ' ' } else { c })
        .collect();
    if flat.chars().count() <= 100 {
        return flat;
    }
    let mut cut: String = flat.chars().take(99).collect();
    cut.push('…');
    cut
}
