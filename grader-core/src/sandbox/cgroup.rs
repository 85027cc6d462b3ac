//! A cgroup per command, for the memory, process and CPU-time limits: cgroup v1 (a group in
//! each of the `memory` and `pids` hierarchies, and in `cpuacct` when a CPU-time limit is set)
//! or v2 (one group with the `memory` and `pids` controllers, whose `cpu.stat` counts its CPU
//! time), made under the grading process's own group, read once the command is over and
//! removed.
//!
//! The hierarchies are found once per process from `/proc/self/mountinfo` and
//! `/proc/self/cgroup`. On a machine where neither version offers the controllers to this
//! process (no permission, or cgroup v2 whose controllers the parent group does not delegate),
//! [`Hierarchy::find`] says why, and the limits fall back to rlimits.

use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// Where this process's groups are, for the controllers the limits use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Hierarchy {
    /// cgroup v1: this process's group in the `memory`, the `pids` and the `cpuacct`
    /// hierarchy (any may be missing).
    V1 {
        memory: Option<PathBuf>,
        pids: Option<PathBuf>,
        cpu: Option<PathBuf>,
    },
    /// cgroup v2: this process's group, whose children get the `memory` and `pids`
    /// controllers.
    V2 { group: PathBuf },
}

/// What the grading process learned of the cgroups here, once.
static FOUND: OnceLock<Result<Hierarchy, String>> = OnceLock::new();

/// Groups that could not be removed yet (a process of the command not yet reaped), retried
/// whenever a group is made or removed.
static LEFT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// How long a group of a process that is gone must have been left before
/// [`Hierarchy::sweep_stale`] removes it.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(60);

/// How long [`Group::remove`] tries to remove a group whose killed processes are not yet
/// reaped.
const REMOVE_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

impl Hierarchy {
    /// This process's hierarchies, or why there are none it can use (found once).
    pub(crate) fn find() -> Result<&'static Hierarchy, &'static str> {
        FOUND
            .get_or_init(|| {
                let mountinfo = fs::read_to_string("/proc/self/mountinfo")
                    .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
                let cgroup = fs::read_to_string("/proc/self/cgroup")
                    .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
                let found = Hierarchy::parse(&mountinfo, &cgroup)?;
                found.check()?;
                found.sweep_stale();
                Ok(found)
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// The hierarchies from the texts of `/proc/self/mountinfo` and `/proc/self/cgroup`:
    /// v1 where a v1 `memory` or `pids` hierarchy is mounted, else v2.
    pub(crate) fn parse(mountinfo: &str, cgroup: &str) -> Result<Hierarchy, String> {
        let mut v1_memory = None;
        let mut v1_pids = None;
        let mut v1_cpu = None;
        let mut v2 = None;
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
                            "cpuacct" => v1_cpu = Some(mount.clone()),
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
            let cpu = place(v1_cpu, Some("cpuacct"));
            return Ok(Hierarchy::V1 { memory, pids, cpu });
        }
        match place(v2, None) {
            Some(group) => Ok(Hierarchy::V2 { group }),
            None => Err("no cgroup hierarchy with the memory or pids controller is mounted".into()),
        }
    }

    /// Removes the empty groups of grading processes that no longer run (killed before they
    /// could remove their own: `grader-PID-N` where no process PID exists, made over
    /// [`STALE_AFTER`] ago), so that they do not pile up beside this process's. A group still
    /// holding a process is not removable and is left; so is one whose PID now belongs to
    /// another process, and one made in the last minute (perhaps by a process of another PID
    /// namespace, setting it up).
    fn sweep_stale(&self) {
        for parent in self.parents() {
            let Ok(entries) = fs::read_dir(parent) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(pid) = name
                    .to_str()
                    .and_then(|name| name.strip_prefix("grader-"))
                    .and_then(|rest| rest.split_once('-'))
                    .and_then(|(pid, n)| n.parse::<u64>().ok().and(pid.parse::<u32>().ok()))
                else {
                    continue;
                };
                // A group made moments ago may be another PID namespace's process setting it
                // up (its PID means nothing here): only groups left a while are swept.
                let old = entry
                    .metadata()
                    .and_then(|metadata| metadata.modified())
                    .ok()
                    .and_then(|made| made.elapsed().ok())
                    .is_some_and(|age| age >= STALE_AFTER);
                if old && pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
                {
                    let _ = remove_dir(&entry.path());
                }
            }
        }
    }

    /// Fails unless a group can be made here: tries one, and for v2 delegates the controllers
    /// to this group's children first.
    fn check(&self) -> Result<(), String> {
        if let Hierarchy::V2 { group } = self {
            delegate(group)?;
        }
        let probe = Group::make(self, &Settings::default())?;
        probe.remove();
        Ok(())
    }

    /// How the limits are applied, for `info.limits`: `cgroup v1` or `cgroup v2`.
    pub(crate) fn label(&self) -> &'static str {
        match self {
            Hierarchy::V1 { .. } => "cgroup v1",
            Hierarchy::V2 { .. } => "cgroup v2",
        }
    }

    /// Whether groups here bound memory and processes.
    pub(crate) fn has(&self) -> (bool, bool) {
        match self {
            Hierarchy::V1 { memory, pids, .. } => (memory.is_some(), pids.is_some()),
            Hierarchy::V2 { .. } => (true, true),
        }
    }

    /// The directories this process's groups are made in (one per v1 hierarchy, or the v2
    /// group): where the watcher looks for them if this process dies.
    pub(crate) fn parents(&self) -> Vec<&Path> {
        match self {
            Hierarchy::V1 { memory, pids, cpu } => memory
                .iter()
                .chain(pids)
                .chain(cpu)
                .map(PathBuf::as_path)
                .collect(),
            Hierarchy::V2 { group } => vec![group.as_path()],
        }
    }
}

/// The start of the name of every group this process makes: `grader-<pid>-`, followed by a
/// number.
pub(crate) fn group_prefix() -> String {
    format!("grader-{}-", std::process::id())
}

/// `mountinfo` escapes space, tab, newline and backslash as octal.
fn unescape(field: &str) -> String {
    field
        .replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// Turns on the `memory` and `pids` controllers for the children of `group` (cgroup v2),
/// unless they are on.
fn delegate(group: &Path) -> Result<(), String> {
    let control = group.join("cgroup.subtree_control");
    let on = fs::read_to_string(&control)
        .map_err(|e| format!("cannot read {}: {e}", control.display()))?;
    let missing: Vec<&str> = ["memory", "pids"]
        .into_iter()
        .filter(|name| !on.split_whitespace().any(|c| c == *name))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let line: Vec<String> = missing.iter().map(|name| format!("+{name}")).collect();
    fs::write(&control, line.join(" ")).map_err(|e| {
        format!(
            "cannot delegate the {} controller(s) to sub-groups of {} ({e}); cgroup v2 needs a \
             delegated group (systemd's Delegate=yes, or a group this process does not share \
             with its own processes)",
            missing.join(" and "),
            group.display()
        )
    })
}

/// The limits a group enforces, and whether it counts CPU time (v1 makes a `cpuacct` group
/// for that; a v2 group always counts it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Settings {
    pub(crate) memory: Option<u64>,
    pub(crate) processes: Option<u64>,
    pub(crate) cpu: bool,
}

/// One command's group: its directories (one per v1 hierarchy, or the one v2 group).
#[derive(Debug)]
pub(crate) struct Group {
    memory: Option<PathBuf>,
    pids: Option<PathBuf>,
    cpu: Option<PathBuf>,
    v2: bool,
}

/// What a group saw of its command.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Seen {
    /// The most memory the command used at once, in bytes, where the kernel tells.
    pub(crate) peak_memory: Option<u64>,
    /// The kernel killed a process of the command for exceeding the memory limit.
    pub(crate) out_of_memory: bool,
    /// A fork of the command was refused at the process limit.
    pub(crate) process_limit_hit: bool,
    /// The CPU time all the command's processes used together, where the group counts it.
    pub(crate) cpu_time: Option<std::time::Duration>,
}

impl Group {
    /// Makes a group for one command under `hierarchy`, with `settings`.
    ///
    /// # Errors
    /// The message, when a directory cannot be made or a limit cannot be written.
    pub(crate) fn make(hierarchy: &Hierarchy, settings: &Settings) -> Result<Group, String> {
        retry_left();
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!("{}{}", group_prefix(), NEXT.fetch_add(1, Ordering::Relaxed));
        let mut group = Group {
            memory: None,
            pids: None,
            cpu: None,
            v2: false,
        };
        let made = |dir: PathBuf| -> Result<PathBuf, String> {
            fs::create_dir(&dir)
                .map(|()| dir.clone())
                .map_err(|e| format!("cannot make the cgroup {}: {e}", dir.display()))
        };
        match hierarchy {
            Hierarchy::V1 { memory, pids, cpu } => {
                if let Some(parent) = memory {
                    group.memory = Some(made(parent.join(&name))?);
                }
                if let Some(parent) = pids {
                    match made(parent.join(&name)) {
                        Ok(dir) => group.pids = Some(dir),
                        Err(error) => {
                            group.remove();
                            return Err(error);
                        }
                    }
                }
                if let (true, Some(parent)) = (settings.cpu, cpu) {
                    // Without it the CPU-time limit falls back to the rlimit: not a reason to
                    // give up the memory and process limits.
                    match made(parent.join(&name)) {
                        Ok(dir) => group.cpu = Some(dir),
                        Err(why) => tracing::debug!(%why, "no cpuacct group for the command"),
                    }
                }
            }
            Hierarchy::V2 { group: parent } => {
                let dir = made(parent.join(&name))?;
                group.memory = Some(dir.clone());
                group.pids = Some(dir.clone());
                // `cpu.stat` is in every v2 group, with or without the cpu controller.
                group.cpu = Some(dir);
                group.v2 = true;
            }
        }
        if let Err(error) = group.set(settings) {
            group.remove();
            return Err(error);
        }
        Ok(group)
    }

    fn set(&self, settings: &Settings) -> Result<(), String> {
        if let (Some(dir), Some(bytes)) = (&self.memory, settings.memory) {
            if self.v2 {
                write(dir, "memory.max", bytes)?;
                // No swap to spill to (the file is missing without swap accounting).
                let _ = fs::write(dir.join("memory.swap.max"), "0");
            } else {
                write(dir, "memory.limit_in_bytes", bytes)?;
                // Memory and swap together (the file is missing without swap accounting).
                let _ = fs::write(dir.join("memory.memsw.limit_in_bytes"), bytes.to_string());
            }
        }
        if let (Some(dir), Some(count)) = (&self.pids, settings.processes) {
            write(dir, "pids.max", count)?;
        }
        Ok(())
    }

    /// The `cgroup.procs` files to join, opened for writing.
    ///
    /// # Errors
    /// When one cannot be opened.
    pub(crate) fn procs(&self) -> io::Result<Vec<OwnedFd>> {
        let mut dirs = self.dirs();
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

    /// What the group saw. Read once the command's processes are gone.
    pub(crate) fn seen(&self) -> Seen {
        let mut seen = Seen::default();
        if let Some(dir) = &self.memory {
            let (peak, events) = if self.v2 {
                ("memory.peak", "memory.events")
            } else {
                ("memory.max_usage_in_bytes", "memory.oom_control")
            };
            seen.peak_memory = fs::read_to_string(dir.join(peak))
                .ok()
                .and_then(|text| text.trim().parse().ok());
            let events = fs::read_to_string(dir.join(events)).unwrap_or_default();
            seen.out_of_memory = count(&events, "oom_kill") > 0;
        }
        if let Some(dir) = &self.pids {
            let events = fs::read_to_string(dir.join("pids.events")).unwrap_or_default();
            seen.process_limit_hit = count(&events, "max") > 0;
        }
        seen.cpu_time = self.cpu_time();
        seen
    }

    /// Whether the group counts the CPU time of its processes.
    pub(crate) fn counts_cpu(&self) -> bool {
        self.cpu.is_some()
    }

    /// The CPU time the group's processes used so far, those gone included (v1:
    /// `cpuacct.usage`, in nanoseconds; v2: `usage_usec` of `cpu.stat`).
    pub(crate) fn cpu_time(&self) -> Option<std::time::Duration> {
        let dir = self.cpu.as_ref()?;
        if self.v2 {
            let stat = fs::read_to_string(dir.join("cpu.stat")).ok()?;
            let micros = stat
                .lines()
                .filter_map(|line| line.split_once(' '))
                .find(|(name, _)| *name == "usage_usec")
                .and_then(|(_, n)| n.trim().parse().ok())?;
            Some(std::time::Duration::from_micros(micros))
        } else {
            let nanos = fs::read_to_string(dir.join("cpuacct.usage")).ok()?;
            nanos
                .trim()
                .parse()
                .ok()
                .map(std::time::Duration::from_nanos)
        }
    }

    /// The group's directories, the first of them the one whose `cgroup.procs` lists every
    /// process of the command.
    fn dirs(&self) -> Vec<&PathBuf> {
        self.memory
            .iter()
            .chain(self.pids.iter())
            .chain(self.cpu.iter())
            .collect()
    }

    /// Sends SIGKILL once to every process in the group (v2: through `cgroup.kill` where the
    /// kernel has it, which also reaches what forks meanwhile). Does not wait.
    pub(crate) fn kill_once(&self) {
        let Some(dir) = self.dirs().first().copied() else {
            return;
        };
        if self.v2 && fs::write(dir.join("cgroup.kill"), "1").is_ok() {
            return;
        }
        let Ok(text) = fs::read_to_string(dir.join("cgroup.procs")) else {
            return;
        };
        for pid in text
            .lines()
            .filter_map(|line| line.trim().parse().ok())
            .filter_map(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }

    /// Sends SIGKILL to every process in the group until none is left (or a second has
    /// passed): a process cannot leave its cgroup, so this reaches what left the process group
    /// and cleared its environment too.
    pub(crate) fn kill_all(&self) {
        let Some(dir) = self.dirs().first().copied() else {
            return;
        };
        if self.v2 {
            let _ = fs::write(dir.join("cgroup.kill"), "1");
        }
        let procs = dir.join("cgroup.procs");
        for _ in 0..1000 {
            let Ok(text) = fs::read_to_string(&procs) else {
                return;
            };
            let pids: Vec<rustix::process::Pid> = text
                .lines()
                .filter_map(|line| line.trim().parse().ok())
                .filter_map(rustix::process::Pid::from_raw)
                .collect();
            if pids.is_empty() {
                return;
            }
            for pid in pids {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Removes the group's directories. A process killed in the group keeps it busy (`EBUSY`)
    /// until its parent reaps it, though `cgroup.procs` no longer lists it; what a command left
    /// behind is reaped by init, which takes its time on a loaded machine. So removal is tried
    /// again for up to [`REMOVE_WAIT`]; a group still busy then is left for the next group made
    /// or removed to try again (those left from before are tried here too).
    pub(crate) fn remove(self) {
        let mut dirs: Vec<PathBuf> = self
            .memory
            .into_iter()
            .chain(self.pids)
            .chain(self.cpu)
            .collect();
        dirs.dedup();
        let started = std::time::Instant::now();
        loop {
            dirs.retain(|dir| remove_dir(dir).is_err());
            if dirs.is_empty() || started.elapsed() >= REMOVE_WAIT {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        retry_left();
        if !dirs.is_empty() {
            lock_left().extend(dirs);
        }
    }
}

fn lock_left() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LEFT.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Tries again to remove the groups left behind.
fn retry_left() {
    let mut left = lock_left();
    left.retain(|dir| remove_dir(dir).is_err());
}

/// Removes a group's directory (gone already counts as removed). A group that still holds a
/// process (a zombie not yet reaped) cannot be removed: `EBUSY`.
fn remove_dir(dir: &Path) -> io::Result<()> {
    match fs::remove_dir(dir) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

fn write(dir: &Path, file: &str, value: u64) -> Result<(), String> {
    let path = dir.join(file);
    fs::write(&path, value.to_string())
        .map_err(|e| format!("cannot write {value} to {}: {e}", path.display()))
}

/// The count after `key` in a flat keyed file (`oom_kill 1`, `max 3`).
fn count(text: &str, key: &str) -> u64 {
    text.lines()
        .filter_map(|line| line.split_once(' '))
        .find(|(name, _)| *name == key)
        .and_then(|(_, n)| n.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "\
30 25 0:26 / /sys/fs/cgroup ro,nosuid shared:9 - tmpfs tmpfs ro,mode=755
31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid shared:10 - cgroup2 cgroup2 rw
35 30 0:31 / /sys/fs/cgroup/memory rw,nosuid shared:16 - cgroup cgroup rw,memory
38 30 0:34 / /sys/fs/cgroup/pids rw,nosuid shared:19 - cgroup cgroup rw,pids
";

    #[test]
    fn v1_is_used_where_its_controllers_are_mounted() {
        let cgroup = "8:pids:/\n4:memory:/job/7\n0::/\n";
        assert_eq!(
            Hierarchy::parse(HYBRID, cgroup),
            Ok(Hierarchy::V1 {
                memory: Some(PathBuf::from("/sys/fs/cgroup/memory/job/7")),
                pids: Some(PathBuf::from("/sys/fs/cgroup/pids")),
                cpu: None,
            })
        );
    }

    #[test]
    fn v1_counts_cpu_time_where_cpuacct_is_mounted() {
        let mountinfo = format!(
            "{HYBRID}36 30 0:32 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
        );
        let cgroup = "8:pids:/\n5:cpu,cpuacct:/grading\n4:memory:/\n0::/\n";
        assert_eq!(
            Hierarchy::parse(&mountinfo, cgroup),
            Ok(Hierarchy::V1 {
                memory: Some(PathBuf::from("/sys/fs/cgroup/memory")),
                pids: Some(PathBuf::from("/sys/fs/cgroup/pids")),
                cpu: Some(PathBuf::from("/sys/fs/cgroup/cpu,cpuacct/grading")),
            })
        );
    }

    #[test]
    fn v2_alone_gives_this_process_group() {
        let mountinfo = "31 25 0:27 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
        assert_eq!(
            Hierarchy::parse(mountinfo, "0::/user.slice/grading.service\n"),
            Ok(Hierarchy::V2 {
                group: PathBuf::from("/sys/fs/cgroup/user.slice/grading.service"),
            })
        );
    }

    #[test]
    fn a_mount_of_a_subtree_is_followed_from_its_root() {
        let mountinfo = "31 25 0:27 /job /mnt/cg\\040here rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            Hierarchy::parse(mountinfo, "0::/job/run\n"),
            Ok(Hierarchy::V2 {
                group: PathBuf::from("/mnt/cg here/run"),
            })
        );
    }

    #[test]
    fn no_cgroup_mount_says_so() {
        let error = Hierarchy::parse("25 1 0:2 / / rw - ext4 /dev/vda rw\n", "0::/\n");
        assert!(error.is_err_and(|e| e.contains("no cgroup hierarchy")));
    }

    #[test]
    fn keyed_counts_are_read_by_name() {
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n";
        assert_eq!(count(v1, "oom_kill"), 2);
        assert_eq!(count("max 0\n", "max"), 0);
        assert_eq!(count("low 0\nhigh 4\n", "oom_kill"), 0);
    }

    /// A v2 group made in a directory laid out as cgroupfs would be: the limits are written
    /// where v2 keeps them and read back from its event files.
    #[test]
    fn a_v2_group_writes_and_reads_v2_files() {
        let parent = std::env::temp_dir().join(format!("grader-cgroup-v2-{}", std::process::id()));
        fs::create_dir_all(&parent).expect("parent");
        let hierarchy = Hierarchy::V2 {
            group: parent.clone(),
        };
        let settings = Settings {
            memory: Some(1 << 20),
            processes: Some(8),
            cpu: true,
        };
        let group = Group::make(&hierarchy, &settings).expect("made");
        let dir = group.memory.clone().expect("dir");
        assert_eq!(
            fs::read_to_string(dir.join("memory.max")).ok(),
            Some("1048576".into())
        );
        assert_eq!(
            fs::read_to_string(dir.join("memory.swap.max")).ok(),
            Some("0".into())
        );
        assert_eq!(
            fs::read_to_string(dir.join("pids.max")).ok(),
            Some("8".into())
        );
        fs::write(dir.join("memory.peak"), "524288\n").expect("peak");
        fs::write(dir.join("memory.events"), "low 0\noom 1\noom_kill 1\n").expect("events");
        fs::write(dir.join("pids.events"), "max 3\n").expect("pids");
        fs::write(
            dir.join("cpu.stat"),
            "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n",
        )
        .expect("cpu");
        let seen = group.seen();
        assert_eq!(seen.peak_memory, Some(524_288));
        assert!(seen.out_of_memory && seen.process_limit_hit);
        assert!(group.counts_cpu());
        assert_eq!(seen.cpu_time, Some(std::time::Duration::from_millis(1500)));
        // Not empty (as cgroupfs's files are not ordinary files): left, then removed later.
        group.remove();
        assert!(dir.exists());
        for file in fs::read_dir(&dir).expect("read").flatten() {
            fs::remove_file(file.path()).expect("rm");
        }
        retry_left();
        assert!(!dir.exists());
        fs::remove_dir_all(&parent).expect("clean");
    }

    /// Groups of processes that are gone are removed when a process first finds the
    /// hierarchy; this process's, a live process's and other directories are kept.
    #[test]
    fn the_groups_of_processes_gone_are_swept() {
        let parent =
            std::env::temp_dir().join(format!("grader-cgroup-stale-{}", std::process::id()));
        fs::create_dir_all(&parent).expect("parent");
        let mut child = std::process::Command::new("true").spawn().expect("true");
        let gone = child.id();
        child.wait().expect("reaped");
        let names = [
            format!("grader-{gone}-0"),
            format!("grader-{gone}-12"),
            format!("grader-{}-3", std::process::id()),
            "grader-1-0".to_owned(),
            format!("grader-{gone}-x"),
            "other".to_owned(),
        ];
        let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for name in &names {
            fs::create_dir(parent.join(name)).expect("dir");
            fs::File::open(parent.join(name))
                .and_then(|dir| dir.set_modified(an_hour_ago))
                .expect("made an hour ago");
        }
        // A group of a process that is gone, made just now: perhaps being set up by a process
        // of another PID namespace.
        let young = format!("grader-{gone}-99");
        fs::create_dir(parent.join(&young)).expect("dir");
        Hierarchy::V2 {
            group: parent.clone(),
        }
        .sweep_stale();
        let kept: Vec<bool> = names
            .iter()
            .map(|name| parent.join(name).exists())
            .collect();
        assert_eq!(kept, [false, false, true, true, true, true]);
        assert!(
            parent.join(&young).exists(),
            "a group made just now is left"
        );
        fs::remove_dir_all(&parent).expect("clean");
    }
}
