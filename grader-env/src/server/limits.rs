//! What the server lets its peers hold, as a whole: control connections, capability streams,
//! bytes buffered for frames that are still arriving, time to finish a frame once begun, and
//! time a connection without a task may stay idle. Beyond a limit the server refuses the one
//! connection or frame that would pass it, logs (at `warn`) what it refused, and keeps serving
//! every other connection.
//!
//! Connections are held in three tables. A new connection waits in the table of new
//! connections (`max_connections` of them) until its first frame; when that table is full, it
//! takes the place of the one silent the longest, which is closed. Its first frame moves it to
//! the table of control sessions (`max_connections`) or, for `tunnel.open`, to the table of
//! capability streams (`max_streams`), the agents' SSH: streams never take a control session's
//! place, and control sessions never take theirs. When the control table is full, the new
//! session takes the place of the one idle the longest, if any is idle: waiting for a frame
//! with no task running or held for its session (a session awaiting its grade is never
//! closed). A full table of idle sockets therefore never locks a new client out; only a table
//! full of sessions that hold tasks or are being answered refuses one. There is no cap per peer
//! address: hud's own runtime connects every session from one address.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::frame::{Budget, FRAME_LIMIT, SMALL_BUFFER};

/// The default cap on control sessions (and on new connections that have not sent their first
/// frame, counted apart): 512, or an eighth of the process's limit on open files (`ulimit -n`)
/// when that is lower, so that with as many capability streams ([`default_max_streams`], two
/// descriptors each) the tables never hold more than half the descriptors the process has
/// (templates open files too).
#[must_use]
pub fn default_max_connections() -> usize {
    const DEFAULT: usize = 512;
    open_file_limit().map_or(DEFAULT, |limit| DEFAULT.min((limit / 8).max(1)))
}

/// The default cap on capability streams (`tunnel.open`, the agents' SSH): 512, or an eighth
/// of the process's limit on open files when that is lower (each holds two descriptors: the
/// peer's and the capability's).
#[must_use]
pub fn default_max_streams() -> usize {
    const DEFAULT: usize = 512;
    open_file_limit().map_or(DEFAULT, |limit| DEFAULT.min((limit / 8).max(1)))
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

/// The default time a control connection with no task (none running, none held for its
/// session) may stay without sending a frame: 300 s, more than twice the 120 s between the
/// heartbeats (`hello`) hud 0.6.21's client sends on an open connection.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// What the server holds now and what it has refused since it started, from
/// [`Server::stats`](super::Server::stats).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ServerStats {
    /// Control connections open now (those that have not sent their first frame included).
    pub connections: usize,
    /// Capability streams open now.
    pub streams: usize,
    /// Bytes all connections' read buffers hold now.
    pub buffered_bytes: usize,
    /// The most bytes the read buffers ever held at once; never more than the budget.
    pub peak_buffered_bytes: usize,
    /// Control sessions refused because their table was full and none of its sessions was
    /// idle (each held a task or was being answered).
    pub refused_connections: u64,
    /// Capability streams refused because their table was full.
    pub refused_streams: u64,
    /// Connections closed to make room for a newer one: the new connection silent the longest,
    /// or the control session idle the longest with no task.
    pub evicted: u64,
    /// Connections closed because they stayed idle, with no task, past the idle timeout.
    pub idle_closed: u64,
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

/// The warnings of each kind.
#[derive(Debug, Default)]
pub(crate) struct Logs {
    pub(crate) refused_connection: Throttle,
    pub(crate) refused_frame: Throttle,
    pub(crate) timed_out: Throttle,
    pub(crate) refused_stream: Throttle,
    pub(crate) evicted: Throttle,
}

/// Which table a connection is in (capability streams are only counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// It has not sent its first frame yet.
    New,
    /// A control session.
    Control,
}

/// One connection's entry in the tables of new and control connections.
#[derive(Debug)]
struct Entry {
    kind: Kind,
    /// Since when it has been idle (waiting for a frame, with no task), or `None` while it is
    /// not.
    idle_since: Option<Instant>,
    /// Set to close it and give its place to a newer connection.
    evict: watch::Sender<bool>,
}

/// How many connections a table holds, and how many of them are being closed.
#[derive(Debug, Default, Clone, Copy)]
struct Count {
    open: usize,
    evicting: usize,
}

impl Count {
    fn staying(self) -> usize {
        self.open - self.evicting
    }
}

/// The tables.
#[derive(Debug, Default)]
struct Table {
    next_id: u64,
    entries: HashMap<u64, Entry>,
    new: Count,
    control: Count,
    streams: usize,
}

impl Table {
    fn count(&mut self, kind: Kind) -> &mut Count {
        match kind {
            Kind::New => &mut self.new,
            Kind::Control => &mut self.control,
        }
    }

    /// Marks the connection of `kind` idle the longest to be closed; how long it was idle, or
    /// `None` when none of them is idle.
    fn evict_oldest(&mut self, kind: Kind, now: Instant) -> Option<Duration> {
        let (since, id) = self
            .entries
            .iter()
            .filter(|(_, entry)| entry.kind == kind && !*entry.evict.borrow())
            .filter_map(|(id, entry)| Some((entry.idle_since?, *id)))
            .min()?;
        if let Some(entry) = self.entries.get(&id) {
            entry.evict.send_replace(true);
        }
        self.count(kind).evicting += 1;
        Some(now.saturating_duration_since(since))
    }

    /// Takes back an eviction decided a moment before the connection got busy; whether there
    /// was one.
    fn take_back(&mut self, id: u64) -> bool {
        let Some(entry) = self.entries.get(&id) else {
            return false;
        };
        if !*entry.evict.borrow() {
            return false;
        }
        entry.evict.send_replace(false);
        let kind = entry.kind;
        self.count(kind).evicting -= 1;
        true
    }
}

/// The limits in force and the counts behind [`ServerStats`], shared by the accept loop and
/// every connection.
#[derive(Debug)]
pub(crate) struct Guard {
    pub(crate) max_connections: usize,
    pub(crate) max_streams: usize,
    pub(crate) frame_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) budget: Budget,
    table: Mutex<Table>,
    refused_connections: AtomicU64,
    refused_streams: AtomicU64,
    evicted: AtomicU64,
    idle_closed: AtomicU64,
    refused_frames: AtomicU64,
    timed_out: AtomicU64,
    pub(crate) logs: Logs,
}

/// A connection's place in the tables, given back when dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    guard: Arc<Guard>,
    id: u64,
    evicted: watch::Receiver<bool>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut table = self.guard.table();
        if let Some(entry) = table.entries.remove(&self.id) {
            let evicting = *entry.evict.borrow();
            let count = table.count(entry.kind);
            count.open -= 1;
            if evicting {
                count.evicting -= 1;
            }
        }
    }
}

/// Why a connection could not become what its first frame asked.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Refused {
    /// The control table is full and none of its sessions is idle.
    Control,
    /// The table of capability streams is full.
    Stream,
}

impl Slot {
    /// The connection waits for a frame with no task: it may be evicted, and the idle timeout
    /// runs from now (unless it was idle already).
    pub(crate) fn idle(&self) {
        let mut table = self.guard.table();
        if let Some(entry) = table.entries.get_mut(&self.id) {
            entry.idle_since.get_or_insert_with(Instant::now);
        }
    }

    /// The connection is busy (a frame being answered) or holds a task: it is not evicted,
    /// and an eviction decided a moment ago is taken back (the newer connection keeps its
    /// place above the cap until one leaves).
    pub(crate) fn busy(&self) {
        let mut table = self.guard.table();
        if let Some(entry) = table.entries.get_mut(&self.id) {
            entry.idle_since = None;
        }
        table.take_back(self.id);
    }

    /// Resolves when the connection is evicted.
    pub(crate) async fn evicted(&mut self) {
        if self.evicted.wait_for(|evicted| *evicted).await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    /// Moves a new connection to the control table, in the place of the control connection
    /// idle the longest when the table is full (how long it was idle is returned); refused
    /// when none is idle.
    pub(crate) fn into_control(self) -> Result<(Slot, Option<Duration>), (Refused, Slot)> {
        let guard = Arc::clone(&self.guard);
        let mut table = guard.table();
        let mut evicted = None;
        if table.control.staying() >= guard.max_connections {
            evicted = table.evict_oldest(Kind::Control, Instant::now());
            if evicted.is_none() {
                drop(table);
                guard.refused_connections.fetch_add(1, Ordering::Relaxed);
                return Err((Refused::Control, self));
            }
            guard.evicted.fetch_add(1, Ordering::Relaxed);
        }
        table.take_back(self.id);
        if let Some(entry) = table.entries.get_mut(&self.id) {
            entry.kind = Kind::Control;
            entry.idle_since = None;
            table.new.open -= 1;
            table.control.open += 1;
        }
        drop(table);
        Ok((self, evicted))
    }

    /// Moves a new connection to the table of capability streams; refused (counted) when that
    /// one is full.
    pub(crate) fn into_stream(self) -> Result<StreamSlot, (Refused, Slot)> {
        let guard = Arc::clone(&self.guard);
        {
            let mut table = guard.table();
            if table.streams >= guard.max_streams {
                drop(table);
                guard.refused_streams.fetch_add(1, Ordering::Relaxed);
                return Err((Refused::Stream, self));
            }
            table.streams += 1;
        }
        drop(self);
        Ok(StreamSlot(guard))
    }
}

/// A capability stream's place, given back when dropped.
#[derive(Debug)]
pub(crate) struct StreamSlot(Arc<Guard>);

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.table().streams -= 1;
    }
}

impl Guard {
    pub(crate) fn new(
        max_connections: usize,
        max_streams: usize,
        buffered_bytes: usize,
        timeout: Duration,
        idle_timeout: Duration,
    ) -> Self {
        // New connections and control sessions each hold a small buffer (capability streams
        // give theirs back once spliced).
        let reserved = max_connections
            .saturating_mul(2)
            .saturating_mul(SMALL_BUFFER);
        Guard {
            max_connections,
            max_streams,
            frame_timeout: timeout,
            idle_timeout,
            budget: Budget::new(buffered_bytes, reserved),
            table: Mutex::new(Table::default()),
            refused_connections: AtomicU64::new(0),
            refused_streams: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
            idle_closed: AtomicU64::new(0),
            refused_frames: AtomicU64::new(0),
            timed_out: AtomicU64::new(0),
            logs: Logs::default(),
        }
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place for a new connection, until its first frame says what it is: a free one, or the
    /// place of the new connection silent the longest (marked to be closed; how long it was
    /// silent is returned). A new connection is never refused here: a table full of silent
    /// connections gives way to newer ones.
    pub(crate) fn admit(self: &Arc<Self>) -> (Slot, Option<Duration>) {
        let now = Instant::now();
        let mut table = self.table();
        let mut evicted = None;
        if table.new.staying() >= self.max_connections {
            evicted = table.evict_oldest(Kind::New, now);
            if evicted.is_some() {
                self.evicted.fetch_add(1, Ordering::Relaxed);
            }
        }
        let id = table.next_id;
        table.next_id += 1;
        let (evict, receiver) = watch::channel(false);
        table.entries.insert(
            id,
            Entry {
                kind: Kind::New,
                idle_since: Some(now),
                evict,
            },
        );
        table.new.open += 1;
        drop(table);
        let slot = Slot {
            guard: Arc::clone(self),
            id,
            evicted: receiver,
        };
        (slot, evicted)
    }

    pub(crate) fn refused_frame(&self) {
        self.refused_frames.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn timed_out(&self) {
        self.timed_out.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn idle_closed(&self) {
        self.idle_closed.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn stats(&self) -> ServerStats {
        let (connections, streams) = {
            let table = self.table();
            (table.new.open + table.control.open, table.streams)
        };
        ServerStats {
            connections,
            streams,
            buffered_bytes: self.budget.used(),
            peak_buffered_bytes: self.budget.peak(),
            refused_connections: self.refused_connections.load(Ordering::Relaxed),
            refused_streams: self.refused_streams.load(Ordering::Relaxed),
            evicted: self.evicted.load(Ordering::Relaxed),
            idle_closed: self.idle_closed.load(Ordering::Relaxed),
            refused_frames: self.refused_frames.load(Ordering::Relaxed),
            timed_out: self.timed_out.load(Ordering::Relaxed),
        }
    }
}
