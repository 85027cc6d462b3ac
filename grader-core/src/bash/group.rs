//! The command's process group: signalling it, telling when it is empty, and the guard that
//! kills it when the grading future is dropped.

use std::time::Duration;

use rustix::io::Errno;
use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};
use tokio::process::Child;

/// How long [`GroupGuard`]'s `Drop` waits for bash to die after SIGKILL before leaving it to
/// tokio's reaper.
const DROP_REAP_WAIT: Duration = Duration::from_millis(200);

/// Owns the running command: bash, which leads its own process group. Until
/// [`disarm`](Self::disarm)ed, dropping the guard sends SIGKILL to the whole group and reaps
/// bash, so a dropped grading future leaves nothing running and no zombie child.
pub(super) struct GroupGuard {
    pub(super) child: Child,
    pgid: Option<Pid>,
    armed: bool,
}

impl GroupGuard {
    /// Guards `child`, spawned as the leader of a new process group.
    pub(super) fn new(child: Child) -> Self {
        // A child that was spawned and not yet waited for always has an id.
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(Pid::from_raw);
        GroupGuard {
            child,
            pgid,
            armed: true,
        }
    }

    /// Sends `signal` to every process of the group. Returns `false` when the group is empty.
    pub(super) fn signal(&self, signal: Signal) -> bool {
        let Some(pgid) = self.pgid else { return false };
        match kill_process_group(pgid, signal) {
            Ok(()) => true,
            Err(Errno::SRCH) => false,
            Err(error) => {
                tracing::debug!(%error, pgid = pgid.as_raw_nonzero().get(), "signalling the command's process group failed");
                true
            }
        }
    }

    /// Whether any process of the group is still alive. A zombie is not alive: it runs
    /// nothing, and once bash has exited its children belong to init, whose job reaping is.
    pub(super) fn group_alive(&self) -> bool {
        let Some(pgid) = self.pgid else { return false };
        match test_kill_process_group(pgid) {
            Err(Errno::SRCH) => false,
            Ok(()) | Err(_) => has_live_member(pgid),
        }
    }

    /// The group has been stopped: dropping the guard no longer signals it.
    pub(super) fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        self.signal(Signal::KILL);
        // SIGKILL cannot be caught, so bash ends within moments; reap it here rather than
        // leave a zombie to a runtime that may be shutting down.
        let waited = std::time::Instant::now();
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => return,
                Ok(None) if waited.elapsed() >= DROP_REAP_WAIT => break,
                Ok(None) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
        // Still not dead (stuck in the kernel): tokio reaps a dropped child in the background.
        tracing::debug!("the command did not die within {DROP_REAP_WAIT:?} of SIGKILL");
    }
}

/// Whether a process that is not a zombie belongs to group `pgid`. Where `/proc` cannot tell,
/// the group is assumed alive.
#[cfg(target_os = "linux")]
fn has_live_member(pgid: Pid) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    let pgid = pgid.as_raw_nonzero().get();
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            return false;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false; // gone since the listing
        };
        // `pid (comm) state ppid pgrp …`; comm may itself contain spaces and parentheses.
        let Some((_, fields)) = stat.rsplit_once(')') else {
            return false;
        };
        let mut fields = fields.split_ascii_whitespace();
        let state = fields.next();
        let group = fields.nth(1).and_then(|g| g.parse::<i32>().ok());
        group == Some(pgid) && !matches!(state, Some("Z" | "X"))
    })
}

#[cfg(not(target_os = "linux"))]
fn has_live_member(_pgid: Pid) -> bool {
    true
}

/// Whether this process ignores a signal that a command expects at its default disposition.
/// An ignored disposition is inherited through `exec`, and bash cannot undo it (`nohup`
/// ignores SIGHUP; a background job of a non-interactive shell ignores SIGINT and SIGQUIT).
/// Left out: SIGPIPE, which the standard library restores in every child, and signals 32 and
/// 33, which glibc reserves for itself (its `posix_spawn` leaves them ignored in every child,
/// and no program can change them).
#[cfg(target_os = "linux")]
pub(super) fn inherits_ignored_signals() -> bool {
    let status = std::fs::read_to_string("/proc/self/status");
    status.is_ok_and(|status| has_resettable_ignored(&status))
}

/// Whether a `/proc/<pid>/status` text shows an ignored signal that
/// [`inherits_ignored_signals`] cares about.
#[cfg(target_os = "linux")]
fn has_resettable_ignored(status: &str) -> bool {
    const LEFT_OUT: u64 = 1 << (13 - 1) | 1 << (32 - 1) | 1 << (33 - 1);
    status
        .lines()
        .find_map(|line| line.strip_prefix("SigIgn:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & !LEFT_OUT != 0)
}

#[cfg(not(target_os = "linux"))]
pub(super) fn inherits_ignored_signals() -> bool {
    false
}

/// Whether `/usr/bin/env --default-signal` works here (GNU coreutils 8.31 or later). Asked
/// once per process, and only when a signal needs resetting.
pub(super) fn env_resets_signals() -> bool {
    static ANSWER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ANSWER.get_or_init(|| {
        std::process::Command::new(super::ENV)
            .args(["--default-signal", "true"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::has_resettable_ignored;

    #[test]
    fn only_signals_a_command_could_miss_count() {
        let status = |mask: &str| format!("Name:\tx\nSigIgn:\t{mask}\nSigCgt:\t0\n");
        assert!(!has_resettable_ignored(&status("0000000000000000")));
        // SIGPIPE, and glibc's signals 32 and 33.
        assert!(!has_resettable_ignored(&status("0000000180001000")));
        // SIGHUP (nohup); SIGINT and SIGQUIT (a script's background job); a real-time signal.
        assert!(has_resettable_ignored(&status("0000000000000001")));
        assert!(has_resettable_ignored(&status("0000000000000006")));
        assert!(has_resettable_ignored(&status("0000000200000000")));
    }
}
