//! The host uid a workspace's sandbox runs as when the server runs as root: one per workspace,
//! from a configurable range, held (an exclusive lock on a file named after it) for as long as
//! the workspace lives, so that no two workspaces of any process on the machine share one, and
//! never one a process of the machine already runs as.
//!
//! bwrap run as root maps root inside to root outside; run as this uid (dropped to with std's
//! `CommandExt::uid`/`gid` before bwrap starts), root inside is this uid outside: the host's
//! root-only files are out of reach, and what the agent writes is owned by it.

use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::PathBuf;

/// The default range: a billion up, far above the uids and subordinate ranges
/// (`/etc/subuid`) that distributions hand out.
pub(crate) const DEFAULT_RANGE: Range<u32> = 1_500_000_000..1_500_065_536;

/// A uid held for one workspace; let go when dropped.
#[derive(Debug)]
pub(crate) struct HeldUid {
    uid: u32,
    _lock: File,
}

impl HeldUid {
    /// The uid (and gid: the same number).
    pub(crate) fn get(&self) -> u32 {
        self.uid
    }

    /// A free uid of `range`: no other workspace holds it and no process runs as it.
    ///
    /// # Errors
    /// The message, when the lock directory cannot be made or every uid of the range is taken.
    pub(crate) fn take(range: &Range<u32>) -> Result<HeldUid, String> {
        if range.is_empty() || range.start == 0 {
            return Err(format!(
                "the workspace uid range {}..{} is empty or includes root",
                range.start, range.end
            ));
        }
        let dir = lock_dir()?;
        let running = running_uids();
        let size = range.end - range.start;
        // Start at a place of its own, so that servers starting together rarely try the same.
        let offset = std::process::id().wrapping_mul(2_654_435_761) % size;
        for step in 0..size.min(4096) {
            let uid = range.start + (offset + step) % size;
            if running.contains(&uid) {
                continue;
            }
            let path = dir.join(uid.to_string());
            let Ok(file) = File::options()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(0o600)
                .custom_flags(i32::try_from(rustix::fs::OFlags::NOFOLLOW.bits()).unwrap_or(0))
                .open(&path)
            else {
                continue;
            };
            if rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive)
                .is_ok()
            {
                return Ok(HeldUid { uid, _lock: file });
            }
        }
        Err(format!(
            "no free uid in the workspace uid range {}..{}",
            range.start, range.end
        ))
    }
}

/// Where the locks live: `/run/grader-workspace-uids` (made by root, mode 0700), or the same
/// name under the temporary directory where `/run` is missing.
fn lock_dir() -> Result<PathBuf, String> {
    let bases = [PathBuf::from("/run"), std::env::temp_dir()];
    let mut last = String::new();
    for base in bases {
        if !base.is_dir() {
            continue;
        }
        let dir = base.join("grader-workspace-uids");
        let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
        match std::fs::symlink_metadata(&dir) {
            // Only a directory of this process's own user (not one another user put there).
            Ok(meta) if meta.is_dir() && meta.uid() == rustix::process::geteuid().as_raw() => {
                return Ok(dir);
            }
            Ok(_) => last = format!("{} is not a directory of this user", dir.display()),
            Err(e) => last = format!("cannot make {}: {e}", dir.display()),
        }
    }
    Err(last)
}

/// The real uids of the machine's processes now.
fn running_uids() -> std::collections::HashSet<u32> {
    let mut uids = std::collections::HashSet::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return uids;
    };
    for entry in entries.flatten() {
        if let Ok(meta) = entry.metadata()
            && entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        {
            uids.insert(meta.uid());
        }
    }
    uids
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;

    #[test]
    fn two_workspaces_never_hold_the_same_uid() {
        if !rustix::process::geteuid().is_root() {
            return;
        }
        let range = 1_600_000_000..1_600_000_002;
        let one = HeldUid::take(&range).unwrap();
        let two = HeldUid::take(&range).unwrap();
        assert_ne!(one.get(), two.get());
        assert!(range.contains(&one.get()) && range.contains(&two.get()));
        let none = HeldUid::take(&range).unwrap_err();
        assert!(none.contains("no free uid"), "{none}");
        drop(one);
        assert!(HeldUid::take(&range).is_ok(), "a uid let go is free again");
        assert!(HeldUid::take(&(0..5)).is_err(), "root is never handed out");
    }
}
