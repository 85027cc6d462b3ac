//! The sweeper thread: graders' requests to stop a tag, and the rounds that send SIGTERM,
//! then SIGKILL after the grace, to what carries it, answering each grader once nothing of
//! its tag is alive.

use std::collections::HashSet;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::sync::oneshot;

use super::super::per_process::PerProcess;
use super::pids::{Counters, Range, Window};
use super::scan::Reader;
use super::tag::{leader, other_leaders};

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

/// Stops every process of tag `tag` and of process group `group`: SIGTERM (with SIGCONT for a
/// stopped one), SIGKILL to what is left after `grace`. Resolves once no process of the tag is
/// alive (zombies do not count), or [`KILL_SETTLE`] after SIGKILL.
pub(in crate::bash) async fn stop(
    tag: u64,
    group: Option<Pid>,
    window: Option<Window>,
    grace: Duration,
) {
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
pub(in crate::bash) fn kill_now(tag: u64, group: Option<Pid>, window: Option<Window>) {
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
pub(in crate::bash) fn start() -> std::io::Result<()> {
    sender().map(|_| ())
}

fn send(request: Request) -> bool {
    match sender() {
        Ok(tx) => tx.send(request).is_ok(),
        Err(_) => false,
    }
}

/// The sweeper's channel, and its thread the first time (in a child made by `fork`, which has
/// none of its parent's threads, its own).
fn sender() -> std::io::Result<&'static mpsc::Sender<Request>> {
    static SENDER: PerProcess<mpsc::Sender<Request>> = PerProcess::new();
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
