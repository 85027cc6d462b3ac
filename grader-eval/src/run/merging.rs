//! Joining the results files of several shards (or runs) into one: [`merge`], streaming, each
//! (sample, epoch) once.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::error::EvalError;
use crate::line::{Entry, read_lines};

/// What [`merge`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MergeReport {
    /// Lines written.
    pub written: usize,
    /// Lines left out because an earlier input already had that (sample, epoch).
    pub duplicates: usize,
    /// Inputs that ended in a torn line (left out).
    pub torn: Vec<PathBuf>,
}

/// Joins the results files of several shards (or runs) into `output`, streaming: every line
/// of every input in input order, each (sample, epoch) once (the first seen wins). A torn
/// last line of an input is left out and reported.
///
/// The merged file is itself a results file: an [`Evaluation`](crate::Evaluation) can resume from
/// it, and its [`Summary`](crate::Summary) equals the summary of the inputs read together.
///
/// With the feature `object-store`, inputs may be object store URLs (every chunk of every
/// shard an evaluation wrote there, or one object), and so may `output`: the merged lines
/// are then stored as the one object the URL names (`s3://bucket/evals/merged.jsonl`), which
/// every reader reads back as it would the local file. The object appears whole once the
/// merge succeeds (one `PUT`, or a multipart upload of 10 MiB parts for a larger merge,
/// streamed in bounded memory); a merge that fails stores nothing and leaves an object already
/// there as it was. The URL must not hold chunks of an evaluation under it (readers would read
/// those instead).
///
/// # Errors
/// When an input cannot be read or holds a line that is not an evaluation line, or the output
/// cannot be written (for a URL: the bucket is missing, access is denied, an upload failed;
/// `EvalError::Store`, feature `object-store`, names the URL, never a credential). `output` must not be one of the
/// inputs.
pub fn merge(inputs: &[PathBuf], output: &Path) -> Result<MergeReport, EvalError> {
    let mut writer = crate::output::MergeOutput::create(output, inputs)?;
    let mut seen = HashSet::new();
    let mut report = MergeReport {
        written: 0,
        duplicates: 0,
        torn: Vec::new(),
    };
    for input in inputs {
        for entry in read_lines(input)? {
            match entry? {
                Entry::Line(line) => {
                    if !seen.insert((line.id.clone(), line.epoch)) {
                        report.duplicates += 1;
                        continue;
                    }
                    let bytes = line.to_json_line().map_err(|source| EvalError::Serialize {
                        id: line.id.clone(),
                        source,
                    })?;
                    writer.write(output, &bytes)?;
                    report.written += 1;
                }
                Entry::Torn { .. } => report.torn.push(input.clone()),
            }
        }
    }
    writer.finish(output)?;
    Ok(report)
}
