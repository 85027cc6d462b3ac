//! The host's view of a sandbox's processes, read from `/proc`: parents, children, whether one
//! lives, and how to end bwrap with what it started.

use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};

/// The parent of `pid` while it lives with no SIGKILL pending (read from `/proc`).
pub(crate) fn living(pid: i32) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let mut parent = None;
    for line in status.lines() {
        let (key, value) = line.split_once(':')?;
        let value = value.trim();
        match key {
            "State" if value.starts_with(['Z', 'X']) => return None,
            "PPid" => parent = value.parse().ok(),
            "SigPnd" | "ShdPnd" => {
                let pending = u64::from_str_radix(value, 16).ok()?;
                if pending & (1 << (Signal::KILL.as_raw() - 1)) != 0 {
                    return None;
                }
            }
            _ => {}
        }
    }
    parent
}

/// The parent of `pid` (from `/proc/PID/stat`).
pub(crate) fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
    let (_, after) = stat.rsplit_once(')')?;
    after.split_whitespace().nth(1)?.parse().ok()
}

/// The children of `parent`, read from `/proc`.
pub(crate) fn children_of(parent: i32) -> Vec<Pid> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| parent_of(*pid) == Some(parent))
        .filter_map(Pid::from_raw)
        .collect()
}

/// The child of `parent`, read from `/proc`.
pub(crate) fn child_of(parent: i32) -> Option<Pid> {
    children_of(parent).into_iter().next()
}

/// Kills bwrap's process `pid` and what it started: stopped first (so that it cannot start
/// another process meanwhile), its children killed (an init takes its PID namespace with it),
/// then itself.
pub(crate) fn kill_tree(pid: i32) {
    let Some(target) = Pid::from_raw(pid) else {
        return;
    };
    let _ = kill_process(target, Signal::STOP);
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(200) {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let stopped = state
            .rsplit_once(')')
            .and_then(|(_, after)| after.split_whitespace().next())
            .is_none_or(|state| matches!(state, "T" | "t" | "Z" | "X"));
        if stopped {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    for child in children_of(pid) {
        let _ = kill_process(child, Signal::KILL);
    }
    let _ = kill_process(target, Signal::KILL);
}
