//! What runs in a sandbox helper's process between `fork` and `exec` (bwrap for the holder,
//! `nsenter` for a session): it joins the workspace's cgroups, sets the sessions' rlimits and
//! leaves no descriptor but its three streams (and the one it is told to keep) open past
//! `exec`, so that nothing the agent runs escapes the workspace's limits or inherits a
//! descriptor of the serving process (a directory, a socket, a pipe) that a library or the
//! process's own parent left inheritable.
//!
//! Between `fork` and `exec` of a multi-threaded process only async-signal-safe calls are
//! allowed: the hook makes raw system calls (`write` on descriptors opened before the fork,
//! `setrlimit`, `dup2`, `close_range` or `fcntl`), allocates nothing, takes no lock and does
//! not panic. This module (the hook, and marking the serving process's own descriptors) and
//! `egress::netns` are the places grader-env uses `unsafe`.
#![allow(unsafe_code)]

use std::os::fd::{AsRawFd as _, OwnedFd, RawFd};

use rustix::process::{Resource, Rlimit};

/// The descriptor a kept descriptor is moved to in the child: the first after the streams.
pub(crate) const KEPT_FD: RawFd = 3;

/// What the hook applies.
#[derive(Default)]
pub(crate) struct Hook {
    /// `cgroup.procs` files to join, opened for writing (close on exec).
    pub(crate) procs: Vec<OwnedFd>,
    /// rlimits to set, soft and hard.
    pub(crate) rlimits: Vec<(Resource, u64, u64)>,
    /// A descriptor the program is given as [`KEPT_FD`] (bwrap's `--bind-fd 3`).
    pub(crate) keep: Option<OwnedFd>,
}

impl Hook {
    /// Installs the hook on `command`. A failure to join a cgroup or to set a limit fails the
    /// start with that error, so that nothing runs with less than it was given.
    pub(crate) fn install(self, command: &mut tokio::process::Command) {
        let Hook {
            procs,
            rlimits,
            keep,
        } = self;
        let limit = open_file_limit();
        // SAFETY: the hook only makes async-signal-safe system calls (`write`, `setrlimit`,
        // `dup2`, `close_range`, `fcntl`) on values prepared before the fork (descriptors it
        // owns, numbers); it allocates nothing, takes no lock and cannot panic (an errno's
        // conversion allocates nothing). `dup2` targets a number the child's streams do not
        // use (0 to 2); marking descriptors close-on-exec closes none that a Rust value of the
        // child relies on, since the child only execs next.
        unsafe {
            command.pre_exec(move || -> std::io::Result<()> {
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
                let mut first = KEPT_FD;
                if let Some(keep) = &keep {
                    if libc::dup2(keep.as_raw_fd(), KEPT_FD) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    first = KEPT_FD + 1;
                }
                let marked = libc::syscall(
                    libc::SYS_close_range,
                    first,
                    u32::MAX,
                    libc::CLOSE_RANGE_CLOEXEC,
                ) == 0;
                if !marked {
                    // No `close_range` (Linux before 5.11): each number below the limit.
                    for fd in first..limit {
                        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                    }
                }
                Ok(())
            });
        }
    }
}

/// The open-file limit, as the highest descriptor number to mark when the kernel has no
/// `close_range` (at most 2^20).
fn open_file_limit() -> RawFd {
    let limit = rustix::process::getrlimit(Resource::Nofile)
        .current
        .unwrap_or(1 << 20)
        .min(1 << 20);
    RawFd::try_from(limit).unwrap_or(1 << 20)
}

/// Marks every descriptor of this process from 3 on close-on-exec, so that a helper started
/// without the hook (a grader's `nsenter`, started by `BashGrader`) inherits none: those the
/// process's parent or a library left inheritable included. Rust's own descriptors are
/// close-on-exec already; nothing is closed.
pub(crate) fn close_on_exec_all() {
    let limit = open_file_limit();
    // SAFETY: raw system calls on numbers only: `close_range` with `CLOSE_RANGE_CLOEXEC`, or
    // `fcntl(F_SETFD)` on each number (one that is not open fails with EBADF, ignored). They
    // close nothing, and mark descriptors close-on-exec, which no Rust value of this process
    // relies on being otherwise.
    unsafe {
        if libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        ) != 0
        {
            for fd in 3..limit {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;
    use rustix::io::{FdFlags, fcntl_getfd, fcntl_setfd};

    #[test]
    fn an_inheritable_descriptor_becomes_close_on_exec() {
        let file = std::fs::File::open("/").unwrap();
        assert!(file.as_raw_fd() >= 3);
        fcntl_setfd(&file, FdFlags::empty()).unwrap();
        assert!(!fcntl_getfd(&file).unwrap().contains(FdFlags::CLOEXEC));
        close_on_exec_all();
        assert!(fcntl_getfd(&file).unwrap().contains(FdFlags::CLOEXEC));
    }
}
