//! The one place the library uses `unsafe`: the hook that runs in the command's process
//! between `fork` and `exec`, putting it in its cgroups, setting its rlimits, closing every
//! descriptor it would otherwise inherit and dropping root to the sandbox's host user, so that
//! nothing the command starts ever runs outside its limits (a join or a `prlimit` after the
//! start would race with the command's first fork) and nothing of the host crosses into it.
//!
//! Between `fork` and `exec` of a multi-threaded process only async-signal-safe calls are
//! allowed: the hook makes raw system calls (`write` on descriptors opened before the fork,
//! `setrlimit`, `close_range`, `fcntl`, `setgroups`, `setresgid`, `setresuid`), allocates
//! nothing, takes no lock and does not panic. The identity calls are the raw per-thread ones,
//! which is right in the child: it has one thread.
#![allow(unsafe_code)]

use std::os::fd::OwnedFd;

use rustix::io::FdFlags;
use rustix::process::{Gid, Resource, Rlimit, Uid};

use super::user::HostUser;

/// `CLOSE_RANGE_CLOEXEC` of `<linux/close_range.h>`: mark the range close-on-exec rather than
/// close it (Linux 5.11).
#[cfg(target_os = "linux")]
const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;

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
pub(crate) struct Descriptors {
    pub(crate) keep: Vec<OwnedFd>,
    /// Where `close_range` cannot mark a range (before Linux 5.11), the descriptors below this
    /// bound are marked one by one: the highest open in this process when the hook was made,
    /// or the soft open-file limit, whichever is larger.
    one_by_one: Option<i32>,
}

impl Descriptors {
    /// Closes everything inherited but `keep`.
    pub(crate) fn keeping(keep: Vec<OwnedFd>) -> Descriptors {
        Descriptors {
            keep,
            one_by_one: (!kernel_marks_ranges()).then(fallback_bound),
        }
    }
}

/// Whether `close_range` takes `CLOSE_RANGE_CLOEXEC` here (Linux 5.11), asked once with a
/// range no descriptor is in.
fn kernel_marks_ranges() -> bool {
    static ANSWER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ANSWER.get_or_init(|| mark_range_from(u32::MAX - 1))
}

/// The bound of the one-by-one fallback: see [`Descriptors::one_by_one`].
fn fallback_bound() -> i32 {
    let highest = std::fs::read_dir("/proc/self/fd")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .max()
        .unwrap_or(0);
    let soft = rustix::process::getrlimit(Resource::Nofile)
        .current
        .unwrap_or(1 << 16)
        .min(1 << 20);
    highest
        .saturating_add(1)
        .max(i32::try_from(soft).unwrap_or(i32::MAX))
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

    /// Installs the hook on `command`: in the child, before `exec`, it writes `0` (the writing
    /// process) to each `cgroup.procs`, sets each rlimit, marks every inherited descriptor
    /// close-on-exec but those kept, and becomes the host user (supplementary groups cleared,
    /// then the gid, then the uid: real, effective and saved). A failure of any step fails the
    /// start with that error, so a command never runs with less than it was given.
    pub(crate) fn install(self, command: &mut tokio::process::Command) {
        if self.is_empty() {
            return;
        }
        let hook = self.into_fn();
        // SAFETY: the hook only makes async-signal-safe system calls on values prepared before
        // the fork (see `into_fn`).
        unsafe {
            command.pre_exec(hook);
        }
    }

    /// As [`install`](Self::install), on a standard library command.
    pub(crate) fn install_std(self, command: &mut std::process::Command) {
        if self.is_empty() {
            return;
        }
        let hook = self.into_fn();
        // SAFETY: as in `install`.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(command, hook);
        }
    }

    /// The closure run between `fork` and `exec`. It allocates nothing, takes no lock and
    /// cannot panic: the loops index nothing, the `?` conversions of an errno allocate nothing,
    /// and every call is a raw system call.
    fn into_fn(self) -> impl FnMut() -> std::io::Result<()> + Send + Sync + 'static {
        let Hook {
            procs,
            rlimits,
            descriptors,
            user,
        } = self;
        move || -> std::io::Result<()> {
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
            if let Some(descriptors) = &descriptors {
                close_inherited(descriptors)?;
            }
            if let Some(user) = user {
                rustix::thread::set_thread_groups(&[])?;
                let gid = Gid::from_raw(user.gid());
                rustix::thread::set_thread_res_gid(gid, gid, gid)?;
                let uid = Uid::from_raw(user.uid());
                rustix::thread::set_thread_res_uid(uid, uid, uid)?;
            }
            Ok(())
        }
    }
}

/// Marks every descriptor from 3 up close-on-exec, then clears the mark on those kept.
fn close_inherited(descriptors: &Descriptors) -> std::io::Result<()> {
    let bound = match descriptors.one_by_one {
        None if mark_range_from(3) => None,
        None => Some(fallback_bound_in_child()),
        Some(bound) => Some(bound),
    };
    if let Some(bound) = bound {
        for fd in 3..bound {
            // SAFETY: a descriptor number is only read by `fcntl`, which fails harmlessly
            // (`EBADF`) on one that is not open.
            let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
            let _ = rustix::io::fcntl_setfd(fd, FdFlags::CLOEXEC);
        }
    }
    for fd in &descriptors.keep {
        rustix::io::fcntl_setfd(fd, FdFlags::empty())?;
    }
    Ok(())
}

/// A bound for the one-by-one marking when `close_range` failed where it had worked before
/// (it does not): every descriptor a process can have, at most a million.
fn fallback_bound_in_child() -> i32 {
    1 << 20
}

/// `close_range(first, ~0, CLOSE_RANGE_CLOEXEC)`: whether the kernel did it (Linux 5.11).
#[cfg(target_os = "linux")]
fn mark_range_from(first: u32) -> bool {
    // SAFETY: a raw system call with integer arguments; it touches no memory of this process.
    let done = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            libc::c_uint::from(first),
            libc::c_uint::MAX,
            CLOSE_RANGE_CLOEXEC,
        )
    };
    done == 0
}

#[cfg(not(target_os = "linux"))]
fn mark_range_from(_first: u32) -> bool {
    false
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
                one_by_one: Some(fallback_bound()),
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
