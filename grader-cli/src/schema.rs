//! `grader schema`: the JSON Schema of the wire format, derived from the Rust types.
//!
//! It describes what parsing accepts: an `EvaluationResult` whose `subscores` are `SubScore`s
//! (exactly `name`, `weight`, `value`, `children`, `info`; `value` in `[0, 1]`), other fields of
//! a result allowed. Where it differs from the HUD SDK's
//! `EvaluationResult.model_json_schema()`, the test `schema_matches_the_reference` lists each
//! difference and why.

use std::io::Write;

use grader_core::EvaluationResult;

use crate::{CliError, EXIT_OK};

/// Arguments of `grader schema`.
#[derive(Debug, clap::Args)]
pub struct SchemaArgs {}

/// The JSON Schema (draft 2020-12) of [`EvaluationResult`] as it is read.
///
/// ```
/// let schema = grader_cli::schema::schema();
/// assert_eq!(schema["title"], "EvaluationResult");
/// assert_eq!(schema["$defs"]["SubScore"]["properties"]["value"]["maximum"], 1.0);
/// ```
#[must_use]
pub fn schema() -> serde_json::Value {
    schemars::schema_for!(EvaluationResult).to_value()
}

/// Prints the schema, pretty.
///
/// # Errors
/// When the output cannot be written.
pub fn run(_args: &SchemaArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    serde_json::to_writer_pretty(&mut *out, &schema()).map_err(std::io::Error::from)?;
    writeln!(out)?;
    Ok(EXIT_OK)
}
