//! Accumulating a summary's lines: [`SummaryBuilder`] keeps of each line what the metrics
//! need, in memory up to its budget and past it in sorted runs on disk (`spill.rs`), and
//! hands them to the statistics one sample at a time; [`Summary::from_lines`] and
//! [`summarize_files`] feed it.

use std::collections::HashSet;
use std::fmt;

use super::options::SummaryOptions;
use super::spill;
use super::tally::{Outcome, Tally, Totals};
use super::{SpillError, Summary};
use crate::line::Line;

/// Builds a [`Summary`] from lines pushed one at a time, in memory bounded by
/// [`MEMORY_BUDGET`](Self::MEMORY_BUDGET) plus 8 bytes a sample.
///
/// Of each line it keeps only what the metrics need (24 bytes), of each sample its id once and
/// which epochs it has; subscore means and the grading time are running sums. Past the budget
/// it sorts what it holds by sample id and epoch and writes it to a temporary file (a run),
/// then starts again empty; [`finish`](Self::finish) merges the runs one sample at a time, so
/// only the headline value of each sample stays in memory (8 bytes a sample: the bootstrap
/// draws from them at random). Below the budget no file is made.
///
/// The temporary files are made in [`std::env::temp_dir`] (`TMPDIR` on Unix), have no name
/// (nothing is left behind, even by a killed process) and are closed when the builder is
/// finished or dropped. The runs take 20 bytes a line and each sample's id once per run; the
/// lines pushed after the first spill take 10 bytes more, and 9 per subscore, in a log.
///
/// The summary is the same, bit for bit, whether or not anything was spilled: the first line
/// of a (sample, epoch) counts, samples are taken in the order of their ids' bytes, and the
/// running sums add the lines in the order they came.
///
/// ```
/// use grader_core::EvaluationResult;
/// use grader_eval::{Line, SummaryBuilder, SummaryOptions};
///
/// let mut builder = SummaryBuilder::new(SummaryOptions::default());
/// for (id, epoch, reward) in [("b", 1, 1.0), ("a", 1, 0.0), ("a", 1, 1.0)] {
///     builder.push(Line::graded(id, epoch, EvaluationResult::from_reward(reward)?, 0.5));
/// }
/// let summary = builder.finish()?;
/// assert_eq!((summary.samples, summary.duplicates), (2, 1)); // the first line of a counts
/// assert_eq!(summary.reward.mean, 0.5);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SummaryBuilder {
    options: SummaryOptions,
    /// The lines pushed since the last spill (all of them when nothing was spilled).
    run: Run,
    /// The size of `run`, in bytes, past which it is spilled.
    budget: usize,
    /// Where the temporary files go; [`std::env::temp_dir`] when `None`.
    dir: Option<std::path::PathBuf>,
    /// How many runs are merged at once.
    fan_in: usize,
    /// The runs written and the log, once anything was spilled.
    spilled: Option<Spilled>,
    /// Why spilling failed; nothing is kept after it.
    failure: Option<SpillError>,
    duplicates: usize,
    /// The running sums over the lines that are known to be the first of their (sample, epoch).
    totals: Totals,
    /// A logged line being built.
    logged: spill::Logged,
}

/// One line as a summary keeps it in memory: 24 bytes.
#[derive(Debug, Clone, Copy)]
struct Kept {
    /// The sample, as its index in [`Run::ids`].
    sample: u32,
    epoch: u32,
    /// The reward, or NaN for a line without one (a reward is always finite).
    reward: f64,
    /// Its place in the log of lines that may be duplicates ([`spill::NOT_LOGGED`] when it
    /// is not there).
    logged: u64,
}

/// The lines of one run: the ids of its samples once, which epochs each has, and the lines.
#[derive(Debug, Default)]
struct Run {
    ids: Ids,
    /// Per sample, the epochs 1 to 64 seen, as bits.
    epochs_seen: Vec<u64>,
    /// The (sample, epoch) pairs seen with an epoch outside 1 to 64, as `sample << 32 | epoch`.
    other_epochs_seen: HashSet<u64, foldhash::fast::RandomState>,
    kept: Vec<Kept>,
}

impl Run {
    /// The sample's number, or `None` when this run has a line for the (sample, epoch).
    fn insert(&mut self, id: &str, epoch: u32) -> Option<u32> {
        let sample = self.ids.intern(id);
        if sample as usize == self.epochs_seen.len() {
            self.epochs_seen.push(0);
        }
        let new = match epoch {
            1..=64 => {
                let seen = &mut self.epochs_seen[sample as usize];
                let bit = 1_u64 << (epoch - 1);
                let new = *seen & bit == 0;
                *seen |= bit;
                new
            }
            _ => self
                .other_epochs_seen
                .insert((u64::from(sample) << 32) | u64::from(epoch)),
        };
        new.then_some(sample)
    }

    /// About how many bytes the run holds.
    fn size(&self) -> usize {
        // Per sample: where its id ends, its epoch bits, its slot in the table of ids.
        const PER_SAMPLE: usize = size_of::<usize>() + size_of::<u64>() + size_of::<u32>() + 1;
        self.kept.len() * size_of::<Kept>()
            + self.ids.bytes.len()
            + self.ids.len() * PER_SAMPLE
            + self.other_epochs_seen.len() * 2 * size_of::<u64>()
    }

    /// Sorts the lines: samples in the order of their ids' bytes, each one's by epoch.
    fn sort(&mut self) {
        let rank = self.ids.ranks();
        self.kept
            .sort_unstable_by_key(|line| (rank[line.sample as usize], line.epoch));
    }

    /// Writes the run to a new file in `dir`, sorted, and empties it.
    fn spill(&mut self, dir: &std::path::Path) -> std::io::Result<std::fs::File> {
        self.sort();
        let mut out = spill::RunWriter::create(dir)?;
        for group in self.kept.chunk_by(|a, b| a.sample == b.sample) {
            let id = Ids::get(&self.ids.bytes, &self.ids.ends, group[0].sample);
            out.sample(
                id,
                group.iter().map(|line| spill::Entry {
                    epoch: line.epoch,
                    reward: line.reward,
                    logged: line.logged,
                }),
            )?;
        }
        let file = out.finish()?;
        self.ids.clear();
        self.epochs_seen.clear();
        self.other_epochs_seen.clear();
        self.kept.clear();
        Ok(file)
    }
}

/// What was spilled.
#[derive(Debug)]
struct Spilled {
    dir: std::path::PathBuf,
    /// The runs, in the order of their lines.
    runs: Vec<std::fs::File>,
    /// The samples of each run, added up: at least the number of samples.
    samples: usize,
    /// The lines of every run but the first, as they add to the running sums.
    log: spill::Log,
}

/// Sample ids, each once, numbered from 0 in the order first seen: their bytes one after the
/// other in one buffer, and a table of their numbers.
#[derive(Default)]
struct Ids {
    bytes: Vec<u8>,
    /// Where each id ends in `bytes`; it starts where the one before ends.
    ends: Vec<usize>,
    table: hashbrown::HashTable<u32>,
    hasher: foldhash::fast::RandomState,
}

impl fmt::Debug for Ids {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ids").field("len", &self.len()).finish()
    }
}

impl Ids {
    fn len(&self) -> usize {
        self.ends.len()
    }

    /// Forgets every id, keeping the memory for the next ones.
    fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.table.clear();
    }

    fn get<'a>(bytes: &'a [u8], ends: &[usize], index: u32) -> &'a [u8] {
        let index = index as usize;
        let start = if index == 0 { 0 } else { ends[index - 1] };
        &bytes[start..ends[index]]
    }

    /// The id's number, given it if it is new.
    fn intern(&mut self, id: &str) -> u32 {
        use std::hash::BuildHasher as _;

        let Ids {
            bytes,
            ends,
            table,
            hasher,
        } = self;
        let hash = hasher.hash_one(id.as_bytes());
        if let Some(&index) = table.find(hash, |&i| Ids::get(bytes, ends, i) == id.as_bytes()) {
            return index;
        }
        let index = u32::try_from(ends.len()).unwrap_or(u32::MAX);
        bytes.extend_from_slice(id.as_bytes());
        ends.push(bytes.len());
        table.insert_unique(hash, index, |&i| hasher.hash_one(Ids::get(bytes, ends, i)));
        index
    }

    /// Each sample's position in the order of the ids.
    fn ranks(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..u32::try_from(self.len()).unwrap_or(u32::MAX)).collect();
        order.sort_unstable_by(|&a, &b| {
            Ids::get(&self.bytes, &self.ends, a).cmp(Ids::get(&self.bytes, &self.ends, b))
        });
        let mut rank = vec![0_u32; self.len()];
        for (position, index) in order.into_iter().enumerate() {
            rank[index as usize] = u32::try_from(position).unwrap_or(u32::MAX);
        }
        rank
    }
}

impl SummaryBuilder {
    /// How many bytes of lines a builder holds before it writes them to a temporary file:
    /// 8 MiB, about 180 000 lines of two epochs a sample with 25-byte ids (the size of a
    /// line's JSON does not matter).
    pub const MEMORY_BUDGET: usize = 8 << 20;

    /// An empty builder, spilling past [`MEMORY_BUDGET`](Self::MEMORY_BUDGET) into
    /// [`std::env::temp_dir`].
    #[must_use]
    pub fn new(options: SummaryOptions) -> Self {
        SummaryBuilder {
            options,
            run: Run::default(),
            budget: Self::MEMORY_BUDGET,
            dir: None,
            fan_in: spill::FAN_IN,
            spilled: None,
            failure: None,
            duplicates: 0,
            totals: Totals::default(),
            logged: spill::Logged::default(),
        }
    }

    /// The same builder spilling past `budget` bytes into `dir`, merging `fan_in` runs at once:
    /// small inputs then take the paths of large ones.
    #[cfg(test)]
    fn spilling(mut self, budget: usize, dir: &std::path::Path, fan_in: usize) -> Self {
        self.budget = budget;
        self.dir = Some(dir.to_owned());
        self.fan_in = fan_in;
        self
    }

    /// Adds a line. A second line for the same (sample, epoch) is counted as a duplicate and
    /// otherwise ignored.
    ///
    /// Past the memory budget this writes to a temporary file; should that fail, the error is
    /// kept for [`finish`](Self::finish) to return and later lines are ignored.
    pub fn push(&mut self, line: Line) {
        if self.failure.is_some() {
            return;
        }
        let Some(sample) = self.run.insert(&line.id, line.epoch) else {
            self.duplicates += 1;
            return;
        };
        let reward = line.reward();
        let outcome = Outcome::of(&line, reward);
        let subscores = match outcome {
            Outcome::Scored => line
                .result
                .as_ref()
                .and_then(|result| result.subscores.as_deref())
                .unwrap_or_default(),
            _ => &[],
        };
        let logged = match &mut self.spilled {
            // Nothing was spilled: this run is the first, and the line the first of its
            // (sample, epoch).
            None => {
                let totals = &mut self.totals;
                totals.durations.add(line.duration_secs);
                if let Some(kind) = outcome.error() {
                    *totals.errors.entry(kind.to_owned()).or_default() += 1;
                }
                for sub in subscores {
                    let stat = match totals.subscores.get_mut(sub.name()) {
                        Some(stat) => stat,
                        None => totals.subscores.entry(sub.name().to_owned()).or_default(),
                    };
                    stat.0 += 1;
                    stat.1.add(sub.value());
                }
                spill::NOT_LOGGED
            }
            // An earlier run may hold the (sample, epoch): the line is counted at the end, if
            // it is the first.
            Some(spilled) => {
                let logged = &mut self.logged;
                logged.duration_secs = line.duration_secs;
                logged.outcome = outcome as u8;
                logged.subscores.clear();
                for sub in subscores {
                    logged
                        .subscores
                        .push((self.totals.name(sub.name()), sub.value()));
                }
                match spilled.log.push(logged) {
                    Ok(at) => at,
                    Err(source) => {
                        self.fail(source);
                        return;
                    }
                }
            }
        };
        self.run.kept.push(Kept {
            sample,
            epoch: line.epoch,
            reward: reward.unwrap_or(f64::NAN),
            logged,
        });
        if self.run.size() >= self.budget {
            self.spill();
        }
    }

    fn dir(&self) -> std::path::PathBuf {
        self.dir.clone().unwrap_or_else(std::env::temp_dir)
    }

    /// Keeps the first failure and lets go of everything held.
    fn fail(&mut self, source: std::io::Error) {
        self.failure = Some(SpillError {
            dir: self.dir(),
            source,
        });
        self.run = Run::default();
        self.spilled = None;
    }

    /// Writes the run held to a new file.
    fn spill(&mut self) {
        let result = match &mut self.spilled {
            Some(spilled) => {
                spilled.samples += self.run.ids.len();
                self.run
                    .spill(&spilled.dir)
                    .map(|run| spilled.runs.push(run))
            }
            None => {
                let dir = self.dir();
                spill::Log::create(&dir).and_then(|log| {
                    let samples = self.run.ids.len();
                    let run = self.run.spill(&dir)?;
                    self.spilled = Some(Spilled {
                        dir,
                        runs: vec![run],
                        samples,
                        log,
                    });
                    Ok(())
                })
            }
        };
        if let Err(source) = result {
            self.fail(source);
        }
    }

    /// The summary of every line pushed.
    ///
    /// # Errors
    /// When lines were spilled and writing or reading the temporary files failed: a summary
    /// of part of the lines is never given.
    pub fn finish(mut self) -> Result<Summary, SpillError> {
        if let Some(failure) = self.failure.take() {
            return Err(failure);
        }
        let Some(spilled) = self.spilled.take() else {
            return Ok(self.in_memory());
        };
        let SummaryBuilder {
            options,
            mut run,
            duplicates,
            mut totals,
            fan_in,
            ..
        } = self;
        let Spilled {
            dir,
            mut runs,
            samples,
            log,
        } = spilled;
        let fail = |source| SpillError {
            dir: dir.clone(),
            source,
        };
        let samples = samples + run.ids.len();
        if !run.kept.is_empty() {
            runs.push(run.spill(&dir).map_err(fail)?);
        }
        drop(run);
        let mut dropped = Vec::new();
        let mut merge = spill::Merge::new(runs, &dir, fan_in, &mut dropped).map_err(fail)?;
        let mut tally = Tally::new(&options, samples);
        let (mut id, mut entries) = (Vec::new(), Vec::new());
        while merge
            .next(&mut id, &mut entries, &mut dropped)
            .map_err(fail)?
        {
            tally.sample(entries.iter().map(|entry| entry.reward));
        }
        drop(merge);
        let duplicates = duplicates + dropped.len();
        dropped.sort_unstable();
        log.replay(&dropped, |line| {
            let outcome = Outcome::ALL
                .get(usize::from(line.outcome))
                .copied()
                .unwrap_or(Outcome::IsError);
            totals.add(line.duration_secs, outcome, line.subscores.iter().copied());
        })
        .map_err(fail)?;
        Ok(tally.summary(options, totals, duplicates))
    }

    /// The summary of the lines held, when nothing was spilled.
    fn in_memory(self) -> Summary {
        let SummaryBuilder {
            options,
            mut run,
            duplicates,
            totals,
            ..
        } = self;
        run.sort();
        let mut tally = Tally::new(&options, run.ids.len());
        for group in run.kept.chunk_by(|a, b| a.sample == b.sample) {
            tally.sample(group.iter().map(|line| line.reward));
        }
        drop(run);
        tally.summary(options, totals, duplicates)
    }
}

impl Summary {
    /// The summary of `lines` (from one file, several, or memory), computed in memory: 24 bytes
    /// a line and the ids once, never a temporary file. For more lines than memory holds, push
    /// them to a [`SummaryBuilder`], which spills to disk past its budget.
    ///
    /// ```
    /// use grader_core::EvaluationResult;
    /// use grader_eval::{ErrorKind, Line, Summary, SummaryOptions};
    ///
    /// let lines = [
    ///     Line::graded("a", 1, EvaluationResult::from_reward(1.0)?, 0.1),
    ///     Line::graded("b", 1, EvaluationResult::from_reward(0.0)?, 0.1),
    ///     Line::failed("c", 1, ErrorKind::Failed, "judge unreachable", 0.1),
    /// ];
    /// let summary = Summary::from_lines(lines, SummaryOptions::default());
    /// assert_eq!((summary.scored, summary.errored), (2, 1));
    /// assert_eq!(summary.reward.mean, 0.5); // the error is not a 0
    /// println!("{summary}");
    /// # Ok::<(), grader_core::RewardError>(())
    /// ```
    pub fn from_lines(lines: impl IntoIterator<Item = Line>, options: SummaryOptions) -> Self {
        let mut builder = SummaryBuilder::new(options);
        builder.budget = usize::MAX;
        for line in lines {
            builder.push(line);
        }
        builder.in_memory()
    }
}

/// The summary of one or more evaluation files (the shards of a run, say) read together,
/// streamed line by line with a [`SummaryBuilder`] (so its memory is flat in the files' size).
/// A torn last line of a file is left out.
///
/// ```no_run
/// use grader_eval::{SummaryOptions, summarize_files};
///
/// let summary = summarize_files(&["part-0.jsonl", "part-1.jsonl"], SummaryOptions::default())?;
/// println!("{summary}");
/// # Ok::<(), grader_eval::line::LinesError>(())
/// ```
///
/// # Errors
/// When a file cannot be read or holds a complete line that is not an evaluation line, or
/// when the summary's temporary files cannot be written ([`LinesError::Spill`]).
///
/// [`LinesError::Spill`]: crate::line::LinesError::Spill
pub fn summarize_files<P: AsRef<std::path::Path>>(
    paths: &[P],
    options: SummaryOptions,
) -> Result<Summary, crate::line::LinesError> {
    let mut builder = SummaryBuilder::new(options);
    for path in paths {
        for entry in crate::line::read_lines(path.as_ref())? {
            if let crate::line::Entry::Line(line) = entry? {
                builder.push(*line);
            }
        }
    }
    Ok(builder.finish()?)
}

#[cfg(test)]
mod tests;
