//! [`Root`]: host-side access to a task's root that never follows a link out of it.
//!
//! The agent owns what is under the root: it can put a symbolic link where the host expects a
//! file (`checkout.py -> /etc/cron.d/x`) or a directory (`tests -> /`), and swap one for the
//! other while the host works. Code on the host that prepares or reads the root as root would
//! then write or read a host path of the agent's choosing. [`Root`] opens the root once and
//! resolves every path beneath that descriptor one component at a time with `O_NOFOLLOW`: a
//! link anywhere on the way is an error (`ELOOP` or `ENOTDIR`), never followed, whatever
//! the agent changes meanwhile. Writes go to a new file that is then renamed over the target
//! (a link there is replaced, not written through), and get the workspace's owner.

use std::ffi::{CStr, OsStr};
use std::io::{self, Read as _, Write as _};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// How many directories deep below the root a walk goes (256): the change tracker does not
/// enter a deeper directory (it lists it in `Changes::untracked`), and neither does the
/// giving of the root to the sandbox's uid. A walk keeps one descriptor open per level and
/// never recurses on the stack, so no tree an agent can make stops it.
pub const MAX_DEPTH: usize = 256;

/// How deep [`Root::remove_all`] and [`Root::clear`] hold directories open before they move
/// the one they are in up to the root (so a tree of any depth is removed with few descriptors).
const HELD_LEVELS: usize = 64;

/// Why an operation on a [`Root`] failed: the path (relative to the root) and the system's
/// error (`ELOOP` or `ENOTDIR` where a link was met).
#[derive(Debug, thiserror::Error)]
#[error("{op} {path:?} in the workspace root: {source}")]
pub struct RootError {
    /// What was being done: `open`, `read`, `write`, `create`, `remove`.
    pub op: &'static str,
    /// The path, relative to the root.
    pub path: PathBuf,
    /// What the system said.
    #[source]
    pub source: io::Error,
}

impl RootError {
    /// The kind of the system's error.
    #[must_use]
    pub fn kind(&self) -> io::ErrorKind {
        self.source.kind()
    }
}

/// A task's root, opened once, for the host-side code that prepares and reads it: every path
/// is taken relative to the root and resolved beneath it without following a symbolic link,
/// so that nothing the agent plants there leads the host elsewhere. What it creates gets the
/// workspace's owner ([`owned_by`](Self::owned_by); `WorkspaceHandle::root` and
/// `Workspace::root` give a `Root` that does), so the agent can still edit it.
///
/// ```
/// use grader_env::workspace::Root;
///
/// let dir = std::env::temp_dir().join(format!("doc-root-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let root = Root::open(&dir)?;
/// root.write("tests/test_app.py", b"assert True\n")?;
/// assert_eq!(root.read("tests/test_app.py")?, b"assert True\n");
///
/// // The agent replaces a directory by a link out of the root: the host does not follow it.
/// std::fs::remove_dir_all(dir.join("tests"))?;
/// std::os::unix::fs::symlink("/etc", dir.join("tests"))?;
/// assert!(root.read("tests/passwd").is_err());
/// assert!(root.write("tests/hosts", b"").is_err());
///
/// root.clear()?; // empties the root, removing links (never what they point to)
/// assert_eq!(std::fs::read_dir(&dir)?.count(), 0);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Root {
    dir: OwnedFd,
    path: PathBuf,
    owner: Option<(u32, u32)>,
}

impl Root {
    /// Opens the directory `path` (which the host chose: it may itself be reached through
    /// links; nothing beneath it is).
    ///
    /// # Errors
    /// When it cannot be opened as a directory.
    pub fn open(path: impl AsRef<Path>) -> Result<Root, RootError> {
        let path = path.as_ref();
        let dir = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| RootError {
            op: "open",
            path: PathBuf::new(),
            source: e.into(),
        })?;
        Ok(Root {
            dir,
            path: path.to_path_buf(),
            owner: None,
        })
    }

    /// What this root creates is owned by `uid` and `gid` (the workspace's sandbox user).
    #[must_use]
    pub fn owned_by(mut self, uid: u32, gid: u32) -> Root {
        self.owner = Some((uid, gid));
        self
    }

    /// The root's path on the host, as opened.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The owner given to what it creates, if one was set.
    #[must_use]
    pub fn owner(&self) -> Option<(u32, u32)> {
        self.owner
    }

    /// Writes `contents` to the file `path`, creating its missing directories: the bytes go to
    /// a new file beside it, renamed over `path` once written, so whatever was at `path` (a
    /// file, or a link the agent planted) is replaced and never written through.
    ///
    /// # Errors
    /// When a directory on the way is a link or cannot be made, or the file cannot be
    /// written.
    pub fn write(&self, path: impl AsRef<Path>, contents: &[u8]) -> Result<(), RootError> {
        let path = path.as_ref();
        let error = |source: io::Error| RootError {
            op: "write",
            path: path.to_path_buf(),
            source,
        };
        let (parent, name) = split(path).map_err(error)?;
        let dir = self.dirs(&parent, true).map_err(error)?;
        let temporary = temporary_name(name);
        let file = rustix::fs::openat(
            &dir,
            temporary.as_os_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )
        .map_err(|e| error(e.into()))?;
        let written = (|| -> io::Result<()> {
            if let Some((uid, gid)) = self.owner {
                chown(&file, uid, gid)?;
            }
            let mut file = std::fs::File::from(file);
            file.write_all(contents)?;
            file.flush()?;
            rustix::fs::renameat(&dir, temporary.as_os_str(), &dir, name)?;
            Ok(())
        })();
        if let Err(source) = written {
            let _ = rustix::fs::unlinkat(&dir, temporary.as_os_str(), AtFlags::empty());
            return Err(error(source));
        }
        Ok(())
    }

    /// The bytes of the file `path`.
    ///
    /// # Errors
    /// When it is missing, is not a regular file (a link, a FIFO, a device), or a directory
    /// on the way is a link.
    pub fn read(&self, path: impl AsRef<Path>) -> Result<Vec<u8>, RootError> {
        let path = path.as_ref();
        let error = |source: io::Error| RootError {
            op: "read",
            path: path.to_path_buf(),
            source,
        };
        let (parent, name) = split(path).map_err(error)?;
        let dir = self.dirs(&parent, false).map_err(error)?;
        let mut file = open_regular(&dir, name).map_err(error)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(error)?;
        Ok(bytes)
    }

    /// The regular file `path`, opened for reading (for the tracker's captures).
    pub(crate) fn open_file(&self, path: impl AsRef<Path>) -> io::Result<std::fs::File> {
        let (parent, name) = split(path.as_ref())?;
        let dir = self.dirs(&parent, false)?;
        open_regular(&dir, name)
    }

    /// Makes the directory `path` and its missing parents.
    ///
    /// # Errors
    /// When one cannot be made, or one on the way is a link or not a directory.
    pub fn create_dir_all(&self, path: impl AsRef<Path>) -> Result<(), RootError> {
        let path = path.as_ref();
        self.dirs(path, true).map(drop).map_err(|source| RootError {
            op: "create",
            path: path.to_path_buf(),
            source,
        })
    }

    /// Removes `path`: a file, a link (not what it points to), or a directory with everything
    /// under it, however deep. Nothing is followed.
    ///
    /// # Errors
    /// When something cannot be removed, or a directory on the way to `path` is a link.
    pub fn remove_all(&self, path: impl AsRef<Path>) -> Result<(), RootError> {
        let path = path.as_ref();
        let error = |source: io::Error| RootError {
            op: "remove",
            path: path.to_path_buf(),
            source,
        };
        let (parent, name) = split(path).map_err(error)?;
        let dir = self.dirs(&parent, false).map_err(error)?;
        self.remove_entry(&dir, name).map_err(error)
    }

    /// Removes everything in the root (the root itself stays).
    ///
    /// # Errors
    /// When something cannot be removed.
    pub fn clear(&self) -> Result<(), RootError> {
        let error = |source: io::Error| RootError {
            op: "remove",
            path: PathBuf::new(),
            source,
        };
        for name in names(&self.dir).map_err(error)? {
            self.remove_entry(&self.dir, OsStr::from_bytes(name.to_bytes()))
                .map_err(error)?;
        }
        Ok(())
    }

    /// Gives everything under the root, and the root itself, the owner `uid`:`gid`, never
    /// following a link (a link itself is given it). Entries it cannot reach are left as they
    /// are; how many it changed is returned.
    #[cfg(feature = "workspace")]
    pub(crate) fn chown_all(&self, uid: u32, gid: u32) -> usize {
        let mut changed = 0;
        if chown(&self.dir, uid, gid).is_ok() {
            changed += 1;
        }
        let mut stack: Vec<rustix::fs::Dir> = Vec::new();
        if let Ok(dir) = own_dir(&self.dir, c".") {
            stack.push(dir);
        }
        loop {
            let depth = stack.len();
            let Some(entries) = stack.last_mut() else {
                break;
            };
            let Some(Ok(entry)) = entries.next() else {
                stack.pop();
                continue;
            };
            let name = entry.file_name();
            let Ok(fd) = entries.fd() else {
                stack.pop();
                continue;
            };
            if is_dot(name) {
                continue;
            }
            if rustix::fs::chownat(
                fd,
                name,
                Some(rustix::fs::Uid::from_raw(uid)),
                Some(rustix::fs::Gid::from_raw(gid)),
                AtFlags::SYMLINK_NOFOLLOW,
            )
            .is_ok()
            {
                changed += 1;
            }
            let is_dir = match entry.file_type() {
                FileType::Directory => true,
                FileType::Unknown => rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory),
                _ => false,
            };
            if is_dir
                && depth < MAX_DEPTH
                && let Ok(child) = own_dir(fd, name)
            {
                stack.push(child);
            }
        }
        changed
    }

    /// The root's descriptor (for the tracker's walk).
    pub(crate) fn fd(&self) -> &OwnedFd {
        &self.dir
    }

    /// The directory `path` (relative, no `..`), opened one component at a time without
    /// following a link; missing ones made (with the owner) when `create`.
    fn dirs(&self, path: &Path, create: bool) -> io::Result<OwnedFd> {
        let mut dir = rustix::fs::openat(
            &self.dir,
            c".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        for part in components(path)? {
            if create {
                match rustix::fs::mkdirat(&dir, part, Mode::from_raw_mode(0o755)) {
                    Ok(()) => {
                        if let Some((uid, gid)) = self.owner {
                            rustix::fs::chownat(
                                &dir,
                                part,
                                Some(rustix::fs::Uid::from_raw(uid)),
                                Some(rustix::fs::Gid::from_raw(gid)),
                                AtFlags::SYMLINK_NOFOLLOW,
                            )?;
                        }
                    }
                    Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            dir = open_dir(&dir, part)?;
        }
        Ok(dir)
    }

    /// Removes `name` in `dir` (a tree without recursion: past [`HELD_LEVELS`] open
    /// directories, the one it is in is moved up to the root and removed from there).
    fn remove_entry(&self, dir: &OwnedFd, name: &OsStr) -> io::Result<()> {
        match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
            Ok(()) => return Ok(()),
            Err(rustix::io::Errno::ISDIR | rustix::io::Errno::PERM) => {}
            Err(e) => return Err(e.into()),
        }
        // A directory: empty it depth first, holding at most HELD_LEVELS descriptors; a
        // frame whose parent is `None` is a directory moved up to the root.
        let mut moved = 0u64;
        let first = rustix::fs::openat(
            dir,
            c".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let mut stack: Vec<(Option<OwnedFd>, std::ffi::OsString)> =
            vec![(Some(first), name.to_owned())];
        let mut held = 1;
        while let Some((parent, child)) = stack.last() {
            let parent = parent.as_ref().unwrap_or(&self.dir);
            let handle = match open_dir(parent, child.as_os_str()) {
                Ok(handle) => handle,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    stack.pop();
                    continue;
                }
                Err(e) => return Err(e),
            };
            let mut descended = false;
            for entry in names(&handle)? {
                let entry = OsStr::from_bytes(entry.to_bytes());
                match rustix::fs::unlinkat(&handle, entry, AtFlags::empty()) {
                    Ok(()) => {}
                    Err(rustix::io::Errno::ISDIR | rustix::io::Errno::PERM) => {
                        if held >= HELD_LEVELS {
                            // Too deep to hold: move it to the root and go on from there.
                            moved += 1;
                            let up = format!(".grader-removing-{}-{moved}", std::process::id());
                            rustix::fs::renameat(&handle, entry, &self.dir, up.as_str())?;
                            stack.push((None, up.into()));
                        } else {
                            stack.push((Some(handle), entry.to_owned()));
                            held += 1;
                        }
                        descended = true;
                        break;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            if !descended {
                let Some((parent, child)) = stack.pop() else {
                    break;
                };
                held -= usize::from(parent.is_some());
                let parent = parent.as_ref().unwrap_or(&self.dir);
                rustix::fs::unlinkat(parent, child.as_os_str(), AtFlags::REMOVEDIR)?;
            }
        }
        Ok(())
    }
}

/// `path` as its parent and last component; refuses an absolute path, `..`, and an empty one.
fn split(path: &Path) -> io::Result<(PathBuf, &OsStr)> {
    let parts = components(path)?;
    let Some((last, parents)) = parts.split_last() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "an empty path names the root itself",
        ));
    };
    Ok((parents.iter().collect(), last))
}

/// The normal components of a relative path; `.` skipped, anything else refused.
fn components(path: &Path) -> io::Result<Vec<&OsStr>> {
    path.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .map(|c| match c {
            Component::Normal(part) => Ok(part),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "paths in a workspace root are relative, without `..`",
            )),
        })
        .collect()
}

/// A name beside `name` for the file written before it is renamed over it.
fn temporary_name(name: &OsStr) -> std::ffi::OsString {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut temporary = std::ffi::OsString::from(format!(
        ".grader-{}-{}-",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    temporary.push(name);
    temporary
}

/// The directory `name` in `dir`, not following a link.
pub(crate) fn open_dir(dir: impl AsFd, name: impl rustix::path::Arg) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// The regular file `name` in `dir`, opened for reading without following a link and without
/// waiting on a FIFO; anything but a regular file is refused.
pub(crate) fn open_regular(
    dir: impl AsFd,
    name: impl rustix::path::Arg,
) -> io::Result<std::fs::File> {
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let stat = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(std::fs::File::from(fd))
}

/// The names in `dir` but `.` and `..`.
fn names(dir: &OwnedFd) -> io::Result<Vec<std::ffi::CString>> {
    let entries = rustix::fs::Dir::read_from(dir)?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry?;
        if !is_dot(entry.file_name()) {
            names.push(entry.file_name().to_owned());
        }
    }
    Ok(names)
}

/// The entries of the directory `name` in `dir` (not following a link), on a descriptor of
/// their own.
pub(crate) fn own_dir(dir: impl AsFd, name: impl rustix::path::Arg) -> io::Result<rustix::fs::Dir> {
    Ok(rustix::fs::Dir::new(open_dir(dir, name)?)?)
}

pub(crate) fn is_dot(name: &CStr) -> bool {
    matches!(name.to_bytes(), b"." | b"..")
}

fn chown(fd: impl AsFd, uid: u32, gid: u32) -> io::Result<()> {
    Ok(rustix::fs::fchown(
        fd,
        Some(rustix::fs::Uid::from_raw(uid)),
        Some(rustix::fs::Gid::from_raw(gid)),
    )?)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("root-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_link_planted_at_the_target_is_replaced_not_written_through() {
        let dir = scratch("plant");
        let outside = scratch("plant-outside");
        std::os::unix::fs::symlink(outside.join("victim"), dir.join("checkout.py")).unwrap();
        let root = Root::open(&dir).unwrap();
        root.write("checkout.py", b"def total(): pass\n").unwrap();
        assert!(!outside.join("victim").exists(), "written through the link");
        assert!(
            !std::fs::symlink_metadata(dir.join("checkout.py"))
                .unwrap()
                .is_symlink()
        );
        assert_eq!(root.read("checkout.py").unwrap(), b"def total(): pass\n");
        for bad in ["../x", "/etc/passwd", ""] {
            assert!(root.write(bad, b"").is_err(), "{bad}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&outside).unwrap();
    }

    #[test]
    fn a_tree_deeper_than_the_descriptors_held_is_removed() {
        let dir = scratch("deep");
        let mut path = dir.clone();
        for _ in 0..(HELD_LEVELS * 3) {
            path.push("d");
        }
        std::fs::create_dir_all(&path).unwrap();
        std::fs::write(path.join("f"), "x").unwrap();
        let outside = scratch("deep-outside");
        std::fs::write(outside.join("keep"), "keep").unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("d/link")).unwrap();
        let root = Root::open(&dir).unwrap();
        root.clear().unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        assert!(
            outside.join("keep").exists(),
            "a link's target is never removed"
        );
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&outside).unwrap();
    }

    #[test]
    fn a_fifo_is_not_read_and_does_not_block() {
        let dir = scratch("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            dir.join("pipe"),
            FileType::Fifo,
            Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        let root = Root::open(&dir).unwrap();
        assert!(root.read("pipe").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
