//! The workspace's cgroup: one per sandbox, holding bwrap, the holder and every session, with
//! the workspace's memory and process limits, as `BashGrader`'s limits hold a command (cgroup
//! v1: a group in each of the `memory` and `pids` hierarchies; v2: one group with both
//! controllers), made under the serving process's own group and removed with the sandbox.
//!
//! A process cannot leave its cgroup, so the group also finds every process of a sandbox,
//! those of a bwrap killed half-way through its start included: [`Group::kill_all`] ends them.

use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Where this process's groups are, for the controllers the workspace uses.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Hierarchy {
    /// cgroup v1: this process's group in the `memory` and in the `pids` hierarchy.
    V1 {
        memory: Option<PathBuf>,
        pids: Option<PathBuf>,
    },
    /// cgroup v2: this process's group.
    V2 { group: PathBuf },
}

static FOUND: OnceLock<Result<Hierarchy, String>> = OnceLock::new();

impl Hierarchy {
    /// This process's hierarchies, or why there are none it can use (found once).
    fn find() -> Result<&'static Hierarchy, &'static str> {
        FOUND
            .get_or_init(|| {
                let mountinfo = fs::read_to_string("/proc/self/mountinfo")
                    .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
                let cgroup = fs::read_to_string("/proc/self/cgroup")
                    .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
                let found = parse(&mountinfo, &cgroup)?;
                if let Hierarchy::V2 { group } = &found {
                    delegate(group)?;
                }
                Ok(found)
            })
            .as_ref()
            .map_err(String::as_str)
    }
}

/// The hierarchies from the texts of `/proc/self/mountinfo` and `/proc/self/cgroup`: v1 where
/// a v1 `memory` or `pids` hierarchy is mounted, else v2.
fn parse(mountinfo: &str, cgroup: &str) -> Result<Hierarchy, String> {
    let (mut v1_memory, mut v1_pids, mut v2) = (None, None, None);
    for line in mountinfo.lines() {
        let Some((before, after)) = line.split_once(" - ") else {
            continue;
        };
        let fields: Vec<&str> = before.split(' ').collect();
        let (Some(root), Some(point)) = (fields.get(3), fields.get(4)) else {
            continue;
        };
        let mut after = after.split(' ');
        let (Some(kind), _, Some(options)) = (after.next(), after.next(), after.next()) else {
            continue;
        };
        let mount = (unescape(root), unescape(point));
        match kind {
            "cgroup2" => v2 = Some(mount),
            "cgroup" => {
                for option in options.split(',') {
                    match option {
                        "memory" => v1_memory = Some(mount.clone()),
                        "pids" => v1_pids = Some(mount.clone()),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    let own = |wanted: Option<&str>| {
        cgroup.lines().find_map(|line| {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            let matches = match wanted {
                None => controllers.is_empty(),
                Some(name) => controllers.split(',').any(|c| c == name),
            };
            matches.then(|| path.to_owned())
        })
    };
    let place = |mount: Option<(String, String)>, wanted: Option<&str>| {
        let (root, point) = mount?;
        let path = own(wanted)?;
        let relative = path.strip_prefix(root.as_str()).unwrap_or(&path);
        Some(Path::new(&point).join(relative.trim_start_matches('/')))
    };
    let memory = place(v1_memory, Some("memory"));
    let pids = place(v1_pids, Some("pids"));
    if memory.is_some() || pids.is_some() {
        return Ok(Hierarchy::V1 { memory, pids });
    }
    match place(v2, None) {
        Some(group) => Ok(Hierarchy::V2 { group }),
        None => Err("no cgroup hierarchy with the memory or pids controller is mounted".into()),
    }
}

/// `mountinfo` escapes space, tab, newline and backslash as octal.
fn unescape(field: &str) -> String {
    field
        .replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// Turns on the `memory` and `pids` controllers for the children of `group` (cgroup v2).
fn delegate(group: &Path) -> Result<(), String> {
    let control = group.join("cgroup.subtree_control");
    let on = fs::read_to_string(&control)
        .map_err(|e| format!("cannot read {}: {e}", control.display()))?;
    let missing: Vec<String> = ["memory", "pids"]
        .into_iter()
        .filter(|name| !on.split_whitespace().any(|c| c == *name))
        .map(|name| format!("+{name}"))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    fs::write(&control, missing.join(" ")).map_err(|e| {
        format!(
            "cannot delegate the memory and pids controllers to sub-groups of {} ({e})",
            group.display()
        )
    })
}

/// One sandbox's group: its directories (one per v1 hierarchy, or the one v2 group).
#[derive(Debug)]
pub(crate) struct Group {
    memory: Option<PathBuf>,
    pids: Option<PathBuf>,
    v2: bool,
}

/// What a group saw of its sandbox.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Seen {
    /// Processes of the sandbox killed for exceeding the memory limit.
    pub(crate) out_of_memory: u64,
    /// Forks refused at the process limit.
    pub(crate) process_limit_hit: u64,
}

impl Group {
    /// A new group with these limits, or why none can be made here (no hierarchy, no
    /// permission).
    pub(crate) fn make(memory: Option<u64>, processes: Option<u64>) -> Result<Group, String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let hierarchy = Hierarchy::find()?;
        let name = format!(
            "grader-workspace-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let made = |dir: PathBuf| -> Result<PathBuf, String> {
            fs::create_dir(&dir)
                .map(|()| dir.clone())
                .map_err(|e| format!("cannot make the cgroup {}: {e}", dir.display()))
        };
        let mut group = Group {
            memory: None,
            pids: None,
            v2: false,
        };
        match hierarchy {
            Hierarchy::V1 {
                memory: memory_parent,
                pids: pids_parent,
            } => {
                if let Some(parent) = memory_parent {
                    group.memory = Some(made(parent.join(&name))?);
                }
                if let Some(parent) = pids_parent {
                    match made(parent.join(&name)) {
                        Ok(dir) => group.pids = Some(dir),
                        Err(error) => {
                            group.remove();
                            return Err(error);
                        }
                    }
                }
            }
            Hierarchy::V2 { group: parent } => {
                let dir = made(parent.join(&name))?;
                group.memory = Some(dir.clone());
                group.pids = Some(dir);
                group.v2 = true;
            }
        }
        if let Err(error) = group.set(memory, processes) {
            group.remove();
            return Err(error);
        }
        Ok(group)
    }

    fn set(&self, memory: Option<u64>, processes: Option<u64>) -> Result<(), String> {
        let write = |dir: &Path, file: &str, value: u64| {
            fs::write(dir.join(file), value.to_string())
                .map_err(|e| format!("cannot set {}: {e}", dir.join(file).display()))
        };
        if let (Some(dir), Some(bytes)) = (&self.memory, memory) {
            if self.v2 {
                write(dir, "memory.max", bytes)?;
                let _ = fs::write(dir.join("memory.swap.max"), "0");
            } else {
                write(dir, "memory.limit_in_bytes", bytes)?;
                let _ = fs::write(dir.join("memory.memsw.limit_in_bytes"), bytes.to_string());
            }
        }
        if let (Some(dir), Some(count)) = (&self.pids, processes) {
            write(dir, "pids.max", count)?;
        }
        Ok(())
    }

    /// Whether the group bounds memory, and processes.
    pub(crate) fn has(&self) -> (bool, bool) {
        (self.memory.is_some(), self.pids.is_some())
    }

    /// The `cgroup.procs` files to join, opened for writing (close on exec).
    pub(crate) fn procs(&self) -> io::Result<Vec<OwnedFd>> {
        let mut dirs: Vec<&PathBuf> = self.memory.iter().chain(self.pids.iter()).collect();
        dirs.dedup();
        dirs.into_iter()
            .map(|dir| {
                rustix::fs::open(
                    dir.join("cgroup.procs"),
                    rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CLOEXEC,
                    rustix::fs::Mode::empty(),
                )
                .map_err(io::Error::from)
            })
            .collect()
    }

    /// The host PIDs of the processes in the group now.
    pub(crate) fn pids(&self) -> Vec<i32> {
        let Some(dir) = self.pids.as_ref().or(self.memory.as_ref()) else {
            return Vec::new();
        };
        fs::read_to_string(dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.trim().parse().ok())
            .collect()
    }

    /// What the group saw.
    pub(crate) fn seen(&self) -> Seen {
        let mut seen = Seen::default();
        if let Some(dir) = &self.memory {
            let events = if self.v2 {
                "memory.events"
            } else {
                "memory.oom_control"
            };
            seen.out_of_memory = count(
                &fs::read_to_string(dir.join(events)).unwrap_or_default(),
                "oom_kill",
            );
        }
        if let Some(dir) = &self.pids {
            seen.process_limit_hit = count(
                &fs::read_to_string(dir.join("pids.events")).unwrap_or_default(),
                "max",
            );
        }
        seen
    }

    /// Sends SIGKILL to every process in the group until none is left, or `within` has
    /// passed; whether none is left.
    pub(crate) fn kill_all(&self, within: Duration) -> bool {
        let start = Instant::now();
        loop {
            let pids = self.pids();
            if pids.is_empty() {
                return true;
            }
            for pid in pids {
                if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
            if start.elapsed() >= within {
                return false;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Removes the group's directories (a group whose processes are not yet all reaped is
    /// tried again for a second).
    pub(crate) fn remove(&self) {
        let mut dirs: Vec<&PathBuf> = self.memory.iter().chain(self.pids.iter()).collect();
        dirs.dedup();
        for dir in dirs {
            let start = Instant::now();
            while fs::remove_dir(dir).is_err()
                && dir.exists()
                && start.elapsed() < Duration::from_secs(1)
            {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill_all(Duration::from_secs(1));
        self.remove();
    }
}

/// The number after `key` in a flat-keyed cgroup file (`key N` per line).
fn count(text: &str, key: &str) -> u64 {
    text.lines()
        .find_map(|line| {
            let (name, value) = line.split_once(' ')?;
            (name == key).then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_and_v2_hierarchies_are_found_from_proc() {
        let mountinfo = "\
35 25 0:30 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
36 25 0:31 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids
37 25 0:32 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw";
        let cgroup = "4:memory:/srv/a\n8:pids:/srv/a\n0::/";
        assert_eq!(
            parse(mountinfo, cgroup),
            Ok(Hierarchy::V1 {
                memory: Some("/sys/fs/cgroup/memory/srv/a".into()),
                pids: Some("/sys/fs/cgroup/pids/srv/a".into()),
            })
        );
        let v2 = "37 25 0:32 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw";
        assert_eq!(
            parse(v2, "0::/user.slice/x"),
            Ok(Hierarchy::V2 {
                group: "/sys/fs/cgroup/user.slice/x".into()
            })
        );
        assert_eq!(count("oom_kill_disable 0\noom_kill 3\n", "oom_kill"), 3);
    }
}
