//! The workspace's SSH server, on russh: public-key authentication with the managed client key
//! only, then session channels whose exec (or shell) requests run through the [`Launcher`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use russh::keys::{PrivateKey, PublicKey};
use russh::server::{Auth, ChannelOpenHandle, Handle, Msg, PublicKeyOffer, Session};
use russh::server::{Config, VerifiedPublicKey};
use russh::{Channel, ChannelId, ChannelMsg, Disconnect, Sig};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::pty::{self, Terminal};
use super::sandbox::{Launcher, valid_variable};

/// How long output is still read once a command has exited: a process the command left in the
/// background can hold its output open for good, and the exit status must not wait for it.
/// Only a pipe with nothing to read is waited on this long; output that arrives keeps flowing.
const LINGER: Duration = Duration::from_millis(100);

/// How long a peer has to log in (the reference's asyncssh default).
const LOGIN_WITHIN: Duration = Duration::from_secs(120);

/// The most `env` requests one channel may make before its command starts (more are
/// refused), and the most bytes their names and values may hold together.
pub(crate) const MAX_ENV_PER_CHANNEL: usize = 256;
/// See [`MAX_ENV_PER_CHANNEL`]: 64 KiB.
pub(crate) const MAX_ENV_BYTES_PER_CHANNEL: usize = 64 * 1024;
/// The most session channels one connection may have open at once (more are refused with
/// `resource shortage`).
pub(crate) const MAX_CHANNELS_PER_CONNECTION: usize = 64;
/// The most connections one key (one task's agent) may have open at once.
pub(crate) const MAX_CONNECTIONS_PER_KEY: usize = 128;
/// The most session keys a workspace holds at once (one per control session that said
/// `hello`); past it the oldest that holds no task is let go.
const MAX_SESSION_KEYS: usize = 1024;

/// Who a connection logged in as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Access {
    /// The workspace's own key (a workspace serving on its own, outside an environment).
    Workspace,
    /// The key a control session got in its `hello`: it reaches the sandbox only while that
    /// session's task holds the workspace.
    Session(String),
}

/// The keys that may log in.
struct Keys {
    /// The workspace's own key; `None` once the workspace serves an environment, where each
    /// control session gets its own.
    workspace: Option<PublicKey>,
    /// Each control session's key, in the order they were made.
    sessions: Vec<(String, PrivateKey)>,
    /// The session whose task holds the workspace now.
    owner: Option<String>,
}

/// What every connection shares.
pub(crate) struct Shared {
    /// The keys that may log in.
    keys: Mutex<Keys>,
    /// Starts the sessions' commands.
    pub(crate) launcher: Launcher,
    /// Open connections (to disconnect on stop, at the end of a task), and who they are.
    connections: Mutex<HashMap<u64, (Handle, Login)>>,
    /// The next connection's number.
    next: AtomicU64,
    /// The most connections open at once (below the process's descriptor limit).
    max_connections: usize,
    /// Slots for commands running at once, all connections together (each holds three
    /// descriptors): below the process's descriptor limit.
    commands: Arc<tokio::sync::Semaphore>,
}

impl Shared {
    /// State for a server whose own client key is `client_key`.
    pub(crate) fn new(client_key: PublicKey, launcher: Launcher) -> Self {
        let descriptors = open_file_limit().unwrap_or(1024);
        Shared {
            keys: Mutex::new(Keys {
                workspace: Some(client_key),
                sessions: Vec::new(),
                owner: None,
            }),
            launcher,
            connections: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            max_connections: (descriptors / 16).clamp(8, 512),
            commands: Arc::new(tokio::sync::Semaphore::new(
                (descriptors / 16).clamp(8, 1024),
            )),
        }
    }

    fn keys(&self) -> std::sync::MutexGuard<'_, Keys> {
        self.keys.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// From now on only control sessions' keys log in (the workspace serves an environment).
    pub(crate) fn sessions_only(&self) {
        self.keys().workspace = None;
    }

    /// The key of control session `session`: the one it was given, or a new one.
    pub(crate) fn session_key(
        &self,
        session: &str,
    ) -> Result<PrivateKey, russh::keys::ssh_key::Error> {
        let mut keys = self.keys();
        if let Some((_, key)) = keys.sessions.iter().find(|(id, _)| id == session) {
            return Ok(key.clone());
        }
        let private = PrivateKey::random(&mut rand::rng(), russh::keys::Algorithm::Ed25519)?;
        if keys.sessions.len() >= MAX_SESSION_KEYS {
            let owner = keys.owner.clone();
            if let Some(oldest) = keys
                .sessions
                .iter()
                .position(|(id, _)| Some(id) != owner.as_ref())
            {
                keys.sessions.remove(oldest);
            }
        }
        keys.sessions.push((session.to_owned(), private.clone()));
        Ok(private)
    }

    /// `session`'s task holds the workspace now; the session whose task held it before, if
    /// another.
    pub(crate) fn set_owner(&self, session: &str) -> Option<String> {
        self.keys()
            .owner
            .replace(session.to_owned())
            .filter(|before| before != session)
    }

    /// Disconnects the connections made with `session`'s key (which stays valid).
    pub(crate) async fn disconnect_session(&self, session: &str, why: &str) {
        let access = Some(Access::Session(session.to_owned()));
        self.disconnect_where(|who| *who == access, why).await;
    }

    /// Lets `session`'s key go and disconnects the connections that logged in with it.
    pub(crate) async fn revoke(&self, session: &str, why: &str) {
        {
            let mut keys = self.keys();
            keys.sessions.retain(|(id, _)| id != session);
            if keys.owner.as_deref() == Some(session) {
                keys.owner = None;
            }
        }
        let access = Some(Access::Session(session.to_owned()));
        self.disconnect_where(|who| *who == access, why).await;
    }

    /// Who `key` logs in as, if anyone.
    fn access_of(&self, key: &PublicKey) -> Option<Access> {
        let keys = self.keys();
        if keys
            .workspace
            .as_ref()
            .is_some_and(|own| own.key_data() == key.key_data())
        {
            return Some(Access::Workspace);
        }
        keys.sessions
            .iter()
            .find(|(_, private)| private.public_key().key_data() == key.key_data())
            .map(|(id, _)| Access::Session(id.clone()))
    }

    /// Whether a connection that logged in as `access` may run a command now: the workspace's
    /// own key while it is valid, a session's key while its task holds the workspace.
    fn may_run(&self, access: Option<&Access>) -> bool {
        let keys = self.keys();
        match access {
            Some(Access::Workspace) => keys.workspace.is_some(),
            Some(Access::Session(id)) => {
                keys.owner.as_ref() == Some(id) && keys.sessions.iter().any(|(s, _)| s == id)
            }
            None => false,
        }
    }

    /// How many open connections logged in as `access`.
    fn logged_in_as(&self, access: &Access) -> usize {
        self.connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .filter(|(_, who)| who.get().as_ref() == Some(access))
            .count()
    }

    /// Disconnects every open connection.
    pub(crate) async fn disconnect_all(&self) {
        self.disconnect_where(|_| true, "the workspace stopped")
            .await;
    }

    /// Disconnects every open connection, saying `why`.
    pub(crate) async fn disconnect_where_all(&self, why: &str) {
        self.disconnect_where(|_| true, why).await;
    }

    /// Disconnects the connections whose login `pick` picks.
    async fn disconnect_where(&self, pick: impl Fn(&Option<Access>) -> bool, why: &str) {
        let handles: Vec<Handle> = {
            let mut connections = self
                .connections
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let ids: Vec<u64> = connections
                .iter()
                .filter(|(_, (_, who))| pick(&who.get()))
                .map(|(id, _)| *id)
                .collect();
            ids.iter()
                .filter_map(|id| connections.remove(id))
                .map(|(handle, _)| handle)
                .collect()
        };
        for handle in handles {
            let _ = handle
                .disconnect(Disconnect::ByApplication, why.to_owned(), String::new())
                .await;
        }
    }

    /// The number of open connections.
    pub(crate) fn connection_count(&self) -> usize {
        self.connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// Who a connection logged in as, once it has (shared by its handler and the server).
#[derive(Clone, Default)]
struct Login(Arc<Mutex<Option<Access>>>);

impl Login {
    fn get(&self) -> Option<Access> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set(&self, access: Access) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(access);
    }
}

/// The soft limit on open files (`ulimit -n`), from `/proc/self/limits`.
fn open_file_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Accepts connections until aborted; each runs as its own russh session. Past
/// `max_connections` (below the process's descriptor limit) a new connection is closed at once.
pub(crate) async fn accept_loop(listener: TcpListener, config: Arc<Config>, shared: Arc<Shared>) {
    let mut running = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    // Out of descriptors or a connection reset before accept: keep serving.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                while running.try_join_next().is_some() {}
                if running.len() >= shared.max_connections {
                    drop(stream);
                    continue;
                }
                let _ = stream.set_nodelay(true);
                let id = shared.next.fetch_add(1, Ordering::Relaxed);
                let login = Login::default();
                let handler = Connection {
                    shared: Arc::clone(&shared),
                    channels: JoinSet::new(),
                    login: login.clone(),
                    env: HashMap::new(),
                };
                let config = Arc::clone(&config);
                let shared = Arc::clone(&shared);
                running.spawn(serve_connection(shared, id, config, stream, handler, login));
            }
            Some(_) = running.join_next(), if !running.is_empty() => {}
        }
    }
}

/// Runs one connection: a peer that has not sent its version line within [`LOGIN_WITHIN`] is
/// dropped, one that has not logged in by then is disconnected (the reference's asyncssh
/// gives a login two minutes too); a logged-in one is served until it or the server ends it.
async fn serve_connection(
    shared: Arc<Shared>,
    id: u64,
    config: Arc<Config>,
    stream: TcpStream,
    handler: Connection,
    login: Login,
) {
    let started = tokio::time::timeout(
        LOGIN_WITHIN,
        russh::server::run_stream(config, stream, handler),
    );
    let Ok(Ok(session)) = started.await else {
        return;
    };
    let handle = session.handle();
    shared
        .connections
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(id, (session.handle(), login.clone()));
    let mut session = std::pin::pin!(session);
    tokio::select! {
        _ = &mut session => {}
        () = tokio::time::sleep(LOGIN_WITHIN) => {
            if login.get().is_none() {
                let _ = handle
                    .disconnect(Disconnect::ByApplication, "login timed out".to_owned(), String::new())
                    .await;
            }
            let _ = session.await;
        }
    }
    shared
        .connections
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&id);
}

/// One client connection.
struct Connection {
    shared: Arc<Shared>,
    /// Its channels' tasks: dropped (and so their commands killed) with the connection.
    channels: JoinSet<()>,
    /// Who it logged in as, once it has.
    login: Login,
    /// The `env` requests each channel made: how many, and their bytes.
    env: HashMap<ChannelId, (usize, usize)>,
}

impl Connection {
    /// Whether `key` may log in now: it is a valid key, and its agent has not reached
    /// [`MAX_CONNECTIONS_PER_KEY`].
    fn admits(&self, key: &PublicKey) -> Option<Access> {
        let access = self.shared.access_of(key)?;
        (self.shared.logged_in_as(&access) < MAX_CONNECTIONS_PER_KEY).then_some(access)
    }
}

impl russh::server::Handler for Connection {
    type Error = russh::Error;

    async fn auth_publickey_offered(
        &mut self,
        _user: &str,
        offer: PublicKeyOffer<'_>,
    ) -> Result<Auth, Self::Error> {
        Ok(if self.admits(offer.public_key).is_some() {
            Auth::Accept
        } else {
            Auth::reject()
        })
    }

    async fn auth_publickey(
        &mut self,
        _user: &str,
        key: VerifiedPublicKey<'_>,
    ) -> Result<Auth, Self::Error> {
        Ok(match self.admits(key.public_key) {
            Some(access) => {
                self.login.set(access);
                Auth::Accept
            }
            None => Auth::reject(),
        })
    }

    async fn channel_open_session(
        &mut self,
        channel: Channel<Msg>,
        reply: ChannelOpenHandle,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        while self.channels.try_join_next().is_some() {}
        if self.channels.len() >= MAX_CHANNELS_PER_CONNECTION {
            reply
                .reject(russh::ChannelOpenFailure::ResourceShortage)
                .await;
            return Ok(());
        }
        reply.accept().await;
        let shared = Arc::clone(&self.shared);
        let handle = session.handle();
        let login = self.login.clone();
        self.channels
            .spawn(async move { serve_channel(&shared, channel, handle, login).await });
        Ok(())
    }

    async fn channel_close(
        &mut self,
        channel: ChannelId,
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        self.env.remove(&channel);
        Ok(())
    }

    async fn env_request(
        &mut self,
        channel: ChannelId,
        name: &str,
        value: &str,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        let used = self.env.entry(channel).or_default();
        let bytes = used.1 + name.len() + value.len();
        if valid_variable(name)
            && used.0 < MAX_ENV_PER_CHANNEL
            && bytes <= MAX_ENV_BYTES_PER_CHANNEL
        {
            *used = (used.0 + 1, bytes);
            session.channel_success(channel)
        } else {
            session.channel_failure(channel)
        }
    }
    async fn exec_request(
        &mut self,
        channel: ChannelId,
        _data: &[u8],
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        session.channel_success(channel)
    }

    async fn shell_request(
        &mut self,
        channel: ChannelId,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        session.channel_success(channel)
    }

    async fn subsystem_request(
        &mut self,
        channel: ChannelId,
        _name: &str,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        // No sftp: hud's file helpers go through exec (`cat > path`).
        session.channel_failure(channel)
    }

    async fn x11_request(
        &mut self,
        channel: ChannelId,
        _single_connection: bool,
        _protocol: &str,
        _cookie: &str,
        _screen: u32,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        session.channel_failure(channel)
    }

    async fn pty_request(
        &mut self,
        channel: ChannelId,
        _term: &str,
        _cols: u32,
        _rows: u32,
        _pix_width: u32,
        _pix_height: u32,
        _modes: &[(russh::Pty, u32)],
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        // A terminal only inside the sandbox (where its session cannot reach the server's
        // own); elsewhere the client goes on without one, on pipes (OpenSSH says so).
        if self.shared.launcher.isolated() {
            session.channel_success(channel)
        } else {
            session.channel_failure(channel)
        }
    }
}

/// One session channel: its variables, terminal and request, then the command's streams both
/// ways and its exit status (or signal).
async fn serve_channel(shared: &Shared, mut channel: Channel<Msg>, handle: Handle, login: Login) {
    let mut env: Vec<(String, String)> = Vec::new();
    let mut env_bytes = 0;
    let mut wants_terminal: Option<pty::Request> = None;
    let command = loop {
        match channel.wait().await {
            Some(ChannelMsg::SetEnv {
                variable_name,
                variable_value,
                ..
            }) if valid_variable(&variable_name)
                && env.len() < MAX_ENV_PER_CHANNEL
                && env_bytes + variable_name.len() + variable_value.len()
                    <= MAX_ENV_BYTES_PER_CHANNEL =>
            {
                env_bytes += variable_name.len() + variable_value.len();
                env.push((variable_name, variable_value));
            }
            Some(ChannelMsg::RequestPty {
                term,
                col_width,
                row_height,
                pix_width,
                pix_height,
                ..
            }) if shared.launcher.isolated() => {
                wants_terminal = Some(pty::Request {
                    term,
                    size: (col_width, row_height, pix_width, pix_height),
                });
            }
            Some(ChannelMsg::Exec { command, .. }) => break Some(command),
            Some(ChannelMsg::RequestShell { .. }) => break None,
            Some(ChannelMsg::Close) | None => return,
            Some(_) => {}
        }
    };
    let terminal = match wants_terminal.as_ref().map(Terminal::open).transpose() {
        Ok(terminal) => terminal,
        Err(error) => return refuse(&channel, &format!("cannot open a terminal: {error}")).await,
    };
    if let Some(request) = &wants_terminal
        && valid_variable(&request.term)
        && !request.term.is_empty()
    {
        env.push(("TERM".to_owned(), request.term.clone()));
    }
    if !shared.may_run(login.get().as_ref()) {
        return refuse(
            &channel,
            "this connection's task has ended: connect again with the key of the task's hello",
        )
        .await;
    }
    let Ok(_slot) = Arc::clone(&shared.commands).try_acquire_owned() else {
        return refuse(&channel, "too many commands are running in the workspace").await;
    };
    let slave = terminal.as_ref().map(|t| &t.slave);
    let mut process = match shared
        .launcher
        .spawn(command.as_deref(), &env, slave, false)
        .await
    {
        Ok(process) => process,
        Err(message) => return refuse(&channel, &message).await,
    };
    let (exited, exited_rx) = watch::channel(false);
    let mut pumps = JoinSet::new();
    let mut stdin: Option<Box<dyn AsyncWrite + Unpin + Send>> = None;
    let mut master = None;
    if let Some(Terminal { master: fd, slave }) = terminal {
        // Only the command holds the slave side now: its exit ends the master's reads.
        drop(slave);
        let reader = fd.try_clone().map(std::fs::File::from);
        let writer = fd.try_clone().map(std::fs::File::from);
        if let (Ok(reader), Ok(writer)) = (reader, writer) {
            let reader = tokio::fs::File::from_std(reader);
            pumps.spawn(pump(reader, channel.make_writer(), exited_rx.clone()));
            stdin = Some(Box::new(tokio::fs::File::from_std(writer)));
        }
        master = Some(fd);
    } else {
        if let Some(stdout) = process.child.stdout.take() {
            pumps.spawn(pump(stdout, channel.make_writer(), exited_rx.clone()));
        }
        if let Some(stderr) = process.child.stderr.take() {
            pumps.spawn(pump(stderr, channel.make_writer_ext(Some(1)), exited_rx));
        }
        if let Some(writer) = process.child.stdin.take() {
            stdin = Some(Box::new(writer));
        }
    }
    let status = loop {
        tokio::select! {
            status = process.child.wait() => break status,
            message = channel.wait() => match message {
                Some(ChannelMsg::Data { data }) => {
                    if let Some(writer) = stdin.as_mut()
                        && (writer.write_all(&data).await.is_err()
                            || writer.flush().await.is_err())
                    {
                        stdin = None;
                    }
                }
                Some(ChannelMsg::WindowChange { col_width, row_height, pix_width, pix_height }) => {
                    if let Some(fd) = &master {
                        pty::resize(fd, col_width, row_height, pix_width, pix_height);
                    }
                }
                // Passed on to the command itself (OpenSSH's sshd does the same); a signal
                // with no number here is ignored, as sshd ignores one it does not know.
                Some(ChannelMsg::Signal { signal }) => {
                    if let Some(number) = number_of(&signal) {
                        process.signal(number);
                    }
                }
                // A terminal has no end of input to pass on: its input simply stops.
                Some(ChannelMsg::Eof) => stdin = None,
                // The client is gone: dropping the process kills its command.
                Some(ChannelMsg::Close) | None => return,
                Some(_) => {}
            },
        }
    };
    drop(stdin);
    let _ = exited.send(true);
    while pumps.join_next().await.is_some() {}
    drop(master);
    match status {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt;
            if let Some(code) = status.code() {
                let _ = channel
                    .exit_status(u32::try_from(code).unwrap_or(255))
                    .await;
            } else if let Some(signal) = status.signal() {
                let _ = handle
                    .exit_signal_request(
                        channel.id(),
                        signal_of(signal),
                        status.core_dumped(),
                        String::new(),
                        String::new(),
                    )
                    .await;
            }
        }
        Err(error) => {
            tracing::warn!(%error, "waiting on a workspace session's command failed");
            let _ = channel.exit_status(255).await;
        }
    }
    let _ = channel.eof().await;
    let _ = channel.close().await;
}

/// Ends a channel whose command could not start: the reason on stderr, exit status 1 (as the
/// reference's `workspace: cannot spawn shell: …`).
async fn refuse(channel: &Channel<Msg>, message: &str) {
    tracing::warn!(%message, "workspace session setup failed");
    let _ = channel
        .extended_data_bytes(1, format!("workspace: {message}\n").into_bytes())
        .await;
    let _ = channel.exit_status(1).await;
    let _ = channel.eof().await;
    let _ = channel.close().await;
}

/// Copies a command's output to the channel (within the client's window) until it ends, or
/// until the command has exited and nothing more arrives within [`LINGER`].
async fn pump(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    mut exited: watch::Receiver<bool>,
) {
    let mut buffer = vec![0u8; 32 * 1024];
    let mut done = false;
    loop {
        let read = if done || *exited.borrow() {
            match tokio::time::timeout(LINGER, from.read(&mut buffer)).await {
                Ok(read) => read,
                Err(_) => break,
            }
        } else {
            tokio::select! {
                read = from.read(&mut buffer) => read,
                changed = exited.changed() => {
                    done = done || changed.is_err();
                    continue;
                }
            }
        };
        match read {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buffer[..n]).await.is_err() {
                    return;
                }
            }
        }
    }
    let _ = to.flush().await;
}

/// The number of the signal an SSH client names (RFC 4254's names, without `SIG`).
fn number_of(signal: &Sig) -> Option<i32> {
    Some(match signal {
        Sig::HUP => 1,
        Sig::INT => 2,
        Sig::QUIT => 3,
        Sig::ILL => 4,
        Sig::ABRT => 6,
        Sig::FPE => 8,
        Sig::KILL => 9,
        Sig::USR1 => 10,
        Sig::SEGV => 11,
        Sig::PIPE => 13,
        Sig::ALRM => 14,
        Sig::TERM => 15,
        Sig::Custom(name) => match name.as_str() {
            "USR2" => 12,
            "CONT" => 18,
            "STOP" => 19,
            "TSTP" => 20,
            "WINCH" => 28,
            _ => return None,
        },
    })
}

/// The SSH name of signal `number`.
fn signal_of(number: i32) -> Sig {
    match number {
        1 => Sig::HUP,
        2 => Sig::INT,
        3 => Sig::QUIT,
        4 => Sig::ILL,
        6 => Sig::ABRT,
        8 => Sig::FPE,
        9 => Sig::KILL,
        10 => Sig::USR1,
        11 => Sig::SEGV,
        13 => Sig::PIPE,
        14 => Sig::ALRM,
        15 => Sig::TERM,
        other => Sig::Custom(other.to_string()),
    }
}
