//! The `grader` command: reads result files written by the grader crates or by the HUD Python
//! SDK, and shows, validates, summarizes, compares and reports them.
//!
//! The binary is a thin shell over this library: [`Cli`] is its command line (clap derive) and
//! [`run`] carries out one invocation, writing to the streams it is given, so tests call the
//! same code the binary runs. Each subcommand is a module.
//!
//! | command | what it does |
//! |---|---|
//! | `grader show FILE` | the readable tree of a result (`.json`) or of each line of a `.jsonl` |
//! | `grader validate FILE...` | checks the wire format, line by line in constant memory |
//! | `grader schema` | the JSON Schema of `EvaluationResult`, derived from the Rust types |
//! | `grader summary FILE...` | grader-core's evaluation summary (shards merged), table or JSON; past 8 MiB of lines it spills sorted runs to `TMPDIR` |
//! | `grader merge FILE... -o OUT` | joins shards' results files into one, each (sample, epoch) once |
//! | `grader diff BASE NEW` | per-sample and per-subscore changes, the change in mean with its interval |
//! | `grader report FILE... -o PAGE` | one self-contained HTML page: why each result scored what it did |
//! | `grader export --inspect FILE... -o LOG` | an Inspect AI eval log, for `inspect view` |
//!
//! Every input may be an `s3://`, `gs://` or `az://` URL beside local paths (feature
//! `object-store`, on by default; credentials from the environment, as `object_store` reads
//! them): one object, or the chunks an evaluation wrote under it. So may the output of
//! `merge`: the merged lines are stored as the one object the URL names.
//!
//! Exit codes: 0 when all is well, 1 when the data is invalid (or, for `diff --fail-if-worse`,
//! worse), 2 when the command line is wrong, a file cannot be read or the summary's temporary
//! files cannot be written.
//!
//! ```
//! use clap::Parser as _;
//! use grader_cli::{Cli, run};
//!
//! let cli = Cli::try_parse_from(["grader", "schema"])?;
//! let mut out = Vec::new();
//! let mut err = Vec::new();
//! let code = run(cli, false, &mut out, &mut err);
//! assert_eq!(code, 0);
//! assert!(String::from_utf8(out)?.contains("\"SubScore\""));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::Write;

use clap::{Parser, Subcommand, ValueEnum};

pub mod diff;
pub mod duplicates;
mod error;
pub mod export;
pub mod input;
pub mod merge;
pub mod records;
pub mod report;
pub mod schema;
pub mod show;
pub mod spans;
pub mod summary;
pub mod text;
pub mod validate;

pub use error::{CliError, EXIT_INVALID, EXIT_OK, EXIT_USAGE};

/// Shows, validates and reports grading results (`EvaluationResult` JSON and JSONL files).
#[derive(Debug, Parser)]
#[command(name = "grader", version, about, long_about = None)]
pub struct Cli {
    /// When to colour the output: `auto` colours a terminal only, and never when `NO_COLOR` is
    /// set.
    #[arg(long, value_enum, default_value_t = ColorWhen::Auto, global = true)]
    pub color: ColorWhen,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// When to colour the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless `NO_COLOR` is set (or `CLICOLOR_FORCE` forces it).
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the readable tree of a result, or of each line of a JSONL file.
    Show(show::ShowArgs),
    /// Check result files against the wire format; exit 1 on any problem.
    ///
    /// Each file ends with a verdict: how many results are invalid (their format is wrong:
    /// these fail the check), how many warnings, and how many grading errors are recorded
    /// (valid lines saying a grading failed: an evaluation line's `error`, or `isError`; these
    /// are data, counted and not failed on).
    Validate(validate::ValidateArgs),
    /// Print the JSON Schema of the wire format (`EvaluationResult`).
    Schema(schema::SchemaArgs),
    /// Summarize an evaluation: scored and errored counts, mean, intervals, pass@k, subscores.
    #[command(after_help = summary::ROWS_HELP)]
    Summary(summary::SummaryArgs),
    /// Join the results files of several shards into one; each (sample, epoch) once.
    ///
    /// Inputs and the output may be `s3://`, `gs://` or `az://` URLs: the output is then
    /// stored as one object, whole once the merge succeeds.
    Merge(merge::MergeArgs),
    /// Compare two evaluations: change in mean, each subscore's change (and subscores found on
    /// one side only), reward changes, new errors, flipped subscores.
    Diff(diff::DiffArgs),
    /// Write one self-contained HTML page of an evaluation.
    Report(report::ReportArgs),
    /// Write an evaluation in another tool's format: an Inspect AI eval log (`--inspect`).
    Export(export::ExportArgs),
}

/// Runs one invocation, writing its output to `out` and its diagnostics to `err`; returns the
/// exit code.
///
/// `auto_color` is what [`ColorWhen::Auto`] means here: whether `out` is a terminal that takes
/// colours (the binary asks [`anstream::AutoStream::choice`], which also honours `NO_COLOR`).
pub fn run(cli: Cli, auto_color: bool, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let color = match cli.color {
        ColorWhen::Auto => auto_color,
        ColorWhen::Always => true,
        ColorWhen::Never => false,
    };
    let outcome = match cli.command {
        Command::Show(args) => show::run(&args, color, out),
        Command::Validate(args) => validate::run(&args, out),
        Command::Schema(args) => schema::run(&args, out),
        Command::Summary(args) => summary::run(&args, out, err),
        Command::Merge(args) => merge::run(&args, err),
        Command::Diff(args) => diff::run(&args, out, err),
        Command::Report(args) => report::run(&args, out, err),
        Command::Export(args) => export::run(&args, out, err),
    };
    match outcome {
        Ok(code) => code,
        // A reader that went away (`grader show big.jsonl | head`) is not an error of ours.
        Err(CliError::Output(error)) if error.kind() == std::io::ErrorKind::BrokenPipe => EXIT_OK,
        Err(error) => {
            // Nothing more can be done if the error stream itself is closed.
            // Errors quote what they read (serde names an unknown key, a store its reply):
            // nothing of it may act on the terminal.
            let _ = writeln!(err, "grader: {}", text::terminal_safe(&error.to_string()));
            error.exit_code()
        }
    }
}
