//! What a run did: [`RunReport`], and the exit status a program that ran it should end with
//! ([`INTERRUPTED_EXIT_STATUS`] after Ctrl-C).

use std::path::PathBuf;
use std::time::Duration;

/// What a run did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunReport {
    /// The results file.
    pub output: PathBuf,
    /// Lines written by this run.
    pub written: usize,
    /// Of those, lines recording a failure or a panic.
    pub errored: usize,
    /// (sample, epoch) pairs skipped because the file already had them.
    pub resumed: usize,
    /// Samples skipped because they belong to another shard.
    pub other_shards: usize,
    /// Whether the file ended in a torn line, which was removed and redone.
    pub torn_line: bool,
    /// Whether the run stopped on Ctrl-C before finishing; running it again resumes.
    pub interrupted: bool,
    /// How long the run took.
    pub elapsed: Duration,
}

/// The exit status of a program stopped by Ctrl-C, by the shells' convention (128 + `SIGINT`'s
/// number, 2): what [`RunReport::exit_status`] gives for an interrupted run.
pub const INTERRUPTED_EXIT_STATUS: u8 = 130;

impl RunReport {
    /// The exit status a program that ran this evaluation should end with:
    /// [`INTERRUPTED_EXIT_STATUS`] (130) when it was stopped by Ctrl-C before finishing, so that
    /// a CI job or a script does not take half a run for a whole one; 0 otherwise. Lines that
    /// record a failed grading do not change it: they are results, counted by the summary.
    ///
    /// ```
    /// use grader_eval::{Evaluation, INTERRUPTED_EXIT_STATUS};
    /// use grader_core::EvaluationResult;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let dir = std::env::temp_dir().join(format!("grader-exit-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let output = dir.join("results.jsonl");
    /// # let _ = std::fs::remove_file(&output);
    /// let mut report = Evaluation::new(&output)
    ///     .run([("a", ()), ("b", ())], |_sample, _epoch| async { EvaluationResult::from_reward(1.0) })
    ///     .await?;
    /// assert_eq!(report.exit_status(), 0);
    /// report.interrupted = true; // as after Ctrl-C
    /// assert_eq!(report.exit_status(), INTERRUPTED_EXIT_STATUS);
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    #[must_use]
    pub fn exit_status(&self) -> u8 {
        if self.interrupted {
            INTERRUPTED_EXIT_STATUS
        } else {
            0
        }
    }

    /// [`exit_status`](Self::exit_status) as an [`ExitCode`](std::process::ExitCode), to return
    /// from `main`:
    ///
    /// ```no_run
    /// use std::process::ExitCode;
    /// use grader_eval::Evaluation;
    /// use grader_core::EvaluationResult;
    ///
    /// #[tokio::main]
    /// async fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    ///     let report = Evaluation::new("results.jsonl")
    ///         .run([("a", ()), ("b", ())], |_sample, _epoch| async { EvaluationResult::from_reward(1.0) })
    ///         .await?;
    ///     Ok(report.exit_code()) // 130 after Ctrl-C
    /// }
    /// ```
    #[must_use]
    pub fn exit_code(&self) -> std::process::ExitCode {
        std::process::ExitCode::from(self.exit_status())
    }
}
