//! The one place the library uses `unsafe`: the hook that runs in the command's process
//! between `fork` and `exec`, putting it in its cgroups, closing every descriptor it would
//! otherwise inherit, setting its rlimits and dropping root to the sandbox's host user, so
//! that nothing the command starts ever runs outside its limits (a join or a `prlimit` after
//! the start would race with the command's first fork) and nothing of the host crosses into
//! it.
//!
//! Between `fork` and `exec` of a multi-threaded process only async-signal-safe calls are
//! allowed: the hook makes raw system calls (`write` on descriptors opened before the fork,
//! `close_range`, `fcntl`, `getrlimit`, `setrlimit`, `setgroups`, `setresgid`, `setresuid`),
//! allocates nothing, takes no lock and does not panic. The identity calls are the raw
//! per-thread ones, which is right in the child: it has one thread.
#![allow(unsafe_code)]

use std::os::fd::{BorrowedFd, OwnedFd};

use rustix::io::FdFlags;
use rustix::process::{Gid, Resource, Rlimit, Uid};

use super::user::HostUser;

/// `CLOSE_RANGE_CLOEXEC` of `<linux/close_range.h>`: mark the range close-on-exec rather than
/// close it (Linux 5.11).
#[cfg(target_os = "linux")]
const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;

/// The most descriptors marked one by one where `close_range` cannot mark them.
const ONE_BY_ONE_MAX: u64 = 1 << 20;

/// What the hook applies: the cgroups' `cgroup.procs` files, opened for writing (close on
/// exec), the rlimits to set, soft and hard, which inherited descriptors cross `exec`, and the
/// host user to become.
pub(crate) struct Hook {
    pub(crate) procs: Vec<OwnedFd>,
    pub(crate) rlimits: Vec<(Resource, u64, u64)>,
    pub(crate) descriptors: Option<Descriptors>,
    pub(crate) user: Option<HostUser>,
}

/// Every descriptor but 0, 1 and 2 is closed at `exec`, except `keep` (open across it at the
/// same numbers, for the program to use: bwrap's `--bind-fd`).
///
/// The kernel marks them all at once (`close_range` with `CLOSE_RANGE_CLOEXEC`, Linux 5.11);
/// where it cannot, each descriptor below the open-file limit the process has when the hook
/// runs (at most a million) is marked one by one.
pub(crate) struct Descriptors {
    pub(crate) keep: Vec<OwnedFd>,
    /// Marks one by one even where the kernel could do it at once (to test that way).
    one_by_one: bool,
}

impl Descriptors {
    /// Closes everything inherited but `keep`.
    pub(crate) fn keeping(keep: Vec<OwnedFd>) -> Descriptors {
        Descriptors {
            keep,
            one_by_one: false,
        }
    }
}

impl Hook {
    /// A hook that does nothing.
    pub(crate) fn empty() -> Hook {
        Hook {
            procs: Vec::new(),
            rlimits: Vec::new(),
            descriptors: None,
            user: None,
        }
    }

    /// Whether the hook has nothing to do (then it is not installed, and the command starts
    /// as it would without limits).
    pub(crate) fn is_empty(&self) -> bool {
        self.procs.is_empty()
            && self.rlimits.is_empty()
            && self.descriptors.is_none()
            && self.user.is_none()
    }

    /// Installs the hook on `command`, as [`install_std`](Self::install_std).
    pub(crate) fn install(self, command: &mut tokio::process::Command) {
        self.install_std(command.as_std_mut());
    }

    /// Installs the hook on `command`: in the child, before `exec`, it writes `0` (the writing
    /// process) to each `cgroup.procs`, marks every inherited descriptor close-on-exec but
    /// those kept, sets each rlimit, and becomes the host user (supplementary groups cleared,
    /// then the gid, then the uid: real, effective and saved). A failure of any step fails the
    /// start with that error, so a command never runs with less than it was given.
    pub(crate) fn install_std(self, command: &mut std::process::Command) {
        if self.is_empty() {
            return;
        }
        let Hook {
            procs,
            rlimits,
            descriptors,
            user,
        } = self;
        // SAFETY: the closure runs in the child between `fork` and `exec`, where only
        // async-signal-safe calls are allowed, and it makes nothing but raw system calls on
        // values prepared before the fork: it allocates nothing, takes no lock and cannot
        // panic (the loops index nothing; the `?` conversions of an errno allocate nothing).
        // `close_range` takes integers and touches no memory of the process; a descriptor
        // number borrowed for `fcntl` is only read by the kernel, which fails harmlessly
        // (`EBADF`) on one that is not open.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(command, move || {
                for fd in &procs {
                    rustix::io::write(fd, b"0")?;
                }
                if let Some(descriptors) = &descriptors {
                    #[cfg(target_os = "linux")]
                    let marked = !descriptors.one_by_one
                        && libc::syscall(
                            libc::SYS_close_range,
                            3 as libc::c_uint,
                            libc::c_uint::MAX,
                            CLOSE_RANGE_CLOEXEC,
                        ) == 0;
                    #[cfg(not(target_os = "linux"))]
                    let marked = false;
                    if !marked {
                        let limit = rustix::process::getrlimit(Resource::Nofile)
                            .current
                            .map_or(ONE_BY_ONE_MAX, |limit| limit.min(ONE_BY_ONE_MAX));
                        let limit = i32::try_from(limit).unwrap_or(i32::MAX);
                        for fd in 3..limit {
                            let fd = BorrowedFd::borrow_raw(fd);
                            let _ = rustix::io::fcntl_setfd(fd, FdFlags::CLOEXEC);
                        }
                    }
                    for fd in &descriptors.keep {
                        rustix::io::fcntl_setfd(fd, FdFlags::empty())?;
                    }
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
                if let Some(user) = user {
                    rustix::thread::set_thread_groups(&[])?;
                    let gid = Gid::from_raw(user.gid());
                    rustix::thread::set_thread_res_gid(gid, gid, gid)?;
                    let uid = Uid::from_raw(user.uid());
                    rustix::thread::set_thread_res_uid(uid, uid, uid)?;
                }
                Ok(())
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-by-one marking, as on kernels without `close_range`'s flag: a stray inheritable
    /// descriptor does not reach the child, a kept one does, at its number.
    #[test]
    fn descriptors_are_marked_one_by_one_where_the_kernel_cannot() {
        let open = |path: &str, flags| {
            rustix::fs::open(
                path,
                rustix::fs::OFlags::RDONLY | flags,
                rustix::fs::Mode::empty(),
            )
            .expect("open")
        };
        let stray = open("/usr", rustix::fs::OFlags::empty());
        let kept = open("/etc", rustix::fs::OFlags::CLOEXEC);
        let kept_n = std::os::fd::AsRawFd::as_raw_fd(&kept);
        let mut ls = std::process::Command::new("ls");
        ls.args(["-l", "/proc/self/fd"]);
        Hook {
            descriptors: Some(Descriptors {
                keep: vec![kept],
                one_by_one: true,
            }),
            ..Hook::empty()
        }
        .install_std(&mut ls);
        let listed = String::from_utf8(ls.output().expect("ls").stdout).expect("utf-8");
        assert!(listed.contains(&format!(" {kept_n} -> /etc")), "{listed}");
        assert!(!listed.contains("-> /usr"), "{listed}");
        drop(stray);
    }
}
