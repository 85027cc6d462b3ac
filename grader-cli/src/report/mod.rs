//! `grader report`: one self-contained static HTML page of an evaluation.
//!
//! The page has the summary (grader-core's), a histogram of the scored rewards (inline SVG),
//! each top-level subscore's weight, mean and pass rate (for a penalty, how often it fired),
//! the errors grouped by message with their counts, and a table of the results whose grade
//! trees expand in place (`<details>`). The table sorts by reward and filters by what went
//! wrong (errored, failed, penalised), by subscore and by sample id; the choice is kept in the
//! address's fragment (`#status=failed&subscore=tests&sort=reward-asc`, and `open=1` to
//! expand the trees shown), so a link opens the page filtered. It loads nothing: no network, no external file; its content security policy
//! allows only its own inline style and the one inline script (by hash).
//!
//! What a grader recorded is shown as text, not as JSON: a command's `stdout` and `stderr`, a
//! judge's `reason`, an error's message are preformatted blocks; a long one shows its first
//! and last lines (see [`excerpt()`]) with what lies between counted, and the bytes a grader's
//! output budget dropped (`stdout_dropped_bytes`, `stderr_dropped_bytes`) are shown beside
//! it. A penalty (negative weight) that fired is shown as a failure.
//!
//! Everything from the files is escaped: the page is built with `maud`, which escapes every
//! interpolated string, and nothing from the files is ever inserted unescaped.
//!
//! The command ([`run`]) reads the files once into the page's data (`data`: [`Collected`]),
//! then draws the page (`html`) with its style and script (`assets`); long texts are cut by
//! [`excerpt()`] (`excerpt`), which `grader export` shares; a collapsed row's line of what
//! went wrong comes from `why`. [`ReportArgs`] (`args`) are its options.

use std::io::Write;

use crate::{CliError, EXIT_OK};

mod args;
mod assets;
mod data;
mod excerpt;
mod html;
mod why;

pub use args::ReportArgs;
pub use data::{Collected, ErrorGroup, Row, Standing, SubscoreTally, group_key};
pub use excerpt::{Excerpt, KEEP_BYTES, KEEP_LINES, excerpt};
pub use html::bins;

use data::collect;
use html::render;

/// Runs `grader report`.
///
/// # Errors
/// When a file cannot be read or written, or holds lines that are not results, or the output
/// is one of the files.
pub fn run(args: &ReportArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<u8, CliError> {
    crate::input::refuse_output_among_inputs(&args.output, &args.files)?;
    let (summary, collected) = collect(args, err)?;
    let page = render(&args.title, &args.files, &summary, &collected, args);
    std::fs::write(&args.output, page.into_string()).map_err(|source| CliError::Write {
        path: args.output.clone(),
        source,
    })?;
    writeln!(
        out,
        "{}: {} results ({} scored, {} errored)",
        args.output.display(),
        summary.lines,
        summary.scored,
        summary.errored
    )?;
    Ok(EXIT_OK)
}
