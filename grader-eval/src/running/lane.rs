//! A lane: a task of the runtime that takes gradings from the run's queue (or makes them from its
//! [`Source`](super::Source)) for the slots it claims, polls them concurrently, writes their lines
//! out as they end, and hands them over at the end of each poll, yielding to its worker's other
//! tasks after [`BUDGET`] lines or [`SLICE`] of computing.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;

use super::append::{Appending, keep_for_next_poll};
use super::{
    BUDGET, Event, Finished, Grading, Json, LOW_WATER, Made, SLICE, Shared, lock, yield_to_io,
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
    /// a local one), holding nothing yet.
    pub(super) fn new(id: u64, shared: Arc<Shared>, file: Option<Arc<SharedFile>>) -> Self {
        Lane {
            id,
            shared,
            file,
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
        }
    }

    /// Records why the lane failed outside its gradings: the line of each grading it had not
    /// ended says so.
    pub(super) fn failed(&mut self, message: String) {
        self.panic = Some(message);
    }

    /// Gives back the slots of the gradings that ended, and takes more from the queue (or makes
    /// more from the run's [`Source`](super::Source)) for the slots free; returns how many it took.
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

    pub(super) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
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
