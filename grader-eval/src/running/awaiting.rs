//! The awaiting task's side of a run's gradings in flight: [`Running`] makes them into the
//! queue (or hands the lanes a [`Source`]), starts and replaces lanes, takes what they hand
//! over, and polls the gradings in place on a current-thread runtime.

use std::collections::VecDeque;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt as _, StreamExt as _};
use tokio::task::JoinSet;

use super::lane::Lane;
use super::{
    AHEAD, Event, Finished, Grading, LOW_WATER, Made, Queue, SLICE, Shared, Source, TAKE, Tally,
    lock, panic_message, yield_to_io,
};
use crate::line::{ErrorKind, Line};
use crate::output::SharedFile;
use grader_core::limit::Scope;

/// The gradings in flight. Dropped (when the run's future is dropped), it aborts or drops
/// them all.
pub(crate) struct Running {
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
    pub(crate) cancelled: usize,
    /// Gradings made and dropped before they started (queued when the run was cancelled, or
    /// made after the runtime shut down): their pairs have no line either.
    pub(crate) unstarted: usize,
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

impl Running {
    /// [`with_source`](Self::with_source) without a source: the awaiting task makes the
    /// gradings.
    #[cfg(test)]
    pub(super) fn new(concurrency: usize, scope: Scope, file: Option<Arc<SharedFile>>) -> Self {
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
    pub(crate) fn with_source(
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
        // With a source, each lane owns its slots: the concurrency split among the lanes.
        let quotas = if has_source {
            (0..lanes)
                .map(|lane| concurrency / lanes + usize::from(lane < concurrency % lanes))
                .collect()
        } else {
            Vec::new()
        };
        Running {
            shared: Arc::new(Shared {
                queue: Mutex::new(Queue {
                    made: VecDeque::new(),
                    running: 0,
                    lanes: 0,
                    hungry: Vec::new(),
                    closed: false,
                    quotas,
                }),
                closed: AtomicBool::new(false),
                tally: Tally::default(),
                queued: AtomicUsize::new(0),
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
    pub(crate) fn source_counts(&self) -> (usize, usize) {
        self.shared
            .source
            .as_ref()
            .map_or((0, 0), |source| source.counts())
    }

    /// Whether the run has a [`Source`] that did not run out: its lanes were stopped (the
    /// run cancelled, or its runtime shut down) with samples not yet taken.
    pub(crate) fn source_unfinished(&self) -> bool {
        self.shared.source.is_some() && !self.shared.tally.is_done()
    }

    /// The panic that ended the samples of the run's [`Source`], if one did.
    pub(crate) fn source_panic(&self) -> Option<Box<dyn std::any::Any + Send>> {
        self.shared.source.as_ref()?.take_panic()
    }

    /// Whether gradings run in lanes (not polled in place).
    pub(crate) fn spawns(&self) -> bool {
        self.spawn
    }

    /// How many more gradings to make now: up to the concurrency polled in place; in lanes,
    /// up to [`AHEAD`] in the queue (and no more than that beyond the concurrency made in
    /// all), so that gradings made are soon polled, while their memory is still in cache.
    /// Zero once the queue is closed (the runtime shut down under the run): no lane would run
    /// them.
    pub(crate) fn room(&self) -> usize {
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
    pub(crate) fn spawn(
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
    pub(crate) fn start(&mut self) {
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
            let work = !queue.made.is_empty() || (self.sourcing && !self.shared.tally.is_done());
            let new_lanes: Vec<usize> = if !work {
                Vec::new()
            } else if self.shared.source.is_some() {
                // The slots of the lanes that ended go to new ones.
                std::mem::take(&mut queue.quotas)
            } else if queue.running < self.concurrency {
                vec![self.shared.share; self.lanes.saturating_sub(queue.lanes)]
            } else {
                Vec::new()
            };
            queue.lanes += new_lanes.len();
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
        for quota in new_lanes {
            self.start_lane(quota);
        }
    }

    /// Starts a lane (counted in [`Queue::lanes`] already) owning `quota` of the run's slots
    /// (with a source; without one it claims them from the queue).
    fn start_lane(&mut self, quota: usize) {
        let id = self.next_lane;
        self.next_lane += 1;
        // Made here, so that a lane dropped before its first poll still counts itself out.
        let mut lane = Lane::new(id, Arc::clone(&self.shared), self.file.clone(), quota);
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
    pub(crate) fn is_empty(&self) -> bool {
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
            // (Whether the source ran out is read first: seen so, the count after it holds
            // every grading it made.)
            let done = self.shared.tally.is_done();
            self.count_made();
            // Closed (the runtime is shutting down), no lane makes more either.
            self.sourcing = !done && !self.shared.is_closed();
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

    /// Adds the gradings the lanes made from the source since the last count to those
    /// outstanding.
    fn count_made(&mut self) {
        self.outstanding = self
            .outstanding
            .saturating_add_signed(self.shared.tally.take_made());
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
    pub(crate) async fn next(&mut self, more: bool) -> Option<Finished> {
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
    pub(crate) fn try_next(&mut self) -> Option<Finished> {
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
    pub(crate) async fn cancel(&mut self) -> Vec<Finished> {
        // Polled in place, a grading's end is only seen by polling it: none has ended unseen,
        // and each is dropped here without being polled again.
        self.cancelled += self.local.len();
        self.local = FuturesUnordered::new();
        self.unstarted += self.pending.len();
        self.pending.clear();
        let queued = self.shared.close();
        // Gradings lanes made from the source and handed back to the queue are counted in the
        // tally, perhaps not yet here: counted first (the queue's lock, taken by `close`, orders
        // their count before).
        self.count_made();
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
pub(crate) fn lanes_here() -> bool {
    worker_threads().is_some()
}

#[cfg(test)]
mod tests;
