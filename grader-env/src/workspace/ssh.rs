//! The workspace's SSH server, on russh: public-key authentication with the managed client key
//! only, then session channels whose exec (or shell) requests run through the [`Launcher`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use russh::keys::PublicKey;
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

/// What every connection shares.
pub(crate) struct Shared {
    /// The one key that may log in.
    pub(crate) client_key: PublicKey,
    /// Starts the sessions' commands.
    pub(crate) launcher: Launcher,
    /// Open connections, to disconnect on stop.
    connections: Mutex<HashMap<u64, Handle>>,
    /// The next connection's number.
    next: AtomicU64,
}

impl Shared {
    /// State for a server whose only client key is `client_key`.
    pub(crate) fn new(client_key: PublicKey, launcher: Launcher) -> Self {
        Shared {
            client_key,
            launcher,
            connections: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
        }
    }

    /// Disconnects every open connection.
    pub(crate) async fn disconnect_all(&self) {
        let handles: Vec<Handle> = self
            .connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .map(|(_, handle)| handle)
            .collect();
        for handle in handles {
            let _ = handle
                .disconnect(
                    Disconnect::ByApplication,
                    "the workspace stopped".to_owned(),
                    String::new(),
                )
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

/// Accepts connections until aborted; each runs as its own russh session.
pub(crate) async fn accept_loop(listener: TcpListener, config: Arc<Config>, shared: Arc<Shared>) {
    let mut running = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    // Out of descriptors or a connection reset before accept: keep serving.
                    tokio::task::yield_now().await;
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let id = shared.next.fetch_add(1, Ordering::Relaxed);
                let logged_in = Arc::new(AtomicBool::new(false));
                let handler = Connection {
                    shared: Arc::clone(&shared),
                    channels: JoinSet::new(),
                    logged_in: Arc::clone(&logged_in),
                };
                let config = Arc::clone(&config);
                let shared = Arc::clone(&shared);
                running.spawn(serve_connection(shared, id, config, stream, handler, logged_in));
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
    logged_in: Arc<AtomicBool>,
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
        .insert(id, session.handle());
    let mut session = std::pin::pin!(session);
    tokio::select! {
        _ = &mut session => {}
        () = tokio::time::sleep(LOGIN_WITHIN) => {
            if !logged_in.load(Ordering::SeqCst) {
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
    /// Set once the client has authenticated.
    logged_in: Arc<AtomicBool>,
}

impl Connection {
    fn is_client(&self, key: &PublicKey) -> bool {
        key.key_data() == self.shared.client_key.key_data()
    }
}

impl russh::server::Handler for Connection {
    type Error = russh::Error;

    async fn auth_publickey_offered(
        &mut self,
        _user: &str,
        offer: PublicKeyOffer<'_>,
    ) -> Result<Auth, Self::Error> {
        Ok(if self.is_client(offer.public_key) {
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
        Ok(if self.is_client(key.public_key) {
            Auth::Accept
        } else {
            Auth::reject()
        })
    }

    async fn auth_succeeded(&mut self, _session: &mut Session) -> Result<(), Self::Error> {
        self.logged_in.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn channel_open_session(
        &mut self,
        channel: Channel<Msg>,
        reply: ChannelOpenHandle,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        while self.channels.try_join_next().is_some() {}
        reply.accept().await;
        let shared = Arc::clone(&self.shared);
        let handle = session.handle();
        self.channels
            .spawn(async move { serve_channel(&shared, channel, handle).await });
        Ok(())
    }

    async fn env_request(
        &mut self,
        channel: ChannelId,
        name: &str,
        _value: &str,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        if valid_variable(name) {
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
async fn serve_channel(shared: &Shared, mut channel: Channel<Msg>, handle: Handle) {
    let mut env: Vec<(String, String)> = Vec::new();
    let mut wants_terminal: Option<pty::Request> = None;
    let command = loop {
        match channel.wait().await {
            Some(ChannelMsg::SetEnv {
                variable_name,
                variable_value,
                ..
            }) if valid_variable(&variable_name) => env.push((variable_name, variable_value)),
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
    let slave = terminal.as_ref().map(|t| &t.slave);
    let mut process = match shared.launcher.spawn(command.as_deref(), &env, slave).await {
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
