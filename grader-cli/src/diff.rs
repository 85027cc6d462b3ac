//! `grader diff`: what changed between two evaluations of the same samples.
//!
//! Samples are paired by id. For each sample the reward is its scored epochs' mean. The report
//! gives each side's summary mean (grader-core's, as `grader summary` prints it), the paired
//! change in mean over the samples scored on both sides with its t confidence interval, the
//! per-sample reward changes (largest first), new and fixed errors, and the top-level
//! subscores that crossed the pass threshold on the same (sample, epoch).
//!
//! Each top-level subscore is compared the same way: its per-sample mean (over the sample's
//! scored epochs that have it) on each side, the paired change over the samples that have it
//! on both sides with its t interval, and how many of its values flipped across the threshold.
//! A subscore found on one side only (a grader renamed, replaced, added or removed) is listed
//! as "only in base" or "only in new", never dropped.
//!
//! `--fail-if-worse` exits 1 when the whole interval is below zero: the new mean is lower
//! beyond the interval. With fewer than two paired samples there is no interval, and the
//! command says so without failing. `--fail-if-worse-on NAME` does the same for the subscore
//! `NAME` (repeatable); a gated subscore missing from the new results fails the gate, and one
//! found in neither file is a usage error.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use grader_eval::{SummaryBuilder, metrics};
use serde::Serialize;

use crate::duplicates::OnConflict;
use crate::records::{self, Record};
use crate::summary::SummaryFlags;
use crate::text::{one_line, terminal_safe};
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
    /// Exit 1 when this top-level subscore's mean is lower beyond its paired interval, or when
    /// it is missing from the new results (repeatable; independent of `--fail-if-worse`).
    #[arg(long, value_name = "SUBSCORE")]
    pub fail_if_worse_on: Vec<String>,
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

    /// Each top-level subscore's per-sample mean over the sample's scored epochs that have
    /// it: name → sample → mean.
    fn subscore_means(&self) -> BTreeMap<&str, BTreeMap<&str, f64>> {
        let mut values: BTreeMap<&str, BTreeMap<&str, Vec<f64>>> = BTreeMap::new();
        for (id, epochs) in &self.samples {
            for epoch in epochs.values().filter(|e| e.reward.is_some()) {
                for (name, value) in &epoch.subscores {
                    values
                        .entry(name.as_str())
                        .or_default()
                        .entry(id.as_str())
                        .or_default()
                        .push(*value);
                }
            }
        }
        values
            .into_iter()
            .map(|(name, samples)| {
                let means = samples
                    .into_iter()
                    .map(|(id, values)| (id, metrics::mean(&values)))
                    .collect();
                (name, means)
            })
            .collect()
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

/// One top-level subscore found on both sides: its means and paired change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubscoreChange {
    /// The subscore's name.
    pub name: String,
    /// The mean over the base's samples of its per-sample mean.
    pub base_mean: f64,
    /// The same over the new results' samples.
    pub new_mean: f64,
    /// The paired change over the samples that have it on both sides, with its interval.
    pub change: MeanChange,
    /// Its values that went from passing to failing (same sample and epoch).
    pub newly_failing: usize,
    /// Its values that went from failing to passing.
    pub newly_passing: usize,
}

/// A top-level subscore found on one side only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OneSidedSubscore {
    /// The subscore's name.
    pub name: String,
    /// Samples that have it.
    pub samples: usize,
    /// The mean over those samples of its per-sample mean.
    pub mean: f64,
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
    /// Top-level subscores found on both sides, by name.
    pub subscores: Vec<SubscoreChange>,
    /// Top-level subscores found only in the base (a grader removed or renamed).
    pub subscores_only_in_base: Vec<OneSidedSubscore>,
    /// Top-level subscores found only in the new results (a grader added or renamed).
    pub subscores_only_in_new: Vec<OneSidedSubscore>,
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
    let reading = records::for_each_record(&files, flags.limits, |record, path, number| {
        let id = record.sample_or(|| format!("line {number}"));
        let epoch = record.epoch.unwrap_or(1);
        let epochs = side.samples.entry(id.clone()).or_default();
        // The line that counts, as in the summary: the first read, or the last.
        if flags.on_conflict == OnConflict::Last {
            epochs.insert(epoch, epoch_of(&record));
        } else {
            epochs.entry(epoch).or_insert_with(|| epoch_of(&record));
        }
        builder.push(record.into_line(id));
        let _ = path;
    })?;
    reading.finish(err)?;
    let summary = builder.finish()?;
    flags
        .on_conflict
        .check(&summary, &path.display().to_string(), err)?;
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
    let (subscores, subscores_only_in_base, subscores_only_in_new) =
        compare_subscores(&base, &new, level, &newly_failing, &newly_passing);
    Ok(Comparison {
        base: base_stats,
        new: new_stats,
        change: mean_change(&deltas, level),
        reward_changes,
        new_errors,
        fixed_errors,
        newly_failing,
        newly_passing,
        only_in_base,
        only_in_new,
        subscores,
        subscores_only_in_base,
        subscores_only_in_new,
    })
}

/// The paired change in mean of `deltas` (new − base) with its t interval at `level`.
fn mean_change(deltas: &[f64], level: f64) -> MeanChange {
    // One pair has no spread to judge by (the t interval would have zero width).
    let ci = (deltas.len() >= 2)
        .then(|| metrics::ci_t(deltas, level).ok())
        .flatten()
        .filter(|i| i.lower.is_finite() && i.upper.is_finite())
        .map(|i| [i.lower, i.upper]);
    MeanChange {
        paired: deltas.len(),
        delta: metrics::mean(deltas),
        ci,
        level,
    }
}

/// Each top-level subscore compared: those on both sides with their paired change, and those
/// on one side only.
fn compare_subscores(
    base: &Side,
    new: &Side,
    level: f64,
    newly_failing: &[Flip],
    newly_passing: &[Flip],
) -> (
    Vec<SubscoreChange>,
    Vec<OneSidedSubscore>,
    Vec<OneSidedSubscore>,
) {
    let (base_means, new_means) = (base.subscore_means(), new.subscore_means());
    let mean_of = |samples: &BTreeMap<&str, f64>| {
        metrics::mean(&samples.values().copied().collect::<Vec<_>>())
    };
    let one_sided = |means: &BTreeMap<&str, BTreeMap<&str, f64>>,
                     other: &BTreeMap<&str, BTreeMap<&str, f64>>| {
        means
            .iter()
            .filter(|(name, _)| !other.contains_key(*name))
            .map(|(name, samples)| OneSidedSubscore {
                name: (*name).to_owned(),
                samples: samples.len(),
                mean: mean_of(samples),
            })
            .collect()
    };
    let flips = |list: &[Flip], name: &str| list.iter().filter(|f| f.subscore == name).count();
    let both = base_means
        .iter()
        .filter_map(|(name, before)| {
            let after = new_means.get(name)?;
            let deltas: Vec<f64> = before
                .iter()
                .filter_map(|(id, was)| Some(after.get(id)? - was))
                .collect();
            Some(SubscoreChange {
                name: (*name).to_owned(),
                base_mean: mean_of(before),
                new_mean: mean_of(after),
                change: mean_change(&deltas, level),
                newly_failing: flips(newly_failing, name),
                newly_passing: flips(newly_passing, name),
            })
        })
        .collect();
    (
        both,
        one_sided(&base_means, &new_means),
        one_sided(&new_means, &base_means),
    )
}

/// What the subscore gates (`--fail-if-worse-on`) say: the reasons to fail, or a usage error
/// for a subscore found in neither file.
fn subscore_gates(args: &DiffArgs, c: &Comparison) -> Result<Vec<String>, CliError> {
    let mut failures = Vec::new();
    for name in &args.fail_if_worse_on {
        let shown = one_line(name);
        if let Some(sub) = c.subscores.iter().find(|s| &s.name == name) {
            if sub.change.worse() {
                failures.push(format!(
                    "subscore {shown}: the new mean is lower beyond the {}% interval",
                    sub.change.level * 100.0
                ));
            }
        } else if c.subscores_only_in_base.iter().any(|s| &s.name == name) {
            failures.push(format!(
                "subscore {shown} is in the base but not in the new results"
            ));
        } else if !c.subscores_only_in_new.iter().any(|s| &s.name == name) {
            return Err(CliError::Usage(format!(
                "--fail-if-worse-on {shown}: no top-level subscore of that name in either file"
            )));
        }
    }
    Ok(failures)
}

/// Runs `grader diff`.
///
/// # Errors
/// As [`compare`], or when the output cannot be written.
pub fn run(args: &DiffArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<u8, CliError> {
    let comparison = compare(args, err)?;
    if args.json {
        crate::text::write_json(&mut *out, &comparison).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        out.write_all(terminal_safe(&table(&comparison, args.limit)).as_bytes())?;
    }
    let mut failures = subscore_gates(args, &comparison)?;
    if args.fail_if_worse && comparison.change.worse() {
        failures.insert(
            0,
            format!(
                "the new mean is lower beyond the {}% interval",
                comparison.change.level * 100.0
            ),
        );
    }
    for failure in &failures {
        writeln!(err, "grader: {failure}")?;
    }
    Ok(if failures.is_empty() {
        EXIT_OK
    } else {
        EXIT_INVALID
    })
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
    let _ = writeln!(text, ": {}", verdict(change));

    let mut section = |title: &str, rows: Vec<String>| {
        if rows.is_empty() {
            return;
        }
        let _ = writeln!(text, "\n{title} ({}):", rows.len());
        // A row is one line: a name or a sample id that holds a line break cannot forge one.
        for row in rows.iter().take(limit) {
            let _ = writeln!(text, "  {}", one_line(row));
        }
        if rows.len() > limit {
            let _ = writeln!(text, "  … {} more (--limit, --json)", rows.len() - limit);
        }
    };
    section(
        "subscores, change in mean (paired by sample)",
        c.subscores
            .iter()
            .map(|s| {
                let mut row = format!(
                    "{}  {:.4} → {:.4}  ({:+.4}, n={}",
                    s.name, s.base_mean, s.new_mean, s.change.delta, s.change.paired
                );
                if let Some([lower, upper]) = s.change.ci {
                    let _ = write!(
                        row,
                        ", {}% CI [{lower:+.4}, {upper:+.4}]",
                        s.change.level * 100.0
                    );
                }
                let _ = write!(
                    row,
                    "): {}; {} now failing, {} now passing",
                    verdict(&s.change),
                    s.newly_failing,
                    s.newly_passing
                );
                row
            })
            .collect(),
    );
    let one_sided = |list: &[OneSidedSubscore]| {
        list.iter()
            .map(|s| format!("{}  mean {:.4} over {} samples", s.name, s.mean, s.samples))
            .collect()
    };
    section(
        "subscores only in base",
        one_sided(&c.subscores_only_in_base),
    );
    section("subscores only in new", one_sided(&c.subscores_only_in_new));
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
            .map(|e| format!("{}  {}", e.sample, shortened(&e.error)))
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

/// A change in mean in words.
fn verdict(change: &MeanChange) -> &'static str {
    if change.worse() {
        "worse"
    } else if change.better() {
        "better"
    } else if change.ci.is_some() {
        "no significant change"
    } else {
        "too few paired samples for an interval"
    }
}

/// `text` on one line, at most 100 characters.
fn shortened(text: &str) -> String {
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
