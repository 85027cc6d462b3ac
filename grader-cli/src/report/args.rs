//! The options of `grader report`: the files, the page to write, and how the summary is
//! computed.

use std::path::PathBuf;

use crate::summary::SummaryFlags;

/// Arguments of `grader report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Result files (JSON Lines); several are merged.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Where to write the page (not one of the files: that would replace the results).
    #[arg(short, long)]
    pub output: PathBuf,
    /// The page's title.
    #[arg(long, default_value = "Evaluation report")]
    pub title: String,
    /// List at most this many results in the table (those that went worst: errored, then
    /// penalised, then the lowest rewards), and as many error groups; the summary, the
    /// histogram, the subscore table and the error counts count all.
    #[arg(long, default_value_t = 5000)]
    pub max_rows: usize,
    /// How the summary is computed; `--threshold` is also what a result or a subscore must
    /// reach to pass.
    #[command(flatten)]
    pub flags: SummaryFlags,
}
