//! Accumulating a summary's lines: [`SummaryBuilder`] keeps of each line what the metrics
//! need, in memory up to its budget and past it in sorted runs on disk (`spill.rs`), and
//! hands them to the statistics one sample at a time; [`Summary::from_lines`] and
//! [`summarize_files`] feed it.

use std::fmt;

use super::options::SummaryOptions;
use super::resolve::Resolver;
use super::spill;
use super::tally::{Outcome, Tally, Totals};
use super::{SpillError, Summary};
use crate::line::Line;

/// Builds a [`Summary`] from lines pushed one at a time, in memory bounded by
/// [`MEMORY_BUDGET`](Self::MEMORY_BUDGET) plus 8 bytes a sample.
///
/// Of each line it keeps only what the metrics need (40 bytes, 16 per top-level subscore, and
/// what it adds to the running sums in a log: 9 bytes), of each sample its id once. Past the budget it
/// sorts what it holds by sample id, epoch and arrival and writes it to a temporary file (a
/// run), the log to another, then starts again empty; [`finish`](Self::finish) merges the runs
/// one sample at a time, so only the headline value of each sample stays in memory (8 bytes a
/// sample: the bootstrap draws from them at random). Below the budget no file is made.
///
/// When a (sample, epoch) has several lines, one counts: the first read, or the last with
/// [`Keep::Last`](super::Keep::Last) ([`SummaryOptions::keep`]). The others are counted as
/// duplicates, and a pair whose lines say different things (different
/// [`Line::fingerprint`]s) as a conflict, named among the first few.
///
/// The temporary files are made in [`std::env::temp_dir`] (`TMPDIR` on Unix), have no name
/// (nothing is left behind, even by a killed process) and are closed when the builder is
/// finished or dropped. The runs take 29 bytes a line, 9 or so per subscore, and each sample's
/// id once per run.
///
/// The summary is the same, bit for bit, whether or not anything was spilled: the same line of
/// each (sample, epoch) counts, samples are taken in the order of their ids' bytes, and the
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
/// assert_eq!(summary.conflicts, 1); // a's two lines disagree
/// assert_eq!((summary.conflicting[0].id.as_str(), summary.conflicting[0].epoch), ("a", 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SummaryBuilder {
    options: SummaryOptions,
    /// The lines pushed since the last spill (all of them when nothing was spilled).
    run: Run,
    /// The size of `run` and the log in memory, in bytes, past which they are spilled.
    budget: usize,
    /// Where the temporary files go; [`std::env::temp_dir`] when `None`.
    dir: Option<std::path::PathBuf>,
    /// How many runs are merged at once.
    fan_in: usize,
    /// The runs written, once anything was spilled.
    spilled: Option<Spilled>,
    /// What every line adds to the running sums, in the order they came.
    log: spill::Log,
    /// Why spilling failed; nothing is kept after it.
    failure: Option<SpillError>,
    /// The subscores' names, numbered in the order first seen; the grading time and the errors
    /// (added up from the log at the end).
    totals: Totals,
    /// A logged line being built.
    logged: spill::Logged,
}

/// One line as a summary keeps it in memory: 40 bytes (its subscores apart).
#[derive(Debug, Clone, Copy)]
struct Kept {
    /// The sample, as its index in [`Run::ids`].
    sample: u32,
    epoch: u32,
    /// The reward, or NaN for a line without one (a reward is always finite).
    reward: f64,
    /// Its place in the log: the order lines came in.
    logged: u64,
    /// [`Line::fingerprint`].
    fingerprint: u64,
    /// Where its subscores start in [`Run::subs`], and how many.
    subs: u32,
    nsubs: u32,
}

impl Kept {
    fn entry(&self) -> spill::Entry {
        spill::Entry {
            epoch: self.epoch,
            reward: self.reward,
            logged: self.logged,
            fingerprint: self.fingerprint,
            subs: self.subs,
            nsubs: self.nsubs,
        }
    }
}

/// The lines of one run: the ids of its samples once, the lines, and the scored lines'
/// subscores.
#[derive(Debug, Default)]
struct Run {
    ids: Ids,
    kept: Vec<Kept>,
    subs: spill::Subs,
}

impl Run {
    /// About how many bytes the run holds.
    fn size(&self) -> usize {
        // Per sample: where its id ends, its slot in the table of ids.
        const PER_SAMPLE: usize = size_of::<usize>() + size_of::<u32>() + 1;
        self.kept.len() * size_of::<Kept>()
            + self.subs.len() * size_of::<(u32, f64)>()
            + self.ids.bytes.len()
            + self.ids.len() * PER_SAMPLE
    }

    /// Sorts the lines: samples in the order of their ids' bytes, each one's by epoch, then in
    /// the order they came.
    fn sort(&mut self) {
        let rank = self.ids.ranks();
        self.kept
            .sort_unstable_by_key(|line| (rank[line.sample as usize], line.epoch, line.logged));
    }

    /// Writes the run to a new file in `dir`, sorted, and empties it.
    fn spill(&mut self, dir: &std::path::Path) -> std::io::Result<std::fs::File> {
        self.sort();
        let mut out = spill::RunWriter::create(dir)?;
        for group in self.kept.chunk_by(|a, b| a.sample == b.sample) {
            let id = Ids::get(&self.ids.bytes, &self.ids.ends, group[0].sample);
            out.sample(id, group.iter().map(Kept::entry), &self.subs)?;
        }
        let file = out.finish()?;
        self.ids.clear();
        self.kept.clear();
        self.subs.clear();
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
    /// How many bytes of lines a builder holds before it writes them to temporary files:
    /// 8 MiB, about 80 000 lines of two epochs a sample with 25-byte ids and two subscores
    /// (the size of a line's JSON does not matter).
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
            log: spill::Log::default(),
            failure: None,
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

    /// Adds a line. When its (sample, epoch) has several lines, the one
    /// [`SummaryOptions::keep`] says counts; the others are counted as duplicates.
    ///
    /// Past the memory budget this writes to a temporary file; should that fail, the error is
    /// kept for [`finish`](Self::finish) to return and later lines are ignored.
    pub fn push(&mut self, line: Line) {
        if self.failure.is_some() {
            return;
        }
        let sample = self.run.ids.intern(&line.id);
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
        let start = self.run.subs.len();
        for sub in subscores {
            let name = u32::try_from(self.totals.name(sub.name())).unwrap_or(u32::MAX);
            self.run.subs.push((name, sub.value()));
        }
        let logged = &mut self.logged;
        logged.duration_secs = line.duration_secs;
        logged.outcome = outcome as u8;
        let at = match self.log.push(logged) {
            Ok(at) => at,
            Err(source) => {
                self.fail(source);
                return;
            }
        };
        self.run.kept.push(Kept {
            sample,
            epoch: line.epoch,
            reward: reward.unwrap_or(f64::NAN),
            logged: at,
            fingerprint: line.fingerprint(),
            subs: u32::try_from(start).unwrap_or(u32::MAX),
            nsubs: u32::try_from(self.run.subs.len() - start).unwrap_or(u32::MAX),
        });
        if self.run.size() + self.log.memory() >= self.budget {
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
        self.log = spill::Log::default();
    }

    /// Writes the run held to a new file (and the log, the first time).
    fn spill(&mut self) {
        let dir = match &self.spilled {
            Some(spilled) => spilled.dir.clone(),
            None => self.dir(),
        };
        let samples = self.run.ids.len();
        let result = self
            .log
            .move_to_file(&dir)
            .and_then(|()| self.run.spill(&dir));
        match result {
            Ok(run) => match &mut self.spilled {
                Some(spilled) => {
                    spilled.samples += samples;
                    spilled.runs.push(run);
                }
                None => {
                    self.spilled = Some(Spilled {
                        dir,
                        runs: vec![run],
                        samples,
                    });
                }
            },
            Err(source) => self.fail(source),
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
            return self.in_memory();
        };
        let SummaryBuilder {
            options,
            mut run,
            totals,
            fan_in,
            log,
            ..
        } = self;
        let Spilled {
            dir,
            mut runs,
            samples,
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
        let mut merge = spill::Merge::new(runs, &dir, fan_in).map_err(fail)?;
        let mut tally = Tally::new(&options, samples);
        let mut resolver = Resolver::new(options.keep);
        let (mut id, mut entries, mut subs) = (Vec::new(), Vec::new(), Vec::new());
        while merge.next(&mut id, &mut entries, &mut subs).map_err(fail)? {
            resolver.sample(&id, &mut entries);
            tally.sample(&entries, &subs);
        }
        drop(merge);
        Self::conclude(options, tally, resolver, totals, log).map_err(fail)
    }

    /// The summary of the lines held, when nothing was spilled.
    fn in_memory(self) -> Result<Summary, SpillError> {
        let dir = self.dir();
        let SummaryBuilder {
            options,
            mut run,
            totals,
            log,
            ..
        } = self;
        run.sort();
        let mut tally = Tally::new(&options, run.ids.len());
        let mut resolver = Resolver::new(options.keep);
        let mut entries = Vec::new();
        for group in run.kept.chunk_by(|a, b| a.sample == b.sample) {
            entries.clear();
            entries.extend(group.iter().map(Kept::entry));
            let id = Ids::get(&run.ids.bytes, &run.ids.ends, group[0].sample);
            resolver.sample(id, &mut entries);
            tally.sample(&entries, &run.subs);
        }
        drop(run);
        Self::conclude(options, tally, resolver, totals, log)
            .map_err(|source| SpillError { dir, source })
    }

    /// Adds up the log without the lines left out, and makes the summary.
    fn conclude(
        options: SummaryOptions,
        tally: Tally,
        resolver: Resolver,
        mut totals: Totals,
        log: spill::Log,
    ) -> std::io::Result<Summary> {
        let Resolver {
            mut dropped,
            conflicts,
            conflicting,
            ..
        } = resolver;
        dropped.sort_unstable();
        log.replay(&dropped, |line| {
            let outcome = Outcome::ALL
                .get(usize::from(line.outcome))
                .copied()
                .unwrap_or(Outcome::IsError);
            totals.add(line.duration_secs, outcome);
        })?;
        let mut summary = tally.summary(options, totals, dropped.len());
        summary.conflicts = conflicts;
        summary.conflicting = conflicting;
        Ok(summary)
    }
}

impl Summary {
    /// The summary of `lines` (from one file, several, or memory), computed in memory: about
    /// 50 bytes a line and the ids once, never a temporary file. For more lines than memory
    /// holds, push them to a [`SummaryBuilder`], which spills to disk past its budget.
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
        // Nothing is spilled, and a log in memory is read back without fail.
        match builder.in_memory() {
            Ok(summary) => summary,
            Err(error) => unreachable!("a summary in memory failed: {error}"),
        }
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
