//! The sandbox a workspace's sessions share, and how each session's command is started in it.
//!
//! Under isolation, one bubblewrap sandbox (a *holder*: `sleep` under bwrap's own init, in new
//! user, PID, mount, IPC, UTS and, by default, network namespaces) is started with the
//! workspace, and again by the next session after a discard; every session joins its
//! namespaces with `nsenter`. Ending it is one signal: the
//! PID namespace's init is killed, and the kernel kills every process in the namespace with
//! it, those the agent detached included (`setsid -f`, `nohup`, double forks). [`Launcher::stop`]
//! returns only once bwrap has reaped that init, which the kernel lets exit only after the
//! last process of its namespace is gone.
//!
//! When the server runs as root, bwrap runs as the workspace's own unprivileged uid (dropped
//! to before it starts): root inside is that uid outside. bwrap, the holder and every session
//! are in the workspace's cgroup (its memory and process limits), and start with no
//! descriptor of the serving process but their streams. The sandbox's `/` is read-only but for
//! the root, `/tmp`, `/dev` and what the author mounts. Before grading the sandbox is *sealed*
//! ([`Launcher::seal`]): every process the agent started is killed but those the template
//! declared it grades, no session starts any more, and graders get a home of their own at
//! [`GRADING_DIR`] that nothing of the agent's existed to prepare.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use grader_core::sandbox::Limits;
use rustix::process::{Pid, Resource, Signal, kill_process, kill_process_group};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::Mutex;

use super::cgroup::Group;
use super::egress::{Egress, Routes};
use super::error::WorkspaceError;
use super::hook::{Hook, KEPT_FD};
use super::mount::Mount;
use super::root::Root;

/// The `PATH` the host-side helpers (bwrap, nsenter) run with: they get no other variable,
/// so neither the serving process's secrets nor a session's variables reach them. It is also
/// the grader's `PATH` inside the sandbox, where every one of these is read-only.
pub(crate) const HELPER_PATH: &str =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Where graders find their own home and temporary directory inside the sandbox: a host
/// directory bound there, which the agent cannot write, filled when the sandbox is sealed.
pub(crate) const GRADING_DIR: &str = "/run/grader";

/// What the sandbox runs to stay alive between sessions. Its first line is the readiness
/// signal, printed from inside once bwrap has finished building the namespaces (as the
/// reference's holder).
const HOLDER: [&str; 3] = ["sh", "-c", "echo ready; exec sleep 2147483647"];

/// A bound on bwrap's start-up: a sandbox that is not ready by then is an error, not a hang.
const READY_WITHIN: Duration = Duration::from_secs(30);

/// A bound on waiting for bwrap to reap the namespace's init once it was killed.
const END_WITHIN: Duration = Duration::from_secs(10);

/// How long sealing may take to stop the agent's processes before it ends the whole sandbox
/// instead.
const SEAL_WITHIN: Duration = Duration::from_secs(3);

/// The capabilities a session gives up, as the reference's sessions (`--cap-drop`): it is root
/// in the sandbox's own user namespace, but cannot mount, reconfigure its network or open raw
/// sockets there.
const DROPPED_CAPABILITIES: &str = "--bounding-set=-sys_admin,-net_admin,-net_raw";

/// What a grader's command keeps of root's powers inside the sandbox: none (it reads the
/// agent's files as their owner, and cannot trace, signal or outrank anything).
const GRADER_CAPABILITIES: [&str; 2] = ["--bounding-set=-all", "--inh-caps=-all"];

/// What the shared sandbox is made of.
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    /// bwrap, as `grader_core::sandbox::Sandbox::check` found it.
    pub(crate) bwrap: PathBuf,
    /// `nsenter`, which sessions join the sandbox with.
    pub(crate) nsenter: PathBuf,
    /// Whether the sandbox shares the host's network (otherwise it has none, not even the
    /// host's loopback).
    pub(crate) network: bool,
    /// Whether this bwrap can set a tmpfs's mode and size (`--perms`, `--size`: bubblewrap
    /// 0.5 and 0.6+): `/tmp` is made world-writable with it, as the reference's.
    pub(crate) tmpfs_modes: bool,
    /// Whether this bwrap can bind a descriptor (`--bind-fd`, bubblewrap 0.7+): the root is
    /// then bound from a descriptor the serving process opened, so that the uid bwrap runs as
    /// needs no access to the root's parents.
    pub(crate) bind_fd: bool,
    /// The routes out of a sandbox with its own network (the proxy, the peers).
    pub(crate) egress: Option<Egress>,
    /// The sandbox's own `/etc/hosts` (the host's, plus the peers), where there are peers.
    /// (a private temporary directory holding `hosts`, removed with the workspace).
    pub(crate) hosts: Option<Arc<tempfile::TempDir>>,
    /// The author's mounts, after the system's and before the root.
    pub(crate) mounts: Vec<Mount>,
    /// The host uid bwrap runs as (root inside is this uid outside), when the server runs as
    /// root; otherwise bwrap runs as the server's own user.
    pub(crate) uid: Option<u32>,
    /// The workspace's limits: memory and processes for its cgroup, the others as rlimits
    /// of every session.
    pub(crate) limits: Limits,
    /// The size of the sandbox's `/tmp` (a tmpfs), if bounded.
    pub(crate) tmp_size: Option<u64>,
    /// The host directory bound at [`GRADING_DIR`] (the serving user's, mode 0755).
    pub(crate) grading: Arc<tempfile::TempDir>,
}

/// What the template declared it grades of what the agent left running: processes of these
/// names (their `comm`) and the processes listening on these TCP ports, each with its
/// descendants, keep running when the sandbox is sealed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Graded {
    pub(crate) processes: Vec<String>,
    pub(crate) ports: Vec<u16>,
}

/// Whether `bwrap` understands `--perms` before `--tmpfs` (bubblewrap 0.5+); checked once per
/// process, as `grader_core::sandbox::Sandbox::check` checks bwrap itself.
pub(crate) fn tmpfs_modes(bwrap: &Path) -> bool {
    static PROBED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PROBED.get_or_init(|| probe_tmpfs_modes(bwrap))
}

fn probe_tmpfs_modes(bwrap: &Path) -> bool {
    std::process::Command::new(bwrap)
        .args(["--unshare-user", "--ro-bind", "/", "/", "--perms", "1777"])
        .args(["--tmpfs", "/tmp", "--", "true"])
        .env_clear()
        .env("PATH", HELPER_PATH)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Whether `bwrap` can bind a descriptor (`--bind-fd`, bubblewrap 0.7+); checked once.
pub(crate) fn bind_fd(bwrap: &Path) -> bool {
    static PROBED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PROBED.get_or_init(|| {
        std::process::Command::new(bwrap)
            .arg("--help")
            .env_clear()
            .env("PATH", HELPER_PATH)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .is_ok_and(|out| {
                out.stdout
                    .windows(b"--bind-fd".len())
                    .any(|w| w == b"--bind-fd")
            })
    })
}

impl Spec {
    /// bwrap's command line for the holder: the reference's system mounts, the root at the
    /// guest path (from [`KEPT_FD`] where bwrap binds descriptors), the graders' directory, the
    /// author's mounts, the peers' hosts file, new namespaces, `/` read-only.
    fn holder_argv(&self, root: &Path, guest: &str) -> Vec<OsString> {
        let mut argv: Vec<OsString> = vec![self.bwrap.clone().into()];
        let mut push = |items: &[&str]| argv.extend(items.iter().map(OsString::from));
        push(&[
            "--die-with-parent",
            "--unshare-user",
            "--uid",
            "0",
            "--gid",
            "0",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
        ]);
        if !self.network {
            push(&["--unshare-net"]);
        }
        // The reference's DEFAULT_SYSTEM_MOUNTS, as BashGrader's sandbox mounts them (the host's
        // own links for a merged /usr, read-only binds where /lib and /bin are directories).
        argv.extend(grader_core::sandbox::system_mounts());
        let mut push = |items: &[&str]| argv.extend(items.iter().map(OsString::from));
        if self.tmpfs_modes {
            push(&["--perms", "1777"]);
            if let Some(size) = self.tmp_size {
                argv.push("--size".into());
                argv.push(size.to_string().into());
            }
        }
        let mut push = |items: &[&str]| argv.extend(items.iter().map(OsString::from));
        push(&["--tmpfs", "/tmp"]);
        let parent = Path::new(guest)
            .parent()
            .map_or_else(|| OsString::from("/"), |p| p.as_os_str().to_owned());
        argv.push("--dir".into());
        argv.push(parent);
        if self.bind_fd {
            argv.push("--bind-fd".into());
            argv.push(KEPT_FD.to_string().into());
        } else {
            argv.push("--bind".into());
            argv.push(root.as_os_str().to_owned());
        }
        argv.push(guest.into());
        argv.push("--bind".into());
        argv.push(self.grading.path().as_os_str().to_owned());
        argv.push(GRADING_DIR.into());
        // The author's mounts after the root, as the reference's, so that one can go inside
        // it (a read-only `tests/`); the hosts file last, so that it survives a mount over
        // `/etc`.
        for mount in &self.mounts {
            argv.extend(mount.bwrap_args());
        }
        if let Some(hosts) = &self.hosts {
            argv.push("--ro-bind".into());
            argv.push(hosts.path().join("hosts").into());
            argv.push("/etc/hosts".into());
        }
        // Nothing but the mounts above is writable: no `/root/.bash_profile`, no `/usr/local`
        // shim, nothing a grader's start-up could read that the agent wrote.
        argv.push("--remount-ro".into());
        argv.push("/".into());
        argv.push("--chdir".into());
        argv.push(guest.into());
        argv.push("--".into());
        argv.extend(HOLDER.iter().map(OsString::from));
        argv
    }

    /// The rlimits every session gets: open files, written file size and CPU time always;
    /// processes where no cgroup bounds them (per uid, which is the workspace's own when the
    /// server runs as root).
    fn session_rlimits(&self, cgroup_processes: bool) -> Vec<(Resource, u64, u64)> {
        let mut rlimits = Vec::new();
        let mut add = |resource: Resource, value: Option<u64>| {
            let Some(value) = value else { return };
            let current = rustix::process::getrlimit(resource);
            let cap = |limit: Option<u64>| limit.map_or(value, |have| have.min(value));
            let (soft, hard) = (cap(current.current), cap(current.maximum));
            rlimits.push((resource, soft.min(hard), hard));
        };
        add(Resource::Nofile, self.limits.open_files_max());
        add(Resource::Fsize, self.limits.file_size_bytes());
        add(
            Resource::Cpu,
            self.limits
                .cpu_time_max()
                .map(|time| time.as_secs() + u64::from(time.subsec_nanos() > 0)),
        );
        if !cgroup_processes && self.uid.is_some() {
            add(Resource::Nproc, self.limits.processes_max());
        }
        rlimits
    }
}

/// One running sandbox: bwrap (our child) and the init of its PID namespace.
struct Holder {
    /// bwrap's outer process; killed if dropped.
    monitor: Child,
    /// The host PID of the namespace's init (bwrap's reaper, PID 1 inside).
    init: Pid,
    /// The host PID of the holder's `sleep` (PID 2 inside): bwrap's init exits, and the
    /// namespace with it, when it does.
    sleeper: Pid,
    /// The routes out of its network, served while it runs.
    routes: Option<Routes>,
    /// Its cgroup, where the machine offers one.
    group: Option<Arc<Group>>,
}

/// bwrap while it starts: dropped before it is ready (the start failed, or the future
/// starting it was dropped), it stops bwrap, kills whatever bwrap had started, and only then
/// lets bwrap go, so that no init of a half-built sandbox outlives it.
struct Starting {
    monitor: Option<Child>,
    group: Option<Arc<Group>>,
}

impl Drop for Starting {
    fn drop(&mut self) {
        if let Some(monitor) = &mut self.monitor
            && matches!(monitor.try_wait(), Ok(None))
            && let Some(pid) = monitor.id().and_then(|pid| i32::try_from(pid).ok())
        {
            kill_tree(pid);
        }
        if let Some(group) = &self.group {
            group.kill_all(Duration::from_secs(1));
        }
    }
}

/// Kills bwrap's process `pid` and what it started: stopped first (so that it cannot start
/// another process meanwhile), its children killed (an init takes its PID namespace with it),
/// then itself.
fn kill_tree(pid: i32) {
    let Some(target) = Pid::from_raw(pid) else {
        return;
    };
    let _ = kill_process(target, Signal::STOP);
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(200) {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let stopped = state
            .rsplit_once(')')
            .and_then(|(_, after)| after.split_whitespace().next())
            .is_none_or(|state| matches!(state, "T" | "t" | "Z" | "X"));
        if stopped {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    for child in children_of(pid) {
        let _ = kill_process(child, Signal::KILL);
    }
    let _ = kill_process(target, Signal::KILL);
}

impl Holder {
    async fn start(
        spec: &Spec,
        root: &Path,
        guest: &str,
        root_fd: Option<OwnedFd>,
    ) -> Result<Self, WorkspaceError> {
        let argv = spec.holder_argv(root, guest);
        let group = match Group::make(
            spec.limits.memory_bytes(),
            spec.limits.processes_max(),
        ) {
            Ok(group) => Some(Arc::new(group)),
            Err(why) => {
                warn_once(&why);
                None
            }
        };
        let mut command = Command::new(&argv[0]);
        command
            .args(&argv[1..])
            .current_dir("/")
            .env_clear()
            .env("PATH", HELPER_PATH)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(uid) = spec.uid {
            command.uid(uid).gid(uid);
        }
        let procs = match &group {
            Some(group) => group.procs().map_err(|e| {
                WorkspaceError::Sandbox(format!("cannot open the workspace's cgroup: {e}"))
            })?,
            None => Vec::new(),
        };
        Hook {
            procs,
            rlimits: Vec::new(),
            keep: if spec.bind_fd { root_fd } else { None },
        }
        .install(&mut command);
        let monitor = command.spawn().map_err(|e| {
            WorkspaceError::Sandbox(format!("cannot run {}: {e}", spec.bwrap.display()))
        })?;
        let mut starting = Starting {
            monitor: Some(monitor),
            group: group.clone(),
        };
        let Some(monitor) = starting.monitor.as_mut() else {
            return Err(WorkspaceError::Sandbox("bwrap did not start".to_owned()));
        };
        let mut line = String::new();
        if let Some(stdout) = monitor.stdout.take() {
            let mut reader = BufReader::new(stdout);
            // A read error or the bound reached leaves `line` short of "ready": reported below.
            let _ = tokio::time::timeout(READY_WITHIN, reader.read_line(&mut line)).await;
        }
        if line != "ready\n" {
            let _ = monitor.start_kill();
            let mut said = String::new();
            if let Some(mut stderr) = monitor.stderr.take() {
                let _ = tokio::time::timeout(END_WITHIN, stderr.read_to_string(&mut said)).await;
            }
            return Err(WorkspaceError::Sandbox(format!(
                "bwrap did not become ready: {}",
                said.trim()
            )));
        }
        let init = monitor
            .id()
            .and_then(|pid| i32::try_from(pid).ok())
            .and_then(child_of)
            .ok_or_else(|| {
                WorkspaceError::Sandbox("bwrap's namespace init could not be found".to_owned())
            })?;
        let sleeper = child_of(init.as_raw_nonzero().get()).ok_or_else(|| {
            WorkspaceError::Sandbox("the sandbox's holder could not be found".to_owned())
        })?;
        let routes = match &spec.egress {
            Some(egress) => {
                let pid = init.as_raw_nonzero().get().unsigned_abs();
                Some(egress.open(pid, HELPER_PATH).await?)
            }
            None => None,
        };
        let Some(monitor) = starting.monitor.take() else {
            return Err(WorkspaceError::Sandbox("bwrap did not start".to_owned()));
        };
        // Started: from here on the holder ends it.
        starting.group = None;
        Ok(Holder {
            monitor,
            init,
            sleeper,
            routes,
            group,
        })
    }

    /// Whether the sandbox is up and staying up: bwrap runs, and neither its init nor the
    /// holder has exited or has a SIGKILL pending (as when the agent ran `kill -9 -1`: the
    /// signal is pending before that command returns, so the next session sees it).
    fn alive(&mut self) -> bool {
        let init = self.init.as_raw_nonzero().get();
        matches!(self.monitor.try_wait(), Ok(None))
            && living(init).is_some()
            && living(self.sleeper.as_raw_nonzero().get()) == Some(init)
    }

    /// Kills the namespace's init (and so everything in the namespace), then waits for bwrap
    /// to reap it; then whatever is left in its cgroup.
    async fn end(&mut self) {
        // The routes first: their listeners hold the network namespace.
        self.routes = None;
        let _ = kill_process(self.init, Signal::KILL);
        if tokio::time::timeout(END_WITHIN, self.monitor.wait())
            .await
            .is_err()
        {
            let _ = self.monitor.kill().await;
        }
        if let Some(group) = self.group.take() {
            let _ = tokio::task::spawn_blocking(move || drop(group)).await;
        }
    }

    /// The host PIDs of the processes in the sandbox's PID namespace now.
    fn processes(&self) -> Vec<i32> {
        let init = self.init.as_raw_nonzero().get();
        let Ok(namespace) = std::fs::read_link(format!("/proc/{init}/ns/pid")) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return found;
        };
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            if std::fs::read_link(entry.path().join("ns/pid")).is_ok_and(|ns| ns == namespace) {
                found.push(pid);
            }
        }
        found
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        // Only while bwrap runs: once it has exited it has reaped the init, whose PID may
        // then name another process.
        if matches!(self.monitor.try_wait(), Ok(None)) {
            let _ = kill_process(self.init, Signal::KILL);
        }
    }
}

/// Says once per process why the workspace's limits are not enforced by a cgroup.
fn warn_once(why: &str) {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        tracing::warn!(
            %why,
            "no cgroup for the workspace's memory and process limits; processes are bounded \
             per uid (rlimit) where the workspace has its own, memory is not"
        );
    });
}

/// The parent of `pid` while it lives with no SIGKILL pending (read from `/proc`).
fn living(pid: i32) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let mut parent = None;
    for line in status.lines() {
        let (key, value) = line.split_once(':')?;
        let value = value.trim();
        match key {
            "State" if value.starts_with(['Z', 'X']) => return None,
            "PPid" => parent = value.parse().ok(),
            "SigPnd" | "ShdPnd" => {
                let pending = u64::from_str_radix(value, 16).ok()?;
                if pending & (1 << (Signal::KILL.as_raw() - 1)) != 0 {
                    return None;
                }
            }
            _ => {}
        }
    }
    parent
}

/// The parent of `pid` (from `/proc/PID/stat`).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
    let (_, after) = stat.rsplit_once(')')?;
    after.split_whitespace().nth(1)?.parse().ok()
}

/// The children of `parent`, read from `/proc`.
fn children_of(parent: i32) -> Vec<Pid> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| parent_of(*pid) == Some(parent))
        .filter_map(Pid::from_raw)
        .collect()
}

/// The child of `parent`, read from `/proc`.
fn child_of(parent: i32) -> Option<Pid> {
    children_of(parent).into_iter().next()
}

/// Where the shared sandbox stands.
enum State {
    /// None running; the next session starts one.
    Idle,
    /// Running.
    Up(Box<Holder>),
    /// The workspace stopped: no session starts.
    Stopped,
}

/// A session's process: its command's child, and under no isolation the process group the
/// command leads (killed when the session ends).
pub(crate) struct Process {
    /// The child; killed if dropped.
    pub(crate) child: Child,
    /// The process group to kill when the session ends (only without a sandbox).
    group: Option<Pid>,
}

impl Process {
    /// Sends signal `number` to the session's command: the shell itself, not `nsenter` in
    /// front of it (under isolation, the shell is nsenter's one child, exec'd in place
    /// through `setpriv` and `env`). Nothing happens if it has exited.
    pub(crate) fn signal(&self, number: i32) {
        let Some(child) = self.child.id().and_then(|pid| i32::try_from(pid).ok()) else {
            return;
        };
        let target = match self.group {
            Some(_) => Pid::from_raw(child),
            None => child_of(child),
        };
        if let (Some(target), Some(signal)) = (target, Signal::from_named_raw(number)) {
            let _ = kill_process(target, signal);
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(group) = self.group {
            let _ = kill_process_group(group, Signal::KILL);
        }
    }
}

/// What sealing did: how many of the agent's processes it stopped, how many it kept (the
/// ones the template grades), and whether it had to end the whole sandbox.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Sealed {
    pub(crate) stopped: usize,
    pub(crate) kept: usize,
    pub(crate) restarted: bool,
    /// What the sandbox's cgroup saw of its limits until then.
    pub(crate) seen: super::cgroup::Seen,
}

/// Starts sessions' commands: in the shared sandbox (starting it on first use), or directly in
/// the root where there is no sandbox.
pub(crate) struct Launcher {
    /// The sandbox's makings; `None` runs sessions without isolation.
    spec: Option<Spec>,
    /// The root on the host.
    root: PathBuf,
    /// Where sessions start: the guest path under isolation, else the root.
    cwd: String,
    /// The workspace's own variables, over the serving process's.
    env: BTreeMap<String, String>,
    /// What keeps running when the sandbox is sealed.
    graded: Graded,
    /// The shared sandbox.
    state: Mutex<State>,
    /// Whether the sandbox is sealed for grading: no session starts until it is discarded.
    sealed: std::sync::atomic::AtomicBool,
    /// The running sandbox's init, for a `Drop` that cannot wait on `state` (0: none).
    init: AtomicI32,
}

impl Launcher {
    /// A launcher for sessions in `root`; `cwd` is where they start.
    pub(crate) fn new(
        spec: Option<Spec>,
        root: PathBuf,
        cwd: String,
        env: BTreeMap<String, String>,
        graded: Graded,
    ) -> Self {
        Launcher {
            spec,
            root,
            cwd,
            env,
            graded,
            state: Mutex::new(State::Idle),
            sealed: std::sync::atomic::AtomicBool::new(false),
            init: AtomicI32::new(0),
        }
    }

    /// Starts the shared sandbox now rather than on the first session (no-op without
    /// isolation, or when it runs).
    pub(crate) async fn prepare(&self) -> Result<(), WorkspaceError> {
        let Some(spec) = &self.spec else {
            return Ok(());
        };
        let mut state = self.state.lock().await;
        self.ensure_up(spec, &mut state).await
    }

    /// Starts the sandbox unless one runs (a sandbox whose holder has died, as when the agent
    /// ran `kill -9 -1`, is replaced); not after `stop`.
    async fn ensure_up(&self, spec: &Spec, state: &mut State) -> Result<(), WorkspaceError> {
        if let State::Up(holder) = state
            && !holder.alive()
        {
            holder.end().await;
            *state = State::Idle;
        }
        if matches!(state, State::Idle) {
            let root_fd = if spec.bind_fd {
                Some(
                    rustix::fs::open(
                        &self.root,
                        rustix::fs::OFlags::PATH
                            | rustix::fs::OFlags::DIRECTORY
                            | rustix::fs::OFlags::CLOEXEC,
                        rustix::fs::Mode::empty(),
                    )
                    .map_err(|e| WorkspaceError::Root {
                        path: self.root.clone(),
                        source: e.into(),
                    })?,
                )
            } else {
                None
            };
            let holder = Holder::start(spec, &self.root, &self.cwd, root_fd).await?;
            self.init
                .store(holder.init.as_raw_nonzero().get(), Ordering::SeqCst);
            *state = State::Up(Box::new(holder));
        }
        Ok(())
    }

    /// Starts a session's command (`None`: a login shell reading stdin) with the session's
    /// variables over the workspace's, its three streams piped; refused once the sandbox is
    /// sealed for grading, unless `sealed_too` (the template's own [`run`](super::Workspace::run)).
    ///
    /// With a `terminal` (the slave side of a pseudo-terminal; only under isolation) the
    /// command gets it as its three streams and its controlling terminal instead.
    pub(crate) async fn spawn(
        &self,
        command: Option<&[u8]>,
        session_env: &[(String, String)],
        terminal: Option<&OwnedFd>,
        sealed_too: bool,
    ) -> Result<Process, String> {
        if !sealed_too && self.sealed.load(Ordering::SeqCst) {
            return Err(
                "the task is being graded: no session starts until the next task".to_owned(),
            );
        }
        let env = self.environment(session_env);
        let mut payload: Vec<OsString> = vec!["bash".into()];
        match command {
            Some(command) => {
                payload.push("-lc".into());
                payload.push(OsString::from_vec(command.to_vec()));
            }
            None => payload.push("-l".into()),
        }
        let Some(spec) = &self.spec else {
            let mut cmd = Command::new(&payload[0]);
            cmd.args(&payload[1..])
                .current_dir(&self.root)
                .env_clear()
                .envs(env)
                .process_group(0);
            Hook::default().install(&mut cmd);
            let child = launch(&mut cmd, None).map_err(|e| format!("cannot spawn shell: {e}"))?;
            let group = child
                .id()
                .and_then(|pid| i32::try_from(pid).ok())
                .and_then(Pid::from_raw);
            return Ok(Process { child, group });
        };
        // Held while nsenter starts, so that `stop` cannot end the sandbox (freeing its init's
        // PID) between reading the PID and nsenter opening its namespaces.
        let mut state = self.state.lock().await;
        if !sealed_too && self.sealed.load(Ordering::SeqCst) {
            return Err(
                "the task is being graded: no session starts until the next task".to_owned(),
            );
        }
        self.ensure_up(spec, &mut state)
            .await
            .map_err(|e| e.to_string())?;
        let State::Up(holder) = &*state else {
            return Err("the workspace has stopped".to_owned());
        };
        let mut cmd = Command::new(&spec.nsenter);
        cmd.arg("-t")
            .arg(holder.init.as_raw_nonzero().get().to_string())
            .args(["-U", "-m", "-p", "-n", "-i", "-u", "-r", "--"]);
        if Path::new("/usr/bin/setpriv").is_file() {
            cmd.args(["/usr/bin/setpriv", DROPPED_CAPABILITIES, "--"]);
        }
        if terminal.is_some() {
            // A new session whose controlling terminal is its stdin: `/dev/tty` opens, job
            // control works. nsenter's child leads no group, so setsid execs in place.
            cmd.args(["/usr/bin/setsid", "--ctty"]);
        }
        let mut chdir = OsString::from("--chdir=");
        chdir.push(&self.cwd);
        cmd.arg("/usr/bin/env").arg(chdir).arg("-i");
        for (key, value) in env {
            let mut pair = key;
            pair.push("=");
            pair.push(value);
            cmd.arg(pair);
        }
        cmd.args(payload)
            .current_dir("/")
            .env_clear()
            .env("PATH", HELPER_PATH);
        let group = holder.group.as_ref();
        let procs = match group {
            Some(group) => group
                .procs()
                .map_err(|e| format!("cannot open the workspace's cgroup: {e}"))?,
            None => Vec::new(),
        };
        let cgroup_processes = group.is_some_and(|group| group.has().1);
        Hook {
            procs,
            rlimits: spec.session_rlimits(cgroup_processes),
            keep: None,
        }
        .install(&mut cmd);
        let child =
            launch(&mut cmd, terminal).map_err(|e| format!("cannot join the sandbox: {e}"))?;
        drop(state);
        Ok(Process { child, group: None })
    }

    /// How a grader's command joins the shared sandbox (starting it if needed): `nsenter` into
    /// its namespaces with every capability dropped, then `env --chdir=CWD`, to be followed by
    /// the shell. `None` without isolation (the command then runs in the root).
    pub(crate) async fn join_prefix(&self) -> Result<Option<Vec<OsString>>, WorkspaceError> {
        let Some(spec) = &self.spec else {
            return Ok(None);
        };
        let mut state = self.state.lock().await;
        self.ensure_up(spec, &mut state).await?;
        let State::Up(holder) = &*state else {
            return Err(WorkspaceError::Sandbox(
                "the workspace has stopped".to_owned(),
            ));
        };
        let mut prefix: Vec<OsString> = vec![
            spec.nsenter.clone().into(),
            "-t".into(),
            holder.init.as_raw_nonzero().get().to_string().into(),
        ];
        prefix.extend(["-U", "-m", "-p", "-n", "-i", "-u", "-r", "--"].map(OsString::from));
        if Path::new("/usr/bin/setpriv").is_file() {
            prefix.push("/usr/bin/setpriv".into());
            prefix.extend(GRADER_CAPABILITIES.map(OsString::from));
            prefix.push("--".into());
        }
        let mut chdir = OsString::from("--chdir=");
        chdir.push(&self.cwd);
        prefix.extend([OsString::from("/usr/bin/env"), chdir]);
        Ok(Some(prefix))
    }

    /// Seals the sandbox for grading: no session starts any more (until
    /// [`discard`](Self::discard)), every process of the sandbox but its holder and what the
    /// template declared it grades (with their descendants) is killed, and graders get a fresh
    /// home and temporary directory under [`GRADING_DIR`]. Where the agent's processes do not
    /// all stop within [`SEAL_WITHIN`], the whole sandbox is ended and graders run in a fresh
    /// one. Idempotent: sealing a sealed sandbox kills what is not kept again.
    pub(crate) async fn seal(&self) -> Sealed {
        self.sealed.store(true, Ordering::SeqCst);
        let mut sealed = Sealed::default();
        let Some(spec) = &self.spec else {
            return sealed;
        };
        let mut state = self.state.lock().await;
        if let State::Up(holder) = &mut *state {
            let exempt: HashSet<i32> = [holder.init, holder.sleeper]
                .map(|pid| pid.as_raw_nonzero().get())
                .into();
            let graded = self.graded.clone();
            let init = holder.init.as_raw_nonzero().get();
            let start = Instant::now();
            let mut stopped = HashSet::new();
            let mut kept;
            let done = loop {
                let processes = holder.processes();
                let keep = kept_processes(init, &processes, &graded);
                let targets: Vec<i32> = processes
                    .iter()
                    .copied()
                    .filter(|pid| !exempt.contains(pid) && !keep.contains(pid))
                    .collect();
                kept = keep;
                if targets.is_empty() {
                    break true;
                }
                for pid in targets {
                    if let Some(target) = Pid::from_raw(pid) {
                        let _ = kill_process(target, Signal::KILL);
                        stopped.insert(pid);
                    }
                }
                if start.elapsed() >= SEAL_WITHIN {
                    break false;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            };
            sealed.stopped = stopped.len();
            sealed.kept = kept.len();
            sealed.seen = holder.group.as_ref().map(|g| g.seen()).unwrap_or_default();
            if !done {
                tracing::warn!(
                    "the agent's processes did not all stop within {SEAL_WITHIN:?}; grading in \
                     a fresh sandbox"
                );
                holder.end().await;
                self.init.store(0, Ordering::SeqCst);
                *state = State::Idle;
                sealed.restarted = true;
                sealed.kept = 0;
            }
        }
        if let Err(error) = fresh_grading_dirs(spec) {
            tracing::warn!(%error, "cannot prepare the graders' directory");
        }
        sealed
    }

    /// Whether the sandbox is sealed for grading.
    pub(crate) fn is_sealed(&self) -> bool {
        self.sealed.load(Ordering::SeqCst)
    }

    /// The root on the host.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// A session's environment: the serving process's without the harness's configuration
    /// and without credential-like variables (`grader_core::bash::secrets`: `HUD_*`, `*_KEY`,
    /// `*_TOKEN`, …), then the proxy's variables where hosts are allowed, then the workspace's
    /// variables, then the session's.
    fn environment(&self, session_env: &[(String, String)]) -> BTreeMap<OsString, OsString> {
        let mut env: BTreeMap<OsString, OsString> = std::env::vars_os()
            .filter(|(key, _)| !withheld(key))
            .collect();
        let proxy = self.proxy_environment();
        for (key, value) in proxy
            .iter()
            .map(|(k, v)| (k, v))
            .chain(self.env.iter())
            .chain(session_env.iter().map(|(k, v)| (k, v)))
        {
            env.insert(key.into(), value.into());
        }
        env
    }

    /// The proxy variables sessions get (none unless hosts are allowed under isolation).
    pub(crate) fn proxy_environment(&self) -> Vec<(String, String)> {
        self.spec
            .as_ref()
            .and_then(|spec| spec.egress.as_ref())
            .map(Egress::environment)
            .unwrap_or_default()
    }

    /// Ends the shared sandbox and every process in it; the next session starts a fresh one,
    /// unsealed.
    pub(crate) async fn discard(&self) {
        let mut state = self.state.lock().await;
        if let State::Up(holder) = &mut *state {
            holder.end().await;
            self.init.store(0, Ordering::SeqCst);
            *state = State::Idle;
        }
        self.sealed.store(false, Ordering::SeqCst);
    }

    /// Ends the shared sandbox and every process in it, for good.
    pub(crate) async fn stop(&self) {
        let mut state = self.state.lock().await;
        if let State::Up(holder) = &mut *state {
            holder.end().await;
        }
        self.init.store(0, Ordering::SeqCst);
        *state = State::Stopped;
    }

    /// Kills the shared sandbox's init without waiting (for `Drop`).
    pub(crate) fn kill_now(&self) {
        if let Some(init) = Pid::from_raw(self.init.swap(0, Ordering::SeqCst)) {
            let _ = kill_process(init, Signal::KILL);
        }
    }

    /// Whether sessions run in the sandbox.
    pub(crate) fn isolated(&self) -> bool {
        self.spec.is_some()
    }

    /// The host PID of the running sandbox's init, if one runs (for checks from the host).
    pub(crate) fn init_pid(&self) -> Option<u32> {
        u32::try_from(self.init.load(Ordering::SeqCst))
            .ok()
            .filter(|pid| *pid != 0)
    }
}

/// Whether a variable of the serving process is withheld from sessions: what `BashGrader`
/// withholds from its commands (credential-like names, `HUD_*`).
pub(crate) fn withheld(name: &OsStr) -> bool {
    grader_core::bash::secrets::looks_like_a_secret(name)
}

/// The graders' `home`, `tmp` and `pycache` under the grading directory, made afresh (what
/// was there removed, never following a link) and owned by the sandbox's uid.
fn fresh_grading_dirs(spec: &Spec) -> Result<(), super::RootError> {
    let root = Root::open(spec.grading.path())?;
    let root = match spec.uid {
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
fn kept_processes(init: i32, processes: &[i32], graded: &Graded) -> HashSet<i32> {
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
    let failed =
        |e: std::io::Error| WorkspaceError::Sandbox(format!("cannot make the graders' directory: {e}"));
    let dir = tempfile::Builder::new()
        .prefix("grader-grading-")
        .tempdir()
        .map_err(failed)?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).map_err(failed)?;
    Ok(dir)
}

/// Spawns `cmd` with its three streams piped, or all three on `terminal`, killed if its handle
/// is dropped.
fn launch(cmd: &mut Command, terminal: Option<&OwnedFd>) -> std::io::Result<Child> {
    match terminal {
        Some(slave) => cmd
            .stdin(Stdio::from(slave.try_clone()?))
            .stdout(Stdio::from(slave.try_clone()?))
            .stderr(Stdio::from(slave.try_clone()?)),
        None => cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    };
    cmd.kill_on_drop(true).spawn()
}

/// Whether `name` can be a session variable's name (`env` would split it otherwise).
pub(crate) fn valid_variable(name: &str) -> bool {
    !name.is_empty() && !name.contains(['=', '\0'])
}

/// The program `name` on the serving process's `PATH`.
pub(crate) fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsStr::new(HELPER_PATH).to_owned());
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holder_mounts_the_root_at_the_guest_path_then_the_authors_mounts() {
        let grading = Arc::new(grading_dir().unwrap());
        let mut spec = Spec {
            bwrap: "/usr/bin/bwrap".into(),
            nsenter: "/usr/bin/nsenter".into(),
            network: false,
            tmpfs_modes: true,
            bind_fd: false,
            egress: None,
            hosts: None,
            mounts: vec![Mount::read_only("/srv/tests", "/workspace/tests")],
            uid: Some(1_500_000_123),
            limits: Limits::default(),
            tmp_size: Some(1 << 20),
            grading: Arc::clone(&grading),
        };
        let argv = |spec: &Spec| -> Vec<String> {
            spec.holder_argv(Path::new("/srv/task"), "/workspace")
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        };
        let args = argv(&spec);
        let end = args.iter().position(|a| a == "--").unwrap_or(0);
        let grading = grading.path().to_string_lossy().into_owned();
        assert_eq!(
            args[end - 15..end],
            [
                "--dir",
                "/",
                "--bind",
                "/srv/task",
                "/workspace",
                "--bind",
                &grading,
                GRADING_DIR,
                "--ro-bind",
                "/srv/tests",
                "/workspace/tests",
                "--remount-ro",
                "/",
                "--chdir",
                "/workspace"
            ]
        );
        assert_eq!(args[end + 1..], HOLDER);
        assert!(args.contains(&"--unshare-net".to_owned()));
        assert!(args.windows(4).any(|w| w == ["--unshare-user", "--uid", "0", "--gid"]));
        assert!(args.windows(3).any(|w| w == ["--ro-bind", "/usr", "/usr"]));
        assert!(args.windows(3).any(|w| w == ["--symlink", "usr/bin", "/bin"]));
        assert!(
            args.windows(5)
                .any(|w| w == ["--perms", "1777", "--size", "1048576", "--tmpfs"])
        );
        spec.bind_fd = true;
        let args = argv(&spec);
        assert!(args.windows(3).any(|w| w == ["--bind-fd", "3", "/workspace"]));
    }

    #[test]
    fn session_rlimits_bound_processes_per_uid_only_without_a_pids_cgroup() {
        let grading = Arc::new(grading_dir().unwrap());
        let spec = Spec {
            bwrap: "/usr/bin/bwrap".into(),
            nsenter: "/usr/bin/nsenter".into(),
            network: false,
            tmpfs_modes: true,
            bind_fd: false,
            egress: None,
            hosts: None,
            mounts: Vec::new(),
            uid: Some(1_500_000_123),
            limits: Limits::default().processes(64),
            tmp_size: None,
            grading,
        };
        let has_nproc = |rlimits: Vec<(Resource, u64, u64)>| {
            rlimits.iter().any(|(r, soft, _)| *r == Resource::Nproc && *soft <= 64)
        };
        assert!(has_nproc(spec.session_rlimits(false)));
        assert!(!has_nproc(spec.session_rlimits(true)));
    }

    #[test]
    fn variable_names_that_env_would_split_are_refused() {
        assert!(valid_variable("LANG"));
        assert!(!valid_variable("A=B"));
        assert!(!valid_variable(""));
    }
}
