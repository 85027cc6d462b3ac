//! [`Limits`]: what a command may use (memory, processes, CPU time, written file size, open
//! files), enforced by a cgroup per command where the machine offers one and by rlimits
//! otherwise.

use std::ops::ControlFlow;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::FileType;
use rustix::process::Resource;
use serde_json::{Map, Value};

use super::cgroup::{Group, Hierarchy, Settings};
use super::hook::Hook;
use super::tree;

/// The shortest and the longest wait between two readings of a command's CPU time: the next
/// reading comes when the time left could be used up on every core at once, within these.
const CPU_POLL: (Duration, Duration) = (Duration::from_millis(10), Duration::from_millis(500));

const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * MIB;

/// The memory a command may use unless told otherwise: 4 GiB.
pub const DEFAULT_MEMORY: u64 = 4 * GIB;
/// How many processes (threads included) a command may have at once unless told otherwise:
/// 4 096.
pub const DEFAULT_PROCESSES: u64 = 4096;
/// The largest file a command may write unless told otherwise: 8 GiB.
pub const DEFAULT_FILE_SIZE: u64 = 8 * GIB;
/// How many files each process of a command may have open unless told otherwise: 4 096.
pub const DEFAULT_OPEN_FILES: u64 = 4096;

/// What a command may use. Each limit is `None` for no limit; [`Limits::default`] bounds
/// everything but CPU time (the command's timeout bounds its time).
///
/// | limit | default | enforced by | when exceeded |
/// |---|---|---|---|
/// | [`memory`](Self::memory) | [4 GiB](DEFAULT_MEMORY) | the command's cgroup (memory and swap, all its processes together); else `RLIMIT_DATA`, each process alone | the kernel kills a process of the command |
/// | [`processes`](Self::processes) | [4 096](DEFAULT_PROCESSES) | the command's cgroup (`pids`: processes and threads, together); no fallback | a `fork` fails |
/// | [`cpu_time`](Self::cpu_time) | none | the command's cgroup (`cpuacct` on v1, `cpu.stat` on v2: all its processes together, those gone included), read while it runs; else `RLIMIT_CPU`, each process alone | every process of the command is killed (`SIGKILL`); without the cgroup, `SIGXCPU` to the process, `SIGKILL` a second later |
/// | [`file_size`](Self::file_size) | [8 GiB](DEFAULT_FILE_SIZE) | `RLIMIT_FSIZE`, each file of each process | the write stops at the limit: `SIGXFSZ` (or `EFBIG` where it is ignored) |
/// | [`open_files`](Self::open_files) | [4 096](DEFAULT_OPEN_FILES) | `RLIMIT_NOFILE`, each process | `open` fails with `EMFILE` |
///
/// An rlimit is only ever lowered: where the grading process has a lower one already, the
/// command keeps that. A command that runs as root can raise its rlimits and leave its cgroup
/// (it can do anything else too): run it in the [`Sandbox`](super::Sandbox), which drops its
/// capabilities and does not mount `/sys`.
///
/// **A limit hit anywhere in the command's process tree** fails the command, whatever its
/// exit code, with the limit named:
///
/// - memory, processes: the cgroup's own counts (`oom_kill`, `pids.events`);
/// - CPU time: the cgroup's total, read while the command runs, at the latest when the time
///   left could be used up on every core at once (from every 500 ms down to every 10 ms), and
///   once more when it is over. Without a cgroup that counts CPU time, only a command whose
///   shell itself was ended by `SIGXCPU` is told apart;
/// - file size: the kernel keeps no count of the writes it stopped, so the command's shell
///   ended by `SIGXFSZ`, or, once the command is over, a file the command modified that has
///   exactly the limit's size, in its working directory or a writable bind of its sandbox
///   (looked for without following links or entering other filesystems, in at most a
///   million entries). A file cut in the sandbox's private `/tmp`, outside those directories,
///   or removed before the command ended, was still cut at the limit, but is not told apart;
///   and a file that the command wrote to exactly the limit's size counts as cut.
/// - open files: an `open` that fails with `EMFILE` cannot be told from any other failure; it
///   shows only as the command's own.
///
/// ```
/// use std::time::Duration;
/// use grader_core::sandbox::Limits;
///
/// let tight = Limits::default()
///     .memory(512 * 1024 * 1024)
///     .processes(64)
///     .cpu_time(Duration::from_secs(30));
/// assert_eq!(tight.memory_bytes(), Some(512 * 1024 * 1024));
/// assert_eq!(Limits::none().processes_max(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    memory: Option<u64>,
    processes: Option<u64>,
    cpu_time: Option<Duration>,
    file_size: Option<u64>,
    open_files: Option<u64>,
}

impl Default for Limits {
    /// Every limit at its documented default; no CPU-time limit.
    fn default() -> Self {
        Limits {
            memory: Some(DEFAULT_MEMORY),
            processes: Some(DEFAULT_PROCESSES),
            cpu_time: None,
            file_size: Some(DEFAULT_FILE_SIZE),
            open_files: Some(DEFAULT_OPEN_FILES),
        }
    }
}

impl Limits {
    /// No limit at all: the command starts exactly as it would without this module.
    #[must_use]
    pub fn none() -> Self {
        Limits {
            memory: None,
            processes: None,
            cpu_time: None,
            file_size: None,
            open_files: None,
        }
    }

    /// The most memory, in bytes, the command's processes may use together (`None`: no limit).
    #[must_use]
    pub fn memory(mut self, bytes: impl Into<Option<u64>>) -> Self {
        self.memory = bytes.into();
        self
    }

    /// The most processes and threads the command may have at once (`None`: no limit).
    #[must_use]
    pub fn processes(mut self, count: impl Into<Option<u64>>) -> Self {
        self.processes = count.into();
        self
    }

    /// The most CPU time the command's processes may use together (`None`: no limit), where a
    /// cgroup counts it; without one, each process alone, rounded up to whole seconds.
    #[must_use]
    pub fn cpu_time(mut self, time: impl Into<Option<Duration>>) -> Self {
        self.cpu_time = time.into();
        self
    }

    /// The largest file, in bytes, the command may write (`None`: no limit).
    #[must_use]
    pub fn file_size(mut self, bytes: impl Into<Option<u64>>) -> Self {
        self.file_size = bytes.into();
        self
    }

    /// How many files each process of the command may have open (`None`: no limit).
    #[must_use]
    pub fn open_files(mut self, count: impl Into<Option<u64>>) -> Self {
        self.open_files = count.into();
        self
    }

    /// The memory limit in bytes.
    #[must_use]
    pub fn memory_bytes(&self) -> Option<u64> {
        self.memory
    }

    /// The process limit.
    #[must_use]
    pub fn processes_max(&self) -> Option<u64> {
        self.processes
    }

    /// The CPU-time limit.
    #[must_use]
    pub fn cpu_time_max(&self) -> Option<Duration> {
        self.cpu_time
    }

    /// The file-size limit in bytes.
    #[must_use]
    pub fn file_size_bytes(&self) -> Option<u64> {
        self.file_size
    }

    /// The open-file limit.
    #[must_use]
    pub fn open_files_max(&self) -> Option<u64> {
        self.open_files
    }

    /// Whether no limit is set.
    #[must_use]
    pub fn is_none(&self) -> bool {
        *self == Limits::none()
    }

    /// The limits that differ from the defaults, as recorded in `_parameters.limits`
    /// (`null` for a default limit turned off). Empty when every limit is the default.
    pub(crate) fn changes(&self) -> Map<String, Value> {
        let defaults = Limits::default();
        let mut changed = Map::new();
        let mut note = |name: &str, mine: Option<u64>, default: Option<u64>| {
            if mine != default {
                changed.insert(name.into(), mine.map_or(Value::Null, Value::from));
            }
        };
        note("memory_bytes", self.memory, defaults.memory);
        note("processes", self.processes, defaults.processes);
        note("cpu_seconds", self.cpu_seconds(), defaults.cpu_seconds());
        note("file_size_bytes", self.file_size, defaults.file_size);
        note("open_files", self.open_files, defaults.open_files);
        changed
    }

    fn cpu_seconds(&self) -> Option<u64> {
        self.cpu_time.map(|time| {
            let whole = time.as_secs();
            if time.subsec_nanos() > 0 {
                whole.saturating_add(1)
            } else {
                whole
            }
        })
    }

    /// Makes what enforces the limits for one command: its cgroup (where the machine offers
    /// one) and the hook that joins it and sets the rlimits in the command's process.
    ///
    /// # Errors
    /// When the cgroup was made but its `cgroup.procs` cannot be opened.
    pub(crate) fn prepare(&self) -> std::io::Result<Applied> {
        let mut applied = Applied {
            limits: *self,
            group: None,
            by: Map::new(),
            hook: Hook::empty(),
            file_cap: None,
            since: SystemTime::now(),
        };
        if self.is_none() {
            return Ok(applied);
        }
        let mut memory_by_rlimit = self.memory.is_some();
        if self.memory.is_some() || self.processes.is_some() || self.cpu_time.is_some() {
            let settings = Settings {
                memory: self.memory,
                processes: self.processes,
                cpu: self.cpu_time.is_some(),
            };
            let made = Hierarchy::find()
                .map_err(str::to_owned)
                .and_then(|hierarchy| {
                    Group::make(hierarchy, &settings).map(|group| (hierarchy, group))
                });
            match made {
                Ok((hierarchy, group)) => {
                    let (memory, pids) = hierarchy.has();
                    let label = Value::from(hierarchy.label());
                    if memory && self.memory.is_some() {
                        applied.by.insert("memory".into(), label.clone());
                        memory_by_rlimit = false;
                    }
                    if pids && self.processes.is_some() {
                        applied.by.insert("processes".into(), label.clone());
                    }
                    if group.counts_cpu() && self.cpu_time.is_some() {
                        applied.by.insert("cpu_time".into(), label);
                    }
                    applied.hook.procs = group.procs()?;
                    applied.group = Some(group);
                }
                Err(why) => {
                    tracing::debug!(%why, "no cgroup for the command's limits; using rlimits");
                }
            }
            if self.processes.is_some() && !applied.by.contains_key("processes") {
                applied.by.insert(
                    "processes".into(),
                    Value::from("not enforced: no pids cgroup here"),
                );
            }
        }
        let cpu_by_group = applied.by.contains_key("cpu_time");
        let mut rlimit = |name: &str, resource: Resource, value: Option<u64>, hard_extra: u64| {
            let value = value?;
            let current = rustix::process::getrlimit(resource);
            let cap = |limit: Option<u64>| limit.map_or(value, |have| have.min(value));
            let soft = cap(current.current);
            let hard = cap(current.maximum)
                .max(soft)
                .saturating_add(hard_extra)
                .min(current.maximum.unwrap_or(u64::MAX));
            applied.hook.rlimits.push((resource, soft, hard));
            // A limit the cgroup enforces keeps its rlimit as a second line, unnamed.
            applied
                .by
                .entry(name)
                .or_insert_with(|| Value::from("rlimit"));
            Some(soft)
        };
        if memory_by_rlimit {
            rlimit("memory", Resource::Data, self.memory, 0);
        }
        // A second between SIGXCPU and SIGKILL, as the kernel's own soft/hard pair allows.
        // Where the cgroup counts CPU time the rlimit is only a second line, a second past the
        // limit: the kernel's per-process count is made of ticks and can reach the limit a
        // little before the group's exact total does, which would end a process at the limit
        // without the group having passed it.
        let cpu_seconds = self
            .cpu_seconds()
            .map(|seconds| seconds.saturating_add(u64::from(cpu_by_group)));
        rlimit("cpu_time", Resource::Cpu, cpu_seconds, 1);
        let file_cap = rlimit("file_size", Resource::Fsize, self.file_size, 0);
        rlimit("open_files", Resource::Nofile, self.open_files, 0);
        applied.file_cap = file_cap;
        Ok(applied)
    }
}

/// The limits of one running command: its cgroup, the hook to install, how each limit is
/// enforced, the size a file is cut at, and when the command started (for the files it cut).
pub(crate) struct Applied {
    limits: Limits,
    group: Option<Group>,
    by: Map<String, Value>,
    pub(crate) hook: Hook,
    file_cap: Option<u64>,
    since: SystemTime,
}

/// A look, once the command is over, for a file it cut at the file-size limit: one of exactly
/// `cap` bytes modified since `since`, beneath `dirs`. Made by [`Applied::file_scan`], run on a
/// thread that may block.
pub(crate) struct FileScan {
    cap: u64,
    since: SystemTime,
    dirs: Vec<PathBuf>,
}

impl FileScan {
    /// Whether such a file is there.
    pub(crate) fn run(self) -> bool {
        // Timestamps of some filesystems are coarse: a file cut in the command's first moments
        // may carry a time a little before it started.
        let since = self
            .since
            .checked_sub(Duration::from_secs(2))
            .unwrap_or(UNIX_EPOCH);
        let since = since.duration_since(UNIX_EPOCH).unwrap_or_default();
        for dir in &self.dirs {
            let Ok(root) = tree::open_trusted(dir, |link| {
                link.st_uid == 0 || link.st_uid == rustix::process::geteuid().as_raw()
            }) else {
                continue;
            };
            let mut found = false;
            let _ = tree::walk(root.as_fd(), |entry| {
                let meta = entry.meta;
                if meta.kind == FileType::RegularFile
                    && meta.size == self.cap
                    && meta.modified >= since
                {
                    found = true;
                    return Ok(ControlFlow::Break(()));
                }
                Ok(ControlFlow::Continue(()))
            });
            if found {
                return true;
            }
        }
        false
    }
}

/// What the limits made of a finished command: `info.limits`, the peak memory, and the limit
/// it exceeded (the message).
pub(crate) struct Outcome {
    pub(crate) by: Map<String, Value>,
    pub(crate) peak_memory: Option<u64>,
    pub(crate) exceeded: Option<String>,
}

impl Applied {
    /// Takes the hook out, to install on the command.
    pub(crate) fn take_hook(&mut self) -> Hook {
        std::mem::replace(&mut self.hook, Hook::empty())
    }

    /// Resolves once the command's processes have used their CPU time together; never where
    /// there is no such limit or no cgroup counting it.
    pub(crate) async fn cpu_spent(&self) {
        let counted = self.group.as_ref().filter(|group| group.counts_cpu());
        let (Some(limit), Some(group)) = (self.limits.cpu_time, counted) else {
            return std::future::pending().await;
        };
        let cpus = u32::try_from(cores()).unwrap_or(u32::MAX).max(1);
        loop {
            let Some(used) = group.cpu_time() else {
                return std::future::pending().await;
            };
            let Some(left) = limit.checked_sub(used).filter(|left| !left.is_zero()) else {
                return;
            };
            tokio::time::sleep((left / cpus).clamp(CPU_POLL.0, CPU_POLL.1)).await;
        }
    }

    /// Kills every process of the command now (its CPU time is spent), without waiting.
    pub(crate) fn kill_now(&self) {
        if let Some(group) = &self.group {
            group.kill_once();
        }
    }

    /// The look for a file the command cut at the file-size limit, beneath `dirs` (where it
    /// could write and the file would stay), if there is such a limit.
    pub(crate) fn file_scan(&self, dirs: Vec<PathBuf>) -> Option<FileScan> {
        Some(FileScan {
            cap: self.file_cap?,
            since: self.since,
            dirs,
        })
    }

    /// Reads what the cgroup saw and removes it, once every process of the command is gone;
    /// `exit` is the command's exit code as recorded (`-N` for signal N, or bash's `128 + N`),
    /// `cut` whether a [`FileScan`] found a file cut at the file-size limit.
    pub(crate) fn finish(mut self, exit: Option<i64>, cut: bool) -> Outcome {
        let group = self.group.take();
        // The sweeper found nothing of the command left; its cgroup, which no process of it can
        // leave, makes sure (a process that both left the process group and cleared its
        // environment is in it too).
        if let Some(group) = &group {
            group.kill_all();
        }
        let seen = group.as_ref().map(Group::seen).unwrap_or_default();
        if let Some(group) = group {
            group.remove();
        }
        let limits = self.limits;
        let signal = |n: i64| exit == Some(-n) || exit == Some(128 + n);
        let exceeded = if seen.out_of_memory {
            limits
                .memory
                .map(|bytes| format!("memory limit {} exceeded", show_bytes(bytes)))
        } else if seen.process_limit_hit {
            limits
                .processes
                .map(|count| format!("process limit {count} reached"))
        } else if let Some(limit) = limits
            .cpu_time
            .filter(|limit| seen.cpu_time.is_some_and(|used| used >= *limit) || signal(24))
        {
            Some(format!("CPU time limit {} exceeded", show_duration(limit)))
        } else if limits.file_size.is_some() && (cut || signal(25)) {
            limits
                .file_size
                .map(|bytes| format!("file size limit {} exceeded", show_bytes(bytes)))
        } else {
            None
        };
        Outcome {
            by: std::mem::take(&mut self.by),
            peak_memory: seen.peak_memory,
            exceeded,
        }
    }
}

impl Drop for Applied {
    fn drop(&mut self) {
        // A grading dropped before it finished, or a command whose start failed half-way:
        // whatever is in its group is killed, and the group removed now or, while a process
        // is not yet reaped, later.
        if let Some(group) = self.group.take() {
            group.kill_all();
            group.remove();
        }
    }
}

/// How many cores the command's processes can run on at once (this process's, which they
/// inherit), found once.
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// A duration as a limit is written: `1s`, `1.5s`, `250ms`.
fn show_duration(duration: Duration) -> String {
    if duration.subsec_nanos() == 0 {
        format!("{}s", duration.as_secs())
    } else if duration.as_secs() == 0 && duration.subsec_nanos().is_multiple_of(1_000_000) {
        format!("{}ms", duration.subsec_millis())
    } else {
        format!("{}s", duration.as_secs_f64())
    }
}

/// The directories the command's groups are made in, when `limits` need a group and the
/// machine offers one: where the watcher looks for them if this process dies.
pub(crate) fn group_parents(limits: &Limits) -> Vec<PathBuf> {
    if limits.memory.is_none() && limits.processes.is_none() && limits.cpu_time.is_none() {
        return Vec::new();
    }
    Hierarchy::find()
        .map(|hierarchy| hierarchy.parents().into_iter().map(PathBuf::from).collect())
        .unwrap_or_default()
}

/// Bytes as a person reads them: `512 MiB`, `4 GiB`, `1.5 GiB`, `1000 bytes`.
pub(crate) fn show_bytes(bytes: u64) -> String {
    for (unit, size) in [("GiB", GIB), ("MiB", MIB), ("KiB", 1024)] {
        if bytes >= size {
            let whole = bytes / size;
            let tenths = (bytes % size) * 10 / size;
            return if tenths == 0 && bytes.is_multiple_of(size) {
                format!("{whole} {unit}")
            } else {
                format!("{whole}.{tenths} {unit}")
            };
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_as_a_person_writes_them() {
        assert_eq!(show_bytes(512 * MIB), "512 MiB");
        assert_eq!(show_bytes(4 * GIB), "4 GiB");
        assert_eq!(show_bytes(3 * GIB / 2), "1.5 GiB");
        assert_eq!(show_bytes(1000), "1000 bytes");
    }

    #[test]
    fn durations_read_as_a_limit_is_written() {
        assert_eq!(show_duration(Duration::from_secs(1)), "1s");
        assert_eq!(show_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(show_duration(Duration::from_millis(250)), "250ms");
    }

    #[test]
    fn only_changed_limits_are_recorded() {
        assert!(Limits::default().changes().is_empty());
        let changed = Limits::default()
            .memory(MIB)
            .processes(None)
            .cpu_time(Duration::from_millis(1500))
            .changes();
        assert_eq!(
            Value::Object(changed),
            serde_json::json!({"memory_bytes": 1_048_576, "processes": null, "cpu_seconds": 2})
        );
    }

    #[test]
    fn no_limits_prepare_nothing() {
        let applied = Limits::none().prepare().expect("nothing to fail");
        assert!(applied.hook.is_empty() && applied.group.is_none() && applied.by.is_empty());
    }

    #[test]
    fn rlimits_are_only_lowered() {
        let have = rustix::process::getrlimit(Resource::Nofile);
        let applied = Limits::none()
            .open_files(u64::MAX - 1)
            .prepare()
            .expect("prepared");
        let (_, soft, hard) = applied.hook.rlimits[0];
        assert_eq!(Some(soft), have.current.or(Some(u64::MAX - 1)));
        assert!(hard <= have.maximum.unwrap_or(u64::MAX));
    }
}
