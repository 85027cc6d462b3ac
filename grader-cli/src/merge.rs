//! `grader merge`: joins the results files of several shards (or runs) into one, with
//! grader-eval's [`merge_resolving`](grader_eval::merge_resolving): every (sample, epoch) once,
//! a torn last line of an input left out and reported. Identical duplicates are left out and
//! counted; lines of one (sample, epoch) that differ stop the merge (exit 1, nothing written)
//! unless `--on-conflict first` or `last` says which to keep. Inputs and the output may
//! be object store URLs (feature `object-store`): the merged lines are then stored as the one
//! object the output URL names, whole once the merge succeeds.

use std::io::Write;
use std::path::PathBuf;

use grader_eval::EvalError;
use grader_eval::line::LinesError;

use crate::duplicates::OnConflict;
use crate::text::one_line;
use crate::{CliError, EXIT_OK};

/// Arguments of `grader merge`.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// The shards' results files (JSON Lines of evaluation lines), in order of precedence.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The merged file to write (must not be one of the inputs; replaced if it exists).
    ///
    /// An `s3://`, `gs://` or `az://` URL names the object to store the merged lines in
    /// (`s3://bucket/evals/merged.jsonl`), which every `grader` command then reads from the
    /// URL. It is stored only once the merge succeeds (a failed merge leaves the object there
    /// as it was), and the URL must not hold an evaluation's chunks.
    #[arg(short, long)]
    pub output: PathBuf,
    /// When lines of one (sample, epoch) differ: stop with an error naming them (nothing is
    /// written), or keep the first line read or the last (a re-run given after the first run
    /// replaces it). Identical duplicates are always left out.
    #[arg(long, value_enum, default_value_t = OnConflict::Fail)]
    pub on_conflict: OnConflict,
}

/// Runs `grader merge`: writes the merged file and says what it did on `err`.
///
/// # Errors
/// When an input cannot be read or holds a line that is not an evaluation line, or the output
/// cannot be written.
pub fn run(args: &MergeArgs, err: &mut dyn Write) -> Result<u8, CliError> {
    crate::input::refuse_output_among_inputs(&args.output, &args.files)?;
    #[cfg(feature = "object-store")]
    for input in &args.files {
        if let Some(url) = grader_eval::store::StoreUrl::of_path(input)
            && let Some(missing) = grader_eval::store::missing_shards(&url?)?
        {
            writeln!(err, "grader: note: {}: {missing}", input.display())?;
        }
    }
    let rule = match args.on_conflict {
        OnConflict::Fail => grader_eval::OnConflict::Fail,
        other => grader_eval::OnConflict::Keep(other.keep()),
    };
    let report = grader_eval::merge_resolving(&args.files, &args.output, rule).map_err(
        |error| match error {
            EvalError::Conflicts { .. } => CliError::Invalid(format!(
                "{}: {error}: choose with --on-conflict first or last",
                args.output.display()
            )),
            EvalError::Io { path, source } if args.files.contains(&path) => {
                CliError::Read { path, source }
            }
            EvalError::Io { path, source } => CliError::Write { path, source },
            #[cfg(feature = "object-store")]
            EvalError::Store(error) => CliError::Store(error),
            EvalError::Lines(LinesError::Io { path, source }) => CliError::Read { path, source },
            #[cfg(feature = "object-store")]
            EvalError::Lines(LinesError::Store(error)) => CliError::Store(error),
            other => CliError::Invalid(other.to_string()),
        },
    )?;
    writeln!(
        err,
        "{}: {} lines from {} files ({} duplicates left out)",
        args.output.display(),
        report.written,
        args.files.len(),
        report.duplicates
    )?;
    if report.conflicts > 0 {
        let named: Vec<String> = report
            .conflicting
            .iter()
            .map(|conflict| {
                format!(
                    "{} epoch {} ({} lines)",
                    one_line(&conflict.id),
                    conflict.epoch,
                    conflict.lines
                )
            })
            .collect();
        let more = report.conflicts - named.len();
        writeln!(
            err,
            "grader: warning: {} (sample, epoch) pair(s) had lines that differ; the {} line read \
             was kept: {}{}",
            report.conflicts,
            args.on_conflict.keep(),
            named.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )?;
    }
    for path in &report.torn {
        writeln!(err, "{}: torn last line left out", path.display())?;
    }
    Ok(EXIT_OK)
}
