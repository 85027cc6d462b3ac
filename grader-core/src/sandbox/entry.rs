//! [`Entry`]: how a host process starts a sandbox's outer process (bwrap) so that nothing of
//! the host crosses into the sandbox by inheritance: no descriptor but the standard streams
//! and those named, and, when the host process runs as root, not root either.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use super::hook::{Descriptors, Hook};
use super::user::HostUser;

/// How a sandbox's outer process is started from the host: what it inherits.
///
/// Whatever this process holds open without close-on-exec (a descriptor inherited from its own
/// parent, one a C library opened, a listening socket) would otherwise reach the sandbox's
/// processes: one descriptor on `/` is the whole host filesystem, past every mount the sandbox
/// makes. Applied to a [`Command`](std::process::Command), an `Entry` makes the child, between
/// `fork` and `exec`:
///
/// - mark every descriptor but 0, 1 and 2 close-on-exec (`close_range`, Linux 5.11; on older
///   kernels, each descriptor up to the highest this process has open or its open-file limit,
///   whichever is larger), except the ones [kept](Self::keep), which stay open at the same
///   numbers for the program to use (bwrap's `--bind-fd`, `--sync-fd`);
/// - where this process runs as root and a [`HostUser`] is given, drop to it: supplementary
///   groups cleared, then the gid, then the uid (real, effective and saved), so bwrap starts
///   unprivileged and maps root inside the sandbox to that user outside.
///
/// [`BashGrader`](crate::BashGrader)'s sandbox starts bwrap this way; an environment's
/// workspace can start its own sandbox the same way.
///
/// ```
/// use std::process::Command;
/// use grader_core::sandbox::{Entry, HostUser};
///
/// let mut ls = Command::new("ls");
/// ls.arg("/proc/self/fd");
/// Entry::new().user(HostUser::default()).apply(&mut ls);
/// let listed = String::from_utf8(ls.output()?.stdout)?;
/// // Its standard streams and the descriptor `ls` opened to read the directory: nothing else.
/// assert!(listed.lines().count() <= 4, "{listed}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct Entry {
    user: Option<HostUser>,
    keep: Vec<OwnedFd>,
}

impl Entry {
    /// Closes every inherited descriptor but 0, 1 and 2; keeps this process's user.
    #[must_use]
    pub fn new() -> Self {
        Entry::default()
    }

    /// Where this process runs as root, the child becomes `user` before `exec`. Elsewhere it
    /// keeps this process's user (which is not root, so there is nothing to drop).
    #[must_use]
    pub fn user(mut self, user: HostUser) -> Self {
        self.user = Some(user);
        self
    }

    /// Keeps `fd` open across `exec`, at its number, which [`keep`](Self::keep) returns for the
    /// program's arguments. The descriptor is closed in this process once the command it was
    /// applied to is dropped.
    pub fn keep(&mut self, fd: OwnedFd) -> RawFd {
        let number = fd.as_raw_fd();
        self.keep.push(fd);
        number
    }

    /// Whether the child will drop to a host user: a user was given and this process runs as
    /// root.
    #[must_use]
    pub fn drops_root(&self) -> bool {
        self.user.is_some() && HostUser::applies()
    }

    /// Installs what the child does before `exec` on `command` (one more `pre_exec` hook,
    /// run after those installed before it).
    pub fn apply(self, command: &mut std::process::Command) {
        self.into_hook().install_std(command);
    }

    /// The hook that does it, to install with the command's other work before `exec`.
    pub(crate) fn into_hook(self) -> Hook {
        let user = if HostUser::applies() { self.user } else { None };
        Hook {
            descriptors: Some(Descriptors::keeping(self.keep)),
            user,
            ..Hook::empty()
        }
    }
}
