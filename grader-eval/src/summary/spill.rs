//! A summary's lines on disk. Past its memory budget a [`SummaryBuilder`](super::SummaryBuilder)
//! writes the lines it holds to a temporary file as one run sorted by sample id and epoch, and
//! the lines it cannot yet tell apart from duplicates to a log in the order they came;
//! [`finish`](super::SummaryBuilder::finish) merges the runs, one sample at a time.
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
    /// The line's place in the [`Log`], or [`NOT_LOGGED`] for a line of the first run.
    pub(super) logged: u64,
}

/// The [`Entry::logged`] of a line that is not in the log: the lines of the first run are the
/// first of their (sample, epoch), so they are counted as they come.
pub(super) const NOT_LOGGED: u64 = u64::MAX;

/// The bytes of an [`Entry`] in a file.
const ENTRY_BYTES: usize = 4 + 8 + 8;

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

    /// Adds a sample, after every sample whose id is smaller.
    pub(super) fn sample(
        &mut self,
        id: &[u8],
        entries: impl ExactSizeIterator<Item = Entry>,
    ) -> io::Result<()> {
        write_count(&mut self.out, id.len() as u64)?;
        self.out.write_all(id)?;
        write_count(&mut self.out, entries.len() as u64)?;
        for entry in entries {
            let mut bytes = [0_u8; ENTRY_BYTES];
            bytes[..4].copy_from_slice(&entry.epoch.to_le_bytes());
            bytes[4..12].copy_from_slice(&entry.reward.to_bits().to_le_bytes());
            bytes[12..].copy_from_slice(&entry.logged.to_le_bytes());
            self.out.write_all(&bytes)?;
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
    /// Reads the next sample into `id` and `entries`; false at the end of the run.
    fn next(&mut self, id: &mut Vec<u8>, entries: &mut Vec<Entry>) -> io::Result<bool> {
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
        for _ in 0..count {
            let epoch = read_u32(&mut self.input)?;
            let reward = f64::from_bits(read_u64(&mut self.input)?);
            let logged = read_u64(&mut self.input)?;
            entries.push(Entry {
                epoch,
                reward,
                logged,
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

/// The runs merged: every sample once, in the order of their ids' bytes, with its lines by
/// epoch, the first line of each (sample, epoch) kept.
pub(super) struct Merge {
    readers: Vec<RunReader>,
    heap: BinaryHeap<Reverse<Head>>,
}

impl Merge {
    /// Merges `runs`, given earliest first, into at most `fan_in` (at least 2) at a time,
    /// merging the earliest ones into one in `dir` while there are more. The log places of the
    /// duplicates dropped on the way are pushed on `duplicates`.
    pub(super) fn new(
        mut runs: Vec<File>,
        dir: &Path,
        fan_in: usize,
        duplicates: &mut Vec<u64>,
    ) -> io::Result<Self> {
        let fan_in = fan_in.max(2);
        while runs.len() > fan_in {
            let rest = runs.split_off(fan_in);
            let mut merge = Merge::open(runs)?;
            let mut out = RunWriter::create(dir)?;
            let (mut id, mut entries) = (Vec::new(), Vec::new());
            while merge.next(&mut id, &mut entries, duplicates)? {
                out.sample(&id, entries.iter().copied())?;
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
            })?;
        }
        Ok(merge)
    }

    fn refill(&mut self, mut head: Head) -> io::Result<()> {
        if self.readers[head.run].next(&mut head.id, &mut head.entries)? {
            self.heap.push(Reverse(head));
        }
        Ok(())
    }

    /// Reads the next sample into `id` and `entries` (by epoch, each epoch once: the line of
    /// the earliest run); false when every run is read. The log places of the lines dropped as
    /// duplicates are pushed on `duplicates`.
    pub(super) fn next(
        &mut self,
        id: &mut Vec<u8>,
        entries: &mut Vec<Entry>,
        duplicates: &mut Vec<u64>,
    ) -> io::Result<bool> {
        entries.clear();
        let Some(Reverse(mut head)) = self.heap.pop() else {
            return Ok(false);
        };
        std::mem::swap(id, &mut head.id);
        entries.extend_from_slice(&head.entries);
        self.refill(head)?;
        // Equal ids come out of the heap by run, earliest first.
        while self.heap.peek().is_some_and(|Reverse(next)| next.id == *id) {
            let Some(Reverse(head)) = self.heap.pop() else {
                break;
            };
            entries.extend_from_slice(&head.entries);
            self.refill(head)?;
        }
        // A stable sort: of one epoch's lines, the earliest run's comes first and is kept.
        entries.sort_by_key(|entry| entry.epoch);
        entries.dedup_by(|later, first| {
            let duplicate = later.epoch == first.epoch;
            if duplicate {
                duplicates.push(later.logged);
            }
            duplicate
        });
        Ok(true)
    }
}

/// What a line adds to the running sums (grading time, error kinds, subscores), for the lines
/// that might turn out to be duplicates: kept in a file in the order they came, and added up
/// in that order once the duplicates are known, so the sums are those of the lines in memory.
#[derive(Debug)]
pub(super) struct Log {
    out: BufWriter<File>,
    len: u64,
}

/// A line of the [`Log`].
#[derive(Debug, Default)]
pub(super) struct Logged {
    pub(super) duration_secs: f64,
    /// [`Outcome`](super::tally::Outcome) as a byte.
    pub(super) outcome: u8,
    /// A scored line's subscores: (the name's number, the value).
    pub(super) subscores: Vec<(usize, f64)>,
}

impl Log {
    /// A new, empty log in `dir`.
    pub(super) fn create(dir: &Path) -> io::Result<Self> {
        Ok(Log {
            out: BufWriter::with_capacity(BUFFER, tempfile::tempfile_in(dir)?),
            len: 0,
        })
    }

    /// Appends a line; its place in the log.
    pub(super) fn push(&mut self, line: &Logged) -> io::Result<u64> {
        self.out
            .write_all(&line.duration_secs.to_bits().to_le_bytes())?;
        self.out.write_all(&[line.outcome])?;
        write_count(&mut self.out, line.subscores.len() as u64)?;
        for &(name, value) in &line.subscores {
            write_count(&mut self.out, name as u64)?;
            self.out.write_all(&value.to_bits().to_le_bytes())?;
        }
        self.len += 1;
        Ok(self.len - 1)
    }

    /// Reads the log back, calling `each` with every line not in `skipped` (sorted), in order.
    pub(super) fn replay(self, skipped: &[u64], mut each: impl FnMut(&Logged)) -> io::Result<()> {
        let len = self.len;
        let mut input = BufReader::with_capacity(BUFFER, rewound(self.out)?);
        let mut skipped = skipped.iter().peekable();
        let mut line = Logged::default();
        for at in 0..len {
            line.duration_secs = f64::from_bits(read_u64(&mut input)?);
            let mut outcome = [0_u8];
            input.read_exact(&mut outcome)?;
            line.outcome = outcome[0];
            line.subscores.clear();
            for _ in 0..read_len(&mut input)? {
                let name = read_len(&mut input)?;
                let value = f64::from_bits(read_u64(&mut input)?);
                line.subscores.push((name, value));
            }
            if skipped.next_if_eq(&&at).is_some() {
                continue;
            }
            each(&line);
        }
        Ok(())
    }
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
