//! Serving: the listener, each connection's preface (a capability stream or a control
//! session), the port line, and a clean stop on SIGTERM or SIGINT.

mod channel;
mod config;
mod control;
mod error;
mod failure_log;
mod hello;
mod limits;
mod tunnel;

use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Mutex, watch};
use tokio::task::{JoinHandle, JoinSet};

use crate::environment::Environment;
use crate::frame::{FRAME_LIMIT, FrameError, FrameReader, Id};
use channel::Channel;
pub use config::{Limits, ServeConfig};
pub use error::ServeError;
pub use limits::{
    DEFAULT_BUFFERED_BYTES, DEFAULT_FRAME_TIMEOUT, DEFAULT_IDLE_TIMEOUT, ServerStats,
    default_max_connections, default_max_streams,
};
use limits::{Guard, Refused, Slot};

/// The line a serving process prints on stdout once it accepts connections, followed by the
/// port; hud's runtimes read it.
pub const PORT_ANNOUNCEMENT: &str = "HUD_SERVE_PORT=";

/// How long a stop waits for sessions to finish their own cleanup before aborting them; well
/// inside the 10 s hud's runtimes allow between SIGTERM and SIGKILL.
const SESSION_GRACE: Duration = Duration::from_secs(3);

/// How long the teardown and shutdown hooks get once the sessions are gone; with
/// [`SESSION_GRACE`] a stop takes at most 8 s.
const HOOK_GRACE: Duration = Duration::from_secs(5);

/// Why [`Environment::serve`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// SIGTERM.
    Terminated,
    /// SIGINT (Ctrl-C).
    Interrupted,
}

impl Stopped {
    /// The exit status for the process: 143 after SIGTERM (as the reference's
    /// `run_until_terminated`), 130 after SIGINT.
    #[must_use]
    pub fn exit_code(self) -> std::process::ExitCode {
        match self {
            Stopped::Terminated => std::process::ExitCode::from(143),
            Stopped::Interrupted => std::process::ExitCode::from(130),
        }
    }
}

/// A bound, serving control channel. [`shutdown`](Server::shutdown) stops it; dropping it
/// stops accepting and aborts every connection and task.
#[derive(Debug)]
pub struct Server {
    address: SocketAddr,
    stop: watch::Sender<bool>,
    accept: Option<JoinHandle<()>>,
    channel: Arc<Channel>,
    guard: Arc<Guard>,
}

impl std::fmt::Debug for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Channel").finish_non_exhaustive()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(accept) = &self.accept {
            accept.abort();
        }
    }
}

impl Server {
    /// The address it listens on.
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// How many tasks are held between start and grade (running or parked).
    #[must_use]
    pub fn held_tasks(&self) -> usize {
        self.channel.held()
    }

    /// What the server holds now (connections, buffered bytes) and what it has refused.
    #[must_use]
    pub fn stats(&self) -> ServerStats {
        self.guard.stats()
    }

    /// Stops serving: no new connections; every session's task call is cancelled (a started
    /// task is not parked); every held task is cancelled with its teardown hooks; then the
    /// environment's shutdown hooks run. Returns once all of that is done, or after at most
    /// 8 s (3 s for sessions to finish their own cleanup, then 5 s for the hooks; what is still
    /// running then is dropped, with a warning), inside the 10 s hud's runtimes allow.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        if let Some(accept) = self.accept.take() {
            let _ = accept.await;
        }
        let hooks = async {
            self.channel.cancel_all().await;
            self.channel.env.stop().await;
        };
        if tokio::time::timeout(HOOK_GRACE, hooks).await.is_err() {
            tracing::warn!(
                env = %self.channel.env.name,
                "teardown and shutdown hooks still running after {HOOK_GRACE:?}; stopping anyway"
            );
        }
    }
}

impl<S> Environment<S> {
    /// Runs the `initialize` hooks and binds the control channel (not printing the port line:
    /// [`serve`](Self::serve) does that). For tests and for programs that serve several
    /// environments.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use grader_env::{Environment, ServeConfig};
    ///
    /// let server = Environment::new("empty").bind(&ServeConfig::default()).await?;
    /// assert!(server.local_addr().ip().is_loopback());
    /// server.shutdown().await;
    /// # Ok::<(), grader_env::ServeError>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    /// [`ServeError::Initialize`] when a hook fails (the shutdown hooks then run),
    /// [`ServeError::Bind`] when the address cannot be bound.
    pub async fn bind(self, config: &ServeConfig) -> Result<Server, ServeError> {
        // The templates hold what they take of the state since they were registered.
        let env = Arc::new(self.with_state(()));
        if let Err(message) = env.start().await {
            env.stop().await;
            return Err(ServeError::Initialize {
                env: env.name.clone(),
                message,
            });
        }
        let address = config.address();
        let listener = match TcpListener::bind(&address).await {
            Ok(listener) => listener,
            Err(source) => {
                env.stop().await;
                return Err(ServeError::Bind {
                    env: env.name.clone(),
                    address,
                    source,
                });
            }
        };
        let local = listener.local_addr().map_err(|source| ServeError::Io {
            env: env.name.clone(),
            source,
        })?;
        tracing::info!(env = %env.name, address = %local, "bound");
        let channel = Arc::new(Channel::new(env));
        let limits = config.limits();
        let guard = Arc::new(Guard::new(
            limits.max_connections,
            limits.max_streams,
            limits.buffered_bytes,
            limits.frame_timeout,
            limits.idle_timeout,
        ));
        let (stop, stopped) = watch::channel(false);
        let accept = tokio::spawn(accept_loop(
            listener,
            Arc::clone(&channel),
            Arc::clone(&guard),
            stopped,
        ));
        Ok(Server {
            address: local,
            stop,
            accept: Some(accept),
            channel,
            guard,
        })
    }

    /// Serves until SIGTERM or SIGINT: runs the `initialize` hooks, binds, prints
    /// `HUD_SERVE_PORT=<port>` on stdout (flushed; nothing else goes to stdout, logs go through
    /// `tracing`), and on a signal cancels every running template (dropping what they own, the
    /// commands they started included), runs the teardown and shutdown hooks, and returns.
    ///
    /// # Errors
    /// As [`bind`](Self::bind), and [`ServeError::Io`] when stdout or the signal handlers
    /// fail.
    pub async fn serve(self, config: &ServeConfig) -> Result<Stopped, ServeError> {
        let name = self.name.clone();
        let io = |source| ServeError::Io {
            env: name.clone(),
            source,
        };
        let signals = Signals::new().map_err(io)?;
        let server = self.bind(config).await?;
        let announced = {
            let mut stdout = std::io::stdout().lock();
            writeln!(stdout, "{PORT_ANNOUNCEMENT}{}", server.local_addr().port())
                .and_then(|()| stdout.flush())
        };
        if let Err(source) = announced {
            server.shutdown().await;
            return Err(io(source));
        }
        let stopped = signals.wait().await;
        tracing::info!(env = %name, ?stopped, "stopping");
        server.shutdown().await;
        Ok(stopped)
    }
}

struct Signals {
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
}

impl Signals {
    #[cfg(unix)]
    fn new() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    #[cfg(not(unix))]
    fn new() -> std::io::Result<Self> {
        Ok(Signals {})
    }

    #[cfg(unix)]
    async fn wait(mut self) -> Stopped {
        tokio::select! {
            _ = self.terminate.recv() => Stopped::Terminated,
            _ = self.interrupt.recv() => Stopped::Interrupted,
        }
    }

    #[cfg(not(unix))]
    async fn wait(self) -> Stopped {
        let _ = tokio::signal::ctrl_c().await;
        Stopped::Interrupted
    }
}

async fn accept_loop(
    listener: TcpListener,
    channel: Arc<Channel>,
    guard: Arc<Guard>,
    mut stop: watch::Receiver<bool>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let (slot, evicted) = guard.admit();
                    if let Some(silent) = evicted {
                        log_eviction(&guard, peer, "new connection silent", silent);
                    }
                    let _ = stream.set_nodelay(true);
                    let channel = Arc::clone(&channel);
                    let guard = Arc::clone(&guard);
                    connections.spawn(connection(channel, guard, slot, stream, stop.clone()));
                }
                Err(error) => {
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
        }
    }
    drop(listener);
    let drained = tokio::time::timeout(SESSION_GRACE, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        connections.shutdown().await;
    }
}

/// Logs (at most once a second) that the connection `what` the longest (for `idle`) was closed
/// to admit the one from `peer`.
fn log_eviction(guard: &Guard, peer: SocketAddr, what: &str, idle: Duration) {
    if let Some(unlogged) = guard.logs.evicted.allow() {
        tracing::warn!(
            %peer,
            max_connections = guard.max_connections,
            idle_secs = idle.as_secs_f64(),
            unlogged,
            "closing the {what} the longest to admit a new one"
        );
    }
}

/// Answers a first frame the tables have no place for with an error frame (the message says
/// which table is full), logs it (at most once a second), and lets the connection close.
async fn refuse(
    guard: &Guard,
    peer: Option<SocketAddr>,
    refused: Refused,
    writer: &control::Writer,
    id: &Id,
) {
    let message = match refused {
        Refused::Control => {
            let max = guard.max_connections;
            if let Some(unlogged) = guard.logs.refused_connection.allow() {
                tracing::warn!(
                    peer = ?peer,
                    max_connections = max,
                    unlogged,
                    "refusing a control session: the server holds as many as it may, none idle"
                );
            }
            format!(
                "The server holds {max} connections, as many as it may, each with a task or a \
                 request; try again later."
            )
        }
        Refused::Stream => {
            let max = guard.max_streams;
            if let Some(unlogged) = guard.logs.refused_stream.allow() {
                tracing::warn!(
                    peer = ?peer,
                    max_streams = max,
                    unlogged,
                    "refusing a capability stream: the server holds as many as it may"
                );
            }
            format!(
                "The server holds {max} capability streams, as many as it may; try again later."
            )
        }
    };
    let _ = control::send_control_error(writer, id, -32000, &message).await;
}

/// Serves one connection: its first frame (within the frame timeout, unless a newer connection
/// takes its place first) moves it to the table of capability streams (`tunnel.open`) or of
/// control sessions, or is refused when that table has no place.
async fn connection(
    channel: Arc<Channel>,
    guard: Arc<Guard>,
    mut slot: Slot,
    stream: TcpStream,
    mut stop: watch::Receiver<bool>,
) {
    let peer = stream.peer_addr().ok();
    let (read, write) = stream.into_split();
    let timeout = guard.frame_timeout;
    let mut reader =
        FrameReader::budgeted(read, FRAME_LIMIT, guard.budget.clone()).frame_timeout(timeout);
    let writer = Arc::new(control::WriteHalf {
        half: Mutex::new(write),
        timeout,
    });
    let first = tokio::select! {
        _ = stop.changed() => return,
        () = slot.evicted() => Err(FrameError::Evicted),
        first = tokio::time::timeout(timeout, reader.read_request()) => match first {
            Ok(first) => first,
            Err(_) => Err(FrameError::TimedOut {
                timeout,
                received: reader.pending(),
            }),
        },
    };
    let (result, held) = match first {
        Ok(None) => (Ok(()), slot),
        Ok(Some(first))
            if first.msg.get("method").and_then(Value::as_str) == Some("tunnel.open") =>
        {
            match slot.into_stream() {
                Ok(stream_slot) => {
                    let env = Arc::clone(&channel.env);
                    let done = tokio::select! {
                        _ = stop.changed() => Ok(()),
                        done = tunnel::run(env, first, reader, Arc::clone(&writer)) => done,
                    };
                    drop(stream_slot);
                    return finish(&guard, peer, done, &writer).await;
                }
                Err((refused, slot)) => {
                    refuse(&guard, peer, refused, &writer, &first.id).await;
                    drop(slot);
                    return finish(&guard, peer, Ok(()), &writer).await;
                }
            }
        }
        Ok(Some(first)) => match slot.into_control() {
            Ok((mut slot, evicted)) => {
                if let (Some(idle), Some(peer)) = (evicted, peer) {
                    log_eviction(&guard, peer, "control session idle", idle);
                }
                let session = control::Connection {
                    slot: &mut slot,
                    idle_timeout: guard.idle_timeout,
                };
                let done = control::run(
                    channel,
                    first,
                    &mut reader,
                    Arc::clone(&writer),
                    &mut stop,
                    session,
                )
                .await;
                finish(&guard, peer, done, &writer).await;
                drop(slot);
                return;
            }
            Err((refused, slot)) => {
                refuse(&guard, peer, refused, &writer, &first.id).await;
                drop(slot);
                return finish(&guard, peer, Ok(()), &writer).await;
            }
        },
        Err(error) => (Err(error), slot),
    };
    finish(&guard, peer, result, &writer).await;
    drop(held);
}

/// Says why a connection ends (an error frame where the peer should know), counts and logs it,
/// and closes the write half.
async fn finish(
    guard: &Guard,
    peer: Option<SocketAddr>,
    result: Result<(), FrameError>,
    writer: &control::Writer,
) {
    match result {
        Err(FrameError::TooLarge(message)) => {
            let _ = control::send_control_error(writer, &Id::NULL, -32000, &message).await;
        }
        Err(error @ (FrameError::TimedOut { .. } | FrameError::Busy { .. })) => {
            if matches!(error, FrameError::TimedOut { .. }) {
                guard.timed_out();
                if let Some(unlogged) = guard.logs.timed_out.allow() {
                    let what = "closing a connection whose frame stopped arriving";
                    tracing::warn!(peer = ?peer, %error, unlogged, "{what}");
                }
            } else {
                guard.refused_frame();
                if let Some(unlogged) = guard.logs.refused_frame.allow() {
                    let what = "refusing a frame: the buffered-bytes budget is spent";
                    tracing::warn!(peer = ?peer, %error, unlogged, "{what}");
                }
            }
            let message = error.to_string();
            let _ = control::send_control_error(writer, &Id::NULL, -32000, &message).await;
        }
        Err(error @ (FrameError::Idle { .. } | FrameError::Evicted)) => {
            if matches!(error, FrameError::Idle { .. }) {
                guard.idle_closed();
                tracing::info!(peer = ?peer, %error, "closing an idle connection");
            }
            let message = error.to_string();
            let _ = control::send_control_error(writer, &Id::NULL, -32000, &message).await;
        }
        Err(FrameError::Io(error)) if error.kind() == std::io::ErrorKind::TimedOut => {
            guard.timed_out();
            if let Some(unlogged) = guard.logs.timed_out.allow() {
                let what = "closing a connection that does not read its replies";
                tracing::warn!(peer = ?peer, %error, unlogged, "{what}");
            }
        }
        Err(error) => tracing::debug!(%error, "connection ended"),
        Ok(()) => {}
    }
    let mut write = writer.half.lock().await;
    let _ = tokio::io::AsyncWriteExt::shutdown(&mut *write).await;
}
