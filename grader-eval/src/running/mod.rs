//! The gradings of a run in flight: polled in place on a current-thread runtime, and on a
//! multi-threaded one run by lanes, tasks of the runtime that take gradings from a shared
//! queue.
//!
//! On a multi-threaded runtime the awaiting task (the run's loop, which owns the samples and
//! the grading function, neither of which need be `Send`) makes gradings ahead into a queue,
//! and lanes start them: each lane is a task holding any number of gradings, polled
//! concurrently, and takes more from the queue as its own end, claiming one of the run's
//! `concurrency` slots for each. So a grading starts the moment a slot frees, on the worker
//! that freed it, without a round trip through the awaiting task; and the awaiting task is
//! woken when a lane hands over the lines of a poll to an empty outbox (once per poll of up to
//! [`BUDGET`] lines, not once per line) or when the queue falls to [`LOW_WATER`] (to make
//! more). A lane yields to its worker's other tasks after [`BUDGET`] lines or [`SLICE`] of
//! computing, whichever comes first. A lane writes its lines out as
//! JSON as they end and, at the end of each poll, appends them to a local output file itself
//! (see [`Appending`](append::Appending)).
//!
//! A run whose samples and grading function can be shared among threads
//! (`Evaluation::run_shared`) gives them to the lanes as a [`Source`]: nothing is queued, and
//! each lane owns a fixed part of the run's slots (its quota), takes samples and makes the
//! gradings for them itself, a batch at a time ([`BATCH`]), so the awaiting task makes none
//! and a grading takes no lock of the run's: the counts the awaiting task needs are atomics
//! ([`Tally`]), and the queue's lock is taken only when a lane ends or hands back gradings it
//! made ahead of its slots (when one of its gradings waits). Lines a lane appended to the file
//! go to the awaiting task only to be counted, and wake it in bulk ([`UNTOLD_LINES`],
//! [`UNTOLD_FOR`]) rather than every poll.
//
// The files: this one holds what the awaiting task and the lanes share (the queue, the
// outbox, the lines they pass, the limits); `awaiting.rs` the awaiting task's side
// (`Running`); `lane.rs` a lane; `append.rs` how a lane's lines go out at the end of its poll.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Waker};
use std::time::Instant;

use crate::line::Line;

mod append;
mod awaiting;
mod lane;

pub(super) use awaiting::{Running, lanes_here};

/// Gradings made ahead of the slots: the queue the lanes take from holds up to this many, and
/// no more than this many beyond the concurrency are made in all.
pub(super) const AHEAD: usize = 256;

/// The awaiting task makes more gradings when the queue holds no more than this.
const LOW_WATER: usize = AHEAD / 2;

/// The most gradings a lane takes from the queue at a time (fewer when the concurrency shared
/// among the lanes is less).
const TAKE: usize = 16;

/// A lane that makes its own gradings from a [`Source`] holds up to this many made (running or
/// not yet started) while its gradings end without waiting, however few slots it has: so it
/// takes samples in batches (one trip through the samples' lock for up to this many) and starts
/// the next in the slot one freed without asking anyone. While one of its gradings waits, it
/// makes no more than its slots, and hands back those it made beyond them (see
/// `Lane::give_back`), so that slow gradings are not left queued behind a busy lane.
const BATCH: usize = 16;

/// The most gradings that end in one poll of a lane: then it yields to the other tasks of its
/// worker (as tokio's own budget would), handing over what ended.
const BUDGET: usize = 128;

/// How long the gradings that end in one poll of a lane may hold the worker before the lane
/// yields to its other tasks, its timers and its I/O, whatever their count: gradings that each
/// compute for a while without awaiting (hundreds of microseconds) would otherwise hold the
/// worker, and the commands and judge calls waiting on it, for [`BUDGET`] of them. Counted
/// from the length of each grading's last poll (`Finished::last_poll`, from the clock its
/// line reads anyway; its waits do not count) as each ends, so one that computes for longer
/// still holds the worker that long. The text graders' microseconds reach [`BUDGET`] first.
/// Gradings polled in place yield the awaiting task after as long (see [`Running::next`]).
const SLICE: std::time::Duration = std::time::Duration::from_micros(500);

/// A grading's line as the awaiting task takes it (to write, or written already), and what
/// the counts and progress need. A line written already holds nothing on the heap, so the
/// awaiting task frees nothing a worker allocated when it counts one.
pub(super) struct Finished {
    pub(super) errored: bool,
    pub(super) reward: Option<f64>,
    pub(super) json: Json,
    /// How long, in seconds, the grading's last poll took: how long it held its thread as it
    /// ended (its whole duration when it ended at its first poll; none of its waits).
    pub(super) last_poll: f64,
}

/// A finished line, for the awaiting task to write, or written already.
// The line is boxed: a `Finished` is moved several times on its way (into the outbox, out to
// the awaiting task), and a line inline would make each move a copy of some 300 bytes.
pub(super) enum Json {
    /// Not written out yet: the awaiting task writes it straight into its buffer (a grading
    /// polled in place, on the awaiting task's thread anyway).
    Line(Box<Line>),
    /// Written out, with the newline (followed by the lines of [`Json::WithOthers`] that
    /// ended in the same poll of its lane), or why it could not be (with the sample's id).
    Written(Result<Vec<u8>, (String, String)>),
    /// Written out, in the bytes of a line handed over with it ([`Json::Written`]).
    WithOthers,
    /// Appended to the run's local file by its lane.
    InFile,
    /// Not appended to the run's local file: a write failed (see
    /// [`SharedFile::error`](crate::output::SharedFile::error)).
    Unwritten,
}

impl Finished {
    /// The line, to be written out (by its lane, or by the awaiting task).
    pub(super) fn new(line: Line) -> Self {
        Finished {
            errored: line.error.is_some(),
            reward: line.reward(),
            json: Json::Line(Box::new(line)),
            last_poll: 0.0,
        }
    }
}

impl From<Line> for Finished {
    fn from(line: Line) -> Self {
        Finished::new(line)
    }
}

pub(super) fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    }
}

/// A grading, boxed: the future of its line.
pub(super) type Grading = Pin<Box<dyn Future<Output = Finished> + Send>>;

/// A grading made and not yet started, with what its line needs should its lane fail.
pub(super) struct Made {
    pub(super) id: Arc<str>,
    pub(super) epoch: u32,
    pub(super) grading: Grading,
}

/// The samples of a run whose lanes make its gradings themselves (see
/// [`Running::with_source`]): shared among the lanes, each of which makes gradings for the
/// slots it claims.
pub(super) trait Source: Send + Sync + 'static {
    /// Makes up to `n` gradings into `into`, and returns how many, and whether the samples
    /// have run out (or their iterator panicked: see [`take_panic`](Self::take_panic)): fewer
    /// than `n` only then. Counts them in `tally` ([`Tally::taken`]) under the samples' own
    /// lock, as it takes them, and takes back any it then did not make. Never panics.
    fn make(&self, n: usize, into: &mut Vec<Made>, tally: &Tally) -> (usize, bool);

    /// The panic of the samples' iterator (or of a sample's id), if one ended them.
    fn take_panic(&self) -> Option<Box<dyn std::any::Any + Send>>;

    /// Gradings skipped because the output holds their lines, and samples skipped because
    /// another shard grades them, so far.
    fn counts(&self) -> (usize, usize);
}

/// The gradings the lanes made from a [`Source`] and whether it ran out, kept in atomics so that
/// a lane making gradings takes no lock of the run's (only the samples' own, in
/// [`Source::make`]).
#[derive(Default)]
pub(super) struct Tally {
    /// Gradings made since the awaiting task last counted them (see [`Tally::taken`]); less
    /// those counted and not made, which may take it below zero for a while.
    made: AtomicIsize,
    /// The source ran out (or panicked): lanes make nothing more.
    done: AtomicBool,
}

impl Tally {
    /// Counts `n` gradings about to be made, before any of their lines can be handed over: the
    /// source calls it under its samples' lock as it takes them. So once [`is_done`](Self::is_done)
    /// is seen, every grading the source will ever make has been counted.
    pub(super) fn taken(&self, n: usize) {
        self.made
            .fetch_add(isize::try_from(n).unwrap_or(isize::MAX), Ordering::Relaxed);
    }

    /// Takes back `n` counted by [`taken`](Self::taken) and then not made (epochs the output
    /// holds already, or the grading function unwound past its own catch).
    pub(super) fn not_made(&self, n: usize) {
        self.made
            .fetch_sub(isize::try_from(n).unwrap_or(isize::MAX), Ordering::Relaxed);
    }

    /// The source ran out: set by the lane that heard it, after its last count.
    fn ran_out(&self) {
        self.done.store(true, Ordering::Release);
    }

    /// Whether the source ran out. Read before [`take_made`](Self::take_made): seen true, the
    /// count taken after it is the last but for what lanes still take back.
    fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// The gradings made since the last call (the awaiting task's count of them).
    fn take_made(&self) -> isize {
        self.made.swap(0, Ordering::AcqRel)
    }
}

/// What the awaiting task and the lanes share.
struct Shared {
    queue: Mutex<Queue>,
    /// [`Queue::closed`], for lanes that make their own gradings to read without the lock.
    closed: AtomicBool,
    /// The gradings made from the [`Source`], for the awaiting task to count.
    tally: Tally,
    /// How many gradings [`Queue::made`] holds, for lanes that make their own gradings to look
    /// at without the lock (only gradings handed back by other lanes are queued then).
    queued: AtomicUsize,
    /// What lanes hand over for the awaiting task.
    events: Mutex<Outbox>,
    notify: tokio::sync::Notify,
    concurrency: usize,
    /// The most gradings a lane holds: its share of the concurrency, so that gradings spread
    /// over the lanes (and so the workers) rather than the first lane taking every slot.
    share: usize,
    /// The most gradings a lane takes at a time.
    take: usize,
    /// Where the lanes make gradings themselves, when they do (nothing is queued then).
    source: Option<Box<dyn Source>>,
}

/// What lanes hand over, until the awaiting task takes it.
#[derive(Default)]
struct Outbox {
    events: Vec<Event>,
    /// When the first of `events` left untold came.
    since: Option<Instant>,
    /// The awaiting task was woken for `events`.
    woken: bool,
}

/// Lines a lane may leave in the outbox without waking the awaiting task, when all it has to
/// do with them is count them (see [`Shared::hand_over`]): up to this many...
const UNTOLD_LINES: usize = 4096;

/// ...for up to this long, so that the counts (and a progress bar) stay near the truth.
const UNTOLD_FOR: std::time::Duration = std::time::Duration::from_millis(50);

/// The gradings made and not started, and the count of the run's slots in use.
struct Queue {
    made: VecDeque<Made>,
    /// Gradings started by a lane and not yet ended (its slots).
    running: usize,
    /// Lanes alive.
    lanes: usize,
    /// Lanes waiting for the queue to fill while slots are free: woken when it does.
    hungry: Vec<(u64, Waker)>,
    /// Cancelled, or a lane was dropped before it ended (its runtime shut down): lanes take
    /// nothing more, and nothing more is queued.
    closed: bool,
    /// With a [`Source`], the slots of lanes not running (not started yet, or ended): each
    /// lane that makes its own gradings owns a fixed number of the run's slots, so it counts
    /// them itself, and a lane started to replace one takes over its slots.
    quotas: Vec<usize>,
}

/// What a lane hands over.
pub(super) enum Event {
    /// A grading ended with this line. The grading goes with it, to be dropped by the awaiting
    /// task that made it: the grading function's future was dropped as it ended (see
    /// `Graded`), so only its memory and the sample id are left, and freed on the thread
    /// that allocated them, the allocator hands that memory to the next grading made there
    /// rather than taking its lock to give it back from another thread. (Two workers grade
    /// the text graders about 3% faster for it.)
    Line {
        line: Finished,
        spent: Option<Grading>,
    },
    /// The lane ended with gradings it had not ended: it panicked (outside the gradings, with
    /// this message) or was cancelled (`None`). Each grading's (sample, epoch, start).
    Ended {
        panic: Option<String>,
        left: Vec<(Arc<str>, u32, Instant)>,
    },
    /// So many gradings were dropped from the queue unstarted (a lane was dropped before it
    /// ended: its runtime is shutting down).
    Unstarted(usize),
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Shared {
    /// Closes the queue (lanes take nothing more, nothing more is queued) and returns what it
    /// held, to be dropped outside the lock.
    fn close(&self) -> VecDeque<Made> {
        let mut queue = lock(&self.queue);
        queue.closed = true;
        self.closed.store(true, Ordering::Release);
        self.queued.store(0, Ordering::Relaxed);
        std::mem::take(&mut queue.made)
    }

    /// Whether the queue is closed, read without its lock.
    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Hands `events` over (leaving it empty), waking the awaiting task unless it has been
    /// woken already and not yet taken what the outbox holds. When `untold`, the events are
    /// lines the awaiting task only counts (appended to the file already, by lanes that make
    /// their own gradings): they wake it only once the outbox holds [`UNTOLD_LINES`] or its
    /// first line waited [`UNTOLD_FOR`], so that cheap gradings do not wake it (and take a
    /// core from the workers) every poll of every lane.
    ///
    /// With no events and not `untold`, it wakes the awaiting task for lines left untold
    /// before, if any (only lanes that make their own gradings leave any).
    fn hand_over(&self, events: &mut Vec<Event>, untold: bool) {
        if events.is_empty() && (untold || self.source.is_none()) {
            return;
        }
        let wake = {
            let mut outbox = lock(&self.events);
            if outbox.events.is_empty() {
                if events.is_empty() {
                    return;
                }
                outbox.woken = false;
                outbox.since = None;
            }
            outbox.events.append(events);
            // (Only lines left untold read the clock.)
            let due = !untold || outbox.events.len() >= UNTOLD_LINES || {
                let now = Instant::now();
                now.duration_since(*outbox.since.get_or_insert(now)) >= UNTOLD_FOR
            };
            let wake = due && !outbox.woken;
            outbox.woken |= wake;
            wake
        };
        if wake {
            self.notify.notify_one();
        }
    }
}

/// Arranges for the task polled with `cx` to be polled again, as `tokio::task::yield_now` does
/// (the task then returns `Pending`): on a tokio runtime, not merely after the tasks queued
/// before it (a task that wakes itself is, and a worker kept busy so checks its timers and I/O
/// only every 61 tasks it runs: 120 ms for gradings of 2 ms), but once the runtime has checked
/// them; off one, at once.
fn yield_to_io(cx: &mut Context<'_>) {
    let _ = std::pin::pin!(tokio::task::yield_now()).poll(cx);
}
