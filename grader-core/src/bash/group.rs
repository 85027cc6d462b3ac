//! The running command: the guard that kills everything it started when the grading future
//! is dropped, and what a command inherits from this process.

use std::time::Duration;

use rustix::process::Pid;
use tokio::process::Child;

use super::sweep::{self, Window, leader};

/// The shell every command runs in, as `/bin/bash -lc COMMAND`.
pub(super) const BASH: &str = "/bin/bash";

/// Used as `env --default-signal /bin/bash …` when this process ignores signals.
pub(super) const ENV: &str = "/usr/bin/env";

/// How long [`CommandGuard`]'s `Drop` waits for bash to die after SIGKILL before leaving it to
/// tokio's reaper.
const DROP_REAP_WAIT: Duration = Duration::from_millis(200);

/// Owns the running command: bash, which leads its own process group, and the tag its
/// processes carry. Until [`disarm`](Self::disarm)ed, dropping the guard sends SIGKILL to the
/// whole group and to every tagged process, and reaps bash, so a dropped grading future leaves
/// nothing running and no zombie child.
pub(super) struct CommandGuard {
    pub(super) child: Child,
    pub(super) group: Option<Pid>,
    /// The pids the command's processes can have.
    pub(super) window: Option<Window>,
    pub(super) tag: u64,
    armed: bool,
}

impl CommandGuard {
    /// Guards `child`, spawned as the leader of a new process group with tag `tag`.
    pub(super) fn new(child: Child, tag: u64, before: Option<sweep::Counters>) -> Self {
        // A child that was spawned and not yet waited for always has an id.
        let group = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(Pid::from_raw);
        let window = group
            .zip(before)
            .and_then(|(pid, before)| Some(Window::new(pid.as_raw_pid().try_into().ok()?, before)));
        if let Some(leader) = leader(group) {
            sweep::add_leader(leader);
        }
        CommandGuard {
            child,
            group,
            window,
            tag,
            armed: true,
        }
    }

    /// Everything the command started has been stopped: dropping the guard no longer kills.
    pub(super) fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for CommandGuard {
    fn drop(&mut self) {
        if let Some(leader) = leader(self.group) {
            // Its bash is reaped (or, below, killed): its descendants are the sweeper's again.
            sweep::remove_leader(leader);
        }
        if !self.armed {
            return;
        }
        sweep::kill_now(self.tag, self.group, self.window);
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
        std::process::Command::new(ENV)
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
