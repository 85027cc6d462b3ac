//! How sessions' commands are started in the sandbox a workspace's sessions share
//! ([`Launcher`]), how graders join it, and how it is sealed for grading.
//!
//! Under isolation, one bubblewrap sandbox (a *holder*: `sleep` under bwrap's own init, in new
//! user, PID, mount, IPC, UTS and, by default, network namespaces; see [`super::holder`]) is
//! started with the workspace, and again by the next session after a discard; every session
//! joins its namespaces with `nsenter`. Ending it is one signal: the PID namespace's init is
//! killed, and the kernel kills every process in the namespace with it, those the agent
//! detached included (`setsid -f`, `nohup`, double forks). [`Launcher::stop`] returns only
//! once bwrap has reaped that init, which the kernel lets exit only after the last process of
//! its namespace is gone.
//!
//! When the server runs as root, bwrap runs as the workspace's own unprivileged uid (dropped
//! to before it starts): root inside is that uid outside. bwrap, the holder and every session
//! are in the workspace's cgroup (its memory and process limits), and start with no
//! descriptor of the serving process but their streams. The sandbox's `/` is read-only but for
//! the root, `/tmp`, `/dev` and what the author mounts. Before grading the sandbox is *sealed*
//! ([`Launcher::seal`]): every process the agent started is killed but those the template
//! declared it grades, no session starts any more, and graders get a home of their own at
//! `/run/grader` that nothing of the agent's existed to prepare.

use std::collections::{BTreeMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process, kill_process_group};
use tokio::process::{Child, Command};
use tokio::sync::Mutex;

use super::egress::Egress;
use super::error::WorkspaceError;
use super::holder::{HELPER_PATH, Holder, Spec};
use super::hook::Hook;
use super::procs::child_of;
use super::seal::{Graded, Sealed, fresh_grading_dirs, kept_processes};

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
    /// [`discard`](Self::discard)), every process the agent started is killed but what the
    /// template declared it grades (with its descendants), and graders get a fresh home and
    /// temporary directory in `grading` (the host directory bound at `/run/grader`, owned by
    /// `uid`). The agent's processes are those of the sandbox's cgroup, which none of them can
    /// leave (those of its PID namespace where there is no cgroup): a grader's command, in a
    /// cgroup of its own, is never one. Where they do not all stop within [`SEAL_WITHIN`], the
    /// whole sandbox is ended and graders run in a fresh one. Only the first call until the
    /// next discard does this: graders running at once each seal, and none ends another's
    /// command or empties its home.
    pub(crate) async fn seal(&self, grading: &Path, uid: Option<u32>) -> Sealed {
        let mut sealed = Sealed::default();
        let mut state = self.state.lock().await;
        if self.sealed.swap(true, Ordering::SeqCst) {
            return sealed;
        }
        if let State::Up(holder) = &mut *state {
            // bwrap (in the cgroup too), its init and the holder's sleep.
            let mut exempt: HashSet<i32> = [holder.init, holder.sleeper]
                .map(|pid| pid.as_raw_nonzero().get())
                .into();
            exempt.extend(holder.monitor.id().and_then(|pid| i32::try_from(pid).ok()));
            let graded = self.graded.clone();
            let init = holder.init.as_raw_nonzero().get();
            let start = Instant::now();
            let mut stopped = HashSet::new();
            let mut kept;
            let done = loop {
                let processes = holder.processes();
                let keep = kept_processes(init, &processes, &graded);
                let agents = match &holder.group {
                    Some(group) => group.pids(),
                    None => processes,
                };
                let targets: Vec<i32> = agents
                    .into_iter()
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
        drop(state);
        if let Err(error) = fresh_grading_dirs(grading, uid) {
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
    fn variable_names_that_env_would_split_are_refused() {
        assert!(valid_variable("LANG"));
        assert!(!valid_variable("A=B"));
        assert!(!valid_variable(""));
    }
}
