//! Sealing a sandbox for grading: which of the agent's processes keep running (those the
//! template declared it grades, by name or by port, with their descendants), and the graders'
//! own directory, made afresh where nothing of the agent's could write.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use super::cgroup::Seen;
use super::error::WorkspaceError;
use super::procs::parent_of;
use super::root::{Root, RootError};

/// Where graders find their own home and temporary directory inside the sandbox: a host
/// directory bound there, which the agent cannot write, filled when the sandbox is sealed.
pub(crate) const GRADING_DIR: &str = "/run/grader";

/// What the template declared it grades of what the agent left running: processes of these
/// names (their `comm`) and the processes listening on these TCP ports, each with its
/// descendants, keep running when the sandbox is sealed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Graded {
    pub(crate) processes: Vec<String>,
    pub(crate) ports: Vec<u16>,
}
/// What sealing did: how many of the agent's processes it stopped, how many it kept (the
/// ones the template grades), and whether it had to end the whole sandbox.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Sealed {
    pub(crate) stopped: usize,
    pub(crate) kept: usize,
    pub(crate) restarted: bool,
    /// What the sandbox's cgroup saw of its limits until then.
    pub(crate) seen: Seen,
}

/// The graders' `home`, `tmp` and `pycache` under the grading directory, made afresh (what
/// was there removed, never following a link) and owned by the sandbox's uid.
pub(crate) fn fresh_grading_dirs(dir: &Path, uid: Option<u32>) -> Result<(), RootError> {
    let root = Root::open(dir)?;
    let root = match uid {
        Some(uid) => root.owned_by(uid, uid),
        None => root,
    };
    root.clear()?;
    for dir in ["home", "tmp", "pycache"] {
        root.create_dir_all(dir)?;
    }
    Ok(())
}
/// The processes of the sandbox (host PIDs in `processes`) that keep running when it is
/// sealed: those the template declared (by name, or listening on a port), and their
/// descendants.
pub(crate) fn kept_processes(init: i32, processes: &[i32], graded: &Graded) -> HashSet<i32> {
    if graded.processes.is_empty() && graded.ports.is_empty() {
        return HashSet::new();
    }
    let listening = listening_sockets(init, &graded.ports);
    let mut declared: HashSet<i32> = HashSet::new();
    for &pid in processes {
        if pid == init {
            continue;
        }
        let named = std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .is_ok_and(|comm| graded.processes.iter().any(|name| name == comm.trim_end()));
        if named || (!listening.is_empty() && holds_socket(pid, &listening)) {
            declared.insert(pid);
        }
    }
    let parents: HashMap<i32, i32> = processes
        .iter()
        .filter_map(|&pid| Some((pid, parent_of(pid)?)))
        .collect();
    processes
        .iter()
        .copied()
        .filter(|&pid| {
            let mut at = pid;
            for _ in 0..processes.len() + 1 {
                if declared.contains(&at) {
                    return true;
                }
                match parents.get(&at) {
                    Some(&parent) if parent != at => at = parent,
                    _ => return false,
                }
            }
            false
        })
        .collect()
}

/// The inodes of the sockets listening on `ports` (TCP, v4 and v6) in the network namespace of
/// `init`.
fn listening_sockets(init: i32, ports: &[u16]) -> HashSet<u64> {
    let mut inodes = HashSet::new();
    if ports.is_empty() {
        return inodes;
    }
    for table in ["tcp", "tcp6"] {
        let text = std::fs::read_to_string(format!("/proc/{init}/net/{table}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state), Some(inode)) =
                (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            let port = local
                .rsplit_once(':')
                .and_then(|(_, port)| u16::from_str_radix(port, 16).ok());
            if *state == "0A"
                && port.is_some_and(|port| ports.contains(&port))
                && let Ok(inode) = inode.parse()
            {
                inodes.insert(inode);
            }
        }
    }
    inodes
}

/// Whether process `pid` holds one of the sockets `inodes`.
fn holds_socket(pid: i32, inodes: &HashSet<u64>) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path()).is_ok_and(|target| {
            target
                .to_str()
                .and_then(|t| t.strip_prefix("socket:["))
                .and_then(|t| t.strip_suffix(']'))
                .and_then(|t| t.parse::<u64>().ok())
                .is_some_and(|inode| inodes.contains(&inode))
        })
    })
}
/// Makes the directory bound at [`GRADING_DIR`]: the serving user's, mode 0755 (so that the
/// sandbox's uid can reach it and write nothing in it).
pub(crate) fn grading_dir() -> Result<tempfile::TempDir, WorkspaceError> {
    let failed = |e: std::io::Error| {
        WorkspaceError::Sandbox(format!("cannot make the graders' directory: {e}"))
    };
    let dir = tempfile::Builder::new()
        .prefix("grader-grading-")
        .tempdir()
        .map_err(failed)?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).map_err(failed)?;
    Ok(dir)
}
