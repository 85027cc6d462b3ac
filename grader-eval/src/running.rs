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
//! (see [`Appending`]).
//!
//! A run whose samples and grading function can be shared among threads
//! (`Evaluation::run_shared`) gives them to the lanes as a [`Source`]: nothing is queued, and
//! each lane takes samples and makes the gradings for the slots it claims, so the awaiting
//! task makes none. Lines a lane appended to the file go to the awaiting task only to be
//! counted, and wake it in bulk ([`UNTOLD_LINES`], [`UNTOLD_FOR`]) rather than every poll.

use std::collections::VecDeque;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt as _, StreamExt as _};
use tokio::task::JoinSet;

use super::line::{ErrorKind, Line};
use super::output::SharedFile;
use grader_core::limit::Scope;

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
    /// Not appended to the run's local file: a write failed (see [`SharedFile::error`]).
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

/// Gradings made ahead of the slots: the queue the lanes take from holds up to this many, and
/// no more than this many beyond the concurrency are made in all.
pub(super) const AHEAD: usize = 256;

/// The awaiting task makes more gradings when the queue holds no more than this.
const LOW_WATER: usize = AHEAD / 2;

/// The most gradings a lane takes from the queue at a time (fewer when the concurrency shared
/// among the lanes is less).
const TAKE: usize = 16;

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

/// The gradings in flight. Dropped (when the run's future is dropped), it aborts or drops
/// them all.
pub(super) struct Running {
    shared: Arc<Shared>,
    tasks: JoinSet<()>,
    /// What the lanes handed over, taken from the outbox in one swap.
    taken: Vec<Event>,
    /// Lines taken and not yet given out.
    ready: VecDeque<Finished>,
    /// Gradings made and not yet put in the queue.
    pending: Vec<Made>,
    /// Gradings made (queued, running in a lane, or ended with their line not yet taken).
    outstanding: usize,
    /// The lanes a run keeps.
    lanes: usize,
    next_lane: u64,
    concurrency: usize,
    /// The scope (limiter, policies) the lanes run in.
    scope: Scope,
    /// The gradings polled in place, on a current-thread runtime.
    local: FuturesUnordered<Grading>,
    /// How long the last polls of the gradings polled in place that ended since the awaiting
    /// task last gave the runtime's other tasks a turn, or waited, took (in seconds).
    computed: f64,
    spawn: bool,
    /// Gradings cancelled once started, whose (sample, epoch) has no line: a resumed run
    /// grades them.
    pub(super) cancelled: usize,
    /// Gradings made and dropped before they started (queued when the run was cancelled, or
    /// made after the runtime shut down): their pairs have no line either.
    pub(super) unstarted: usize,
    /// The run's local output file, which lanes append their lines to themselves.
    file: Option<Arc<SharedFile>>,
    /// The lanes make gradings from a [`Source`] that has not run out (as far as the awaiting
    /// task has heard).
    sourcing: bool,
}

impl Drop for Running {
    fn drop(&mut self) {
        // The lanes are aborted with the set, but one may be in the middle of a poll on another
        // thread: it starts nothing more from the queue, and writes nothing once this returns,
        // so a run started next on the same file resumes from lines that no longer change.
        drop(self.shared.close());
        if let Some(file) = &self.file {
            file.close();
        }
    }
}

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
    /// than `n` only then. Never panics.
    fn make(&self, n: usize, into: &mut Vec<Made>) -> (usize, bool);

    /// The panic of the samples' iterator (or of a sample's id), if one ended them.
    fn take_panic(&self) -> Option<Box<dyn std::any::Any + Send>>;

    /// Gradings skipped because the output holds their lines, and samples skipped because
    /// another shard grades them, so far.
    fn counts(&self) -> (usize, usize);
}

/// What the awaiting task and the lanes share.
struct Shared {
    queue: Mutex<Queue>,
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
    /// Gradings the lanes made from the [`Source`] since the awaiting task last counted them:
    /// counted as a lane claims their slots, before it makes them, so that the awaiting task
    /// never hears of a line before its grading; less those claimed and not made (the samples
    /// ran out), which may take it below zero.
    made_by_lanes: isize,
    /// The [`Source`] ran out (or panicked): lanes make nothing more.
    source_done: bool,
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
        std::mem::take(&mut queue.made)
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

impl Running {
    /// [`with_source`](Self::with_source) without a source: the awaiting task makes the
    /// gradings.
    #[cfg(test)]
    fn new(concurrency: usize, scope: Scope, file: Option<Arc<SharedFile>>) -> Self {
        Running::with_source(concurrency, scope, file, None)
    }

    /// Gradings in flight, in lanes when the current runtime has worker threads, at most
    /// `concurrency` of them running at once. Given a `source`, the lanes make the gradings
    /// themselves from it, each for the slots it claims, so the awaiting task makes none (and
    /// only counts the lines); without one, the awaiting task makes them ([`spawn`]). Only
    /// lanes make gradings so: give a source only when [`lanes_here`] says gradings run in
    /// lanes.
    ///
    /// [`spawn`]: Self::spawn
    pub(super) fn with_source(
        concurrency: usize,
        scope: Scope,
        file: Option<Arc<SharedFile>>,
        source: Option<Box<dyn Source>>,
    ) -> Self {
        let workers = worker_threads();
        debug_assert!(
            workers.is_some() || source.is_none(),
            "a source for gradings polled in place"
        );
        let source = source.filter(|_| workers.is_some());
        // Two lanes per worker: while one is polled, another may be stolen by an idle worker;
        // no more than the slots.
        let lanes = (2 * workers.unwrap_or(1).max(1)).min(concurrency.max(1));
        let has_source = source.is_some();
        Running {
            shared: Arc::new(Shared {
                queue: Mutex::new(Queue {
                    made: VecDeque::new(),
                    running: 0,
                    lanes: 0,
                    hungry: Vec::new(),
                    closed: false,
                    made_by_lanes: 0,
                    source_done: false,
                }),
                events: Mutex::default(),
                notify: tokio::sync::Notify::new(),
                concurrency,
                share: concurrency.div_ceil(lanes).max(1),
                take: concurrency.div_ceil(lanes).clamp(1, TAKE),
                source,
            }),
            tasks: JoinSet::new(),
            taken: Vec::new(),
            ready: VecDeque::new(),
            pending: Vec::new(),
            outstanding: 0,
            lanes,
            next_lane: 0,
            concurrency,
            scope,
            local: FuturesUnordered::new(),
            computed: 0.0,
            spawn: workers.is_some(),
            cancelled: 0,
            unstarted: 0,
            file: file.filter(|_| workers.is_some()),
            sourcing: has_source,
        }
    }

    /// The counts of the run's [`Source`] (see [`Source::counts`]); zeros without one.
    pub(super) fn source_counts(&self) -> (usize, usize) {
        self.shared
            .source
            .as_ref()
            .map_or((0, 0), |source| source.counts())
    }

    /// Whether the run has a [`Source`] that did not run out: its lanes were stopped (the
    /// run cancelled, or its runtime shut down) with samples not yet taken.
    pub(super) fn source_unfinished(&self) -> bool {
        self.shared.source.is_some() && !lock(&self.shared.queue).source_done
    }

    /// The panic that ended the samples of the run's [`Source`], if one did.
    pub(super) fn source_panic(&self) -> Option<Box<dyn std::any::Any + Send>> {
        self.shared.source.as_ref()?.take_panic()
    }

    /// Whether gradings run in lanes (not polled in place).
    pub(super) fn spawns(&self) -> bool {
        self.spawn
    }

    /// How many more gradings to make now: up to the concurrency polled in place; in lanes,
    /// up to [`AHEAD`] in the queue (and no more than that beyond the concurrency made in
    /// all), so that gradings made are soon polled, while their memory is still in cache.
    /// Zero once the queue is closed (the runtime shut down under the run): no lane would run
    /// them.
    pub(super) fn room(&self) -> usize {
        if self.spawn {
            let queue = lock(&self.shared.queue);
            if queue.closed {
                return 0;
            }
            let queued = queue.made.len() + self.pending.len();
            drop(queue);
            self.concurrency
                .saturating_add(AHEAD)
                .saturating_sub(self.outstanding + self.pending.len())
                .min(AHEAD.saturating_sub(queued))
        } else {
            self.concurrency.saturating_sub(self.local.len())
        }
    }

    /// Adds a grading of (`id`, `epoch`): in place, or to those to queue at
    /// [`start`](Self::start) (which it calls itself every [`TAKE`] gradings, so that the
    /// first ones start while the rest are made).
    pub(super) fn spawn(
        &mut self,
        id: Arc<str>,
        epoch: u32,
        line: impl Future<Output = Finished> + Send + 'static,
    ) {
        if self.spawn {
            self.pending.push(Made {
                id,
                epoch,
                grading: Box::pin(line),
            });
            if self.pending.len() >= TAKE {
                self.start();
            }
        } else {
            self.local.push(Box::pin(line));
        }
    }

    /// Queues the gradings added since the last start, starting lanes (up to the run's
    /// number) and waking those waiting for more while slots are free.
    pub(super) fn start(&mut self) {
        if !self.spawn {
            return;
        }
        let (new_lanes, hungry) = {
            let mut queue = lock(&self.shared.queue);
            if queue.closed {
                // No lane will run them (the runtime shut down under the run).
                drop(queue);
                self.unstarted += self.pending.len();
                self.pending.clear();
                return;
            }
            self.outstanding += self.pending.len();
            queue.made.extend(self.pending.drain(..));
            // (A lane that panicked is replaced here too.)
            let work = !queue.made.is_empty() || (self.sourcing && !queue.source_done);
            let new_lanes = if work && queue.running < self.concurrency {
                self.lanes.saturating_sub(queue.lanes)
            } else {
                0
            };
            queue.lanes += new_lanes;
            let hungry = if queue.made.is_empty() {
                Vec::new()
            } else {
                std::mem::take(&mut queue.hungry)
            };
            (new_lanes, hungry)
        };
        for (_, waker) in hungry {
            waker.wake();
        }
        for _ in 0..new_lanes {
            self.start_lane();
        }
    }

    /// Starts a lane (counted in [`Queue::lanes`] already).
    fn start_lane(&mut self) {
        let id = self.next_lane;
        self.next_lane += 1;
        // Made here, so that a lane dropped before its first poll still counts itself out.
        let mut lane = Lane {
            id,
            shared: Arc::clone(&self.shared),
            file: self.file.clone(),
            gradings: FuturesUnordered::new(),
            slots: Vec::new(),
            free: Vec::new(),
            ending: Vec::new(),
            incoming: Vec::new(),
            released: 0,
            making: 0.0,
            ended: Vec::new(),
            exited: false,
            panic: None,
        };
        let scope = self.scope.clone();
        self.tasks.spawn(async move {
            let body = scope.enter(std::future::poll_fn(|cx| lane.poll(cx)));
            if let Err(panic) = AssertUnwindSafe(body).catch_unwind().await {
                lane.failed(panic_message(&panic));
            }
            // Dropped here: see `Lane`'s `Drop`.
        });
    }

    /// Gradings made and not yet ended (or ended with their line not yet given out).
    pub(super) fn is_empty(&self) -> bool {
        self.outstanding == 0
            && !self.sourcing
            && self.pending.is_empty()
            && self.local.is_empty()
            && self.ready.is_empty()
    }

    /// Takes what the lanes handed over: lines into `ready`, and for a lane that ended early,
    /// a failed line for each grading it left (after a panic) or a count of them cancelled.
    fn take(&mut self) {
        std::mem::swap(&mut lock(&self.shared.events).events, &mut self.taken);
        if self.shared.source.is_some() {
            // Counted after the events are taken: every grading whose line is among them was
            // counted before its lane handed the line over. (Read after the source ran out
            // too: a lane that claimed slots before it did gives back those it made nothing
            // for.)
            let mut queue = lock(&self.shared.queue);
            self.outstanding = self
                .outstanding
                .saturating_add_signed(std::mem::take(&mut queue.made_by_lanes));
            // Closed (the runtime is shutting down), no lane makes more either.
            self.sourcing = !queue.source_done && !queue.closed;
        }
        for event in self.taken.drain(..) {
            match event {
                Event::Line { line, spent } => {
                    self.outstanding -= 1;
                    self.ready.push_back(line);
                    drop(spent);
                }
                Event::Ended { panic, left } => {
                    self.outstanding -= left.len();
                    match panic {
                        Some(message) => {
                            for (id, epoch, started) in left {
                                self.ready.push_back(Finished::from(Line::failed(
                                    &*id,
                                    epoch,
                                    ErrorKind::Panicked,
                                    message.clone(),
                                    started.elapsed().as_secs_f64(),
                                )));
                            }
                        }
                        None => self.cancelled += left.len(),
                    }
                }
                Event::Unstarted(count) => {
                    self.outstanding -= count;
                    self.unstarted += count;
                }
            }
        }
        // Lanes that ended are joined as they go, so the set holds only those running.
        while self.tasks.try_join_next().is_some() {}
    }

    /// Whether the queue is low and more gradings can be made.
    fn wants_more(&self) -> bool {
        let low = {
            let queue = lock(&self.shared.queue);
            !queue.closed && queue.made.len() <= LOW_WATER
        };
        low && self.room() > 0
    }

    /// The line of the next grading to end; `None` when none is in flight (those cancelled
    /// under the run are counted in `cancelled`, and have no line), or, when `more` (the
    /// samples are not exhausted), as soon as the queue is low enough to make more.
    pub(super) async fn next(&mut self, more: bool) -> Option<Finished> {
        if !self.spawn {
            return std::future::poll_fn(|cx| self.poll_in_place(cx)).await;
        }
        loop {
            if let Some(line) = self.ready.pop_front() {
                return Some(line);
            }
            self.take();
            if !self.ready.is_empty() {
                continue;
            }
            if (self.outstanding == 0 && !self.sourcing) || (more && self.wants_more()) {
                return None;
            }
            // A lane that panicked is replaced before waiting on the others.
            self.start();
            // A hand-over that woke it after the take above left a permit: this returns at
            // once.
            self.shared.notify.notified().await;
        }
    }

    /// The next line of the gradings polled in place; but once their last polls have taken
    /// [`SLICE`] since the awaiting task last waited, it first yields (see [`yield_to_io`]), so
    /// that the runtime's other tasks, its timers and its I/O (which the gradings waiting on a
    /// command or a judge need) are not held up by gradings that compute without awaiting.
    fn poll_in_place(&mut self, cx: &mut Context<'_>) -> Poll<Option<Finished>> {
        if self.computed >= SLICE.as_secs_f64() {
            self.computed = 0.0;
            yield_to_io(cx);
            return Poll::Pending;
        }
        let polled = self.local.poll_next_unpin(cx);
        match &polled {
            Poll::Ready(Some(line)) => self.computed += line.last_poll,
            Poll::Ready(None) => {}
            Poll::Pending => self.computed = 0.0,
        }
        polled
    }

    /// A line that has already finished, if any (polled in place: none once the gradings have
    /// taken [`SLICE`], so that [`next`](Self::next) yields first).
    pub(super) fn try_next(&mut self) -> Option<Finished> {
        if !self.spawn {
            if self.computed >= SLICE.as_secs_f64() {
                return None;
            }
            let line = self.local.next().now_or_never().flatten()?;
            self.computed += line.last_poll;
            return Some(line);
        }
        if self.ready.is_empty() {
            self.take();
        }
        self.ready.pop_front()
    }

    /// Cancels every grading made (running or queued) and waits until each is gone; the lines
    /// of those that finished first are returned.
    pub(super) async fn cancel(&mut self) -> Vec<Finished> {
        // Polled in place, a grading's end is only seen by polling it: none has ended unseen,
        // and each is dropped here without being polled again.
        self.cancelled += self.local.len();
        self.local = FuturesUnordered::new();
        self.unstarted += self.pending.len();
        self.pending.clear();
        let queued = self.shared.close();
        self.unstarted += queued.len();
        self.outstanding -= queued.len();
        drop(queued);
        self.tasks.abort_all();
        while self.tasks.join_next().await.is_some() {}
        // Every lane is gone, so every line it handed over, and its end, is in the outbox.
        self.take();
        debug_assert_eq!(self.outstanding, 0);
        self.cancelled += self.outstanding;
        self.outstanding = 0;
        self.ready.drain(..).collect()
    }
}

/// The worker threads of the runtime this is called on, when it has them (not a current-thread
/// runtime, nor outside one).
fn worker_threads() -> Option<usize> {
    tokio::runtime::Handle::try_current()
        .ok()
        .filter(|handle| handle.runtime_flavor() != tokio::runtime::RuntimeFlavor::CurrentThread)
        .map(|handle| handle.metrics().num_workers())
}

/// Whether gradings run in lanes on the runtime this is called on (see
/// [`Running::spawns`]).
pub(super) fn lanes_here() -> bool {
    worker_threads().is_some()
}

/// Arranges for the task polled with `cx` to be polled again, as `tokio::task::yield_now` does
/// (the task then returns `Pending`): on a tokio runtime, not merely after the tasks queued
/// before it (a task that wakes itself is, and a worker kept busy so checks its timers and I/O
/// only every 61 tasks it runs: 120 ms for gradings of 2 ms), but once the runtime has checked
/// them; off one, at once.
fn yield_to_io(cx: &mut Context<'_>) {
    let _ = std::pin::pin!(tokio::task::yield_now()).poll(cx);
}

/// A lane's grading, with the index of its slot in [`Lane::slots`].
struct InSlot {
    slot: u32,
    /// `None` once it has ended (and gone out with its line).
    grading: Option<Grading>,
}

impl Future for InSlot {
    type Output = (u32, Finished, Option<Grading>);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(grading) = self.grading.as_mut() else {
            return Poll::Pending;
        };
        let line = std::task::ready!(grading.as_mut().poll(cx));
        Poll::Ready((self.slot, line, self.grading.take()))
    }
}

/// A task that runs gradings from the queue until it is empty.
struct Lane {
    id: u64,
    shared: Arc<Shared>,
    file: Option<Arc<SharedFile>>,
    gradings: FuturesUnordered<InSlot>,
    /// Each grading's (sample, epoch, start), for its line should the lane fail: held from its
    /// start until its line is handed over.
    slots: Vec<Option<(Arc<str>, u32, Instant)>>,
    free: Vec<u32>,
    /// The slots of the gradings that ended in this poll (their lines not yet handed over).
    ending: Vec<u32>,
    /// What the lane takes from the queue, kept between takes.
    incoming: Vec<Made>,
    /// Gradings ended whose slot of the run is not yet given back.
    released: usize,
    /// How long (in seconds) the gradings this lane made from the [`Source`] since its poll
    /// last counted took to make: the grading function's calls, counted towards [`SLICE`].
    making: f64,
    /// The events of this poll.
    ended: Vec<Event>,
    /// Counted out of the queue's lanes, its work done.
    exited: bool,
    /// Why the lane failed, outside its gradings.
    panic: Option<String>,
}

impl Lane {
    /// Records why the lane failed outside its gradings: the line of each grading it had not
    /// ended says so.
    fn failed(&mut self, message: String) {
        self.panic = Some(message);
    }

    /// Gives back the slots of the gradings that ended, and takes more from the queue (or
    /// makes more from the run's [`Source`]) for the slots free; returns how many it took.
    /// Taking none with no grading left, the lane ends.
    fn refill(&mut self, cx: &Context<'_>) -> usize {
        let (crossed, claimed) = {
            let mut queue = lock(&self.shared.queue);
            queue.running -= self.released;
            self.released = 0;
            let before = queue.made.len();
            let free = self.shared.concurrency.saturating_sub(queue.running);
            let below_share = self.shared.share.saturating_sub(self.gradings.len());
            let room = if queue.closed {
                0
            } else {
                free.min(self.shared.take).min(below_share)
            };
            let n = room.min(before);
            self.incoming.extend(queue.made.drain(..n));
            // The slots it makes gradings for, counted as made now (see `made_by_lanes`).
            let claimed = if self.shared.source.is_some() && !queue.source_done {
                room - n
            } else {
                0
            };
            queue.running += n + claimed;
            queue.made_by_lanes += claimed as isize;
            let after = queue.made.len();
            if n + claimed == 0 && self.gradings.is_empty() {
                queue.lanes -= 1;
                self.exited = true;
            } else if n + claimed == 0
                && free > 0
                && before == 0
                && !queue.closed
                && self.shared.source.is_none()
            {
                // Slots are free and the queue is empty: wait to be woken when it fills.
                match queue.hungry.iter_mut().find(|(lane, _)| *lane == self.id) {
                    Some((_, waker)) => waker.clone_from(cx.waker()),
                    None => queue.hungry.push((self.id, cx.waker().clone())),
                }
            }
            (before > LOW_WATER && after <= LOW_WATER, claimed)
        };
        if crossed {
            self.shared.notify.notify_one();
        }
        if let Some(source) = self.shared.source.as_ref().filter(|_| claimed > 0) {
            let making = Instant::now();
            let (made, ended) = source.make(claimed, &mut self.incoming);
            self.making += making.elapsed().as_secs_f64();
            if ended || made < claimed {
                // The samples ran out: the slots claimed for more go back, and the awaiting
                // task hears that no more will be made (it may be waiting on nothing else).
                let mut queue = lock(&self.shared.queue);
                queue.running -= claimed - made;
                queue.made_by_lanes -= (claimed - made) as isize;
                queue.source_done = true;
                if self.incoming.is_empty() && self.gradings.is_empty() {
                    queue.lanes -= 1;
                    self.exited = true;
                }
                drop(queue);
                self.shared.notify.notify_one();
            }
        }
        let n = self.incoming.len();
        if n > 0 {
            let started = Instant::now();
            for Made { id, epoch, grading } in self.incoming.drain(..) {
                let held = Some((id, epoch, started));
                let slot = match self.free.pop() {
                    Some(slot) => {
                        self.slots[slot as usize] = held;
                        slot
                    }
                    None => {
                        self.slots.push(held);
                        u32::try_from(self.slots.len() - 1).unwrap_or(u32::MAX)
                    }
                };
                self.gradings.push(InSlot {
                    slot,
                    grading: Some(grading),
                });
            }
        }
        n
    }

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        // Each line is written out as soon as it ends (its grading's memory freed at once),
        // and the lines of the poll go out together at its end.
        let file = self.file.clone();
        let mut appending = Appending::new(file.as_deref());
        let mut ended_here = 0;
        // The seconds the last polls of the gradings that ended in this poll took, and the
        // grading function's calls made here.
        let mut computed = 0.0;
        // The poll ends by yielding: the lane is polled again soon.
        let mut yielded = false;
        loop {
            let took = self.refill(cx);
            if self.exited {
                break;
            }
            computed += std::mem::take(&mut self.making);
            let mut ended_now = 0;
            let mut out_of_time = computed >= SLICE.as_secs_f64();
            while !out_of_time
                && let Poll::Ready(Some((slot, line, spent))) = self.gradings.poll_next_unpin(cx)
            {
                // Its slot is held until the line is handed over, at the end of the poll.
                self.ending.push(slot);
                self.released += 1;
                computed += line.last_poll;
                // A grading this lane made from the source is dropped here, on the thread that
                // allocated it.
                let spent = spent.filter(|_| self.shared.source.is_none());
                let mut event = Event::Line { line, spent };
                appending.write_out(&mut event);
                self.ended.push(event);
                ended_now += 1;
                out_of_time = computed >= SLICE.as_secs_f64();
                // Free slots are taken again at once.
                if ended_now >= self.shared.take || out_of_time {
                    break;
                }
            }
            ended_here += ended_now;
            if ended_here >= BUDGET || out_of_time {
                // Let the worker's other tasks run, and its timers and I/O be seen to; this
                // lane is polled again after them. (Its slots are given back first.)
                let _ = self.refill(cx);
                if !self.exited {
                    yield_to_io(cx);
                    yielded = true;
                }
                break;
            }
            if took == 0 && ended_now == 0 {
                break;
            }
        }
        // Lines that ended in this poll go out (to the file, then to the awaiting task) before
        // the lane sleeps; nothing that could panic comes between (a line appended and not
        // handed over would be redone as a panicked one).
        let buffer = appending.finish(&mut self.ended);
        // A lane that makes its own gradings need not tell the awaiting task at once of lines
        // in the file when it yields (it is polled again soon, and tells it then if they have
        // waited long enough); but must when it waits on its gradings, which may take minutes
        // (of lines it left untold before too), and as it ends, when the run may be over.
        let untold = self.shared.source.is_some()
            && yielded
            && self.ended.iter().all(
                |event| matches!(event, Event::Line { line, .. } if matches!(line.json, Json::InFile)),
            );
        if self.exited && self.ended.is_empty() && self.shared.source.is_some() {
            self.shared.notify.notify_one();
        }
        self.shared.hand_over(&mut self.ended, untold);
        for slot in self.ending.drain(..) {
            self.slots[slot as usize] = None;
            self.free.push(slot);
        }
        keep_for_next_poll(buffer);
        if self.exited {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Drop for Lane {
    /// Gives back the lane's slots and counts it out, and tells the awaiting task of the
    /// gradings it had not ended: failed by the lane's panic, or cancelled.
    fn drop(&mut self) {
        // The gradings go first (each catches its own destructor's panic): the awaiting task,
        // told below, may end the run at once.
        self.gradings = FuturesUnordered::new();
        // Every grading held: those running, and those that ended in a poll cut short by a
        // panic, whose lines were not handed over (failed with the rest). Only those running
        // still hold a slot of the run; the others' are counted in `released`.
        let left: Vec<(Arc<str>, u32, Instant)> = self.slots.drain(..).flatten().collect();
        let running = left.len() - self.ending.len();
        {
            let mut queue = lock(&self.shared.queue);
            queue.running -= running + self.released;
            if !self.exited {
                queue.lanes -= 1;
            }
            queue.hungry.retain(|(lane, _)| *lane != self.id);
        }
        // Dropped before it ended, not by a panic: the run cancelled it (and emptied the queue
        // first), or its runtime is shutting down, when no lane will take what is queued.
        let killed = !self.exited && self.panic.is_none();
        let queued = if killed {
            self.shared.close()
        } else {
            VecDeque::new()
        };
        // A panic mid-poll leaves lines that ended in it unsent: their gradings are in `left`.
        self.ended.clear();
        let mut events = Vec::new();
        // (After a panic, even with no grading left: the awaiting task replaces the lane.)
        if !left.is_empty() || self.panic.is_some() {
            let panic = self.panic.take();
            events.push(Event::Ended { panic, left });
        }
        if !queued.is_empty() {
            events.push(Event::Unstarted(queued.len()));
        }
        // The queued gradings are dropped before the awaiting task hears of them.
        drop(queued);
        self.shared.hand_over(&mut events, false);
        if killed && self.shared.source.is_some() {
            // The awaiting task may be waiting on lanes to make more, which none will now.
            self.shared.notify.notify_one();
        }
    }
}

thread_local! {
    /// Where a lane writes out the lines that end in one poll, to append them to the file in
    /// one `write`; kept between polls for the worker's next.
    static APPEND: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The lines of one poll of a lane, written out as they end, to go out together at its end:
/// appended to the run's local file in one write, or handed to the awaiting task as one
/// buffer.
pub(super) struct Appending<'a> {
    file: Option<&'a SharedFile>,
    /// For a file, taken from [`APPEND`] for the poll (a poll nested in this one finds it
    /// empty, and uses its own), and put back after ([`keep_for_next_poll`]).
    bytes: Vec<u8>,
}

/// The most of a buffer a worker keeps between polls: a poll's lines are a few tens of
/// kilobytes; a larger buffer is let go rather than kept on the thread after the run.
const KEPT_BUFFER: usize = 128 << 10;

/// Puts a buffer back in [`APPEND`] for the worker's next poll, unless it is larger than
/// [`KEPT_BUFFER`] (or the thread is ending).
fn keep_for_next_poll(buffer: Option<Vec<u8>>) {
    if let Some(mut buffer) = buffer.filter(|buffer| buffer.capacity() <= KEPT_BUFFER) {
        buffer.clear();
        let _ = APPEND.try_with(|kept| kept.set(buffer));
    }
}

impl<'a> Appending<'a> {
    fn new(file: Option<&'a SharedFile>) -> Self {
        let bytes = match file {
            Some(_) => APPEND.try_with(std::cell::Cell::take).unwrap_or_default(),
            None => Vec::new(),
        };
        Appending { file, bytes }
    }

    /// Writes out the line of an `event` that is one: it becomes [`Json::InFile`] (until
    /// [`finish`](Self::finish) says otherwise) and the line is dropped; a line that cannot
    /// be written out keeps its error. (Writing runs none of the grading's code; should it
    /// panic all the same, that is this line's error, not its lane mates'.)
    fn write_out(&mut self, event: &mut Event) {
        let Event::Line { line, .. } = event else {
            return;
        };
        let Json::Line(json) = &line.json else {
            return;
        };
        let before = self.bytes.len();
        let written = std::panic::catch_unwind(AssertUnwindSafe(|| {
            super::line::write_line(&mut self.bytes, json).map_err(|error| error.to_string())
        }))
        .unwrap_or_else(|panic| Err(panic_message(&panic)));
        match written {
            Ok(()) => {
                self.bytes.push(b'\n');
                line.json = Json::InFile;
            }
            Err(message) => {
                self.bytes.truncate(before);
                line.json = Json::Written(Err((json.id.clone(), message)));
            }
        }
    }

    /// Sends the lines written out: appended to the file in one write (if it fails, each of
    /// them in `ended`, the events of this poll, becomes [`Json::Unwritten`]), or as one
    /// buffer on the first of them, the others marked [`Json::WithOthers`]. So that a worker
    /// never waits on another's write (a slow file system would stall the runtime), a file
    /// whose lock is taken gets the lines through the awaiting task too. Returns the buffer to
    /// keep for the next poll.
    fn finish(mut self, ended: &mut [Event]) -> Option<Vec<u8>> {
        let written = ended.iter_mut().filter_map(|event| match event {
            Event::Line { line, .. } if matches!(line.json, Json::InFile) => Some(line),
            _ => None,
        });
        if self.bytes.is_empty() {
            return Some(self.bytes);
        }
        if let Some(file) = self.file {
            match file.try_append(&self.bytes) {
                Some(true) => return Some(self.bytes),
                Some(false) => {
                    written.for_each(|line| line.json = Json::Unwritten);
                    return Some(self.bytes);
                }
                None => {}
            }
        }
        let mut bytes = Some(std::mem::take(&mut self.bytes));
        for line in written {
            line.json = match bytes.take() {
                Some(bytes) => Json::Written(Ok(bytes)),
                None => Json::WithOthers,
            };
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines of `finished`: those written out (a lane's, handed over together) read back,
    /// the others as they are.
    fn parsed(finished: &[Finished]) -> Vec<Line> {
        let mut lines = Vec::new();
        for line in finished {
            match &line.json {
                Json::Line(line) => lines.push(Line::clone(line)),
                Json::Written(Ok(bytes)) => lines.extend(
                    bytes
                        .split(|b| *b == b'\n')
                        .filter(|raw| !raw.is_empty())
                        .map(|raw| serde_json::from_slice::<Line>(raw).expect("a line")),
                ),
                Json::WithOthers => {}
                Json::Written(Err(_)) | Json::InFile | Json::Unwritten => {
                    panic!("not a line to read back")
                }
            }
        }
        lines
    }

    /// A multi-threaded runtime of `workers` worker threads.
    fn runtime(workers: usize) -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
            .expect("a runtime")
    }

    fn failed(id: &str, epoch: u32, message: &str) -> Finished {
        Finished::from(Line::failed(id, epoch, ErrorKind::Failed, message, 0.0))
    }

    /// The lines that end in a poll are appended to the file in one write; while another
    /// thread holds the file, they are handed over as one buffer instead (the first line
    /// carries it, the others are marked as in it), and nothing is written to the file.
    #[test]
    fn a_polls_lines_go_to_the_file_or_whole_to_the_awaiting_task_when_it_is_busy() {
        let dir = std::env::temp_dir().join(format!("grader-appending-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        let path = dir.join("results.jsonl");
        let _ = std::fs::remove_file(&path);
        let open = || {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .expect("open")
        };
        let file = SharedFile::new(open());
        let events = |ids: &[&str]| -> Vec<Event> {
            ids.iter()
                .map(|id| Event::Line {
                    line: failed(id, 1, "x"),
                    spent: None,
                })
                .collect()
        };
        let poll = |ended: &mut Vec<Event>| {
            let mut appending = Appending::new(Some(&file));
            for event in ended.iter_mut() {
                appending.write_out(event);
            }
            keep_for_next_poll(appending.finish(ended));
        };

        let mut ended = events(&["a", "b"]);
        poll(&mut ended);
        assert!(
            ended.iter().all(
                |e| matches!(e, Event::Line { line, .. } if matches!(line.json, Json::InFile))
            )
        );
        let written = std::fs::read_to_string(&path).expect("the file");
        assert_eq!(written.lines().count(), 2, "{written}");

        let mut ended = events(&["c", "d", "e"]);
        std::thread::scope(|s| {
            let held = file.state();
            s.spawn(|| poll(&mut ended)).join().expect("the poll");
            drop(held);
        });
        let Some(Event::Line { line, .. }) = ended.first() else {
            panic!("a line")
        };
        let Json::Written(Ok(bytes)) = &line.json else {
            panic!("the poll's lines, handed over")
        };
        let handed: Vec<Line> = bytes
            .split(|b| *b == b'\n')
            .filter(|raw| !raw.is_empty())
            .map(|raw| serde_json::from_slice(raw).expect("a line"))
            .collect();
        let ids: Vec<&str> = handed.iter().map(|line| line.id.as_str()).collect();
        assert_eq!(ids, ["c", "d", "e"]);
        assert!(ended[1..].iter().all(
            |e| matches!(e, Event::Line { line, .. } if matches!(line.json, Json::WithOthers))
        ));
        let after = std::fs::read_to_string(&path).expect("the file");
        assert_eq!(
            after, written,
            "nothing more written while the file was busy"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Lines only to count wake the awaiting task once the outbox holds [`UNTOLD_LINES`] or
    /// its first waited [`UNTOLD_FOR`]; anything else wakes it at once; and it is woken once
    /// for what the outbox holds until it takes it.
    #[test]
    fn lines_only_to_count_wake_the_awaiting_task_in_bulk() {
        let running = Running::new(4, Scope::current(), None);
        let shared = &running.shared;
        let woken = || shared.notify.notified().now_or_never().is_some();
        let lines = |n: usize| -> Vec<Event> {
            (0..n)
                .map(|i| Event::Line {
                    line: Finished {
                        json: Json::InFile,
                        ..failed(&i.to_string(), 1, "x")
                    },
                    spent: None,
                })
                .collect()
        };
        shared.hand_over(&mut lines(10), true);
        assert!(!woken(), "ten lines to count wait");
        shared.hand_over(&mut lines(UNTOLD_LINES - 20), true);
        assert!(!woken(), "fewer than UNTOLD_LINES wait");
        shared.hand_over(&mut lines(10), true);
        assert!(woken(), "UNTOLD_LINES wake it");
        shared.hand_over(&mut lines(10), false);
        assert!(!woken(), "woken already, and not yet taken");
        assert_eq!(lock(&shared.events).events.len(), UNTOLD_LINES + 10);

        // Taken: the next lines wait again, until the first has waited long enough.
        lock(&shared.events).events.clear();
        shared.hand_over(&mut lines(1), true);
        assert!(!woken());
        std::thread::sleep(UNTOLD_FOR + std::time::Duration::from_millis(5));
        shared.hand_over(&mut lines(1), true);
        assert!(woken(), "the first line waited UNTOLD_FOR");

        // What is not only to count wakes it at once.
        lock(&shared.events).events.clear();
        shared.hand_over(&mut lines(1), false);
        assert!(woken());
    }

    /// Samples numbered from 0: the first ends at once, the rest never (a judge that does not
    /// answer).
    struct OneFast {
        next: std::sync::atomic::AtomicUsize,
    }

    impl Source for OneFast {
        fn make(&self, n: usize, into: &mut Vec<Made>) -> (usize, bool) {
            for _ in 0..n {
                let i = self.next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let id: Arc<str> = Arc::from(format!("s{i}"));
                let line = failed(&id, 1, "x");
                let grading: Grading = Box::pin(async move {
                    if i > 0 {
                        std::future::pending::<()>().await;
                    }
                    line
                });
                into.push(Made {
                    id,
                    epoch: 1,
                    grading,
                });
            }
            (n, false)
        }

        fn take_panic(&self) -> Option<Box<dyn std::any::Any + Send>> {
            None
        }

        fn counts(&self) -> (usize, usize) {
            (0, 0)
        }
    }

    /// A line a lane appended to the file is told to the awaiting task when the lane goes on
    /// to wait on its other gradings, however long they take: it is not left uncounted
    /// until the lane's next poll.
    #[test]
    fn a_line_in_the_file_is_told_while_its_lane_waits_on_slow_gradings() {
        let dir = std::env::temp_dir().join(format!("grader-untold-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        let path = dir.join("results.jsonl");
        let _ = std::fs::remove_file(&path);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .expect("open");
        let file = Arc::new(SharedFile::new(file));
        runtime(1).block_on(async {
            let mut running = Running::with_source(
                2,
                Scope::current(),
                Some(file),
                Some(Box::new(OneFast {
                    next: std::sync::atomic::AtomicUsize::new(0),
                })),
            );
            running.start();
            let first =
                tokio::time::timeout(std::time::Duration::from_secs(5), running.next(false)).await;
            assert!(
                matches!(first, Ok(Some(ref line)) if matches!(line.json, Json::InFile)),
                "the line of s0 was not counted"
            );
            let lines = std::fs::read_to_string(&path).expect("the file");
            assert_eq!(lines.lines().count(), 1, "{lines}");
            drop(running.cancel().await);
        });
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A lane that panics outside its gradings gives each grading it left a panicked line,
    /// keeps the line of one that ended before, gives its slots back and leaves none in
    /// flight.
    #[test]
    fn a_lane_panicking_fails_only_the_gradings_it_left() {
        runtime(1).block_on(async {
            let mut running = Running::new(6, Scope::current(), None);
            assert_eq!((running.lanes, running.shared.take), (2, 3));
            running.spawn(Arc::from("done"), 1, async { failed("done", 1, "first") });
            running.spawn(Arc::from("left"), 2, std::future::pending());
            running.spawn(Arc::from("boom"), 1, async {
                tokio::task::yield_now().await;
                panic!("outside any grading's catch")
            });
            running.start();
            let mut lines = Vec::new();
            while let Some(line) = running.next(false).await {
                lines.push(line);
            }
            let mut ended: Vec<(String, ErrorKind)> = parsed(&lines)
                .into_iter()
                .map(|line| {
                    (
                        format!("{}/{}", line.id, line.epoch),
                        line.error.expect("an error").kind,
                    )
                })
                .collect();
            ended.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(
                ended,
                [
                    ("boom/1".to_owned(), ErrorKind::Panicked),
                    ("done/1".to_owned(), ErrorKind::Failed),
                    ("left/2".to_owned(), ErrorKind::Panicked),
                ]
            );
            assert_eq!(running.cancelled, 0);
            assert!(running.is_empty());
            let queue = lock(&running.shared.queue);
            assert_eq!((queue.running, queue.made.len()), (0, 0));
        });
    }

    /// A lane that panics is replaced: what waits in the queue still runs.
    #[test]
    fn a_lane_that_panicked_is_replaced_and_the_queue_still_runs() {
        runtime(1).block_on(async {
            // One slot, so one lane, which takes one grading at a time.
            let mut running = Running::new(1, Scope::current(), None);
            running.spawn(Arc::from("boom"), 1, async {
                panic!("outside any grading's catch")
            });
            running.spawn(Arc::from("after"), 1, async { failed("after", 1, "ran") });
            running.start();
            let mut lines = Vec::new();
            let all = async {
                while let Some(line) = running.next(false).await {
                    lines.push(line);
                }
            };
            tokio::time::timeout(std::time::Duration::from_secs(20), all)
                .await
                .expect("the queued grading ran after the panic");
            let ended: Vec<(String, ErrorKind)> = parsed(&lines)
                .into_iter()
                .map(|line| (line.id, line.error.expect("an error").kind))
                .collect();
            assert_eq!(
                ended,
                [
                    ("boom".to_owned(), ErrorKind::Panicked),
                    ("after".to_owned(), ErrorKind::Failed),
                ]
            );
            assert!(running.is_empty());
        });
    }

    /// Cancelling keeps the lines of gradings that finished but were not yet taken, and gives
    /// none to those it cancels, running or queued (a resumed run grades them).
    #[test]
    fn cancel_keeps_what_finished_and_drops_the_rest() {
        runtime(2).block_on(async {
            // One slot: the third grading waits in the queue behind the slow one.
            let mut running = Running::new(1, Scope::current(), None);
            let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
            running.spawn(Arc::from("fast"), 1, async move {
                let line = failed("fast", 1, "quick");
                let _ = done_tx.send(());
                line
            });
            running.spawn(Arc::from("slow"), 1, async {
                std::future::pending::<()>().await;
                failed("slow", 1, "never")
            });
            running.spawn(Arc::from("queued"), 1, async {
                failed("queued", 1, "never")
            });
            running.start();
            done_rx.await.expect("the fast grading ran");
            // Let the fast grading's lane hand it over and start the slow one.
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            assert_eq!(lock(&running.shared.queue).running, 1);
            let finished = running.cancel().await;
            assert_eq!(finished.len(), 1);
            assert_eq!(parsed(&finished)[0].id, "fast");
            assert!(finished[0].errored);
            // The slow one was running; the queued one never started.
            assert_eq!((running.cancelled, running.unstarted), (1, 1));
            assert!(running.is_empty());
        });
    }

    /// A concurrency as large as a `usize` holds is taken as it is: no count overflows.
    #[test]
    fn the_largest_concurrency_overflows_nothing() {
        runtime(2).block_on(async {
            let mut running = Running::new(usize::MAX, Scope::current(), None);
            assert_eq!(running.room(), AHEAD);
            for i in 0..40_u32 {
                running.spawn(Arc::from(format!("s{i}")), 1, async move {
                    failed(&format!("s{i}"), 1, "done")
                });
            }
            running.start();
            let mut lines = Vec::new();
            while let Some(line) = running.next(false).await {
                lines.push(line);
            }
            assert_eq!(parsed(&lines).len(), 40);
            assert!(running.is_empty());
        });
    }

    /// Gradings that compute for milliseconds without awaiting do not keep a worker from its
    /// other tasks and its timers (a command's output, a judge's reply) until the queue is
    /// empty: a lane yields to them once the gradings that ended in a poll took [`SLICE`], so
    /// a task of the one worker sleeping a millisecond at a time wakes while they run. (It
    /// counts wake-ups, not time. Before the slice, one lane ran every grading in one poll, and
    /// the sleeping task saw none of them end; with the lane waking itself instead of yielding
    /// as `tokio::task::yield_now` does, the worker saw to its timers only every 61 tasks.)
    #[test]
    fn a_lane_lets_its_workers_other_tasks_run_between_long_gradings() {
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        const GRADINGS: usize = 32;
        runtime(1).block_on(async {
            let ended = Arc::new(AtomicUsize::new(0));
            // Another task of the worker, which sleeps a millisecond at a time and notes how
            // many gradings had ended at each wake-up, until all have.
            let other = tokio::spawn({
                let ended = Arc::clone(&ended);
                async move {
                    let mut seen = std::collections::BTreeSet::new();
                    loop {
                        let now = ended.load(SeqCst);
                        if now == GRADINGS {
                            return seen;
                        }
                        seen.insert(now);
                        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                    }
                }
            });
            let mut running = Running::new(8, Scope::current(), None);
            for i in 0..GRADINGS {
                let ended = Arc::clone(&ended);
                running.spawn(Arc::from(format!("s{i}")), 1, async move {
                    let started = Instant::now();
                    while started.elapsed() < std::time::Duration::from_millis(2) {
                        std::hint::spin_loop();
                    }
                    ended.fetch_add(1, SeqCst);
                    // Timed as a run times its gradings (which end at their first poll here).
                    let id = format!("s{i}");
                    let took = started.elapsed().as_secs_f64();
                    Finished {
                        last_poll: took,
                        ..Finished::from(Line::failed(&id, 1, ErrorKind::Failed, "done", took))
                    }
                });
            }
            running.start();
            let mut lines = Vec::new();
            while let Some(line) = running.next(false).await {
                lines.push(line);
            }
            assert_eq!(parsed(&lines).len(), GRADINGS);
            let seen = other.await.expect("the other task");
            // The counts of gradings ended that the other task saw, strictly between none and all.
            let between = seen.range(1..GRADINGS).count();
            assert!(
                between >= GRADINGS / 4,
                "the worker's sleeping task saw {between} of the {GRADINGS} gradings' ends: {seen:?}"
            );
        });
    }

    /// However many lanes there are, no more gradings run at once than the concurrency, and
    /// every grading gets its line.
    #[test]
    fn lanes_never_run_more_than_the_concurrency() {
        runtime(2).block_on(async {
            let now = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let most = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let mut running = Running::new(3, Scope::current(), None);
            for i in 0..40_u32 {
                let (now, most) = (Arc::clone(&now), Arc::clone(&most));
                running.spawn(Arc::from(format!("s{i}")), 1, async move {
                    use std::sync::atomic::Ordering::SeqCst;
                    let at_once = now.fetch_add(1, SeqCst) + 1;
                    most.fetch_max(at_once, SeqCst);
                    // Some end at once, others wait on the timer.
                    if i % 3 != 0 {
                        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                    }
                    now.fetch_sub(1, SeqCst);
                    failed(&format!("s{i}"), 1, "done")
                });
            }
            running.start();
            let mut lines = Vec::new();
            while let Some(line) = running.next(false).await {
                lines.push(line);
            }
            let mut ids: Vec<String> = parsed(&lines).into_iter().map(|line| line.id).collect();
            ids.sort();
            ids.dedup();
            assert_eq!(ids.len(), 40);
            assert_eq!(most.load(std::sync::atomic::Ordering::SeqCst), 3);
            assert!(running.is_empty());
        });
    }
}
