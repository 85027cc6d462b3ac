//! A lane: a task of the runtime that takes gradings from the run's queue for the slots it
//! claims (or makes them from its [`Source`](super::Source) for the slots it owns), polls them
//! concurrently, writes their lines out as they end, and hands them over at the end of each
//! poll, yielding to its worker's other tasks after [`BUDGET`] lines or [`SLICE`] of computing.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Instant;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;

use super::append::{Appending, Sent, keep_for_next_poll};
use super::{
    BATCH, BUDGET, Event, Finished, Grading, Json, LOW_WATER, Made, SLICE, Shared, lock,
    yield_to_io,
};
use crate::output::SharedFile;

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
pub(super) struct Lane {
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
    /// With a [`Source`](super::Source): the run's slots this lane owns (it holds no more
    /// gradings running at once), counted by itself, without the queue's lock.
    quota: usize,
    /// With a [`Source`](super::Source): gradings made and not yet started, up to [`BATCH`]
    /// with those running while the lane's gradings end without waiting.
    spares: VecDeque<Made>,
    /// Some grading of the lane was waiting (not ready) when it was last polled.
    waiting: bool,
    /// The bytes of lines that ended in earlier polls and were held back, the file being busy
    /// (their events are the first of [`ended`](Self::ended), their slots the first of
    /// [`ending`](Self::ending)): appended with the next poll's.
    held: Vec<u8>,
    /// The grading function took long enough at the lane's last making (or has not been
    /// called yet) that making a batch in one go would hold the worker too long.
    slow_making: bool,
    /// Gradings ended whose slot of the run is not yet given back.
    released: usize,
    /// How long (in seconds) the gradings this lane made from the [`Source`](super::Source) since
    /// its poll last counted took to make: the grading function's calls, counted towards [`SLICE`].
    making: f64,
    /// The events of this poll.
    ended: Vec<Event>,
    /// Counted out of the queue's lanes, its work done.
    exited: bool,
    /// Why the lane failed, outside its gradings.
    panic: Option<String>,
}

impl Lane {
    /// A lane of the run that shares `shared`, appending its lines to `file` (when the run has
    /// a local one), holding nothing yet; with a source, owning `quota` of the run's slots.
    pub(super) fn new(
        id: u64,
        shared: Arc<Shared>,
        file: Option<Arc<SharedFile>>,
        quota: usize,
    ) -> Self {
        Lane {
            id,
            shared,
            file,
            gradings: FuturesUnordered::new(),
            slots: Vec::new(),
            free: Vec::new(),
            ending: Vec::new(),
            incoming: Vec::new(),
            quota,
            spares: VecDeque::new(),
            waiting: false,
            held: Vec::new(),
            slow_making: true,
            released: 0,
            making: 0.0,
            ended: Vec::new(),
            exited: false,
            panic: None,
        }
    }

    /// Records why the lane failed outside its gradings: the line of each grading it had not
    /// ended says so.
    pub(super) fn failed(&mut self, message: String) {
        self.panic = Some(message);
    }

    /// Gives back the slots of the gradings that ended, and takes more from the queue (or makes
    /// more from the run's [`Source`](super::Source)) for the slots free; returns how many it
    /// started. Starting none with no grading left, the lane ends.
    fn refill(&mut self, cx: &Context<'_>) -> usize {
        if self.shared.source.is_some() {
            self.refill_from_source()
        } else {
            self.refill_from_queue(cx)
        }
    }

    /// [`refill`](Self::refill) from the queue the awaiting task fills, claiming the run's slots
    /// under its lock.
    fn refill_from_queue(&mut self, cx: &Context<'_>) -> usize {
        let crossed = {
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
            queue.running += n;
            let after = queue.made.len();
            if n == 0 && self.gradings.is_empty() {
                queue.lanes -= 1;
                self.exited = true;
            } else if n == 0 && free > 0 && before == 0 && !queue.closed {
                // Slots are free and the queue is empty: wait to be woken when it fills.
                match queue.hungry.iter_mut().find(|(lane, _)| *lane == self.id) {
                    Some((_, waker)) => waker.clone_from(cx.waker()),
                    None => queue.hungry.push((self.id, cx.waker().clone())),
                }
            }
            before > LOW_WATER && after <= LOW_WATER
        };
        if crossed {
            self.shared.notify.notify_one();
        }
        let started = Instant::now();
        let n = self.incoming.len();
        // (The buffer is put back, to keep its room for the next take.)
        let mut incoming = std::mem::take(&mut self.incoming);
        for made in incoming.drain(..) {
            self.start(made, started);
        }
        self.incoming = incoming;
        n
    }

    /// [`refill`](Self::refill) for a lane that makes its own gradings: its slots are its own
    /// ([`quota`](Self::quota)), so it takes no lock of the run's, only the samples' (once for
    /// up to [`BATCH`] gradings) and the queue's when gradings were handed back to it.
    fn refill_from_source(&mut self) -> usize {
        let closed = self.shared.is_closed();
        let free = if closed {
            0
        } else {
            self.quota.saturating_sub(self.gradings.len())
        };
        // Gradings another lane handed back go first (they were made before any to make now).
        if free > self.spares.len() && self.shared.queued.load(Ordering::Relaxed) > 0 {
            let mut queue = lock(&self.shared.queue);
            let n = (free - self.spares.len()).min(queue.made.len());
            self.spares.extend(queue.made.drain(..n));
            self.shared
                .queued
                .store(queue.made.len(), Ordering::Relaxed);
        }
        if free > self.spares.len()
            && !self.shared.tally.is_done()
            && let Some(source) = self.shared.source.as_deref()
        {
            // Up to a batch held while gradings end at once and are cheap to make; no more
            // than the slots while one waits (see `give_back`), or when a batch made in one go
            // would hold the worker for more than a quarter of a slice.
            let held = self.gradings.len() + self.spares.len();
            let most = if self.waiting || self.slow_making {
                self.quota
            } else {
                self.quota.max(BATCH)
            };
            let n = most.saturating_sub(held);
            let making = Instant::now();
            let (made, ended) = source.make(n, &mut self.incoming, &self.shared.tally);
            let making = making.elapsed().as_secs_f64();
            self.making += making;
            if made > 0 {
                self.slow_making = making / made as f64 * BATCH as f64 > SLICE.as_secs_f64() / 4.0;
            }
            self.spares.extend(self.incoming.drain(..));
            if ended || made < n {
                // The samples ran out: the awaiting task hears that no more will be made (it
                // may be waiting on nothing else).
                self.shared.tally.ran_out();
                self.shared.notify.notify_one();
            }
        }
        // (Closed while it made them: none is started.)
        let n = if self.shared.is_closed() {
            0
        } else {
            free.min(self.spares.len())
        };
        let started = Instant::now();
        for _ in 0..n {
            if let Some(made) = self.spares.pop_front() {
                self.start(made, started);
            }
        }
        if n == 0 && self.gradings.is_empty() {
            // Nothing running, nothing to start, nothing more to make (or the run was closed):
            // the lane ends, unless gradings were handed back in the meantime.
            let mut queue = lock(&self.shared.queue);
            if queue.made.is_empty() || queue.closed {
                queue.lanes -= 1;
                queue.quotas.push(self.quota);
                self.exited = true;
                drop(queue);
                // Spares are dropped only by a closed run (a run's end leaves none): counted as
                // never started.
                self.drop_spares();
            } else {
                // (Polled again at once, to take them.)
                self.shared
                    .queued
                    .store(queue.made.len(), Ordering::Relaxed);
                return 1;
            }
        }
        n
    }

    /// Starts a grading made (in a free slot of [`slots`](Self::slots)).
    fn start(&mut self, made: Made, started: Instant) {
        let Made { id, epoch, grading } = made;
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

    /// Hands the gradings made and not started back to the run's queue, for any lane with a
    /// free slot (or one the awaiting task starts) to take: a lane whose gradings wait must not
    /// hold back others that could run beside them. Dropped unstarted when the run is closed.
    fn give_back(&mut self) {
        if self.spares.is_empty() {
            return;
        }
        let mut queue = lock(&self.shared.queue);
        if queue.closed {
            drop(queue);
            self.drop_spares();
            return;
        }
        queue.made.extend(self.spares.drain(..));
        self.shared
            .queued
            .store(queue.made.len(), Ordering::Relaxed);
        drop(queue);
        // A lane may have ended for want of gradings: the awaiting task starts another.
        self.shared.notify.notify_one();
    }

    /// Drops the gradings made and not started (the run is closed), telling the awaiting task
    /// how many.
    fn drop_spares(&mut self) {
        let count = self.spares.len();
        if count > 0 {
            self.spares.clear();
            self.ended.push(Event::Unstarted(count));
        }
    }

    pub(super) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        // Each line is written out as soon as it ends (its grading's memory freed at once),
        // and the lines of the poll go out together at its end.
        let file = self.file.clone();
        let mut appending = Appending::new(file.as_deref(), std::mem::take(&mut self.held));
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
            while !out_of_time {
                let (slot, line, spent) = match self.gradings.poll_next_unpin(cx) {
                    Poll::Ready(Some(ended)) => ended,
                    Poll::Ready(None) => {
                        self.waiting = false;
                        break;
                    }
                    Poll::Pending => {
                        self.waiting = true;
                        break;
                    }
                };
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
        if !yielded && !self.exited && self.waiting {
            // The lane sleeps until one of its gradings is ready, however long that takes.
            self.give_back();
        }
        // Lines that ended in this poll go out (to the file, then to the awaiting task) before
        // the lane sleeps; nothing that could panic comes between (a line appended and not
        // handed over would be redone as a panicked one).
        // A lane that makes its own gradings, polled again soon (it yielded), holds the lines
        // for its next poll's write while the file is busy, so that the awaiting task, idle
        // otherwise, is not woken to write them. (Where the awaiting task makes the gradings,
        // writing them there is a third thread's work beside the lanes': two workers grade
        // the text graders 6 % faster for it.)
        let hold = yielded && !self.exited && self.shared.source.is_some();
        let buffer = match appending.finish(&mut self.ended, hold) {
            Sent::Out(buffer) => buffer,
            Sent::Held(bytes) => {
                // The lines wait for the next poll's write.
                self.held = bytes;
                return Poll::Pending;
            }
        };
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
        // Dropped before it ended, not by a panic: the run cancelled it (and emptied the queue
        // first), or its runtime is shutting down, when no lane will take what is queued.
        let killed = !self.exited && self.panic.is_none();
        // Lines held back for a busy file (dropped between polls, these are all of `ended`):
        // written now, waiting for the file if need be, and handed over with the rest. (After
        // a panic mid-poll they are failed with that poll's lines.)
        let mut written = Vec::new();
        if killed
            && !self.held.is_empty()
            && let Some(file) = &self.file
            && file.append(&self.held)
        {
            for slot in self.ending.drain(..) {
                self.slots[slot as usize] = None;
            }
            written = std::mem::take(&mut self.ended);
        }
        // Every grading held: those running, and those that ended in a poll cut short by a
        // panic (or held and not written), whose lines were not handed over (failed with the
        // rest). Only those running still hold a slot of the run; the others' are counted in
        // `released`.
        let left: Vec<(Arc<str>, u32, Instant)> = self.slots.drain(..).flatten().collect();
        let running = left.len() - self.ending.len();
        // Gradings made and not started: after a panic, queued for the lane that replaces this
        // one; otherwise never started.
        let mut unstarted = 0;
        let mut dropped = VecDeque::new();
        {
            let mut queue = lock(&self.shared.queue);
            if self.shared.source.is_none() {
                queue.running -= running + self.released;
            }
            if !self.exited {
                queue.lanes -= 1;
                if self.shared.source.is_some() {
                    queue.quotas.push(self.quota);
                }
            }
            queue.hungry.retain(|(lane, _)| *lane != self.id);
            if killed || queue.closed {
                unstarted = self.spares.len();
                // Dropped below, outside the lock.
                dropped = std::mem::take(&mut self.spares);
            } else {
                queue.made.extend(self.spares.drain(..));
                self.shared
                    .queued
                    .store(queue.made.len(), Ordering::Relaxed);
            }
        }
        drop(dropped);
        let queued = if killed {
            self.shared.close()
        } else {
            VecDeque::new()
        };
        // A panic mid-poll leaves lines that ended in it unsent: their gradings are in `left`.
        // (Spares it dropped in that poll are counted still.)
        unstarted += self
            .ended
            .iter()
            .map(|event| match event {
                Event::Unstarted(count) => *count,
                _ => 0,
            })
            .sum::<usize>();
        self.ended.clear();
        let mut events = written;
        // (After a panic, even with no grading left: the awaiting task replaces the lane.)
        if !left.is_empty() || self.panic.is_some() {
            let panic = self.panic.take();
            events.push(Event::Ended { panic, left });
        }
        if !queued.is_empty() || unstarted > 0 {
            events.push(Event::Unstarted(queued.len() + unstarted));
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
