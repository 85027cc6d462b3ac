//! Joining the results files of several shards (or runs) into one: [`merge`] and
//! [`merge_resolving`], streaming, each (sample, epoch) once, conflicting duplicates counted,
//! named, and resolved by a rule or refused.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::EvalError;
use crate::line::{Entry, read_lines};
use crate::summary::{Conflict, Keep, Summary};

/// What [`merge`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MergeReport {
    /// Lines written.
    pub written: usize,
    /// Lines left out because another line of their (sample, epoch) was kept.
    pub duplicates: usize,
    /// (sample, epoch) pairs whose lines differ (their
    /// [`Line::fingerprint`](crate::Line::fingerprint)s): which one was kept changes the
    /// merged file.
    pub conflicts: usize,
    /// The first few of those pairs found (at most [`Summary::CONFLICTS_NAMED`]).
    pub conflicting: Vec<Conflict>,
    /// Inputs that ended in a torn line (left out).
    pub torn: Vec<PathBuf>,
}

/// What [`merge_resolving`] does when a (sample, epoch) has lines that differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnConflict {
    /// Writes nothing and fails with [`EvalError::Conflicts`], naming them.
    Fail,
    /// Keeps the first or the last line read (identical duplicates are always left out).
    Keep(Keep),
}

/// Joins the results files of several shards (or runs) into `output`, streaming: every line
/// of every input in input order, each (sample, epoch) once (the first seen wins). A torn
/// last line of an input is left out and reported. Conflicting duplicates (lines of one
/// (sample, epoch) that differ) are counted and named in the report; [`merge_resolving`]
/// chooses what to do with them.
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
    merge_resolving(inputs, output, OnConflict::Keep(Keep::First))
}

/// Where a (sample, epoch)'s lines are, as the first pass finds them.
struct Slot {
    /// The input and the line (counting the input's complete lines from 0) to write.
    chosen: (usize, usize),
    fingerprint: u64,
    lines: usize,
    conflict: bool,
}

/// As [`merge`], with `on_conflict` saying what to do with conflicting duplicates. The inputs
/// are read twice: once to find every (sample, epoch)'s lines (holding each pair's id once),
/// once to write the lines kept, in input order. With [`OnConflict::Fail`] and a conflict,
/// nothing is written.
///
/// ```no_run
/// use grader_eval::summary::Keep;
/// use grader_eval::{OnConflict, merge_resolving};
///
/// let inputs = ["run-1.jsonl".into(), "rerun.jsonl".into()];
/// // A re-run's lines replace the first run's.
/// let report = merge_resolving(&inputs, "merged.jsonl".as_ref(), OnConflict::Keep(Keep::Last))?;
/// println!("{} lines, {} conflicts resolved", report.written, report.conflicts);
/// # Ok::<(), grader_eval::EvalError>(())
/// ```
///
/// # Errors
/// As [`merge`]; [`EvalError::Conflicts`] with [`OnConflict::Fail`] when lines conflict.
pub fn merge_resolving(
    inputs: &[PathBuf],
    output: &Path,
    on_conflict: OnConflict,
) -> Result<MergeReport, EvalError> {
    let keep_last = on_conflict == OnConflict::Keep(Keep::Last);
    let mut slots: HashMap<(String, u32), Slot> = HashMap::new();
    let mut report = MergeReport {
        written: 0,
        duplicates: 0,
        conflicts: 0,
        conflicting: Vec::new(),
        torn: Vec::new(),
    };
    let mut total = 0;
    for (input, path) in inputs.iter().enumerate() {
        let mut at = 0;
        for entry in read_lines(path)? {
            let Entry::Line(line) = entry? else {
                report.torn.push(path.clone());
                continue;
            };
            total += 1;
            let fingerprint = line.fingerprint();
            let epoch = line.epoch;
            match slots.entry((line.id, epoch)) {
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(Slot {
                        chosen: (input, at),
                        fingerprint,
                        lines: 1,
                        conflict: false,
                    });
                }
                std::collections::hash_map::Entry::Occupied(mut slot) => {
                    let key_id = slot.key().0.clone();
                    let slot = slot.get_mut();
                    slot.lines += 1;
                    if keep_last {
                        slot.chosen = (input, at);
                    }
                    if slot.fingerprint != fingerprint && !slot.conflict {
                        slot.conflict = true;
                        report.conflicts += 1;
                        if report.conflicting.len() < Summary::CONFLICTS_NAMED {
                            report.conflicting.push(Conflict {
                                id: key_id,
                                epoch,
                                lines: 0,
                            });
                        }
                    }
                }
            }
            at += 1;
        }
    }
    // The line counts of the pairs named, now that every line is read.
    for conflict in &mut report.conflicting {
        if let Some(slot) = slots.get(&(conflict.id.clone(), conflict.epoch)) {
            conflict.lines = slot.lines;
        }
    }
    if on_conflict == OnConflict::Fail && report.conflicts > 0 {
        return Err(EvalError::Conflicts {
            count: report.conflicts,
            named: report
                .conflicting
                .iter()
                .map(|conflict| {
                    format!(
                        "{} epoch {} ({} lines)",
                        conflict.id, conflict.epoch, conflict.lines
                    )
                })
                .collect(),
        });
    }
    let mut writer = crate::output::MergeOutput::create(output, inputs)?;
    for (input, path) in inputs.iter().enumerate() {
        let mut at = 0;
        for entry in read_lines(path)? {
            let Entry::Line(line) = entry? else {
                continue;
            };
            let key = (line.id, line.epoch);
            let chosen = slots
                .get(&key)
                .is_some_and(|slot| slot.chosen == (input, at));
            at += 1;
            if !chosen {
                continue;
            }
            let line = crate::Line { id: key.0, ..*line };
            let bytes = line.to_json_line().map_err(|source| EvalError::Serialize {
                id: line.id.clone(),
                source,
            })?;
            writer.write(output, &bytes)?;
            report.written += 1;
        }
    }
    writer.finish(output)?;
    report.duplicates = total - report.written;
    Ok(report)
}
