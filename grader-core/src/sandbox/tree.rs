//! Walking a directory tree that a command of the agent's may have written, from the grading
//! process: without recursion, without following a symbolic link, without leaving the
//! filesystem the tree starts on, and to a bound (entries looked at, path length), so that no
//! tree the agent builds (10 000 levels deep, a million files, links to `/`) can take the walk
//! out of it, exhaust its stack or its descriptors, or keep it going for long.
//!
//! Each directory is opened on its own, by its path beneath the tree's root, with
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV)` (component by component
//! with `O_NOFOLLOW` on kernels before 5.6), so the walk holds two descriptors whatever the
//! depth.

use std::ffi::{CStr, OsStr, OsString};
use std::io;
use std::ops::ControlFlow;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, ResolveFlags, Stat, StatxFlags};

/// The most entries a walk looks at; the rest of the tree is left out (and counted).
pub(crate) const MAX_ENTRIES: u64 = 1_000_000;

/// The longest path, in bytes, beneath the root that a walk opens (the kernel's `PATH_MAX`
/// less room for the root's own path): deeper directories are left out (and counted).
pub(crate) const MAX_PATH: usize = 3_800;

/// What a walk covered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Walked {
    /// Entries looked at (the root not counted).
    pub(crate) entries: u64,
    /// Directories not entered: on another filesystem, too deep, vanished, or past
    /// [`MAX_ENTRIES`].
    pub(crate) left_out: u64,
}

/// One entry of the tree, as the walk hands it to its visitor: the directory it is in (open),
/// its name there, and what one `statx` of it (not following a link) says.
pub(crate) struct Entry<'a> {
    pub(crate) dir: BorrowedFd<'a>,
    pub(crate) name: &'a CStr,
    pub(crate) meta: &'a Meta,
}

/// What the walk learns of an entry, without following a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Meta {
    pub(crate) kind: FileType,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) links: u64,
    pub(crate) size: u64,
    /// The last modification, since the Unix epoch (zero for a time before it).
    pub(crate) modified: Duration,
    /// The mount it is on (for a mount point, that of what is mounted there).
    pub(crate) mount: Mount,
}

/// The mount an entry is on: its id (`statx`, Linux 5.8), else its device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mount {
    Id(u64),
    Device(u64),
}

/// What `name` in `dir` is (`dir` itself when `name` is empty), without following a link: one
/// `statx` (an `lstat` on kernels before 4.11).
pub(crate) fn meta(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<Meta> {
    let mut flags = AtFlags::SYMLINK_NOFOLLOW;
    if name.is_empty() {
        flags |= AtFlags::EMPTY_PATH;
    }
    match rustix::fs::statx(
        dir,
        name,
        flags,
        StatxFlags::BASIC_STATS | StatxFlags::MNT_ID,
    ) {
        Ok(x) => {
            let mount = if x.stx_mask & StatxFlags::MNT_ID.bits() != 0 {
                Mount::Id(x.stx_mnt_id)
            } else {
                Mount::Device(u64::from(x.stx_dev_major) << 32 | u64::from(x.stx_dev_minor))
            };
            return Ok(Meta {
                kind: FileType::from_raw_mode(x.stx_mode.into()),
                uid: x.stx_uid,
                gid: x.stx_gid,
                links: x.stx_nlink.into(),
                size: x.stx_size,
                modified: since_epoch(x.stx_mtime.tv_sec, x.stx_mtime.tv_nsec),
                mount,
            });
        }
        Err(rustix::io::Errno::NOSYS) => {}
        Err(error) => return Err(error.into()),
    }
    let stat = rustix::fs::statat(dir, name, flags)?;
    Ok(Meta {
        kind: FileType::from_raw_mode(stat.st_mode),
        uid: stat.st_uid,
        gid: stat.st_gid,
        links: stat.st_nlink,
        size: u64::try_from(stat.st_size).unwrap_or(0),
        modified: since_epoch(
            stat.st_mtime,
            u32::try_from(stat.st_mtime_nsec).unwrap_or(0),
        ),
        mount: Mount::Device(stat.st_dev),
    })
}

fn since_epoch(seconds: i64, nanos: u32) -> Duration {
    u64::try_from(seconds).map_or(Duration::ZERO, |seconds| Duration::new(seconds, nanos))
}

#[cfg(test)]
/// Opens `path`, a directory, for a walk (following links in `path` itself as the caller
/// gave it).
///
/// # Errors
/// When it cannot be opened as a directory.
pub(crate) fn open_root(path: &Path) -> io::Result<OwnedFd> {
    rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(io::Error::from)
}

/// Walks the tree beneath `root` (an open directory), handing each entry to `visit`, until it
/// breaks. The root itself is not handed over. An entry that vanishes while the walk runs is
/// skipped.
///
/// # Errors
/// What `visit` returns, or a failure to read the root.
pub(crate) fn walk(
    root: BorrowedFd<'_>,
    mut visit: impl FnMut(&Entry<'_>) -> io::Result<ControlFlow<()>>,
) -> io::Result<Walked> {
    let mount = meta(root, c"")?.mount;
    let mut walked = Walked::default();
    // Paths beneath the root of the directories still to read; the empty path is the root.
    let mut pending: Vec<PathBuf> = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let dir = if relative.as_os_str().is_empty() {
            rustix::fs::openat(
                root,
                c".",
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(io::Error::from)
        } else {
            open_beneath(root, &relative)
        };
        let Ok(dir) = dir else {
            // Gone, replaced by a link, or a mount point: not ours to look into.
            walked.left_out += 1;
            continue;
        };
        let Ok(mut entries) = Dir::new(dir) else {
            walked.left_out += 1;
            continue;
        };
        while let Some(entry) = entries.read() {
            let Ok(entry) = entry else { break };
            // The stream's own descriptor, for calls that do not move its position.
            let handle = entries.fd()?;
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            if walked.entries >= MAX_ENTRIES {
                walked.left_out += 1 + pending.len() as u64;
                return Ok(walked);
            }
            walked.entries += 1;
            let Ok(meta) = meta(handle, name) else {
                continue;
            };
            let entry = Entry {
                dir: handle,
                name,
                meta: &meta,
            };
            if visit(&entry)?.is_break() {
                return Ok(walked);
            }
            if meta.kind == FileType::Directory {
                let path = relative.join(OsStr::from_bytes(name.to_bytes()));
                if meta.mount != mount || path.as_os_str().len() > MAX_PATH {
                    walked.left_out += 1;
                } else {
                    pending.push(path);
                }
            }
        }
    }
    Ok(walked)
}

/// Opens the directory at `relative` beneath `root`, refusing a link at any step, a step out
/// of the root (`..`) and a mount point.
fn open_beneath(root: BorrowedFd<'_>, relative: &Path) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let resolve = ResolveFlags::BENEATH
        | ResolveFlags::NO_SYMLINKS
        | ResolveFlags::NO_MAGICLINKS
        | ResolveFlags::NO_XDEV;
    match rustix::fs::openat2(root, relative, flags, Mode::empty(), resolve) {
        Err(rustix::io::Errno::NOSYS) => {}
        other => return other.map_err(io::Error::from),
    }
    // Before Linux 5.6: one component at a time, none of them a link, on the root's device.
    let device = rustix::fs::fstat(root)?.st_dev;
    let mut dir = rustix::io::dup(root)?;
    for component in relative.components() {
        let Component::Normal(name) = component else {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        };
        dir = rustix::fs::openat(&dir, name, flags, Mode::empty())?;
        if rustix::fs::fstat(&dir)?.st_dev != device {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
    }
    Ok(dir)
}

/// The most links [`open_trusted`] follows (as the kernel's own bound).
const MAX_LINKS: usize = 40;

/// Opens the directory at `path` (absolute, or relative to this process's working directory)
/// following only the symbolic links that `trusted` accepts (given each link's `lstat`), so
/// that a link planted along the way by an untrusted user cannot redirect it. Each step is
/// opened relative to the one before, with `O_NOFOLLOW`, so a component replaced while this
/// runs is seen as what it is then.
///
/// # Errors
/// `PermissionDenied` naming the link when one is not trusted; what opening a step returns.
pub(crate) fn open_trusted(path: &Path, trusted: impl Fn(&Stat) -> bool) -> io::Result<OwnedFd> {
    let path = if path.is_absolute() {
        path.to_owned()
    } else {
        std::env::current_dir()?.join(path)
    };
    let step = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let root = || rustix::fs::open("/", step | OFlags::DIRECTORY, Mode::empty());
    let mut dir = root()?;
    // The components still to resolve, the next one last.
    let mut left: Vec<OsString> = components(&path);
    let mut links = 0;
    // The path resolved so far, for messages.
    let mut shown = PathBuf::from("/");
    while let Some(name) = left.pop() {
        if name == ".." {
            dir = rustix::fs::openat(&dir, c"..", step | OFlags::DIRECTORY, Mode::empty())?;
            shown.pop();
            continue;
        }
        let next = rustix::fs::openat(&dir, name.as_os_str(), step, Mode::empty())?;
        let stat = rustix::fs::fstat(&next)?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::Symlink {
            dir = next;
            shown.push(&name);
            continue;
        }
        let at = shown.join(&name);
        if !trusted(&stat) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} is a symbolic link owned by uid {}, which is not trusted to lead the way",
                    at.display(),
                    stat.st_uid
                ),
            ));
        }
        links += 1;
        if links > MAX_LINKS {
            return Err(io::Error::other(format!(
                "more than {MAX_LINKS} links to follow in {}",
                path.display()
            )));
        }
        let target = rustix::fs::readlinkat(&next, c"", Vec::new())?;
        let target = PathBuf::from(OsString::from_vec(target.into_bytes()));
        if target.is_absolute() {
            dir = root()?;
            shown = PathBuf::from("/");
        }
        left.extend(components(&target));
    }
    // A readable descriptor of the directory reached.
    rustix::fs::openat(
        &dir,
        c".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(io::Error::from)
}

/// The components of `path` that name a step (`..` kept, `.` and the root dropped), the first
/// one last.
fn components(path: &Path) -> Vec<OsString> {
    let mut names: Vec<OsString> = path
        .components()
        .filter_map(|component| match component {
            Component::Normal(name) => Some(name.to_owned()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    names.reverse();
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    fn scratch(what: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "grader-tree-{what}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos())
        ));
        std::fs::create_dir_all(&dir).expect("scratch");
        dir
    }

    fn names(root: &Path) -> (Vec<String>, Walked) {
        let fd = open_root(root).expect("root");
        let mut seen = Vec::new();
        let walked = walk(fd.as_fd(), |entry| {
            seen.push(entry.name.to_string_lossy().into_owned());
            Ok(ControlFlow::Continue(()))
        })
        .expect("walk");
        seen.sort();
        (seen, walked)
    }

    #[test]
    fn a_walk_sees_everything_once_and_follows_no_link() {
        let root = scratch("walk");
        std::fs::create_dir_all(root.join("a/b/c")).expect("dirs");
        std::fs::write(root.join("a/b/c/file"), "x").expect("file");
        std::fs::write(root.join("top"), "x").expect("file");
        std::os::unix::fs::symlink("/usr", root.join("a/to-usr")).expect("link");
        let (seen, walked) = names(&root);
        assert_eq!(seen, ["a", "b", "c", "file", "to-usr", "top"]);
        assert_eq!(walked.entries, 6);
        assert_eq!(walked.left_out, 0);
        std::fs::remove_dir_all(&root).expect("clean");
    }

    /// Deeper than the path bound: no recursion on the stack, two descriptors at a time; what
    /// lies past the bound is left out and counted.
    #[test]
    fn a_tree_deeper_than_the_bound_is_walked_to_it() {
        let root = scratch("deep");
        let fd = open_root(&root).expect("root");
        let mut dir = rustix::io::dup(&fd).expect("dup");
        let name = c"dddddddddddddddddddddddddddddd";
        for _ in 0..200 {
            rustix::fs::mkdirat(&dir, name, Mode::RWXU).expect("mkdir");
            dir = rustix::fs::openat(
                &dir,
                name,
                OFlags::RDONLY | OFlags::DIRECTORY,
                Mode::empty(),
            )
            .expect("open");
        }
        drop(dir);
        let (seen, walked) = names(&root);
        assert_eq!(seen.len() as u64, walked.entries);
        // 31 bytes a level.
        assert_eq!(walked.entries, (MAX_PATH / 31 + 1) as u64, "{walked:?}");
        assert_eq!(walked.left_out, 1);
        std::fs::remove_dir_all(&root).expect("clean");
    }

    #[test]
    fn trusted_links_are_followed_and_others_refused() {
        let root = scratch("trusted");
        std::fs::create_dir_all(root.join("real/inner")).expect("dirs");
        std::os::unix::fs::symlink("real", root.join("link")).expect("link");
        let me = rustix::process::geteuid().as_raw();
        let fd = open_trusted(&root.join("link/inner"), |stat| stat.st_uid == me).expect("open");
        let real = rustix::fs::fstat(&fd).expect("stat");
        let expected = std::fs::metadata(root.join("real/inner")).expect("meta");
        assert_eq!(real.st_ino, std::os::unix::fs::MetadataExt::ino(&expected));
        let refused = open_trusted(&root.join("link/inner"), |_| false).expect_err("refused");
        assert_eq!(refused.kind(), io::ErrorKind::PermissionDenied);
        assert!(refused.to_string().contains("link"), "{refused}");
        std::fs::remove_dir_all(&root).expect("clean");
    }
}
