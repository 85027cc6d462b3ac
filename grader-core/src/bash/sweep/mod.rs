//! Finding and stopping every process a command started, wherever it went.
//!
//! Each command's environment carries a tag, `GRADER_BASH_<token>=<n>`: `<token>` is unique to
//! this grading process and `<n>` to the command. Every process the command starts inherits it,
//! including those that leave the process group (`setsid`, `set -m`, a double fork,
//! `setpgid`). One sweeper thread per process serves every grader: when a grader ends, it asks
//! the sweeper to stop its tag, and the sweeper reads `/proc/<pid>/environ` once per round for
//! all the graders waiting, sends SIGTERM to what carries their tags, then SIGKILL after their
//! grace, and answers each grader once nothing of its tag is alive. A round reads only the pids
//! handed out since the oldest waiting command started (see [`Window`]) when the kernel's
//! counters allow, and remembers what it learned of each process from round to round (see
//! [`Memo`]). The executor threads never list `/proc`: [`nothing_left`] reads at most a
//! few hundred pids' files, once per grade, when bash exited by itself.
//!
//! Signals go through pidfds opened once the process is known to be the tagged one (its tag
//! read again, or, while the memo is kept, no pid reused since it was read), so a process
//! that exits and whose pid is reused by an unrelated process is never signalled.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use rustix::io::Errno;
use rustix::process::{Pid, Signal, kill_process, kill_process_group, test_kill_process_group};
use tokio::sync::oneshot;

/// The first pause between two rounds for a new request; it doubles up to [`ROUND_MAX`].
const ROUND_MIN: Duration = Duration::from_millis(1);
/// The longest pause between two rounds while a request waits.
const ROUND_MAX: Duration = Duration::from_millis(20);
/// How long rounds that find nothing of a tag, but during which new pids kept being handed
/// out, go on before the sweeper answers anyway.
const UNSETTLED_MAX: Duration = Duration::from_millis(200);
/// How long after SIGKILL the sweeper keeps looking for processes of a tag before answering
/// anyway (a process stuck in the kernel, or a fork bomb outpacing the rounds).
const KILL_SETTLE: Duration = Duration::from_secs(1);

/// The environment variable that tags one command's processes.
pub(super) struct Tag {
    /// `GRADER_BASH_<token>`, the same for every command of this process.
    pub(super) name: &'static str,
    /// The command's number, unique within this process.
    pub(super) id: u64,
}

impl Tag {
    /// A tag no other command of this process has.
    pub(super) fn next() -> Tag {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Tag {
            name: tag_name(),
            id: NEXT.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The variable's value.
    pub(super) fn value(&self) -> OsString {
        self.id.to_string().into()
    }
}

/// `GRADER_BASH_<token>`: `<token>` is this process's id and the time it first ran a command,
/// in digits, so that no other process picks the same name.
pub(super) fn tag_name() -> &'static str {
    static NAME: OnceLock<String> = OnceLock::new();
    NAME.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("GRADER_BASH_{}_{nanos}", std::process::id())
    })
}

/// The first process (bash) of every command of this process that is running or being
/// stopped, with how many commands have it (a pid is reused only once its bash is reaped, and
/// a command leaves this list just after). A round of the sweeper does not read the
/// environment of a process that descends from the bash of a command it is not stopping:
/// that process carries the other command's tag.
static LEADERS: Mutex<Option<HashMap<u32, usize>>> = Mutex::new(None);

fn leaders() -> std::sync::MutexGuard<'static, Option<HashMap<u32, usize>>> {
    LEADERS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Records `pid` as the bash of a running command.
pub(super) fn add_leader(pid: u32) {
    *leaders()
        .get_or_insert_with(HashMap::new)
        .entry(pid)
        .or_default() += 1;
}

/// Forgets `pid` as the bash of a command (once it is reaped or given up).
pub(super) fn remove_leader(pid: u32) {
    if let Some(leaders) = leaders().as_mut()
        && let Some(count) = leaders.get_mut(&pid)
    {
        *count -= 1;
        if *count == 0 {
            leaders.remove(&pid);
        }
    }
}

/// The bash of every running command but those in `stopping`.
fn other_leaders(stopping: impl IntoIterator<Item = u32>) -> HashSet<u32> {
    let mut others: HashSet<u32> = leaders()
        .as_ref()
        .map(|leaders| leaders.keys().copied().collect())
        .unwrap_or_default();
    for pid in stopping {
        others.remove(&pid);
    }
    others
}

/// A grader's request to stop everything of its tag.
struct Request {
    tag: u64,
    /// The command's process group: signalled as a whole too, for a process in it that
    /// cleared its environment.
    group: Option<Pid>,
    /// How long tagged processes get between SIGTERM and SIGKILL; zero kills at once.
    grace: Duration,
    /// The pids the tag's processes can have; `None` for all.
    window: Option<Window>,
    /// Answered once nothing of the tag is alive; `None` when nobody waits.
    done: Option<oneshot::Sender<()>>,
}

/// What the kernel's counters said just before a command started: enough to tell, later,
/// which pids its processes can have.
#[derive(Clone, Copy, Debug)]
pub(super) struct Counters {
    /// Processes and threads created since boot (`processes` in `/proc/stat`).
    forks: u64,
    /// Processes and threads alive (from `/proc/loadavg`).
    tasks: u64,
    /// The last pid handed out in this pid namespace (from `/proc/loadavg`).
    last_pid: u32,
    /// The largest pid plus one (`/proc/sys/kernel/pid_max`).
    pid_max: u32,
}

/// The largest pid plus one, read once: it changes only when an administrator changes it.
fn pid_max() -> Option<u32> {
    static PID_MAX: OnceLock<Option<u32>> = OnceLock::new();
    *PID_MAX.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/pid_max")
            .ok()?
            .trim()
            .parse()
            .ok()
    })
}

/// Pids below this are never handed out again once the counter wraps (the kernel's
/// `RESERVED_PIDS`).
const RESERVED_PIDS: u64 = 300;

impl Counters {
    /// The counters now but `forks` and `tasks` (left at 0), which take the longest to read.
    fn read_last_pid() -> Option<Counters> {
        let loadavg = std::fs::read_to_string("/proc/loadavg").ok()?;
        let last_pid = loadavg.split_ascii_whitespace().nth(4)?.parse().ok()?;
        Some(Counters {
            forks: 0,
            tasks: 0,
            last_pid,
            pid_max: pid_max()?,
        })
    }

    /// The counters now, or `None` where `/proc` does not tell.
    pub(super) fn read() -> Option<Counters> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let forks = stat
            .lines()
            .find_map(|line| line.strip_prefix("processes "))?
            .trim()
            .parse()
            .ok()?;
        let loadavg = std::fs::read_to_string("/proc/loadavg").ok()?;
        // `0.52 0.58 0.59 2/484 12345`: the fourth field is running/total tasks.
        let mut fields = loadavg.split_ascii_whitespace().skip(3);
        let tasks = fields.next()?.split_once('/')?.1.parse().ok()?;
        let last_pid = fields.next()?.parse().ok()?;
        let pid_max = pid_max()?;
        Some(Counters {
            forks,
            tasks,
            last_pid,
            pid_max,
        })
    }
}

/// The pids a command's processes can have: its own (the first) and every pid handed out
/// since, as long as the kernel's pid counter cannot have come all the way round.
///
/// The counter moves forward by one for each new task and skips pids in use. Between two
/// readings with `F` tasks created, the pids it passed were either handed out (`F`) or in use
/// by a task alive at the first reading or created since (`tasks + F`), so it has not come
/// round while `2F + tasks` stays below the range it cycles through.
#[derive(Clone, Copy, Debug)]
pub(super) struct Window {
    first: u32,
    before: Counters,
}

impl Window {
    /// The window of a command whose first process is `first`, with `before` read just before
    /// it started.
    pub(super) fn new(first: u32, before: Counters) -> Window {
        Window { first, before }
    }

    /// The window of a command whose first pid is not known: every pid handed out after the
    /// counters `before` were read.
    pub(super) fn after(before: Counters) -> Window {
        let next = (u64::from(before.last_pid) + 1) % u64::from(before.pid_max.max(1));
        Window {
            first: u32::try_from(next).unwrap_or(0),
            before,
        }
    }

    /// Whether the window still tells, with `now` the counters now.
    fn holds(&self, now: &Counters) -> bool {
        let created = now.forks.saturating_sub(self.before.forks);
        let span = u64::from(self.before.pid_max.min(now.pid_max)).saturating_sub(RESERVED_PIDS);
        created.saturating_mul(2).saturating_add(self.before.tasks) < span
    }

    /// How far `last` is past the window's first pid, going round at `pid_max`.
    fn reach(&self, now: &Counters) -> u64 {
        let (first, last) = (u64::from(self.first), u64::from(now.last_pid));
        if first <= last {
            last - first
        } else {
            last + u64::from(now.pid_max).saturating_sub(first)
        }
    }
}

/// The pids from `first` to `last`, going round at `pid_max`.
#[derive(Clone, Copy, Debug)]
struct Range {
    first: u32,
    last: u32,
    /// How many pids that is.
    len: u64,
    pid_max: u32,
}

impl Range {
    fn pids(self) -> impl Iterator<Item = u32> {
        (0..self.len).filter_map(move |offset| {
            let pid = (u64::from(self.first) + offset) % u64::from(self.pid_max.max(1));
            u32::try_from(pid).ok()
        })
    }

    fn contains(self, pid: u32) -> bool {
        if self.first <= self.last {
            self.first <= pid && pid <= self.last
        } else {
            pid >= self.first || pid <= self.last
        }
    }
}

/// Stops every process of tag `tag` and of process group `group`: SIGTERM (with SIGCONT for a
/// stopped one), SIGKILL to what is left after `grace`. Resolves once no process of the tag is
/// alive (zombies do not count), or [`KILL_SETTLE`] after SIGKILL.
pub(super) async fn stop(tag: u64, group: Option<Pid>, window: Option<Window>, grace: Duration) {
    let (done, answered) = oneshot::channel();
    if send(Request {
        tag,
        group,
        grace,
        window,
        done: Some(done),
    }) {
        // An error means the sweeper thread is gone: nothing more can be done.
        let _ = answered.await;
    }
}

/// Sends SIGKILL to every process of tag `tag` and of `group` without waiting, for a grading
/// future that is dropped.
pub(super) fn kill_now(tag: u64, group: Option<Pid>, window: Option<Window>) {
    if let Some(group) = group {
        let _ = kill_process_group(group, Signal::KILL);
    }
    send(Request {
        tag,
        group,
        grace: Duration::ZERO,
        window,
        done: None,
    });
}

/// Whether the sweeper thread could be reached (and started, the first time).
pub(super) fn start() -> std::io::Result<()> {
    sender().map(|_| ())
}

fn send(request: Request) -> bool {
    match sender() {
        Ok(tx) => tx.send(request).is_ok(),
        Err(_) => false,
    }
}

fn sender() -> std::io::Result<&'static mpsc::Sender<Request>> {
    static SENDER: OnceLock<mpsc::Sender<Request>> = OnceLock::new();
    if let Some(tx) = SENDER.get() {
        return Ok(tx);
    }
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("grader-bash-sweeper".to_owned())
        .spawn(move || Sweeper::new(rx).run())?;
    // Two first callers may race: the loser's thread sees its channel closed and ends.
    Ok(SENDER.get_or_init(|| tx))
}

/// One request being served.
struct Job {
    request: Request,
    /// When SIGKILL replaces SIGTERM.
    kill_at: Instant,
    /// When SIGKILL was first sent.
    killed_at: Option<Instant>,
    /// The processes already sent SIGTERM.
    termed: HashSet<i32>,
    /// Since when the rounds found nothing of the tag without coming to rest.
    empty_since: Option<Instant>,
    /// The pause before the next round.
    pause: Duration,
    next_round: Instant,
}

struct Sweeper {
    rx: mpsc::Receiver<Request>,
    jobs: Vec<Job>,
    reader: Reader,
}

impl Sweeper {
    fn new(rx: mpsc::Receiver<Request>) -> Self {
        Sweeper {
            rx,
            jobs: Vec::new(),
            reader: Reader::new(),
        }
    }

    fn run(mut self) {
        // No round starts before this: a pause at least as long as the processor time the
        // last round used, so that with thousands of processes on the machine the sweeper uses
        // at most half a core. Processor time, not time passed: when the cores are crowded
        // (hundreds of commands starting), a round waits far longer for its turn than it
        // works, and resting that long too would keep graders waiting for nothing.
        let mut rest_until = Instant::now();
        loop {
            if self.jobs.is_empty() {
                match self.rx.recv() {
                    Ok(request) => self.add(request),
                    Err(mpsc::RecvError) => return,
                }
            }
            while let Some(next) = self.jobs.iter().map(|job| job.next_round).min() {
                let now = Instant::now();
                let next = next.max(rest_until);
                if next <= now {
                    break;
                }
                match self.rx.recv_timeout(next - now) {
                    Ok(request) => self.add(request),
                    Err(mpsc::RecvTimeoutError::Timeout) => break,
                    Err(mpsc::RecvTimeoutError::Disconnected) => return,
                }
            }
            while let Ok(request) = self.rx.try_recv() {
                self.add(request);
            }
            let began = Instant::now();
            let cpu = thread_cpu_time();
            self.round();
            let used = match (cpu, thread_cpu_time()) {
                (Some(before), Some(after)) => after.saturating_sub(before),
                _ => began.elapsed(),
            };
            rest_until = Instant::now() + used;
        }
    }

    fn add(&mut self, request: Request) {
        let now = Instant::now();
        if let Some(group) = request.group {
            if request.grace.is_zero() {
                let _ = kill_process_group(group, Signal::KILL);
            } else if kill_process_group(group, Signal::TERM).is_ok() {
                let _ = kill_process_group(group, Signal::CONT);
            }
        }
        self.jobs.push(Job {
            // A grace too long to add is as good as a year.
            kill_at: now
                .checked_add(request.grace)
                .unwrap_or(now + Duration::from_secs(365 * 24 * 3600)),
            killed_at: None,
            termed: HashSet::new(),
            empty_since: None,
            pause: ROUND_MIN,
            next_round: now,
            request,
        });
    }

    /// One look at every process for all the jobs, and what follows for each.
    fn round(&mut self) {
        let wanted: HashSet<u64> = self.jobs.iter().map(|job| job.request.tag).collect();
        let others = other_leaders(self.jobs.iter().filter_map(|job| leader(job.request.group)));
        let before = Counters::read();
        let range = before.and_then(|before| self.range(&before));
        let (mut found, settled) = self.reader.scan_settled(&wanted, &others, range, before);
        let now = Instant::now();
        self.jobs.retain_mut(|job| {
            let alive = found.remove(&job.request.tag).unwrap_or_default();
            if alive.is_empty() && settled {
                // A member of the group that cleared its environment, if any, goes too.
                if let Some(group) = job.request.group {
                    let _ = kill_process_group(group, Signal::KILL);
                }
                if let Some(done) = job.request.done.take() {
                    let _ = done.send(());
                }
                return false;
            }
            if alive.is_empty() {
                // Not settled: look again at once, for a while. On a machine that starts
                // processes all the time the counter may never rest during a round; rounds
                // that keep finding nothing of the tag for `UNSETTLED_MAX` then answer.
                let since = *job.empty_since.get_or_insert(now);
                if now.duration_since(since) >= UNSETTLED_MAX {
                    tracing::debug!(
                        "nothing of a command found for {UNSETTLED_MAX:?}, though the pid counter \
                         never rested during a round"
                    );
                    if let Some(done) = job.request.done.take() {
                        let _ = done.send(());
                    }
                    return false;
                }
                job.next_round = now;
                return true;
            }
            job.empty_since = None;
            if now >= job.kill_at {
                let killed_at = *job.killed_at.get_or_insert(now);
                if let Some(group) = job.request.group {
                    let _ = kill_process_group(group, Signal::KILL);
                }
                for process in &alive {
                    process.signal(Signal::KILL);
                }
                if now.duration_since(killed_at) >= KILL_SETTLE {
                    tracing::warn!(
                        count = alive.len(),
                        "processes of a command outlived SIGKILL by {KILL_SETTLE:?}"
                    );
                    if let Some(done) = job.request.done.take() {
                        let _ = done.send(());
                    }
                    return false;
                }
            } else {
                for process in &alive {
                    if job.termed.insert(process.pid) {
                        process.signal(Signal::TERM);
                        process.signal(Signal::CONT);
                    }
                }
            }
            job.next_round = (now + job.pause).min(job.kill_at.max(now));
            job.pause = (job.pause * 2).min(ROUND_MAX);
            true
        });
    }

    /// The pids that every job's processes are among, when the counters tell; `None` for all.
    /// All windows end at the last pid handed out, so the widest one holds the others.
    fn range(&self, now: &Counters) -> Option<Range> {
        let mut widest: Option<(u64, u32)> = None;
        for job in &self.jobs {
            let window = job.request.window.filter(|window| window.holds(now))?;
            let reach = window.reach(now);
            if widest.is_none_or(|(widest, _)| reach > widest) {
                widest = Some((reach, window.first));
            }
        }
        let (reach, first) = widest?;
        Some(Range {
            first,
            last: now.last_pid,
            len: reach + 1,
            pid_max: now.pid_max,
        })
    }
}

/// The pid of a command's bash, which leads its process group.
pub(super) fn leader(group: Option<Pid>) -> Option<u32> {
    group.and_then(|group| u32::try_from(group.as_raw_pid()).ok())
}

/// The processor time this thread has used, where the system tells.
fn thread_cpu_time() -> Option<Duration> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        Some(Duration::new(
            u64::try_from(now.tv_sec).ok()?,
            u32::try_from(now.tv_nsec).ok()?,
        ))
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        None
    }
}

/// How many times [`Reader::scan_settled`] looks at newly handed-out pids before giving up
/// until the next round.
const SETTLE_LOOKS: usize = 8;

/// How many pids a range may hold for them to be tried one by one rather than listed from
/// `/proc`.
const PROBE_MAX: u64 = 256;

/// Whether nothing of tag `tag` and of `group` is alive, when that can be told at once by
/// reading a few files on the calling thread: the group is empty and few pids were handed out
/// since the command started. `false` means it could not be told; ask the sweeper.
pub(super) fn nothing_left(tag: u64, group: Option<Pid>, window: Option<Window>) -> bool {
    if let Some(group) = group
        && test_kill_process_group(group) != Err(Errno::SRCH)
    {
        return false;
    }
    let Some(window) = window else {
        return false;
    };
    let Some(now) = Counters::read().filter(|now| window.holds(now)) else {
        return false;
    };
    let reach = window.reach(&now);
    if reach >= PROBE_MAX {
        return false;
    }
    let range = Range {
        first: window.first,
        last: now.last_pid,
        len: reach + 1,
        pid_max: now.pid_max,
    };
    let others = other_leaders(leader(group));
    let (found, settled) =
        Reader::new().scan_settled(&HashSet::from([tag]), &others, Some(range), Some(now));
    settled && found.is_empty()
}

/// Reads processes' environments for tags.
struct Reader {
    /// `GRADER_BASH_<token>=`, as it starts an entry of `/proc/<pid>/environ`.
    prefix: Vec<u8>,
    environ: Vec<u8>,
    memo: Memo,
    /// Whether a scan met a live process whose environment read empty (in the middle of
    /// `exec`): its tag is unknown, so the round cannot say that nothing is left.
    unsure: bool,
}

/// What earlier rounds learned of each process, kept while no pid can have been handed out
/// twice since the memo began (the reasoning of [`Window`]): a pid then names one process, so
/// a process is read once however many rounds see it, instead of once per round.
#[derive(Default)]
struct Memo {
    /// The counters when the memo began; `None` while it is not kept.
    since: Option<Counters>,
    /// The last pid handed out when the memo was last refreshed.
    last: u32,
    known: HashMap<u32, Known>,
}

/// What is known of a process for as long as it lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Known {
    /// Its environment carried this tag: inherited, it stays, even if the process later runs
    /// a program with another environment (it is still stopped with its command).
    Tag(u64),
    /// Its environment, read while it was alive, carried no tag.
    Untagged,
    /// It descends from the bash of this command, which was not being stopped when it was
    /// seen, and carries that command's tag.
    Other(u32),
    /// It was a zombie, or gone: it cannot come back.
    Dead,
}

impl Memo {
    /// Keeps the memo if no pid can have been reused since it began, as `now` tells; starts
    /// over otherwise.
    ///
    /// A pid the counter passed since the last refresh may name a new process, even one that
    /// the counter had not handed out since the memo began (a process older than the memo
    /// whose pid was just ahead of the counter): what is known of it is forgotten.
    fn refresh(&mut self, now: Option<Counters>) {
        let holds = self
            .since
            .zip(now)
            .is_some_and(|(since, now)| Window::new(0, since).holds(&now));
        let Some(now) = now.filter(|_| holds) else {
            self.known.clear();
            self.since = now;
            self.last = now.map_or(0, |now| now.last_pid);
            return;
        };
        let (last, current) = (self.last, now.last_pid);
        if last != current {
            self.known.retain(|&pid, _| !passed(last, current, pid));
        }
        self.last = current;
    }

    fn get(&self, pid: u32) -> Option<Known> {
        self.since.and(self.known.get(&pid).copied())
    }

    fn put(&mut self, pid: u32, known: Known) {
        if self.since.is_some() {
            self.known.insert(pid, known);
        }
    }
}

/// Whether the counter, going from `last` to `current` (round `pid_max`), handed out or
/// passed over `pid`.
fn passed(last: u32, current: u32, pid: u32) -> bool {
    if last <= current {
        last < pid && pid <= current
    } else {
        pid > last || pid <= current
    }
}

/// What a process's environment says.
enum Environ {
    Tag(u64),
    /// Readable, not empty, and without a tag.
    Untagged,
    /// Read, and empty: a zombie, a kernel thread, or a process in the middle of `exec`.
    Empty,
    /// Unreadable: a process gone, or one this user may not read.
    Unreadable,
}

impl Reader {
    fn new() -> Self {
        Reader {
            prefix: format!("{}=", tag_name()).into_bytes(),
            environ: Vec::with_capacity(16 * 1024),
            memo: Memo::default(),
            unsure: false,
        }
    }

    /// As [`scan`](Self::scan), then the pids handed out during the scan, and so on until none
    /// was, for a process that forked and exited while the scan ran: its child is among them.
    /// `before` is the counters read just before. Says whether it came to rest (always when
    /// the counters cannot be read); when not, an empty result proves nothing.
    fn scan_settled(
        &mut self,
        wanted: &HashSet<u64>,
        others: &HashSet<u32>,
        range: Option<Range>,
        before: Option<Counters>,
    ) -> (HashMap<u64, Vec<Tagged>>, bool) {
        self.memo.refresh(before);
        self.unsure = false;
        let (found, settled) = self.scan_settled_looks(wanted, others, range, before);
        (found, settled && !self.unsure)
    }

    /// The scan and its looks of [`scan_settled`](Self::scan_settled), which adds the memo's
    /// refresh and whether a live process's tag could not be read.
    fn scan_settled_looks(
        &mut self,
        wanted: &HashSet<u64>,
        others: &HashSet<u32>,
        range: Option<Range>,
        before: Option<Counters>,
    ) -> (HashMap<u64, Vec<Tagged>>, bool) {
        let mut found = self.scan(wanted, others, range, range, true);
        let Some(mut last) = before.map(|before| before.last_pid) else {
            return (found, true);
        };
        for _ in 0..SETTLE_LOOKS {
            let Some(now) = Counters::read_last_pid() else {
                return (found, true);
            };
            if now.last_pid == last {
                return (found, true);
            }
            let pid_max = u64::from(now.pid_max.max(1));
            let first = (u64::from(last) + 1) % pid_max;
            let len = (u64::from(now.last_pid) + pid_max - first) % pid_max + 1;
            let since = Range {
                first: u32::try_from(first).unwrap_or(0),
                last: now.last_pid,
                len,
                pid_max: now.pid_max,
            };
            // Their parents may be anywhere from the first pid of `range` on.
            let domain = range.map(|range| Range {
                first: range.first,
                last: now.last_pid,
                len: range.len + since.len,
                pid_max: now.pid_max,
            });
            for (tag, processes) in self.scan(wanted, others, Some(since), domain, false) {
                found.entry(tag).or_default().extend(processes);
            }
            last = now.last_pid;
        }
        (found, false)
    }

    /// Every live process carrying one of the `wanted` tags, by tag, looking only at the pids
    /// in `look` when there is one.
    ///
    /// With a `domain` (the pids handed out since the commands started), only the processes
    /// that can descend from a command have their environment read: reading another
    /// process's environment waits for its memory map lock, which a busy compiler or linker
    /// can hold for milliseconds. A command's process was started by bash or by another of its
    /// processes, so its parent is bash, a process of the domain that can descend from a
    /// command in turn, or, once its parent died, the process that adopted it: init or a
    /// subreaper, which is this process or one of its ancestors. Its parent is read from
    /// `/proc/<pid>/stat`, which takes no such lock. A process that descends from the bash of
    /// a command in `others` (running, not being stopped) carries that command's tag, and is
    /// passed over too.
    fn scan(
        &mut self,
        wanted: &HashSet<u64>,
        others: &HashSet<u32>,
        look: Option<Range>,
        domain: Option<Range>,
        main: bool,
    ) -> HashMap<u64, Vec<Tagged>> {
        let mut found: HashMap<u64, Vec<Tagged>> = HashMap::new();
        let me = std::process::id();
        let mut lineage = domain.map(|domain| Lineage::new(domain, others));
        let pids = candidates(look);
        for &pid in &pids {
            if pid == me {
                continue;
            }
            // The looks that follow a round's main scan are at pids handed out since the memo
            // was refreshed, which may name new processes: looked at afresh.
            let remembered = if main { self.memo.get(pid) } else { None };
            let tag = match remembered {
                Some(Known::Tag(tag)) => tag,
                Some(Known::Untagged | Known::Dead) => continue,
                Some(Known::Other(leader)) if others.contains(&leader) => continue,
                Some(Known::Other(_)) | None => {
                    match lineage
                        .as_mut()
                        .map_or(Descent::Read, |lineage| lineage.descent(pid))
                    {
                        Descent::No => continue,
                        Descent::Dead => {
                            self.memo.put(pid, Known::Dead);
                            continue;
                        }
                        Descent::Other(leader) => {
                            self.memo.put(pid, Known::Other(leader));
                            continue;
                        }
                        Descent::Read => match self.tag_of(pid) {
                            Environ::Tag(tag) => {
                                self.memo.put(pid, Known::Tag(tag));
                                tag
                            }
                            Environ::Untagged => {
                                // A child of this process may be a command between `vfork`
                                // and `exec`, showing this process's environment for now.
                                if parent_of(pid).is_some_and(|(parent, _)| parent != me) {
                                    self.memo.put(pid, Known::Untagged);
                                }
                                continue;
                            }
                            Environ::Empty => {
                                // Alive, and not a kernel thread (whose parent is kthreadd,
                                // pid 2): in the middle of `exec`.
                                if pid != 2
                                    && parent_of(pid)
                                        .is_some_and(|(parent, zombie)| !zombie && parent != 2)
                                {
                                    self.unsure = true;
                                }
                                continue;
                            }
                            Environ::Unreadable => continue,
                        },
                    }
                }
            };
            if !wanted.contains(&tag) {
                continue;
            }
            let Some(raw) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
                continue;
            };
            // Hold the process by a pidfd, then make sure it is alive (not a zombie) and that
            // the pid still names it: while the memo is kept no pid is reused; otherwise read
            // the tag again.
            let pidfd = open_pidfd(raw);
            let alive = if self.memo.since.is_some() {
                parent_of(pid).is_some_and(|(_, zombie)| !zombie)
            } else {
                pidfd.is_none() || matches!(self.tag_of(pid), Environ::Tag(again) if again == tag)
            };
            if !alive {
                continue;
            }
            found.entry(tag).or_default().push(Tagged {
                pid: raw.as_raw_nonzero().get(),
                raw,
                pidfd,
            });
        }
        if main {
            // What is not among the candidates is gone, or older than every command waiting.
            let listed: HashSet<u32> = pids.into_iter().collect();
            self.memo.known.retain(|pid, _| listed.contains(pid));
        }
        found
    }

    /// What process `pid`'s environment says of its tag.
    ///
    /// A process whose main thread exited has no memory map of its own to read: its other
    /// threads' are read instead.
    fn tag_of(&mut self, pid: u32) -> Environ {
        let whole = self.read_environ(&format!("/proc/{pid}/environ"));
        match whole {
            Environ::Unreadable | Environ::Empty => other_threads(pid)
                .into_iter()
                .map(|tid| self.read_environ(&format!("/proc/{pid}/task/{tid}/environ")))
                .find(|read| matches!(read, Environ::Tag(_) | Environ::Untagged))
                .unwrap_or(whole),
            read => read,
        }
    }

    /// What the environment file `path` says.
    fn read_environ(&mut self, path: &str) -> Environ {
        self.environ.clear();
        let read = File::open(path).and_then(|mut file| file.read_to_end(&mut self.environ));
        if read.is_err() {
            return Environ::Unreadable;
        }
        if self.environ.is_empty() {
            return Environ::Empty;
        }
        let prefix = self.prefix.as_slice();
        self.environ
            .split(|&byte| byte == 0)
            .find_map(|entry| entry.strip_prefix(prefix))
            .and_then(|value| std::str::from_utf8(value).ok()?.parse().ok())
            .map_or(Environ::Untagged, Environ::Tag)
    }
}

/// Which processes of a domain can descend from a command, by their parents (see
/// [`Reader::scan`]).
struct Lineage<'a> {
    domain: Range,
    /// This process's id.
    me: u32,
    /// The bash of every running command that is not being stopped.
    others: &'a HashSet<u32>,
    /// This process, its ancestors and init: who adopts an orphan.
    adopters: &'static HashSet<u32>,
    /// What is known of each pid looked at.
    known: HashMap<u32, Descent>,
}

/// What a process's parents say of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Descent {
    /// It can descend from a command being stopped, or it was adopted: read its environment.
    Read,
    /// It descends from this bash, of a command that is not being stopped, and carries that
    /// command's tag.
    Other(u32),
    /// It cannot carry a tag wanted: started outside the commands.
    No,
    /// It is gone, or a zombie.
    Dead,
}

impl<'a> Lineage<'a> {
    fn new(domain: Range, others: &'a HashSet<u32>) -> Self {
        // Found once: when this process's parent dies, the one that adopts it is one of its
        // former ancestors, so the set stays whole.
        static ADOPTERS: OnceLock<HashSet<u32>> = OnceLock::new();
        let adopters = ADOPTERS.get_or_init(|| {
            let mut adopters = HashSet::from([1]);
            let mut pid = std::process::id();
            while adopters.insert(pid) {
                match parent_of(pid) {
                    Some((parent, _)) if parent > 0 => pid = parent,
                    _ => break,
                }
            }
            adopters
        });
        Lineage {
            domain,
            me: std::process::id(),
            others,
            adopters,
            known: HashMap::new(),
        }
    }

    fn descent(&mut self, pid: u32) -> Descent {
        // Up the parents while the answer is unknown; then the answer for the whole path.
        let mut path = Vec::new();
        let mut current = pid;
        let answer = loop {
            if let Some(&known) = self.known.get(&current) {
                break known;
            }
            path.push(current);
            match parent_of(current) {
                // The process itself is gone or a zombie: not alive.
                None | Some((_, true)) if current == pid => break Descent::Dead,
                // An ancestor died while being looked at, and its children have been adopted
                // since: look at the environment.
                None | Some((_, true)) => break Descent::Read,
                Some((parent, false)) => {
                    if parent == self.me && self.others.contains(&current) {
                        // The bash of a command that is not being stopped, or one of its
                        // descendants: they carry its tag.
                        break Descent::Other(current);
                    }
                    if self.adopters.contains(&parent) {
                        break Descent::Read;
                    }
                    if !self.domain.contains(parent) || path.len() > 4096 || path.contains(&parent)
                    {
                        break Descent::No;
                    }
                    current = parent;
                }
            }
        };
        // A dead process says nothing of the others on its path (it was the first).
        if answer != Descent::Dead {
            for pid in path {
                self.known.insert(pid, answer);
            }
        }
        answer
    }
}

/// The parent of process `pid` and whether it is a zombie, from `/proc/<pid>/stat`.
///
/// A process whose main thread exited while other threads run shows as a zombie; it is
/// alive, and counted so.
fn parent_of(pid: u32) -> Option<(u32, bool)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`; comm may itself hold spaces and parentheses.
    let (_, fields) = stat.rsplit_once(')')?;
    let mut fields = fields.split_ascii_whitespace();
    let zombie = matches!(fields.next()?, "Z" | "X") && other_threads(pid).is_empty();
    let parent = fields.next()?.parse().ok()?;
    Some((parent, zombie))
}

/// The threads of process `pid` but its main one.
fn other_threads(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| task.file_name().to_str()?.parse().ok())
        .filter(|&tid| tid != pid)
        .collect()
}

/// The pids to look at: those of a small `range` one by one, or those `/proc` lists (within
/// `range`, when there is one).
fn candidates(range: Option<Range>) -> Vec<u32> {
    if let Some(range) = range
        && range.len <= PROBE_MAX
    {
        return range.pids().collect();
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| range.is_none_or(|range| range.contains(pid)))
        .collect()
}

/// A live process carrying a tag.
struct Tagged {
    pid: i32,
    raw: Pid,
    /// `None` where pidfds are not available (Linux before 5.3).
    pidfd: Option<OwnedFd>,
}

impl Tagged {
    fn signal(&self, signal: Signal) {
        let result = match &self.pidfd {
            Some(pidfd) => send_through_pidfd(pidfd, signal),
            None => kill_process(self.raw, signal),
        };
        if let Err(error) = result
            && error != Errno::SRCH
        {
            tracing::debug!(%error, pid = self.pid, "signalling a command's process failed");
        }
    }
}

#[cfg(target_os = "linux")]
fn open_pidfd(pid: Pid) -> Option<OwnedFd> {
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
}

#[cfg(not(target_os = "linux"))]
fn open_pidfd(_pid: Pid) -> Option<OwnedFd> {
    None
}

#[cfg(target_os = "linux")]
fn send_through_pidfd(pidfd: &OwnedFd, signal: Signal) -> rustix::io::Result<()> {
    rustix::process::pidfd_send_signal(pidfd, signal)
}

#[cfg(not(target_os = "linux"))]
fn send_through_pidfd(_pidfd: &OwnedFd, _signal: Signal) -> rustix::io::Result<()> {
    Err(Errno::NOSYS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(forks: u64, tasks: u64, last_pid: u32) -> Counters {
        Counters {
            forks,
            tasks,
            last_pid,
            pid_max: 32768,
        }
    }

    #[test]
    fn a_range_goes_round_at_pid_max() {
        let plain = Range {
            first: 100,
            last: 200,
            len: 101,
            pid_max: 32768,
        };
        assert_eq!(plain.pids().count(), 101);
        assert!(plain.contains(100) && plain.contains(200) && plain.contains(150));
        assert!(!plain.contains(99) && !plain.contains(201));
        let wrapped = Range {
            first: 32000,
            last: 400,
            len: 768 + 401,
            pid_max: 32768,
        };
        let pids: Vec<u32> = wrapped.pids().collect();
        assert_eq!(
            (pids[0], pids[767], pids[768], pids[pids.len() - 1]),
            (32000, 32767, 0, 400)
        );
        assert!(wrapped.contains(32000) && wrapped.contains(32767) && wrapped.contains(300));
        assert!(!wrapped.contains(401) && !wrapped.contains(31999));
    }

    #[test]
    fn a_window_holds_until_the_counter_could_have_come_round() {
        let window = Window::new(1000, counters(50_000, 500, 999));
        assert!(window.holds(&counters(50_010, 520, 1010)));
        // 2 × 16 000 new tasks + 500 alive reach 32 768 − 300.
        assert!(!window.holds(&counters(66_000, 500, 900)));
        assert!(window.holds(&counters(65_000, 500, 900)));
    }

    #[test]
    fn reach_counts_round_the_wrap() {
        let window = Window::new(32_000, counters(0, 0, 31_999));
        assert_eq!(window.reach(&counters(5, 0, 32_005)), 5);
        assert_eq!(window.reach(&counters(900, 0, 400)), 400 + 768);
    }

    #[test]
    fn the_counters_are_readable_here() {
        let now = Counters::read().expect("/proc/stat and /proc/loadavg");
        assert!(
            now.forks > 0 && now.tasks > 0 && now.pid_max > 300,
            "{now:?}"
        );
        let later = Counters::read_last_pid().expect("/proc/loadavg");
        assert!(
            later.last_pid > 0 && later.pid_max == now.pid_max,
            "{later:?}"
        );
    }
}

#[cfg(all(test, target_os = "linux"))]
mod lineage_tests {
    use std::io::Write;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use super::*;

    /// The pid of the live child of `parent` running `sleep`, waiting for it to start.
    fn sleeping_child(parent: u32) -> u32 {
        let start = Instant::now();
        loop {
            let output = Command::new("pgrep")
                .args(["-P", &parent.to_string(), "sleep"])
                .output()
                .expect("pgrep runs");
            if let Some(pid) = String::from_utf8_lossy(&output.stdout)
                .split_whitespace()
                .next()
                .and_then(|pid| pid.parse().ok())
            {
                return pid;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "no sleep under {parent}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn only_processes_that_can_descend_from_a_command_are_read() {
        // Started before the domain, not an ancestor of this process: what it starts later is
        // in the domain but cannot descend from a command.
        let mut outsider = Command::new("/bin/bash")
            .args(["-c", "read -r _; sleep 30; :"])
            .stdin(Stdio::piped())
            .spawn()
            .expect("bash runs");
        let first = Counters::read().expect("counters").last_pid + 1;
        let mut inside = Command::new("/bin/bash")
            .args(["-c", "sleep 30; :"])
            .spawn()
            .expect("bash runs");
        outsider
            .stdin
            .take()
            .expect("stdin")
            .write_all(b"go\n")
            .expect("written");
        let (outsider_sleep, inside_sleep) =
            (sleeping_child(outsider.id()), sleeping_child(inside.id()));
        let now = Counters::read().expect("counters");
        let domain = Range {
            first,
            last: now.last_pid,
            len: if now.last_pid >= first {
                u64::from(now.last_pid - first) + 1
            } else {
                u64::from(now.last_pid) + u64::from(now.pid_max) - u64::from(first) + 1
            },
            pid_max: now.pid_max,
        };
        let others = HashSet::new();
        let mut lineage = Lineage::new(domain, &others);
        let verdicts = (
            lineage.descent(inside.id()),
            lineage.descent(inside_sleep),
            lineage.descent(outsider_sleep),
        );
        // While `inside` is the bash of a command that is not being stopped, what descends
        // from it carries that command's tag and is passed over.
        let others = HashSet::from([inside.id()]);
        let mut lineage = Lineage::new(domain, &others);
        let passed_over = (lineage.descent(inside.id()), lineage.descent(inside_sleep));
        for child in [&mut outsider, &mut inside] {
            let _ = child.kill();
            let _ = child.wait();
        }
        for pid in [outsider_sleep, inside_sleep] {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
        assert_eq!(verdicts, (Descent::Read, Descent::Read, Descent::No));
        let other = Descent::Other(inside.id());
        assert_eq!(passed_over, (other, other));
    }
}

#[cfg(all(test, target_os = "linux"))]
mod scan_tests {
    use std::process::Command;
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn a_tagged_process_is_found_with_and_without_a_window() {
        let id = 1 << 40; // far from the ids graders of this test binary use
        let before = Counters::read().expect("counters");
        let mut tagged = Command::new("/bin/sleep")
            .arg("30")
            .env(tag_name(), id.to_string())
            .spawn()
            .expect("sleep runs");
        let pid = tagged.id();
        let wanted = HashSet::from([id]);
        let window = Window::new(pid, before);
        let start = Instant::now();
        // Until sleep has been exec'd (before that the environment is this process's).
        let (everywhere, windowed) = loop {
            let everywhere = Reader::new().scan(&wanted, &HashSet::new(), None, None, false);
            let now = Counters::read().expect("counters");
            let range = Range {
                first: pid,
                last: now.last_pid,
                len: window.reach(&now) + 1,
                pid_max: now.pid_max,
            };
            let windowed =
                Reader::new().scan(&wanted, &HashSet::new(), Some(range), Some(range), false);
            if everywhere.contains_key(&id) || start.elapsed() > Duration::from_secs(10) {
                break (everywhere, windowed);
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let _ = tagged.kill();
        let _ = tagged.wait();
        let pids = |found: &HashMap<u64, Vec<Tagged>>| -> Vec<i32> {
            found.get(&id).map_or_else(Vec::new, |processes| {
                processes.iter().map(|process| process.pid).collect()
            })
        };
        let expected = vec![i32::try_from(pid).expect("a pid")];
        assert_eq!(pids(&everywhere), expected);
        assert_eq!(pids(&windowed), expected);
        // Once reaped, nothing is found.
        assert!(
            Reader::new()
                .scan(&wanted, &HashSet::new(), None, None, false)
                .is_empty()
        );
    }

    #[test]
    fn a_process_seen_tagged_is_still_found_after_it_drops_the_tag() {
        let id = (1 << 40) + 1;
        // Tagged at first; then it runs `sleep` with an empty environment.
        let mut child = Command::new("/bin/bash")
            .args(["-c", "read -r _; exec env -i /bin/sleep 30"])
            .env(tag_name(), id.to_string())
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("bash runs");
        let pid = child.id();
        let wanted = HashSet::from([id]);
        let mut memo_reader = Reader::new();
        let start = Instant::now();
        let seen_tagged = loop {
            let (found, _) =
                memo_reader.scan_settled(&wanted, &HashSet::new(), None, Counters::read());
            if found.contains_key(&id) || start.elapsed() > Duration::from_secs(10) {
                break found.contains_key(&id);
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().expect("stdin");
            stdin.write_all(b"go\n").expect("written");
        }
        // Until `sleep` runs with its empty environment.
        let start = Instant::now();
        while std::fs::read(format!("/proc/{pid}/environ")).map_or(true, |env| !env.is_empty())
            || std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .map_or(true, |comm| comm.trim() != "sleep")
        {
            assert!(start.elapsed() < Duration::from_secs(10), "sleep never ran");
            std::thread::sleep(Duration::from_millis(10));
        }
        let (remembered, _) =
            memo_reader.scan_settled(&wanted, &HashSet::new(), None, Counters::read());
        let (fresh, _) =
            Reader::new().scan_settled(&wanted, &HashSet::new(), None, Counters::read());
        let _ = child.kill();
        let _ = child.wait();
        assert!(seen_tagged, "the tagged bash was never found");
        assert!(
            remembered.contains_key(&id),
            "the memo forgot a process it had seen tagged"
        );
        assert!(
            !fresh.contains_key(&id),
            "a fresh look should not see the tag in an empty environment"
        );
    }

    #[test]
    fn the_memo_starts_over_once_pids_may_have_been_reused() {
        let counters = |forks: u64| Counters {
            forks,
            tasks: 500,
            last_pid: 1000,
            pid_max: 32768,
        };
        let mut memo = Memo::default();
        memo.refresh(Some(counters(10_000)));
        memo.put(1234, Known::Tag(7));
        memo.refresh(Some(counters(10_100)));
        assert_eq!(memo.get(1234), Some(Known::Tag(7)));
        // 2 × 16 200 new tasks + 500 alive reach 32 768 − 300: the counter may have come round.
        memo.refresh(Some(counters(26_200)));
        assert_eq!(memo.get(1234), None);
        // Pids the counter passed since the last refresh are forgotten: one just ahead of it
        // (a process older than the memo) may now name a new process; one behind it stays.
        memo.put(1500, Known::Untagged);
        memo.put(900, Known::Untagged);
        memo.refresh(Some(Counters {
            last_pid: 2000,
            ..counters(26_300)
        }));
        assert_eq!(memo.get(1500), None);
        assert_eq!(memo.get(900), Some(Known::Untagged));
        // Round `pid_max` too.
        memo.put(32_000, Known::Untagged);
        memo.put(100, Known::Untagged);
        memo.put(1800, Known::Untagged);
        memo.refresh(Some(Counters {
            last_pid: 31_900,
            ..counters(26_400)
        }));
        memo.refresh(Some(Counters {
            last_pid: 200,
            ..counters(26_500)
        }));
        assert_eq!(
            (memo.get(32_000), memo.get(100), memo.get(1800)),
            (None, None, Some(Known::Untagged))
        );
        // No counters: nothing is kept.
        memo.refresh(None);
        memo.put(1234, Known::Tag(7));
        assert_eq!(memo.get(1234), None);
    }
}
