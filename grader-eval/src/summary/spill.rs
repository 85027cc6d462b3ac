//! A summary's lines on disk. Past its memory budget a [`SummaryBuilder`](super::SummaryBuilder)
//! writes the lines it holds to a temporary file as one run sorted by sample id, epoch and
//! arrival, and what each line adds to the running sums to a log in the order they came (held in
//! memory until the first spill); [`finish`](super::SummaryBuilder::finish) merges the runs, one
//! sample at a time, keeps one line of each (sample, epoch), then adds up the log without the
//! lines left out.
//!
//! The files are made by [`tempfile::tempfile_in`]: they have no name (removed as soon as they
//! are created, so nothing is left behind even when the process is killed) and their space is
//! freed when they are closed, which is when the builder is finished or dropped.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// How many runs are merged at once; more are first merged into fewer, this many at a time.
/// Each open run holds one read buffer of [`BUFFER`] bytes.
pub(super) const FAN_IN: usize = 64;

/// The read and write buffer of each file.
const BUFFER: usize = 32 * 1024;

/// One (sample, epoch) line of a run.
#[derive(Debug, Clone, Copy)]
pub(super) struct Entry {
    pub(super) epoch: u32,
    /// The reward, or NaN for a line without one.
    pub(super) reward: f64,
    /// The line's place in the [`Log`]: the order lines came in.
    pub(super) logged: u64,
    /// The line's [`Line::fingerprint`](crate::Line::fingerprint).
    pub(super) fingerprint: u64,
    /// Where its subscores (a scored line's: the name's number, the value) start in the
    /// subscores read with it.
    pub(super) subs: u32,
    /// How many subscores it has.
    pub(super) nsubs: u32,
}

/// Subscores: the name's number and the value.
pub(super) type Subs = Vec<(u32, f64)>;

/// The bytes of an [`Entry`] in a file.
const ENTRY_BYTES: usize = 4 + 8 + 8 + 8;

fn write_count(out: &mut impl Write, mut value: u64) -> io::Result<()> {
    // LEB128: seven bits a byte, low bits first.
    let mut bytes = [0_u8; 10];
    let mut len = 0;
    loop {
        let low = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            bytes[len] = low;
            len += 1;
            break;
        }
        bytes[len] = low | 0x80;
        len += 1;
    }
    out.write_all(&bytes[..len])
}

fn read_count(input: &mut impl Read) -> io::Result<u64> {
    let mut value = 0_u64;
    for shift in (0..64).step_by(7) {
        let mut byte = [0_u8];
        input.read_exact(&mut byte)?;
        value |= u64::from(byte[0] & 0x7f) << shift;
        if byte[0] & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        "a count longer than 64 bits",
    ))
}

fn read_len(input: &mut impl Read) -> io::Result<usize> {
    usize::try_from(read_count(input)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a length beyond memory"))
}

fn read_u32(input: &mut impl Read) -> io::Result<u32> {
    let mut bytes = [0_u8; 4];
    input.read_exact(&mut bytes)?;
    Ok(u32::from_le_bytes(bytes))
}

fn read_u64(input: &mut impl Read) -> io::Result<u64> {
    let mut bytes = [0_u8; 8];
    input.read_exact(&mut bytes)?;
    Ok(u64::from_le_bytes(bytes))
}

/// The file written, rewound for reading.
fn rewound(out: BufWriter<File>) -> io::Result<File> {
    let mut file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(file)
}

/// Writes a run: samples in the order of their ids' bytes, each as its id, then its lines by
/// epoch (each epoch once).
pub(super) struct RunWriter {
    out: BufWriter<File>,
}

impl RunWriter {
    /// A new, empty run in `dir`.
    pub(super) fn create(dir: &Path) -> io::Result<Self> {
        Ok(RunWriter {
            out: BufWriter::with_capacity(BUFFER, tempfile::tempfile_in(dir)?),
        })
    }

    /// Adds a sample, after every sample whose id is smaller; its entries' subscores are in
    /// `subs`.
    pub(super) fn sample(
        &mut self,
        id: &[u8],
        entries: impl ExactSizeIterator<Item = Entry>,
        subs: &[(u32, f64)],
    ) -> io::Result<()> {
        write_count(&mut self.out, id.len() as u64)?;
        self.out.write_all(id)?;
        write_count(&mut self.out, entries.len() as u64)?;
        for entry in entries {
            let mut bytes = [0_u8; ENTRY_BYTES];
            bytes[..4].copy_from_slice(&entry.epoch.to_le_bytes());
            bytes[4..12].copy_from_slice(&entry.reward.to_bits().to_le_bytes());
            bytes[12..20].copy_from_slice(&entry.logged.to_le_bytes());
            bytes[20..].copy_from_slice(&entry.fingerprint.to_le_bytes());
            self.out.write_all(&bytes)?;
            let start = entry.subs as usize;
            let own = subs
                .get(start..start + entry.nsubs as usize)
                .unwrap_or_default();
            write_count(&mut self.out, own.len() as u64)?;
            for &(name, value) in own {
                write_count(&mut self.out, u64::from(name))?;
                self.out.write_all(&value.to_bits().to_le_bytes())?;
            }
        }
        Ok(())
    }

    /// The run, ready to be read.
    pub(super) fn finish(self) -> io::Result<File> {
        rewound(self.out)
    }
}

struct RunReader {
    input: BufReader<File>,
}

impl RunReader {
    /// Reads the next sample into `id`, `entries` and `subs`; false at the end of the run.
    fn next(
        &mut self,
        id: &mut Vec<u8>,
        entries: &mut Vec<Entry>,
        subs: &mut Subs,
    ) -> io::Result<bool> {
        if self.input.fill_buf()?.is_empty() {
            return Ok(false);
        }
        let len = read_len(&mut self.input)?;
        id.clear();
        // `take` never allocates more than the file holds, whatever the length says.
        (&mut self.input).take(len as u64).read_to_end(id)?;
        if id.len() != len {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let count = read_len(&mut self.input)?;
        entries.clear();
        subs.clear();
        for _ in 0..count {
            let epoch = read_u32(&mut self.input)?;
            let reward = f64::from_bits(read_u64(&mut self.input)?);
            let logged = read_u64(&mut self.input)?;
            let fingerprint = read_u64(&mut self.input)?;
            let start = subs.len();
            for _ in 0..read_len(&mut self.input)? {
                let name = u32::try_from(read_count(&mut self.input)?)
                    .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a name's number"))?;
                subs.push((name, f64::from_bits(read_u64(&mut self.input)?)));
            }
            entries.push(Entry {
                epoch,
                reward,
                logged,
                fingerprint,
                subs: u32::try_from(start).unwrap_or(u32::MAX),
                nsubs: u32::try_from(subs.len() - start).unwrap_or(u32::MAX),
            });
        }
        Ok(true)
    }
}

/// A run's next sample, in the merge's heap.
struct Head {
    id: Vec<u8>,
    /// The run's place: runs hold lines in the order they came, earlier runs first.
    run: usize,
    entries: Vec<Entry>,
    subs: Subs,
}

impl Head {
    fn key(&self) -> (&[u8], usize) {
        (&self.id, self.run)
    }
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Head {}

impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Head {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

/// The runs merged: every sample once, in the order of their ids' bytes, with every line of it
/// by epoch and arrival.
pub(super) struct Merge {
    readers: Vec<RunReader>,
    heap: BinaryHeap<Reverse<Head>>,
}

impl Merge {
    /// Merges `runs`, given earliest first, into at most `fan_in` (at least 2) at a time,
    /// merging the earliest ones into one in `dir` while there are more.
    pub(super) fn new(mut runs: Vec<File>, dir: &Path, fan_in: usize) -> io::Result<Self> {
        let fan_in = fan_in.max(2);
        while runs.len() > fan_in {
            let rest = runs.split_off(fan_in);
            let mut merge = Merge::open(runs)?;
            let mut out = RunWriter::create(dir)?;
            let (mut id, mut entries, mut subs) = (Vec::new(), Vec::new(), Vec::new());
            while merge.next(&mut id, &mut entries, &mut subs)? {
                out.sample(&id, entries.iter().copied(), &subs)?;
            }
            // The merged run holds the earliest lines: it stays first.
            runs = Vec::with_capacity(rest.len() + 1);
            runs.push(out.finish()?);
            runs.extend(rest);
        }
        Merge::open(runs)
    }

    fn open(runs: Vec<File>) -> io::Result<Self> {
        let mut merge = Merge {
            readers: runs
                .into_iter()
                .map(|file| RunReader {
                    input: BufReader::with_capacity(BUFFER, file),
                })
                .collect(),
            heap: BinaryHeap::new(),
        };
        for run in 0..merge.readers.len() {
            merge.refill(Head {
                id: Vec::new(),
                run,
                entries: Vec::new(),
                subs: Vec::new(),
            })?;
        }
        Ok(merge)
    }

    fn refill(&mut self, mut head: Head) -> io::Result<()> {
        if self.readers[head.run].next(&mut head.id, &mut head.entries, &mut head.subs)? {
            self.heap.push(Reverse(head));
        }
        Ok(())
    }

    /// Reads the next sample into `id`, `entries` (every line of it, by epoch and arrival) and
    /// `subs` (their subscores); false when every run is read.
    pub(super) fn next(
        &mut self,
        id: &mut Vec<u8>,
        entries: &mut Vec<Entry>,
        subs: &mut Subs,
    ) -> io::Result<bool> {
        entries.clear();
        subs.clear();
        let Some(Reverse(mut head)) = self.heap.pop() else {
            return Ok(false);
        };
        std::mem::swap(id, &mut head.id);
        take(&head, entries, subs);
        self.refill(head)?;
        // Equal ids come out of the heap by run, earliest first.
        while self.heap.peek().is_some_and(|Reverse(next)| next.id == *id) {
            let Some(Reverse(head)) = self.heap.pop() else {
                break;
            };
            take(&head, entries, subs);
            self.refill(head)?;
        }
        entries.sort_unstable_by_key(|entry| (entry.epoch, entry.logged));
        Ok(true)
    }
}

/// Adds a run's lines of a sample to those of the others, with their subscores.
fn take(head: &Head, entries: &mut Vec<Entry>, subs: &mut Subs) {
    let offset = u32::try_from(subs.len()).unwrap_or(u32::MAX);
    subs.extend_from_slice(&head.subs);
    entries.extend(head.entries.iter().map(|entry| Entry {
        subs: entry.subs.saturating_add(offset),
        ..*entry
    }));
}

/// What each line adds to the running sums (grading time, error kinds), in the order
/// the lines came: added up once it is known which line of each (sample, epoch) counts, so the
/// sums are the same whether or not anything was spilled. Held in memory until the first spill,
/// then in a file.
#[derive(Debug, Default)]
pub(super) struct Log {
    /// The lines in memory, while nothing is spilled.
    memory: Vec<u8>,
    /// The file, once something is.
    file: Option<BufWriter<File>>,
    len: u64,
}

/// A line of the [`Log`].
#[derive(Debug, Default)]
pub(super) struct Logged {
    pub(super) duration_secs: f64,
    /// [`Outcome`](super::tally::Outcome) as a byte.
    pub(super) outcome: u8,
}

impl Log {
    /// The bytes it holds in memory.
    pub(super) fn memory(&self) -> usize {
        self.memory.len()
    }

    /// Moves what it holds in memory to a new file in `dir`, where the lines to come go too.
    pub(super) fn move_to_file(&mut self, dir: &Path) -> io::Result<()> {
        if self.file.is_none() {
            let mut out = BufWriter::with_capacity(BUFFER, tempfile::tempfile_in(dir)?);
            out.write_all(&self.memory)?;
            self.memory = Vec::new();
            self.file = Some(out);
        }
        Ok(())
    }

    /// Appends a line; its place in the log.
    pub(super) fn push(&mut self, line: &Logged) -> io::Result<u64> {
        match &mut self.file {
            Some(out) => write_logged(out, line)?,
            None => write_logged(&mut self.memory, line)?,
        }
        self.len += 1;
        Ok(self.len - 1)
    }

    /// Reads the log back, calling `each` with every line not in `skipped` (sorted), in order.
    pub(super) fn replay(self, skipped: &[u64], each: impl FnMut(&Logged)) -> io::Result<()> {
        let len = self.len;
        match self.file {
            Some(out) => replay(
                BufReader::with_capacity(BUFFER, rewound(out)?),
                len,
                skipped,
                each,
            ),
            None => replay(&self.memory[..], len, skipped, each),
        }
    }
}

fn write_logged(out: &mut impl Write, line: &Logged) -> io::Result<()> {
    out.write_all(&line.duration_secs.to_bits().to_le_bytes())?;
    out.write_all(&[line.outcome])
}

fn replay(
    mut input: impl Read,
    len: u64,
    skipped: &[u64],
    mut each: impl FnMut(&Logged),
) -> io::Result<()> {
    let mut skipped = skipped.iter().peekable();
    let mut line = Logged::default();
    for at in 0..len {
        line.duration_secs = f64::from_bits(read_u64(&mut input)?);
        let mut outcome = [0_u8];
        input.read_exact(&mut outcome)?;
        line.outcome = outcome[0];
        if skipped.next_if_eq(&&at).is_some() {
            continue;
        }
        each(&line);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_round_trip() {
        let mut bytes = Vec::new();
        let values = [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX];
        for value in values {
            write_count(&mut bytes, value).expect("into memory");
        }
        let mut input = &bytes[..];
        for value in values {
            assert_eq!(read_count(&mut input).expect("a count"), value);
        }
        assert!(input.is_empty());
        let mut too_long = &[0xff_u8; 11][..];
        assert_eq!(
            read_count(&mut too_long).map_err(|e| e.kind()).err(),
            Some(io::ErrorKind::InvalidData)
        );
    }
}
