//! The sandbox itself: what it is made of ([`Spec`]: bwrap's command line, the sessions'
//! rlimits), and one running sandbox ([`Holder`]: bwrap as the workspace's uid, in the
//! workspace's cgroup, ready once its holder says so; a start dropped half-way leaves nothing).

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use grader_core::sandbox::Limits;
use rustix::process::{Pid, Resource, Signal, kill_process};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};

use super::cgroup::Group;
use super::egress::{Egress, Routes};
use super::error::WorkspaceError;
use super::hook::{Hook, KEPT_FD};
use super::mount::Mount;
use super::procs::{child_of, kill_tree, living};
use super::seal::GRADING_DIR;

/// The `PATH` the host-side helpers (bwrap, nsenter) run with: they get no other variable,
/// so neither the serving process's secrets nor a session's variables reach them. It is also
/// the grader's `PATH` inside the sandbox, where every one of these is read-only.
pub(crate) const HELPER_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// What the sandbox runs to stay alive between sessions. Its first line is the readiness
/// signal, printed from inside once bwrap has finished building the namespaces (as the
/// reference's holder).
const HOLDER: [&str; 3] = ["sh", "-c", "echo ready; exec sleep 2147483647"];

/// A bound on bwrap's start-up: a sandbox that is not ready by then is an error, not a hang.
const READY_WITHIN: Duration = Duration::from_secs(30);

/// A bound on waiting for bwrap to reap the namespace's init once it was killed.
const END_WITHIN: Duration = Duration::from_secs(10);

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
    pub(crate) fn holder_argv(&self, root: &Path, guest: &str) -> Vec<OsString> {
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
    pub(crate) fn session_rlimits(&self, cgroup_processes: bool) -> Vec<(Resource, u64, u64)> {
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
pub(crate) struct Holder {
    /// bwrap's outer process; killed if dropped.
    pub(crate) monitor: Child,
    /// The host PID of the namespace's init (bwrap's reaper, PID 1 inside).
    pub(crate) init: Pid,
    /// The host PID of the holder's `sleep` (PID 2 inside): bwrap's init exits, and the
    /// namespace with it, when it does.
    pub(crate) sleeper: Pid,
    /// The routes out of its network, served while it runs.
    pub(crate) routes: Option<Routes>,
    /// Its cgroup, where the machine offers one.
    pub(crate) group: Option<Arc<Group>>,
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
impl Holder {
    pub(crate) async fn start(
        spec: &Spec,
        root: &Path,
        guest: &str,
        root_fd: Option<OwnedFd>,
    ) -> Result<Self, WorkspaceError> {
        let argv = spec.holder_argv(root, guest);
        let group = match Group::make(spec.limits.memory_bytes(), spec.limits.processes_max()) {
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
    pub(crate) fn alive(&mut self) -> bool {
        let init = self.init.as_raw_nonzero().get();
        matches!(self.monitor.try_wait(), Ok(None))
            && living(init).is_some()
            && living(self.sleeper.as_raw_nonzero().get()) == Some(init)
    }

    /// Kills the namespace's init (and so everything in the namespace), then waits for bwrap
    /// to reap it; then whatever is left in its cgroup.
    pub(crate) async fn end(&mut self) {
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
    pub(crate) fn processes(&self) -> Vec<i32> {
        let init = self.init.as_raw_nonzero().get();
        let Ok(namespace) = std::fs::read_link(format!("/proc/{init}/ns/pid")) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return found;
        };
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<i32>().ok())
            else {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;
    use crate::workspace::seal::grading_dir;

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
        assert!(
            args.windows(4)
                .any(|w| w == ["--unshare-user", "--uid", "0", "--gid"])
        );
        assert!(args.windows(3).any(|w| w == ["--ro-bind", "/usr", "/usr"]));
        assert!(
            args.windows(3)
                .any(|w| w == ["--symlink", "usr/bin", "/bin"])
        );
        assert!(
            args.windows(5)
                .any(|w| w == ["--perms", "1777", "--size", "1048576", "--tmpfs"])
        );
        spec.bind_fd = true;
        let args = argv(&spec);
        assert!(
            args.windows(3)
                .any(|w| w == ["--bind-fd", "3", "/workspace"])
        );
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
            rlimits
                .iter()
                .any(|(r, soft, _)| *r == Resource::Nproc && *soft <= 64)
        };
        assert!(has_nproc(spec.session_rlimits(false)));
        assert!(!has_nproc(spec.session_rlimits(true)));
    }
}
