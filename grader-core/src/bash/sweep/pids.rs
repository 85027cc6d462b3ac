//! Which pids a command's processes can have: the kernel's counters read just before it
//! started ([`Counters`]), the [`Window`] of pids handed out since, and a [`Range`] of pids.

use std::sync::OnceLock;

/// What the kernel's counters said just before a command started: enough to tell, later,
/// which pids its processes can have.
#[derive(Clone, Copy, Debug)]
pub(in crate::bash) struct Counters {
    /// Processes and threads created since boot (`processes` in `/proc/stat`).
    pub(super) forks: u64,
    /// Processes and threads alive (from `/proc/loadavg`).
    pub(super) tasks: u64,
    /// The last pid handed out in this pid namespace (from `/proc/loadavg`).
    pub(super) last_pid: u32,
    /// The largest pid plus one (`/proc/sys/kernel/pid_max`).
    pub(super) pid_max: u32,
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
    pub(super) fn read_last_pid() -> Option<Counters> {
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
    pub(in crate::bash) fn read() -> Option<Counters> {
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
pub(in crate::bash) struct Window {
    pub(super) first: u32,
    pub(super) before: Counters,
}

impl Window {
    /// The window of a command whose first process is `first`, with `before` read just before
    /// it started.
    pub(in crate::bash) fn new(first: u32, before: Counters) -> Window {
        Window { first, before }
    }

    /// The window of a command whose first pid is not known: every pid handed out after the
    /// counters `before` were read.
    pub(in crate::bash) fn after(before: Counters) -> Window {
        let next = (u64::from(before.last_pid) + 1) % u64::from(before.pid_max.max(1));
        Window {
            first: u32::try_from(next).unwrap_or(0),
            before,
        }
    }

    /// Whether the window still tells, with `now` the counters now.
    pub(super) fn holds(&self, now: &Counters) -> bool {
        let created = now.forks.saturating_sub(self.before.forks);
        let span = u64::from(self.before.pid_max.min(now.pid_max)).saturating_sub(RESERVED_PIDS);
        created.saturating_mul(2).saturating_add(self.before.tasks) < span
    }

    /// How far `last` is past the window's first pid, going round at `pid_max`.
    pub(super) fn reach(&self, now: &Counters) -> u64 {
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
pub(super) struct Range {
    pub(super) first: u32,
    pub(super) last: u32,
    /// How many pids that is.
    pub(super) len: u64,
    pub(super) pid_max: u32,
}

impl Range {
    pub(super) fn pids(self) -> impl Iterator<Item = u32> {
        (0..self.len).filter_map(move |offset| {
            let pid = (u64::from(self.first) + offset) % u64::from(self.pid_max.max(1));
            u32::try_from(pid).ok()
        })
    }

    pub(super) fn contains(self, pid: u32) -> bool {
        if self.first <= self.last {
            self.first <= pid && pid <= self.last
        } else {
            pid >= self.first || pid <= self.last
        }
    }
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
