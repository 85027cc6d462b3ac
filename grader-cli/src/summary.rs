//! `grader summary`: grader-core's evaluation summary of one or more result files (shards are
//! merged: the summary does not depend on how lines were split between files).

use std::io::Write;
use std::path::PathBuf;

use grader_eval::{Reducer, Summary, SummaryBuilder, SummaryOptions};

use crate::duplicates::{OnConflict, files_named};
use crate::input::LineLimits;
use crate::records;
use crate::text::terminal_safe;
use crate::{CliError, EXIT_OK};

/// Options shared by the commands that compute a summary.
#[derive(Debug, Clone, clap::Args)]
pub struct SummaryFlags {
    /// A reward at or above it passes (pass rate, pass@k).
    #[arg(long, default_value_t = 1.0)]
    pub threshold: f64,
    /// The confidence intervals' level.
    #[arg(long, default_value_t = 0.95, value_parser = parse_level)]
    pub level: f64,
    /// How a sample's epochs become one value: mean, median, mode, max, majority, at_least_K,
    /// pass_at_K.
    #[arg(long, default_value = "mean")]
    pub reducer: Reducer,
    /// The bootstrap's seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The number of epochs the run asked for: samples with fewer lines are counted and warned
    /// about [default: the largest number seen for one sample].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub epochs: Option<u32>,
    /// How much of a line is read: its bytes and what it costs once parsed.
    #[command(flatten)]
    pub limits: LineLimits,
    /// When lines of one (sample, epoch) differ: keep the first line read, the last, or stop
    /// with an error. Either way they are counted and the first few named; identical
    /// duplicates are only counted.
    #[arg(long, value_enum, default_value_t = OnConflict::First)]
    pub on_conflict: OnConflict,
}

impl SummaryFlags {
    /// The summary options these flags say.
    #[must_use]
    pub fn options(&self) -> SummaryOptions {
        let mut options = SummaryOptions::default()
            .threshold(self.threshold)
            .seed(self.seed)
            .reducer(self.reducer)
            .keep(self.on_conflict.keep());
        options.level = self.level;
        if let Some(epochs) = self.epochs {
            options = options.epochs(epochs);
        }
        options
    }
}

fn parse_level(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|level| *level > 0.0 && *level < 1.0)
        .ok_or_else(|| format!("`{text}` is not a level between 0 and 1 (e.g. 0.95)"))
}

/// What the rows of `grader summary`'s table mean, for its `--help` (the table ends with the
/// same legend, with the run's threshold and reducer filled in).
pub const ROWS_HELP: &str = "\
Rows of the table (the JSON has the same fields):
  samples     distinct sample ids, how many have no scored epoch, and the epochs per sample;
              a warning row follows when some samples have fewer epochs than asked for
              (--epochs, else the largest number seen): an unfinished or interrupted run
  results     lines with a reward (scored) and without (errored: failed, panicked, isError);
              errors are counted, never averaged in as 0; duplicate lines of one (sample,
              epoch) are counted and left out
  conflicts   (sample, epoch) pairs whose lines differ, the first few named, and which line
              counted (--on-conflict)
  reward      each sample's scored epochs reduced to one value (--reducer, the mean by
              default), then the mean over samples with its standard error; penalties can make
              a reward negative
  CI          confidence intervals of that mean (bootstrap, t, and Wilson when every value is
              0 or 1)
  pass rate   share of samples whose reduced value is >= --threshold: labelled \"all epochs
              >= t\" when that is what it counts (the mean, and no reward above the
              threshold), else \"mean of epochs >= t\" (or the reducer's name)
  pass_at_k   chance that at least one of k epochs of a sample passes, averaged over samples
              with k scored epochs; pass_at_1 is a sample's share of passing epochs, averaged
  median, mode, max, majority
              the other epoch reducers (Inspect AI's), each averaged over the samples: the
              median epoch, the most frequent value, the best epoch, the value held by more
              than half of the epochs (samples without one are left out)
  subscores   each top-level subscore's mean over the samples that have it, a sample's
              value the mean of its scored epochs that have it (as the reward with the mean,
              and as `diff`, `report` and Inspect AI give it), whatever --reducer says
  n           how many samples a value is over";

/// Arguments of `grader summary`.
#[derive(Debug, clap::Args)]
pub struct SummaryArgs {
    /// Result files (JSON Lines, or `.json` for one result); several are merged.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print the summary as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// How the summary is computed.
    #[command(flatten)]
    pub flags: SummaryFlags,
}

/// The summary of `files`, read in one pass: the lines' results are not kept, only what the
/// summary needs. Bare results without a `sample_id` are samples named `file:line`.
///
/// # Errors
/// When a file cannot be read or holds lines that are not results.
pub fn summarize(
    files: &[PathBuf],
    flags: &SummaryFlags,
    err: &mut dyn Write,
) -> Result<Summary, CliError> {
    let mut builder = SummaryBuilder::new(flags.options());
    let reading = records::for_each_record(files, flags.limits, |record, path, number| {
        let id = record.sample_or(|| format!("{}:{number}", path.display()));
        builder.push(record.into_line(id));
    })?;
    reading.finish(err)?;
    let summary = builder.finish()?;
    flags
        .on_conflict
        .check(&summary, &files_named(files), err)?;
    Ok(summary)
}

/// Runs `grader summary`.
///
/// # Errors
/// As [`summarize`], or when the output cannot be written.
pub fn run(args: &SummaryArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<u8, CliError> {
    let summary = summarize(&args.files, &args.flags, err)?;
    if args.json {
        crate::text::write_json(&mut *out, &summary).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        out.write_all(terminal_safe(&summary.to_string()).as_bytes())?;
    }
    Ok(EXIT_OK)
}
