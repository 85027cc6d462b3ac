//! The one place the library uses `unsafe`: the hook that runs in the command's process
//! between `fork` and `exec`, putting it in its cgroups and setting its rlimits, so that
//! nothing the command starts ever runs outside them (a join or a `prlimit` after the start
//! would race with the command's first fork).
//!
//! Between `fork` and `exec` of a multi-threaded process only async-signal-safe calls are
//! allowed: the hook makes raw system calls through rustix (`write` on descriptors opened
//! before the fork, `setrlimit`), allocates nothing, takes no lock and does not panic.
#![allow(unsafe_code)]

use std::os::fd::OwnedFd;

use rustix::process::{Resource, Rlimit};

/// What the hook applies: the cgroups' `cgroup.procs` files, opened for writing (close on
/// exec), and the rlimits to set, soft and hard.
pub(crate) struct Hook {
    pub(crate) procs: Vec<OwnedFd>,
    pub(crate) rlimits: Vec<(Resource, u64, u64)>,
}

impl Hook {
    /// Whether the hook has nothing to do (then it is not installed, and the command starts
    /// as it would without limits).
    pub(crate) fn is_empty(&self) -> bool {
        self.procs.is_empty() && self.rlimits.is_empty()
    }

    /// Installs the hook on `command`: in the child, before `exec`, it writes `0` (the writing
    /// process) to each `cgroup.procs` and sets each rlimit. A failure of either fails the
    /// start with that error, so a command never runs with less than it was given.
    pub(crate) fn install(self, command: &mut tokio::process::Command) {
        if self.is_empty() {
            return;
        }
        let Hook { procs, rlimits } = self;
        let hook = move || -> std::io::Result<()> {
            for fd in &procs {
                rustix::io::write(fd, b"0")?;
            }
            for &(resource, soft, hard) in &rlimits {
                rustix::process::setrlimit(
                    resource,
                    Rlimit {
                        current: Some(soft),
                        maximum: Some(hard),
                    },
                )?;
            }
            Ok(())
        };
        // SAFETY: the hook only makes async-signal-safe system calls (`write`, `setrlimit`) on
        // values prepared before the fork; it allocates nothing, takes no lock and cannot
        // panic (the loops index nothing and the `?` conversions of an errno allocate nothing).
        unsafe {
            command.pre_exec(hook);
        }
    }
}
