//! The tag a command's processes carry in their environment, and the bash of every running
//! command, whose descendants carry another command's tag.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::process::Pid;

use super::super::per_process::PerProcess;

/// The environment variable that tags one command's processes.
pub(in crate::bash) struct Tag {
    /// `GRADER_BASH_<token>`, the same for every command of this process.
    pub(in crate::bash) name: &'static str,
    /// The command's number, unique within this process.
    pub(in crate::bash) id: u64,
}

impl Tag {
    /// A tag no other command of this process has.
    pub(in crate::bash) fn next() -> Tag {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Tag {
            name: tag_name(),
            id: NEXT.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The variable's value.
    pub(in crate::bash) fn value(&self) -> OsString {
        self.id.to_string().into()
    }
}

/// `GRADER_BASH_<token>`: `<token>` is this process's id and the time it first ran a command,
/// in digits, so that no other process picks the same name (a child made by `fork` picks its
/// own: its parent's would let each stop the other's commands).
pub(in crate::bash) fn tag_name() -> &'static str {
    static NAME: PerProcess<String> = PerProcess::new();
    NAME.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("GRADER_BASH_{}_{nanos}", std::process::id())
    })
}

/// The first process (bash) of every command of this process that is running or being
/// stopped, with how many commands have it (a pid is reused only once its bash is reaped, and
/// a command leaves this list just after). A round of the sweeper does not read the
/// environment of a process that descends from the bash of a command it is not stopping:
/// that process carries the other command's tag. A child made by `fork` starts with none: its
/// parent's commands are not its own.
static LEADERS: PerProcess<Mutex<Option<HashMap<u32, usize>>>> = PerProcess::new();

fn leaders() -> std::sync::MutexGuard<'static, Option<HashMap<u32, usize>>> {
    LEADERS
        .get_or_init(|| Mutex::new(None))
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Records `pid` as the bash of a running command.
pub(in crate::bash) fn add_leader(pid: u32) {
    *leaders()
        .get_or_insert_with(HashMap::new)
        .entry(pid)
        .or_default() += 1;
}

/// Forgets `pid` as the bash of a command (once it is reaped or given up).
pub(in crate::bash) fn remove_leader(pid: u32) {
    if let Some(leaders) = leaders().as_mut()
        && let Some(count) = leaders.get_mut(&pid)
    {
        *count -= 1;
        if *count == 0 {
            leaders.remove(&pid);
        }
    }
}

/// The bash of every running command but those in `stopping`.
pub(super) fn other_leaders(stopping: impl IntoIterator<Item = u32>) -> HashSet<u32> {
    let mut others: HashSet<u32> = leaders()
        .as_ref()
        .map(|leaders| leaders.keys().copied().collect())
        .unwrap_or_default();
    for pid in stopping {
        others.remove(&pid);
    }
    others
}

/// The pid of a command's bash, which leads its process group.
pub(in crate::bash) fn leader(group: Option<Pid>) -> Option<u32> {
    group.and_then(|group| u32::try_from(group.as_raw_pid()).ok())
}
