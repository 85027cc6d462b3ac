//! Several lines for one (sample, epoch): one rule for every command, `--on-conflict`.
//!
//! Lines of one (sample, epoch) that say the same (the same reward, error and subscores: their
//! outcome fingerprints are equal) are identical duplicates: one is read and the others are
//! counted. Lines that differ are a *conflict*: which one counts changes the answer, so every
//! command says how many there are and names the first few, and follows the rule given:
//! `first` (the first line read counts; files are read in the order given), `last` (the last
//! line read counts: a re-run given after the first run replaces it), or `fail` (the command
//! stops, exit 1). `merge` fails by default; the commands that only read (`summary`, `diff`,
//! `report`, `export`) keep the first by default, with a warning.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use grader_eval::Summary;
use grader_eval::line::outcome_fingerprint;
use grader_eval::summary::Keep;

use crate::CliError;
use crate::records::{self, Record};
use crate::text::one_line;

/// What to do when lines of one (sample, epoch) differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OnConflict {
    /// The first line read counts.
    #[default]
    First,
    /// The last line read counts.
    Last,
    /// Stop with an error naming the conflicts.
    Fail,
}

impl OnConflict {
    /// Which line a summary keeps under this rule (the first, for `fail`: nothing is kept
    /// when there is a conflict).
    #[must_use]
    pub fn keep(self) -> Keep {
        match self {
            OnConflict::Last => Keep::Last,
            OnConflict::First | OnConflict::Fail => Keep::First,
        }
    }

    /// Says the conflicts `summary` found in `what` (a file's name, or the files read): a
    /// warning on `err`, or, under `fail`, an error.
    ///
    /// # Errors
    /// [`CliError::Invalid`] naming the conflicts under `fail`; a failed write to `err`.
    pub fn check(self, summary: &Summary, what: &str, err: &mut dyn Write) -> Result<(), CliError> {
        let Some(text) = summary.conflicts_text() else {
            return Ok(());
        };
        self.say(&text, what, err)
    }

    fn say(self, text: &str, what: &str, err: &mut dyn Write) -> Result<(), CliError> {
        if self == OnConflict::Fail {
            let text = text.replace("; the first line read counts", "");
            return Err(CliError::Invalid(format!(
                "{what}: {text}; nothing was written: choose the line that counts with \
                 --on-conflict first or last"
            )));
        }
        writeln!(
            err,
            "grader: warning: {}: {} (--on-conflict first, last or fail)",
            one_line(what),
            one_line(text)
        )?;
        Ok(())
    }
}

/// The files' names, for messages.
#[must_use]
pub fn files_named(files: &[PathBuf]) -> String {
    files
        .iter()
        .map(|path| path.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Which line of each (sample, epoch) counts, found in a first reading of the files: the
/// records are then numbered in the order [`records::for_each_record`] hands them out, and
/// [`chosen`](Self::chosen) says of each, in the same order, whether it is the one.
#[derive(Debug, Default)]
pub struct Chosen {
    /// Per (sample, epoch): the number of the record that counts, the first one's
    /// fingerprint, how many lines, whether they differ.
    pairs: HashMap<(String, u32), Pair>,
    /// The conflicting pairs, in the order found.
    conflicts: Vec<(String, u32)>,
    /// The number of the next record [`chosen`](Self::chosen) is asked about.
    next: u64,
}

#[derive(Debug)]
struct Pair {
    chosen: u64,
    fingerprint: u64,
    lines: usize,
    conflict: bool,
}

/// The (sample, epoch) a record is counted under by `report` and `export`: its sample id, or
/// `file:line` when it has none, and its epoch, or 1.
#[must_use]
pub fn key_of(record: &Record, path: &std::path::Path, number: u64) -> (String, u32) {
    (
        record.sample_or(|| format!("{}:{number}", path.display())),
        record.epoch.unwrap_or(1),
    )
}

impl Chosen {
    /// Reads `files` once and chooses a line of each (sample, epoch) by `rule`; says the
    /// conflicts on `err` (or fails, under `fail`).
    ///
    /// # Errors
    /// When a file cannot be read, holds lines that are not results, or (under `fail`) holds
    /// conflicting duplicates.
    pub fn read(
        files: &[PathBuf],
        limits: crate::input::LineLimits,
        rule: OnConflict,
        err: &mut dyn Write,
    ) -> Result<Self, CliError> {
        let mut chosen = Chosen::default();
        let mut number = 0_u64;
        let reading = records::for_each_record(files, limits, |record, path, line| {
            let fingerprint = outcome_fingerprint(
                record
                    .error
                    .as_ref()
                    .map(|(kind, message)| (*kind, message.as_str())),
                record.result.as_ref(),
            );
            let key = key_of(&record, path, line);
            match chosen.pairs.get_mut(&key) {
                None => {
                    chosen.pairs.insert(
                        key,
                        Pair {
                            chosen: number,
                            fingerprint,
                            lines: 1,
                            conflict: false,
                        },
                    );
                }
                Some(pair) => {
                    pair.lines += 1;
                    if rule == OnConflict::Last {
                        pair.chosen = number;
                    }
                    if pair.fingerprint != fingerprint && !pair.conflict {
                        pair.conflict = true;
                        chosen.conflicts.push(key);
                    }
                }
            }
            number += 1;
        })?;
        reading.finish(&mut std::io::sink())?;
        if let Some(text) = chosen.conflicts_text(rule) {
            rule.say(&text, &files_named(files), err)?;
        }
        Ok(chosen)
    }

    /// Starts numbering the records again, for another reading of the files.
    pub fn rewind(&mut self) {
        self.next = 0;
    }

    /// Whether the next record (in reading order) is the line of its (sample, epoch) that
    /// counts.
    pub fn chosen(&mut self, key: &(String, u32)) -> bool {
        let number = self.next;
        self.next += 1;
        self.pairs
            .get(key)
            .is_some_and(|pair| pair.chosen == number)
    }

    /// How many (sample, epoch) pairs have lines that differ.
    #[must_use]
    pub fn conflicts(&self) -> usize {
        self.conflicts.len()
    }

    /// Lines that are not the one of their (sample, epoch) that counts.
    #[must_use]
    pub fn duplicates(&self) -> usize {
        self.pairs.values().map(|pair| pair.lines - 1).sum()
    }

    fn conflicts_text(&self, rule: OnConflict) -> Option<String> {
        let count = self.conflicts.len();
        if count == 0 {
            return None;
        }
        let named: Vec<String> = self
            .conflicts
            .iter()
            .take(Summary::CONFLICTS_NAMED)
            .map(|key| {
                let lines = self.pairs.get(key).map_or(0, |pair| pair.lines);
                format!("{} epoch {} ({lines} lines)", key.0, key.1)
            })
            .collect();
        let more = count - named.len();
        Some(format!(
            "{count} (sample, epoch) pair{} {} lines that differ; the {} line read counts: {}{}",
            if count == 1 { "" } else { "s" },
            if count == 1 { "has" } else { "have" },
            rule.keep(),
            named.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ))
    }
}
