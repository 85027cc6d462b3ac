//! What the server lets its peers hold, as a whole: open connections, bytes buffered for frames
//! that are still arriving, and time to finish a frame once begun. Beyond a limit the server
//! refuses the one connection or frame that would pass it, logs (at `warn`) what it refused, and
//! keeps serving every other connection.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::frame::{Budget, FRAME_LIMIT, SMALL_BUFFER};

/// The default cap on open connections: 512, or half the process's limit on open files
/// (`ulimit -n`) when that is lower, so that refusing a connection never needs a descriptor the
/// process does not have (a capability stream holds two, templates open files too).
#[must_use]
pub fn default_max_connections() -> usize {
    const DEFAULT: usize = 512;
    open_file_limit().map_or(DEFAULT, |limit| DEFAULT.min((limit / 2).max(1)))
}

/// The soft limit on open files, from `/proc/self/limits` (Linux); `None` elsewhere.
fn open_file_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The default budget of bytes buffered for frames, all connections together: 128 MiB, eight
/// frames of the largest size arriving at once.
pub const DEFAULT_BUFFERED_BYTES: usize = 8 * FRAME_LIMIT;

/// The default time a frame may take to arrive once its first byte has, and a new connection
/// to send its first frame: 30 s.
pub const DEFAULT_FRAME_TIMEOUT: Duration = Duration::from_secs(30);

/// What the server holds now and what it has refused since it started, from
/// [`Server::stats`](super::Server::stats).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ServerStats {
    /// Connections open now.
    pub connections: usize,
    /// Bytes all connections' read buffers hold now.
    pub buffered_bytes: usize,
    /// The most bytes the read buffers ever held at once; never more than the budget.
    pub peak_buffered_bytes: usize,
    /// Connections refused because the cap was reached.
    pub refused_connections: u64,
    /// Frames refused because buffering them would have passed the budget.
    pub refused_frames: u64,
    /// Connections closed because a frame stopped arriving, or no first frame came.
    pub timed_out: u64,
}

/// What refusals of one kind may log: one warning a second at most, which says how many went
/// unlogged before it, so that a flood of hostile connections cannot flood the log.
#[derive(Debug, Default)]
pub(crate) struct Throttle {
    next: Mutex<Option<Instant>>,
    unlogged: AtomicU64,
}

impl Throttle {
    /// `Some(n)` when this refusal may be logged (`n` went unlogged since the last one).
    pub(crate) fn allow(&self) -> Option<u64> {
        let now = Instant::now();
        let mut next = self.next.lock().unwrap_or_else(PoisonError::into_inner);
        if next.is_some_and(|at| now < at) {
            self.unlogged.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        *next = Some(now + Duration::from_secs(1));
        Some(self.unlogged.swap(0, Ordering::Relaxed))
    }
}

/// The limits in force and the counts behind [`ServerStats`], shared by the accept loop and
/// every connection.
#[derive(Debug)]
pub(crate) struct Guard {
    pub(crate) max_connections: usize,
    pub(crate) frame_timeout: Duration,
    pub(crate) budget: Budget,
    open: AtomicUsize,
    refused_connections: AtomicU64,
    refused_frames: AtomicU64,
    timed_out: AtomicU64,
    /// The warnings for refused connections, refused frames and timeouts.
    pub(crate) logs: [Throttle; 3],
}

/// A connection's place under the cap, given back when dropped.
#[derive(Debug)]
pub(crate) struct Slot(Arc<Guard>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Guard {
    pub(crate) fn new(max_connections: usize, buffered_bytes: usize, timeout: Duration) -> Self {
        let reserved = max_connections.saturating_mul(SMALL_BUFFER);
        Guard {
            max_connections,
            frame_timeout: timeout,
            budget: Budget::new(buffered_bytes, reserved),
            open: AtomicUsize::new(0),
            refused_connections: AtomicU64::new(0),
            refused_frames: AtomicU64::new(0),
            timed_out: AtomicU64::new(0),
            logs: Default::default(),
        }
    }

    /// A place for one more connection, or `None` (counted as a refusal) at the cap.
    pub(crate) fn admit(self: &Arc<Self>) -> Option<Slot> {
        let max = self.max_connections;
        let admitted = self
            .open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < max).then_some(open + 1)
            })
            .is_ok();
        if admitted {
            Some(Slot(Arc::clone(self)))
        } else {
            self.refused_connections.fetch_add(1, Ordering::Relaxed);
            None
        }
    }

    pub(crate) fn refused_frame(&self) {
        self.refused_frames.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn timed_out(&self) {
        self.timed_out.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn stats(&self) -> ServerStats {
        ServerStats {
            connections: self.open.load(Ordering::Acquire),
            buffered_bytes: self.budget.used(),
            peak_buffered_bytes: self.budget.peak(),
            refused_connections: self.refused_connections.load(Ordering::Relaxed),
            refused_frames: self.refused_frames.load(Ordering::Relaxed),
            timed_out: self.timed_out.load(Ordering::Relaxed),
        }
    }
}
