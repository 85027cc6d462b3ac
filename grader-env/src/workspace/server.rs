//! [`Workspace`]: a directory served to the agent over SSH, every session inside one
//! bubblewrap sandbox, published as hud's `ssh/2` capability; its keys, its sealed grading
//! and its root for host-side code.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use russh::keys::ssh_key::LineEnding;
use russh::keys::{Algorithm, PrivateKey};
use russh::{MethodKind, MethodSet};
use tokio::task::JoinHandle;

use super::builder::{Isolation, WorkspaceBuilder, isolation_spec};
use super::error::{WorkspaceError, listen};
use super::filetracking::FileTracking;
use super::holder::HELPER_PATH;
use super::root::{Root, RootError};
use super::sandbox::{Launcher, withheld};
use super::seal::{GRADING_DIR, grading_dir};
use super::ssh::{Shared, accept_loop};
use super::uid::HeldUid;
use crate::Capability;

impl WorkspaceBuilder {
    /// Creates the root if needed, generates the keys, binds the SSH server and (under
    /// isolation) starts the sandbox; returns once the server accepts connections.
    ///
    /// # Errors
    /// [`WorkspaceError`]: isolation required but unavailable, a root that cannot be made, a
    /// relative guest path, an address that cannot be bound, a sandbox that does not start.
    pub async fn start(self) -> Result<Workspace, WorkspaceError> {
        Workspace::start_with(self).await
    }
}

/// A directory served to the agent as hud's `ssh/2` capability.
///
/// An SSH server on `127.0.0.1` (by default) with a generated ed25519 host key, accepting only
/// a generated client key, whose sessions run `bash -lc <command>` (or a login shell) inside
/// one bubblewrap sandbox shared by all of them: the reference's system mounts (read-only
/// `/usr` and `/etc`, the `/bin`, `/sbin`, `/lib`, `/lib64` links, `/proc`, a minimal `/dev`,
/// a private `/tmp`), the root read-write at `/workspace` (where sessions start), its own
/// user, PID, IPC and UTS namespaces and no network (but the ways out
/// [`allowed_hosts`](WorkspaceBuilder::allowed_hosts) and [`peer`](WorkspaceBuilder::peer)
/// give), and the serving process's environment without credential-like variables. Root
/// inside is an unprivileged uid outside (the workspace's own when the server runs as root),
/// `/` is read-only but for the root, `/tmp` and the author's mounts, and the workspace's
/// limits hold every session. [`capability`](Self::capability) is what an agent connects
/// with; before grading the workspace is [sealed](Self::seal).
///
/// [`stop`](Self::stop) (or dropping the workspace) ends every session and every process they
/// started, detached ones included; [`discard_sandbox`](Self::discard_sandbox) does so between
/// tasks while the server keeps serving.
///
/// ```
/// use grader_env::workspace::Workspace;
///
/// # tokio::runtime::Runtime::new()?.block_on(async {
/// let root = std::env::temp_dir().join(format!("workspace-doc-{}", std::process::id()));
/// let workspace = Workspace::builder(&root).start().await?;
/// let shell = workspace.capability();
/// assert_eq!(shell.protocol, "ssh/2");
/// assert_eq!(shell.url, format!("ssh://{}", workspace.addr()));
/// assert_eq!(shell.params["user"], "agent");
/// assert_eq!(shell.params["isolation"], workspace.isolation().as_str());
/// workspace.stop().await;
/// # std::fs::remove_dir_all(&root)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Workspace {
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
    addr: SocketAddr,
    user: String,
    cwd: String,
    isolation: Isolation,
    client_key: String,
    host_pubkey: String,
    file_tracking: Option<FileTracking>,
    /// The uid the sandbox runs as, held while the workspace lives.
    uid: Option<HeldUid>,
    /// The serving process's variables sessions do not get.
    withheld: Vec<String>,
    /// The host directory graders get their home in (bound at `/run/grader` in the sandbox).
    grading: Arc<tempfile::TempDir>,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("addr", &self.addr)
            .field("user", &self.user)
            .field("cwd", &self.cwd)
            .field("isolation", &self.isolation)
            .finish_non_exhaustive()
    }
}

impl Workspace {
    /// A workspace on `root`, with the reference's defaults; see [`WorkspaceBuilder`].
    pub fn builder(root: impl Into<PathBuf>) -> WorkspaceBuilder {
        WorkspaceBuilder::new(root.into())
    }

    async fn start_with(options: WorkspaceBuilder) -> Result<Workspace, WorkspaceError> {
        // Nothing the serving process inherited (a directory, a socket) reaches a sandbox.
        super::hook::close_on_exec_all();
        let grading = Arc::new(grading_dir()?);
        let mut spec = isolation_spec(&options, &grading)?;
        if !valid_guest_path(&options.guest_path) {
            return Err(WorkspaceError::GuestPath(options.guest_path));
        }
        let root = make_root(&options.root)?;
        // Root inside the sandbox is an unprivileged uid of its own outside, when the server
        // runs as root (bwrap as root would map root to root); the root becomes its.
        let mut uid = None;
        if let Some(spec) = &mut spec
            && rustix::process::geteuid().is_root()
        {
            let held = HeldUid::take(&options.uids).map_err(WorkspaceError::Sandbox)?;
            spec.uid = Some(held.get());
            let owner = held.get();
            let opened = Root::open(&root).map_err(|e| WorkspaceError::Root {
                path: root.clone(),
                source: e.source,
            })?;
            opened.chown_all(owner, owner);
            uid = Some(held);
        }
        let mut withheld: Vec<String> = std::env::vars_os()
            .map(|(key, _)| key)
            .filter(|key| withheld(key))
            .map(|key| key.to_string_lossy().into_owned())
            .collect();
        withheld.sort();
        let isolation = if spec.is_some() {
            Isolation::Bwrap
        } else {
            Isolation::None
        };
        // Without a sandbox there is no guest path: sessions start in the real root.
        let cwd = match isolation {
            Isolation::Bwrap => options.guest_path.clone(),
            Isolation::None => root.to_string_lossy().into_owned(),
        };
        let (host_key, client, client_key, host_pubkey) = keys()?;

        let wanted = format!("{}:{}", options.host, options.port);
        let addr = resolve(&options.host, options.port)
            .ok_or_else(|| WorkspaceError::Address(wanted.clone()))?;
        let (listener, addr) = listen(addr).await?;
        let file_tracking = match options.track_files {
            Some(true) => {
                Some(FileTracking::start(root.clone(), SocketAddr::new(addr.ip(), 0)).await?)
            }
            _ => None,
        };

        let launcher = Launcher::new(spec, root, cwd.clone(), options.env, options.graded);
        launcher.prepare().await?;
        let shared = Arc::new(Shared::new(client.public_key().clone(), launcher));
        let mut methods = MethodSet::empty();
        methods.push(MethodKind::PublicKey);
        let config = russh::server::Config {
            methods,
            keys: vec![host_key],
            auth_rejection_time: Duration::from_millis(200),
            auth_rejection_time_initial: Some(Duration::ZERO),
            // An agent may think for a long time between commands: the connection is not
            // dropped for being idle, only when keepalives go unanswered (the reference's 30 s).
            inactivity_timeout: None,
            keepalive_interval: Some(Duration::from_secs(30)),
            keepalive_max: 3,
            nodelay: true,
            ..Default::default()
        };
        let accept = tokio::spawn(accept_loop(listener, Arc::new(config), Arc::clone(&shared)));
        tracing::info!(%addr, user = %options.user, isolation = isolation.as_str(), "workspace SSH serving");
        Ok(Workspace {
            shared,
            accept,
            addr,
            user: options.user,
            cwd,
            isolation,
            client_key,
            host_pubkey,
            file_tracking,
            uid,
            withheld,
            grading,
        })
    }

    /// The `ssh/2` capability, named `shell` as the reference's default.
    #[must_use]
    pub fn capability(&self) -> Capability {
        self.capability_named("shell")
    }

    /// The `ssh/2` capability under another name, with the reference's params: `user`,
    /// `host_pubkey`, `shell` (`bash`), `client_key` (the private key's OpenSSH text, so that a
    /// client in another network namespace can authenticate), `cwd` and `isolation`.
    ///
    /// It also says which of the serving process's variables sessions do not get
    /// (`withheld_env`: their names, sorted; see [`withheld_env`](Self::withheld_env)).
    #[must_use]
    pub fn capability_named(&self, name: &str) -> Capability {
        self.capability_with_key(name, self.client_key.clone())
    }

    fn capability_with_key(&self, name: &str, client_key: String) -> Capability {
        Capability::new(name, "ssh/2", self.url())
            .param("user", self.user.clone())
            .param("host_pubkey", self.host_pubkey.clone())
            .param("shell", "bash")
            .param("client_key", client_key)
            .param("cwd", self.cwd.clone())
            .param("isolation", self.isolation.as_str())
            .param("withheld_env", self.withheld.clone())
    }

    /// The capability a control session gets in its `hello`: its own client key, which
    /// reaches the sandbox only while that session's task holds the workspace.
    pub(crate) fn session_capability(
        &self,
        name: &str,
        session: &str,
    ) -> Result<Capability, WorkspaceError> {
        let key_error = |e: russh::keys::ssh_key::Error| WorkspaceError::Key(e.to_string());
        let key = self.shared.session_key(session).map_err(key_error)?;
        let text = key
            .to_openssh(LineEnding::LF)
            .map_err(key_error)?
            .to_string();
        Ok(self.capability_with_key(name, text))
    }

    /// From now on only the keys given to control sessions log in (the workspace serves an
    /// environment, whose `hello` gives each session its own).
    pub(crate) fn sessions_only(&self) {
        self.shared.sessions_only();
    }

    /// `session`'s task holds the workspace now: its key reaches the sandbox. Where another
    /// session's task held it (tasks are served one at a time), that one's connections are
    /// closed and its sandbox discarded, so that nothing of it reaches the new task.
    pub(crate) async fn task_started(&self, session: &str) {
        if let Some(before) = self.shared.set_owner(session) {
            self.shared
                .disconnect_session(&before, "another task holds the workspace")
                .await;
            self.shared.launcher.discard().await;
        }
    }

    /// `session`'s task ended (or the session is gone): its key stops working, its
    /// connections are closed.
    pub(crate) async fn session_ended(&self, session: &str) {
        self.shared.revoke(session, "the task ended").await;
    }

    /// The names of the serving process's variables sessions do not get: those that look like
    /// credentials, as `BashGrader` withholds them from its commands
    /// (`grader_core::bash::secrets`: `HUD_*`, `*_KEY`, `*_TOKEN`, `*SECRET*`, …), sorted.
    /// Read when the workspace started.
    #[must_use]
    pub fn withheld_env(&self) -> &[String] {
        &self.withheld
    }

    /// The host uid the sandbox runs as (root inside is this uid outside), when the server
    /// runs as root and sessions are sandboxed; `None` when the sandbox runs as the serving
    /// user (an unprivileged one already) or there is no sandbox.
    #[must_use]
    pub fn uid(&self) -> Option<u32> {
        self.uid.as_ref().map(HeldUid::get)
    }

    /// The root, for host-side code that prepares or reads it: every path beneath it is
    /// opened without following a link, and what it creates is owned by the sandbox's
    /// [`uid`](Self::uid), so the agent can edit it. See [`Root`].
    ///
    /// # Errors
    /// When the root cannot be opened.
    pub fn root(&self) -> Result<Root, RootError> {
        let root = Root::open(self.shared.launcher.root())?;
        Ok(match self.uid() {
            Some(uid) => root.owned_by(uid, uid),
            None => root,
        })
    }

    /// The `filetracking/1` capability, named `filetracking`, when the workspace tracks files
    /// ([`track_files`](WorkspaceBuilder::track_files)): the reference's
    /// `file_tracking_capability()`, its url `tcp://host:port` and its params `root` (the
    /// root's real path) and `setup_diff` (`true`).
    #[must_use]
    pub fn file_tracking_capability(&self) -> Option<Capability> {
        self.file_tracking.as_ref().map(FileTracking::capability)
    }

    /// `ssh://host:port`.
    #[must_use]
    pub fn url(&self) -> String {
        format!("ssh://{}", self.addr)
    }

    /// The address the SSH server listens on.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Whether sessions run sandboxed.
    #[must_use]
    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// The managed client key, in OpenSSH's private key format.
    #[must_use]
    pub fn client_key(&self) -> &str {
        &self.client_key
    }

    /// The host key, as an OpenSSH public key line (for `known_hosts`).
    #[must_use]
    pub fn host_pubkey(&self) -> &str {
        &self.host_pubkey
    }

    /// Where sessions start: the guest path under isolation, else the root's real path.
    #[must_use]
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// The number of SSH connections open now.
    #[must_use]
    pub fn connections(&self) -> usize {
        self.shared.connection_count()
    }

    /// The host PID of the sandbox's PID-namespace init while one runs (every process the
    /// agent started descends from it), for checks from the host.
    #[must_use]
    pub fn sandbox_pid(&self) -> Option<u32> {
        self.shared.launcher.init_pid()
    }

    /// Runs `command` as a session would (`bash -lc`, in the sandbox's namespaces: it sees the
    /// processes the agent left running and the files as the agent sees them, starting in the
    /// guest path), its stdin empty, and returns its exit status and output (held in memory:
    /// for the template's own commands, not the agent's). It runs once the workspace is
    /// sealed too, but in the session's environment (a login shell, the agent's profile if it
    /// wrote one): for setting up and inspecting, not for grading, which is
    /// [`bash`](Self::bash)'s.
    ///
    /// # Errors
    /// [`WorkspaceError::Command`] when it cannot start (the workspace stopped, the sandbox
    /// did not start) or its output cannot be read.
    pub async fn run(&self, command: &str) -> Result<std::process::Output, WorkspaceError> {
        let failed = |message: String| WorkspaceError::Command {
            command: command.to_owned(),
            message,
        };
        let mut process = self
            .shared
            .launcher
            .spawn(Some(command.as_bytes()), &[], None, true)
            .await
            .map_err(failed)?;
        drop(process.child.stdin.take());
        let (stdout, stderr, status) = tokio::join!(
            read_all(process.child.stdout.take()),
            read_all(process.child.stderr.take()),
            process.child.wait()
        );
        Ok(std::process::Output {
            status: status.map_err(|e| failed(e.to_string()))?,
            stdout,
            stderr,
        })
    }

    /// A [`BashGrader`](grader_core::BashGrader) whose command runs inside this workspace's
    /// sandbox, joining its namespaces as a session does (starting the sandbox if none runs),
    /// in an environment the agent cannot have prepared. First the workspace is
    /// [sealed](Self::seal): what the agent left running is stopped (but what the template
    /// declared it grades) and no session starts any more. Then the command runs:
    ///
    /// - in the guest path, where it sees the agent's files as the agent saw them, and the
    ///   processes the template grades;
    /// - with `bash -c` (no login shell: no profile is read) and no capability (root inside,
    ///   reading the files as their owner, without root's overrides);
    /// - with only these variables: `PATH` of read-only system directories
    ///   (`/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`), `HOME` and `TMPDIR`
    ///   of its own under `/run/grader` (made when the workspace was sealed, where nothing of
    ///   the agent's could write), `LANG=C.UTF-8`, `PYTHONNOUSERSITE=1`, and
    ///   `PYTHONPYCACHEPREFIX` under `/run/grader` (Python reads and writes bytecode there,
    ///   never from a `__pycache__` the agent wrote); the proxy's variables where hosts are
    ///   [allowed](WorkspaceBuilder::allowed_hosts). Add others with `.env(…)`.
    ///
    /// The sandbox's `/` is read-only but for the root, `/tmp` and the author's mounts, so no
    /// start-up file can wait there. What it cannot stop is code the grader runs from the root
    /// itself: a test runner imports the agent's code into its own process (see
    /// `docs/workspaces.md`, "Grading code an agent wrote").
    ///
    /// Everything else is `BashGrader`'s: the timeout, the limits (the command's own cgroup,
    /// joined before the namespaces are, so a workspace at its limit still gets graded), the
    /// output budget, nothing it starts left running. Without isolation the command runs in
    /// the root on the host, with the same variables (`HOME` and `TMPDIR` in a private
    /// directory).
    ///
    /// # Errors
    /// When the sandbox cannot be started, or the workspace has stopped.
    pub async fn bash(
        &self,
        command: impl Into<String>,
    ) -> Result<grader_core::BashGrader, WorkspaceError> {
        self.seal().await;
        super::hook::close_on_exec_all();
        let base = match self.isolation {
            Isolation::Bwrap => PathBuf::from(GRADING_DIR),
            Isolation::None => self.grading.path().to_path_buf(),
        };
        let mut grader = grader_core::BashGrader::new(command)
            .login_shell(false)
            .env_clear()
            .env("PATH", HELPER_PATH)
            .env("HOME", base.join("home"))
            .env("TMPDIR", base.join("tmp"))
            .env("LANG", "C.UTF-8")
            .env("PYTHONNOUSERSITE", "1")
            .env("PYTHONPYCACHEPREFIX", base.join("pycache"));
        for (key, value) in self.shared.launcher.proxy_environment() {
            grader = grader.env(key, value);
        }
        Ok(match self.shared.launcher.join_prefix().await? {
            Some(prefix) => grader.launcher(prefix),
            None => grader.cwd(self.shared.launcher.root()),
        })
    }

    /// Seals the workspace for grading: every process the agent started is killed, but those
    /// the template declared it grades ([`graded_process`](WorkspaceBuilder::graded_process),
    /// [`graded_port`](WorkspaceBuilder::graded_port)) with their descendants; no session
    /// starts any more and every SSH connection is closed, until the sandbox is
    /// [discarded](Self::discard_sandbox) (the next task). Graders get a fresh home under
    /// `/run/grader`. [`bash`](Self::bash) seals first; an environment seals its workspace
    /// when a grade begins, before the template sees the answer. Only the first call until
    /// the next task does this (graders running at once never end each other's commands).
    /// Where the agent's processes cannot all be stopped within seconds (faster forks than
    /// kills), the whole sandbox is ended and graders run in a fresh one.
    pub async fn seal(&self) {
        let sealed = self
            .shared
            .launcher
            .seal(self.grading.path(), self.uid())
            .await;
        self.shared
            .disconnect_where_all("the task is being graded")
            .await;
        tracing::debug!(
            stopped = sealed.stopped,
            kept = sealed.kept,
            restarted = sealed.restarted,
            "workspace sealed for grading"
        );
        if sealed.seen.out_of_memory > 0 || sealed.seen.process_limit_hit > 0 {
            tracing::info!(
                out_of_memory_kills = sealed.seen.out_of_memory,
                forks_refused = sealed.seen.process_limit_hit,
                "the agent's workspace reached its limits"
            );
        }
    }

    /// Whether the workspace is sealed for grading (until the next task).
    #[must_use]
    pub fn is_sealed(&self) -> bool {
        self.shared.launcher.is_sealed()
    }

    /// Ends the sandbox and every process in it (detached ones included), returning once they
    /// are gone; the server keeps serving and the next session starts a fresh sandbox. The
    /// boundary between two tasks.
    pub async fn discard_sandbox(&self) {
        self.shared.launcher.discard().await;
    }

    /// Stops serving: closes the listeners and every connection, and ends the sandbox and every
    /// process in it, returning once they are gone (and no file-tracking scan runs).
    pub async fn stop(mut self) {
        if let Some(mut file_tracking) = self.file_tracking.take() {
            file_tracking.stop().await;
        }
        self.accept.abort();
        self.shared.disconnect_all().await;
        self.shared.launcher.stop().await;
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        self.accept.abort();
        self.shared.launcher.kill_now();
        // The connections end too, where a runtime is still there to tell them.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let shared = Arc::clone(&self.shared);
            runtime.spawn(async move { shared.disconnect_all().await });
        }
    }
}

/// A new host key and client key, the client's private key text and the host's public key line.
fn keys() -> Result<(PrivateKey, PrivateKey, String, String), WorkspaceError> {
    let key_error = |e: russh::keys::ssh_key::Error| WorkspaceError::Key(e.to_string());
    let mut rng = rand::rng();
    let host_key = PrivateKey::random(&mut rng, Algorithm::Ed25519).map_err(key_error)?;
    let client = PrivateKey::random(&mut rng, Algorithm::Ed25519).map_err(key_error)?;
    let client_key = client
        .to_openssh(LineEnding::LF)
        .map_err(key_error)?
        .to_string();
    let host_pubkey = host_key.public_key().to_openssh().map_err(key_error)?;
    Ok((host_key, client, client_key, host_pubkey))
}

/// Everything `stream` gives until its end (nothing when there is none).
async fn read_all(stream: Option<impl tokio::io::AsyncRead + Unpin>) -> Vec<u8> {
    let mut bytes = Vec::new();
    if let Some(mut stream) = stream {
        let _ = tokio::io::AsyncReadExt::read_to_end(&mut stream, &mut bytes).await;
    }
    bytes
}

/// Whether `path` can be where the root is mounted: absolute, not `/` (the root would hide the
/// system), without `.` or `..` components or NUL.
fn valid_guest_path(path: &str) -> bool {
    path.starts_with('/')
        && !path.contains('\0')
        && path.split('/').any(|part| !part.is_empty())
        && path.split('/').all(|part| part != "." && part != "..")
}

/// Creates the root if missing and resolves it.
fn make_root(root: &Path) -> Result<PathBuf, WorkspaceError> {
    let error = |source| WorkspaceError::Root {
        path: root.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(root).map_err(error)?;
    std::fs::canonicalize(root).map_err(error)
}

/// The first address `host:port` names.
fn resolve(host: &str, port: u16) -> Option<SocketAddr> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (host, port).to_socket_addrs().ok()?.next()
}
