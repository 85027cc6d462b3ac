//! [`HostUser`]: who a sandbox's processes are on the host when the grading process runs as
//! root, and [`HostUser::hand_over`], which gives it the directories it may write.
//!
//! bwrap started by root maps root inside to root outside: the agent's code then reads every
//! root-only file the sandbox shows (`/etc/shadow` under the read-only `/etc`), and what it
//! writes is owned by host root. So a process running as root drops to an unprivileged host
//! user before it starts bwrap; bwrap, unprivileged, makes root inside that user's uid
//! outside. The directories the command may write are handed to that user first.

use std::io;
use std::ops::ControlFlow;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::process::{Gid, Uid};

use super::tree;

/// The host uid (and gid) a sandbox's root is mapped to when the grading process runs as root,
/// unless [`Sandbox::host_user`](super::Sandbox::host_user) says otherwise: 2 100 000 000.
///
/// Chosen outside the ranges that distributions hand out: system and regular accounts (below
/// 65 536), the ranges of `/etc/subuid` that container tools use by default (from 100 000),
/// SSSD's default ID mapping of directory users (200 000 to 2 000 200 000), systemd's
/// containers (524 288 to 1 879 048 191) and its foreign range (from 2 147 352 576), and
/// below 2³¹, which some tools read as a signed number.
pub const DEFAULT_HOST_UID: u32 = 2_100_000_000;

/// The unprivileged host user that a sandbox's processes run as when the grading process runs
/// as root: root inside the sandbox is this uid outside, so host files only root may read stay
/// unreadable, and what the command writes is this user's, not root's.
///
/// Give it a uid of its own, one that no account, service or other sandbox of the host uses:
/// a process of the same uid outside the sandbox could trace or signal the sandbox's processes,
/// and read what they write. [`HostUser::default`] is [`DEFAULT_HOST_UID`] for both the uid and
/// the gid. A grading process that does not run as root keeps its own uid (bwrap,
/// unprivileged, maps it to itself inside): there is nothing to drop.
///
/// ```
/// use grader_core::sandbox::HostUser;
///
/// let user = HostUser::new(2_100_000_017, 2_100_000_017)?;
/// assert_eq!((user.uid(), user.gid()), (2_100_000_017, 2_100_000_017));
/// assert!(HostUser::new(0, 0).is_err(), "root is what the sandbox drops");
/// # Ok::<(), grader_core::sandbox::SandboxError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HostUser {
    uid: u32,
    gid: u32,
}

impl Default for HostUser {
    /// [`DEFAULT_HOST_UID`] as the uid and the gid.
    fn default() -> Self {
        HostUser {
            uid: DEFAULT_HOST_UID,
            gid: DEFAULT_HOST_UID,
        }
    }
}

/// What went wrong preparing a sandbox's host side.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// A host user that is root (uid or gid 0), or `-1` (`u32::MAX`, which the kernel reads as
    /// "no change").
    #[error("uid {uid} and gid {gid} cannot be a sandbox's host user: it must be unprivileged")]
    PrivilegedUser {
        /// The uid given.
        uid: u32,
        /// The gid given.
        gid: u32,
    },
    /// A directory that is never handed to a sandbox's user: `/`, the host's system and home
    /// directories, or a directory holding this process's `HOME`.
    #[error(
        "{} is not handed to the sandbox's user (uid {uid}): {why}; give the command a \
         directory of its own",
        path.display()
    )]
    Protected {
        /// The directory.
        path: PathBuf,
        /// The user it was to be handed to.
        uid: u32,
        /// Why it is protected.
        why: &'static str,
    },
    /// The host user's uid or gid has no place in the user namespace this process runs in
    /// (a container whose root is an unprivileged user of its host maps a range of ids only):
    /// this process cannot become it.
    #[error(
        "uid {uid} and gid {gid} cannot be a sandbox's host user here: this process's user \
         namespace maps only {uids} (/proc/self/uid_map) and {gids} (/proc/self/gid_map); \
         choose one it maps with `Sandbox::host_user`"
    )]
    NotMapped {
        /// The uid given.
        uid: u32,
        /// The gid given.
        gid: u32,
        /// The uids this process's user namespace maps, as ranges.
        uids: String,
        /// The gids it maps.
        gids: String,
    },
    /// A directory the sandbox's user cannot reach: one of the directories above it may not
    /// be searched by that user, so bwrap, running as it, cannot bind the directory.
    #[error(
        "{} cannot be reached by the sandbox's user (uid {uid}): {} above it may not be \
         searched by that user (mode {mode:o}); give the command a directory under one that \
         others may search, or make {} searchable (`chmod o+x`)",
        path.display(),
        above.display(),
        above.display()
    )]
    Unreachable {
        /// The directory.
        path: PathBuf,
        /// The directory above it that the user may not search.
        above: PathBuf,
        /// Its permission bits.
        mode: u32,
        /// The user.
        uid: u32,
    },
    /// A directory could not be handed over.
    #[error("cannot hand {} to the sandbox's user (uid {uid}): {source}", path.display())]
    HandOver {
        /// The directory.
        path: PathBuf,
        /// The user it was to be handed to.
        uid: u32,
        /// What failed.
        source: io::Error,
    },
}

/// Directories that are never handed over whole (each still may hold one that is).
const PROTECTED: [&str; 24] = [
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media",
    "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var",
    "/var/tmp", "/dev/shm",
];

/// Whether a `uid_map` or `gid_map` text maps `id` (an unreadable map, outside Linux, is
/// taken to map everything).
fn maps(map: &str, id: u32) -> bool {
    if map.trim().is_empty() {
        return true;
    }
    map.lines().any(|line| {
        let fields: Vec<u64> = line
            .split_whitespace()
            .filter_map(|n| n.parse().ok())
            .collect();
        matches!(fields.as_slice(), [inside, _, count] if (*inside..inside + count).contains(&u64::from(id)))
    })
}

/// The ranges a `uid_map` or `gid_map` text maps, as `first-last` separated by commas.
fn ranges(map: &str) -> String {
    let shown: Vec<String> = map
        .lines()
        .filter_map(|line| {
            let fields: Vec<u64> = line
                .split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect();
            match fields.as_slice() {
                [inside, _, count] if *count > 0 => {
                    Some(format!("{inside}-{}", inside + count - 1))
                }
                _ => None,
            }
        })
        .collect();
    shown.join(",")
}

/// The device and inode of each of [`PROTECTED`] that exists, found once.
fn protected() -> &'static [(u64, u64)] {
    static FOUND: std::sync::OnceLock<Vec<(u64, u64)>> = std::sync::OnceLock::new();
    FOUND.get_or_init(|| {
        PROTECTED
            .iter()
            .filter_map(|path| rustix::fs::stat(*path).ok())
            .map(|stat| (stat.st_dev, stat.st_ino))
            .collect()
    })
}

/// What [`HostUser::hand_over`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HandedOver {
    /// Entries whose owner was changed (the directory itself included).
    pub changed: u64,
    /// Entries that were the user's already.
    pub already: u64,
    /// Entries left as they were: symbolic links (whose owner grants nothing), files with
    /// more than one link (a hard link may be a file outside the directory), and what is
    /// neither a file nor a directory.
    pub kept: u64,
    /// Directories not entered: on another filesystem (a mount point), deeper than the walk
    /// goes, or past the most entries it looks at (a million).
    pub not_entered: u64,
}

impl HostUser {
    /// The host user with `uid` and `gid`.
    ///
    /// # Errors
    /// [`SandboxError::PrivilegedUser`] for uid or gid 0 (root, what the sandbox drops) and for
    /// `u32::MAX`.
    pub fn new(uid: u32, gid: u32) -> Result<HostUser, SandboxError> {
        if uid == 0 || gid == 0 || uid == u32::MAX || gid == u32::MAX {
            return Err(SandboxError::PrivilegedUser { uid, gid });
        }
        Ok(HostUser { uid, gid })
    }

    /// The host uid.
    #[must_use]
    pub fn uid(&self) -> u32 {
        self.uid
    }

    /// The host gid.
    #[must_use]
    pub fn gid(&self) -> u32 {
        self.gid
    }

    /// Fails unless this process's user namespace maps the uid and the gid, so that it can
    /// become them (always, outside a container whose root is mapped to a range of ids).
    ///
    /// # Errors
    /// [`SandboxError::NotMapped`] with the ranges that are mapped.
    pub fn check_mapped(&self) -> Result<(), SandboxError> {
        let read = |file| std::fs::read_to_string(file).unwrap_or_default();
        let (uids, gids) = (read("/proc/self/uid_map"), read("/proc/self/gid_map"));
        if maps(&uids, self.uid) && maps(&gids, self.gid) {
            return Ok(());
        }
        Err(SandboxError::NotMapped {
            uid: self.uid,
            gid: self.gid,
            uids: ranges(&uids),
            gids: ranges(&gids),
        })
    }

    /// Whether this process drops to a host user before starting a sandbox: whether it runs
    /// as root (effective uid 0).
    #[must_use]
    pub fn applies() -> bool {
        rustix::process::geteuid().is_root()
    }

    /// Gives `dir` and everything beneath it to this user (owner and group), so that a
    /// sandbox running as it can write there; needs root. Safe against a tree the agent
    /// wrote:
    ///
    /// - `dir` is reached following only symbolic links owned by root, so a link the agent
    ///   planted on the way cannot make it hand over another directory;
    /// - beneath it, no link is followed and no other filesystem entered (a mount point is
    ///   left as it is); a link is left as it is, and so is a file with more than one hard
    ///   link (one could be a host file outside the directory);
    /// - each entry is changed through a descriptor of what was inspected, so swapping an
    ///   entry meanwhile changes nothing else;
    /// - the walk keeps nothing on the stack per level and stops after a million entries.
    ///
    /// `/`, the host's system directories (`/usr`, `/etc`, `/var`, …), `/home`, `/root`,
    /// `/tmp` and any directory holding this process's `HOME` are refused whole.
    ///
    /// Returns the descriptor of the directory handed over (for bwrap's `--bind-fd`, which
    /// then binds exactly it) and what was done.
    ///
    /// # Errors
    /// [`SandboxError::Protected`] for a refused directory, [`SandboxError::Unreachable`] for one
    /// below a directory this user may not search, [`SandboxError::HandOver`] when
    /// the directory cannot be reached or an owner cannot be changed.
    pub fn hand_over(
        &self,
        dir: &Path,
    ) -> Result<(std::os::fd::OwnedFd, HandedOver), SandboxError> {
        let failed = |source: io::Error| SandboxError::HandOver {
            path: dir.to_owned(),
            uid: self.uid,
            source,
        };
        let root = tree::open_trusted(dir, |link| link.st_uid == 0).map_err(failed)?;
        self.check_not_protected(dir, root.as_fd())?;
        self.check_reachable(dir, root.as_fd())?;
        let mut done = HandedOver::default();
        let top = tree::meta(root.as_fd(), c"").map_err(failed)?;
        self.give(root.as_fd(), &top, &mut done).map_err(failed)?;
        let walked = tree::walk(root.as_fd(), |entry| {
            let meta = entry.meta;
            if meta.uid == self.uid && meta.gid == self.gid && meta.kind != FileType::Symlink {
                done.already += 1;
                return Ok(ControlFlow::Continue(()));
            }
            // A mount point shows the root of what is mounted there: not the directory's.
            if meta.mount != top.mount
                || !matches!(meta.kind, FileType::Directory | FileType::RegularFile)
            {
                done.kept += 1;
                return Ok(ControlFlow::Continue(()));
            }
            // Through a descriptor of the entry itself, never its name again: what is changed
            // is what was inspected.
            let Ok(fd) = rustix::fs::openat(
                entry.dir,
                entry.name,
                OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) else {
                return Ok(ControlFlow::Continue(()));
            };
            let opened = tree::meta(fd.as_fd(), c"")?;
            // On the directory's own mount (a mount made meanwhile is not).
            if opened.mount != top.mount {
                done.kept += 1;
                return Ok(ControlFlow::Continue(()));
            }
            self.give(fd.as_fd(), &opened, &mut done)?;
            Ok(ControlFlow::Continue(()))
        })
        .map_err(failed)?;
        done.not_entered = walked.left_out;
        Ok((root, done))
    }

    /// Changes the owner of the entry open as `fd` (with its `meta`) to this user, unless it
    /// is a file with other links or neither a file nor a directory.
    fn give(&self, fd: BorrowedFd<'_>, meta: &tree::Meta, done: &mut HandedOver) -> io::Result<()> {
        let shared = meta.kind == FileType::RegularFile && meta.links > 1;
        if shared || !matches!(meta.kind, FileType::Directory | FileType::RegularFile) {
            done.kept += 1;
            return Ok(());
        }
        if meta.uid == self.uid && meta.gid == self.gid {
            done.already += 1;
            return Ok(());
        }
        rustix::fs::chownat(
            fd,
            c"",
            Some(Uid::from_raw(self.uid)),
            Some(Gid::from_raw(self.gid)),
            AtFlags::EMPTY_PATH,
        )?;
        done.changed += 1;
        Ok(())
    }

    /// Refuses `/`, the system directories, and what holds this process's `HOME`, compared
    /// by the directory actually reached (device and inode), so a second name for one of them
    /// is refused too.
    /// Checks that this user may search every directory above the one `root` opens (as bwrap,
    /// running as this user, walks the path of what it binds), before anything is changed.
    fn check_reachable(&self, dir: &Path, root: BorrowedFd<'_>) -> Result<(), SandboxError> {
        use std::os::fd::AsRawFd as _;
        // The path the kernel reached, whatever links led there.
        let Ok(reached) = std::fs::read_link(format!("/proc/self/fd/{}", root.as_raw_fd())) else {
            return Ok(());
        };
        let mut above = reached.as_path();
        while let Some(parent) = above.parent() {
            above = parent;
            let Ok(meta) = rustix::fs::stat(above) else {
                continue;
            };
            let mode = meta.st_mode & 0o7777;
            let searchable = if meta.st_uid == self.uid {
                mode & 0o100 != 0
            } else if meta.st_gid == self.gid {
                mode & 0o010 != 0
            } else {
                mode & 0o001 != 0
            };
            if !searchable {
                return Err(SandboxError::Unreachable {
                    path: dir.to_owned(),
                    above: above.to_owned(),
                    mode,
                    uid: self.uid,
                });
            }
        }
        Ok(())
    }

    fn check_not_protected(&self, dir: &Path, root: BorrowedFd<'_>) -> Result<(), SandboxError> {
        let reached = rustix::fs::fstat(root).map_err(|e| SandboxError::HandOver {
            path: dir.to_owned(),
            uid: self.uid,
            source: e.into(),
        })?;
        let same = |path: &Path| {
            rustix::fs::stat(path)
                .is_ok_and(|s| s.st_dev == reached.st_dev && s.st_ino == reached.st_ino)
        };
        let refuse = |why| {
            Err(SandboxError::Protected {
                path: dir.to_owned(),
                uid: self.uid,
                why,
            })
        };
        if protected().contains(&(reached.st_dev, reached.st_ino)) {
            return refuse("it is the root or a system directory of the host");
        }
        if let Some(home) = std::env::var_os("HOME") {
            let mut home = PathBuf::from(home);
            loop {
                if same(&home) {
                    return refuse("it holds this process's HOME");
                }
                if !home.pop() {
                    break;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guard works on the directory reached, before anything is changed: `/`, `/tmp`,
    /// `/usr` and `/etc` by any name are refused.
    #[test]
    fn system_directories_are_never_handed_over() {
        let user = HostUser::default();
        for path in ["/", "/tmp", "/usr", "/etc", "/usr/../etc", "/var/tmp"] {
            let fd = tree::open_trusted(Path::new(path), |_| true).expect("open");
            let refused = user.check_not_protected(Path::new(path), fd.as_fd());
            assert!(
                matches!(refused, Err(SandboxError::Protected { .. })),
                "{path}: {refused:?}"
            );
        }
        let scratch = std::env::temp_dir().join(format!("grader-user-{}", std::process::id()));
        std::fs::create_dir_all(&scratch).expect("scratch");
        let fd = tree::open_trusted(&scratch, |_| true).expect("open");
        assert!(user.check_not_protected(&scratch, fd.as_fd()).is_ok());
        std::fs::remove_dir_all(&scratch).expect("clean");
    }

    #[test]
    fn ids_are_mapped_or_the_ranges_are_named() {
        let container = "         0     100000      65536\n";
        assert!(maps(container, 1000));
        assert!(!maps(container, DEFAULT_HOST_UID));
        assert!(maps("         0          0 4294967295\n", DEFAULT_HOST_UID));
        assert_eq!(ranges(container), "0-65535");
        let message = SandboxError::NotMapped {
            uid: DEFAULT_HOST_UID,
            gid: DEFAULT_HOST_UID,
            uids: ranges(container),
            gids: ranges(container),
        }
        .to_string();
        assert!(message.contains("maps only 0-65535"), "{message}");
    }

    #[test]
    fn root_is_no_host_user() {
        assert!(HostUser::new(0, 5).is_err());
        assert!(HostUser::new(5, 0).is_err());
        assert!(HostUser::new(u32::MAX, 5).is_err());
        let message = HostUser::new(0, 0).expect_err("root").to_string();
        assert!(message.contains("uid 0"), "{message}");
    }
}
