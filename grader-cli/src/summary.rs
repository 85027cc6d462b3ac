//! `grader summary`: grader-core's evaluation summary of one or more result files (shards are
//! merged: the summary does not depend on how lines were split between files).

use std::io::Write;
use std::path::PathBuf;

use grader_core::eval::{Reducer, Summary, SummaryBuilder, SummaryOptions};

use crate::input::parse_size;
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
    /// The longest line read.
    #[arg(long, default_value = "64M", value_parser = parse_size)]
    pub max_line: usize,
}

impl SummaryFlags {
    /// The summary options these flags say.
    #[must_use]
    pub fn options(&self) -> SummaryOptions {
        let mut options = SummaryOptions::default()
            .threshold(self.threshold)
            .seed(self.seed)
            .reducer(self.reducer);
        options.level = self.level;
        options
    }
}

fn parse_level(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|level| *level > 0.0 && *level < 1.0)
        .ok_or_else(|| format!("`{text}` is not a level between 0 and 1 (e.g. 0.95)"))
}

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
    let reading = records::for_each_record(files, flags.max_line, |record, path, number| {
        let id = record.sample_or(|| format!("{}:{number}", path.display()));
        builder.push(record.into_line(id));
    })?;
    reading.finish(err)?;
    Ok(builder.finish())
}

/// Runs `grader summary`.
///
/// # Errors
/// As [`summarize`], or when the output cannot be written.
pub fn run(args: &SummaryArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<u8, CliError> {
    let summary = summarize(&args.files, &args.flags, err)?;
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &summary).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        out.write_all(terminal_safe(&summary.to_string()).as_bytes())?;
    }
    Ok(EXIT_OK)
}
