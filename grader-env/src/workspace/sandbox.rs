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

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process, kill_process_group};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::Mutex;

use super::egress::{Egress, Routes};
use super::error::WorkspaceError;
use super::mount::Mount;

/// The `PATH` the host-side helpers (bwrap, nsenter) run with: they get no other variable,
/// so neither the serving process's secrets nor a session's variables reach them.
const HELPER_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// What the sandbox runs to stay alive between sessions. Its first line is the readiness
/// signal, printed from inside once bwrap has finished building the namespaces (as the
/// reference's holder).
const HOLDER: [&str; 3] = ["sh", "-c", "echo ready; exec sleep 2147483647"];

/// A bound on bwrap's start-up: a sandbox that is not ready by then is an error, not a hang.
const READY_WITHIN: Duration = Duration::from_secs(30);

/// A bound on waiting for bwrap to reap the namespace's init once it was killed.
const END_WITHIN: Duration = Duration::from_secs(10);

/// The capabilities a session gives up, as the reference's sessions (`--cap-drop`): it is root
/// in the sandbox's own user namespace, but cannot mount, reconfigure its network or open raw
/// sockets there.
const DROPPED_CAPABILITIES: &str = "--bounding-set=-sys_admin,-net_admin,-net_raw";

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
    /// Whether this bwrap can set a tmpfs's mode (`--perms`, bubblewrap 0.5+): `/tmp` is
    /// made world-writable with it, as the reference's.
    pub(crate) tmpfs_modes: bool,
    /// The routes out of a sandbox with its own network (the proxy, the peers).
    pub(crate) egress: Option<Egress>,
    /// The sandbox's own `/etc/hosts` (the host's, plus the peers), where there are peers.
    /// (a private temporary directory holding `hosts`, removed with the workspace).
    pub(crate) hosts: Option<Arc<tempfile::TempDir>>,
    /// The author's mounts, after the system's and before the root.
    pub(crate) mounts: Vec<Mount>,
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

impl Spec {
    /// bwrap's command line for the holder: the reference's system mounts, the root at the
    /// guest path, the author's mounts, the peers' hosts file, new namespaces.
    fn holder_argv(&self, root: &Path, guest: &str) -> Vec<OsString> {
        let mut argv: Vec<OsString> = vec![self.bwrap.clone().into()];
        let mut push = |items: &[&str]| argv.extend(items.iter().map(OsString::from));
        push(&[
            "--die-with-parent",
            "--unshare-user",
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
        }
        push(&["--tmpfs", "/tmp"]);
        let parent = Path::new(guest)
            .parent()
            .map_or_else(|| OsString::from("/"), |p| p.as_os_str().to_owned());
        argv.push("--dir".into());
        argv.push(parent);
        argv.push("--bind".into());
        argv.push(root.as_os_str().to_owned());
        argv.push(guest.into());
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
        argv.push("--chdir".into());
        argv.push(guest.into());
        argv.push("--".into());
        argv.extend(HOLDER.iter().map(OsString::from));
        argv
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
}

impl Holder {
    async fn start(spec: &Spec, root: &Path, guest: &str) -> Result<Self, WorkspaceError> {
        let argv = spec.holder_argv(root, guest);
        let mut monitor = Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(root)
            .env_clear()
            .env("PATH", HELPER_PATH)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                WorkspaceError::Sandbox(format!("cannot run {}: {e}", spec.bwrap.display()))
            })?;
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
        let mut holder = Holder {
            monitor,
            init,
            sleeper,
            routes: None,
        };
        if let Some(egress) = &spec.egress {
            // On failure `holder` is dropped, which kills the sandbox just started.
            let pid = init.as_raw_nonzero().get().unsigned_abs();
            holder.routes = Some(egress.open(pid, HELPER_PATH).await?);
        }
        Ok(holder)
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
    /// to reap it.
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

/// The child of `parent`, read from `/proc`.
fn child_of(parent: i32) -> Option<Pid> {
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
        let Some((_, after)) = stat.rsplit_once(')') else {
            continue;
        };
        if after.split_whitespace().nth(1) == Some(parent.to_string().as_str()) {
            return Pid::from_raw(pid);
        }
    }
    None
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
    /// The shared sandbox.
    state: Mutex<State>,
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
    ) -> Self {
        Launcher {
            spec,
            root,
            cwd,
            env,
            state: Mutex::new(State::Idle),
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
            let holder = Holder::start(spec, &self.root, &self.cwd).await?;
            self.init
                .store(holder.init.as_raw_nonzero().get(), Ordering::SeqCst);
            *state = State::Up(Box::new(holder));
        }
        Ok(())
    }

    /// Starts a session's command (`None`: a login shell reading stdin) with the session's
    /// variables over the workspace's, its three streams piped.
    ///
    /// With a `terminal` (the slave side of a pseudo-terminal; only under isolation) the
    /// command gets it as its three streams and its controlling terminal instead.
    pub(crate) async fn spawn(
        &self,
        command: Option<&[u8]>,
        session_env: &[(String, String)],
        terminal: Option<&OwnedFd>,
    ) -> Result<Process, String> {
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
            .current_dir(&self.root)
            .env_clear()
            .env("PATH", HELPER_PATH);
        let child =
            launch(&mut cmd, terminal).map_err(|e| format!("cannot join the sandbox: {e}"))?;
        drop(state);
        Ok(Process { child, group: None })
    }

    /// How a grader's command joins the shared sandbox (starting it if needed): `nsenter` into
    /// its namespaces, the capabilities sessions lose dropped, then `env --chdir=CWD`, to be
    /// followed by the shell. `None` without isolation (the command then runs in the root).
    /// The command keeps its own environment (the grader's: credentials already withheld).
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
            prefix.extend(["/usr/bin/setpriv", DROPPED_CAPABILITIES, "--"].map(OsString::from));
        }
        let mut chdir = OsString::from("--chdir=");
        chdir.push(&self.cwd);
        prefix.extend([OsString::from("/usr/bin/env"), chdir]);
        Ok(Some(prefix))
    }

    /// The root on the host.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// A session's environment: the serving process's without the harness's configuration
    /// (no `HUD_*` key), then the proxy's variables where hosts are allowed, then the
    /// workspace's variables, then the session's.
    fn environment(&self, session_env: &[(String, String)]) -> BTreeMap<OsString, OsString> {
        let mut env: BTreeMap<OsString, OsString> = std::env::vars_os()
            .filter(|(key, _)| !key.as_bytes().starts_with(b"HUD_"))
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

    /// Ends the shared sandbox and every process in it; the next session starts a fresh one.
    pub(crate) async fn discard(&self) {
        let mut state = self.state.lock().await;
        if let State::Up(holder) = &mut *state {
            holder.end().await;
            self.init.store(0, Ordering::SeqCst);
            *state = State::Idle;
        }
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
        let spec = Spec {
            bwrap: "/usr/bin/bwrap".into(),
            nsenter: "/usr/bin/nsenter".into(),
            network: false,
            tmpfs_modes: true,
            egress: None,
            hosts: None,
            mounts: vec![Mount::read_only("/srv/tests", "/workspace/tests")],
        };
        let argv: Vec<String> = spec
            .holder_argv(Path::new("/srv/task"), "/workspace")
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let end = argv.iter().position(|a| a == "--").unwrap_or(0);
        assert_eq!(
            argv[end - 10..end],
            [
                "--dir",
                "/",
                "--bind",
                "/srv/task",
                "/workspace",
                "--ro-bind",
                "/srv/tests",
                "/workspace/tests",
                "--chdir",
                "/workspace"
            ]
        );
        assert_eq!(argv[end + 1..], HOLDER);
        assert!(argv.contains(&"--unshare-net".to_owned()));
        assert!(argv.windows(3).any(|w| w == ["--ro-bind", "/usr", "/usr"]));
        assert!(
            argv.windows(3)
                .any(|w| w == ["--symlink", "usr/bin", "/bin"])
        );
    }

    #[test]
    fn variable_names_that_env_would_split_are_refused() {
        assert!(valid_variable("LANG"));
        assert!(!valid_variable("A=B"));
        assert!(!valid_variable(""));
    }
}
