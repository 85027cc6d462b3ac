//! Finding the live processes that carry a tag: the [`Reader`] of environments, its [`Memo`]
//! from round to round, the pids to look at, and [`nothing_left`], the quick look a grader
//! takes on its own thread.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;

use rustix::io::Errno;
use rustix::process::{Pid, Signal, kill_process, test_kill_process_group};

use super::lineage::{Descent, Lineage, other_threads, parent_of};
use super::pids::{Counters, Range, Window};
use super::tag::{leader, other_leaders, tag_name};

/// How many times [`Reader::scan_settled`] looks at newly handed-out pids before giving up
/// until the next round.
const SETTLE_LOOKS: usize = 8;

/// How many pids a range may hold for them to be tried one by one rather than listed from
/// `/proc`.
const PROBE_MAX: u64 = 256;

/// Whether nothing of tag `tag` and of `group` is alive, when that can be told at once by
/// reading a few files on the calling thread: the group is empty and few pids were handed out
/// since the command started. `false` means it could not be told; ask the sweeper.
pub(in crate::bash) fn nothing_left(tag: u64, group: Option<Pid>, window: Option<Window>) -> bool {
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
pub(super) struct Reader {
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
    pub(super) fn new() -> Self {
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
    pub(super) fn scan_settled(
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
pub(super) struct Tagged {
    pub(super) pid: i32,
    raw: Pid,
    /// `None` where pidfds are not available (Linux before 5.3).
    pidfd: Option<OwnedFd>,
}

impl Tagged {
    pub(super) fn signal(&self, signal: Signal) {
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
