//! The `filetracking/1` server of a workspace built with
//! [`track_files(true)`](super::WorkspaceBuilder::track_files): the reference's
//! `serve_file_tracking` (`hud/environment/file_tracker.py`). One [`Tracker`] on the root,
//! its baseline taken when the workspace starts, shared by every connection under a lock; each
//! connection speaks the control channel's frames, one request at a time:
//!
//! | method | reply |
//! |---|---|
//! | `setup` | the changes since the last scan ([`Tracker::setup`]), which then becomes the agent's baseline |
//! | `diff` | the changes since the last scan ([`Tracker::diff_scan`]) |
//! | `snapshot` | `{"files": manifest, "files_scanned": n}` ([`Tracker::manifest`]; no scan) |
//! | `advance` | `{"advanced": true}`, the current state becoming the baseline ([`Tracker::advance`]) |
//! | `flush` | `{"diff": ..., "capture": ...}` ([`Tracker::flush`]) |
//!
//! As the reference: another method gets an error frame (-32000, `unknown filetracking
//! method: 'x'`) and the connection goes on; a request whose id is not an integer is carried
//! out but not answered; a line that is not a JSON object, or longer than 64 KiB (asyncio's
//! default line limit, which the reference reads with), closes the connection. Beyond the
//! reference, it is bounded: at most [`MAX_CONNECTIONS`] connections (another is closed at
//! once), a request that stops arriving is dropped after 30 s, and a reply larger than hud's
//! client reads (160 MiB) is an error frame instead. Scans run on tokio's blocking threads.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt as _;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore, oneshot};
use tokio::task::{JoinHandle, JoinSet};

use super::changes::{Tracker, TrackerError};
use super::error::{WorkspaceError, listen};
use crate::Capability;
use crate::frame::{FrameReader, Id, Outcome, encode_response};
use crate::pyfmt::py_repr;

/// The most `filetracking/1` connections a workspace holds at once (hud's eval loop opens one
/// per rollout).
pub const MAX_CONNECTIONS: usize = 64;
/// The longest request line read: asyncio's default stream limit, the reference's.
const REQUEST_LIMIT: usize = 64 * 1024;
/// The largest reply sent: what hud's client (`hud.eval.file_tracking`) reads.
const REPLY_LIMIT: usize = 160 * 1024 * 1024;
/// How long a request may take to arrive once begun.
const FRAME_TIMEOUT: Duration = Duration::from_secs(30);
/// The reference's code for a method that failed.
const FAILED: i64 = -32000;

/// A running `filetracking/1` server.
pub(super) struct FileTracking {
    tracker: Arc<Mutex<Tracker>>,
    accept: JoinHandle<()>,
    stop: Option<oneshot::Sender<()>>,
    addr: SocketAddr,
    root: String,
}

impl FileTracking {
    /// Takes the baseline of `root` and listens on `addr`'s host, on a free port.
    pub(super) async fn start(
        root: std::path::PathBuf,
        addr: SocketAddr,
    ) -> Result<FileTracking, WorkspaceError> {
        let given = root.clone();
        let tracker = tokio::task::spawn_blocking(move || Tracker::start(root))
            .await
            .map_err(|e| TrackerError::Root {
                path: given,
                reason: e.to_string(),
            })??;
        let (listener, addr) = listen(addr).await?;
        let root = tracker.root().to_string_lossy().into_owned();
        let tracker = Arc::new(Mutex::new(tracker));
        let (stop, stopped) = oneshot::channel();
        let accept = tokio::spawn(accept_loop(listener, Arc::clone(&tracker), stopped));
        tracing::info!(%addr, %root, "workspace filetracking serving");
        Ok(FileTracking {
            tracker,
            accept,
            stop: Some(stop),
            addr,
            root,
        })
    }

    /// The `filetracking/1` capability, as the reference's `file_tracking_capability()`.
    pub(super) fn capability(&self) -> Capability {
        Capability::new(
            "filetracking",
            "filetracking/1",
            format!("tcp://{}", self.addr),
        )
        .param("root", self.root.clone())
        .param("setup_diff", true)
    }

    /// Closes the listener and every connection, and returns once no scan runs.
    pub(super) async fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.accept).await;
        // A scan on a blocking thread holds the tracker until it ends.
        drop(self.tracker.lock().await);
    }
}

impl Drop for FileTracking {
    fn drop(&mut self) {
        // Dropping the accept loop drops its connections with it.
        self.accept.abort();
    }
}

async fn accept_loop(
    listener: TcpListener,
    tracker: Arc<Mutex<Tracker>>,
    mut stopped: oneshot::Receiver<()>,
) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => match Arc::clone(&slots).try_acquire_owned() {
                    Ok(slot) => {
                        connections.spawn(serve(stream, Arc::clone(&tracker), slot));
                    }
                    Err(_) => {
                        tracing::warn!(%peer, max = MAX_CONNECTIONS, "filetracking connection refused: too many open");
                    }
                },
                // Out of descriptors, most likely: wait for a connection to end.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    connections.shutdown().await;
}

/// Serves one connection: one request at a time, until it closes or sends what the reference
/// would close it for.
async fn serve(stream: TcpStream, tracker: Arc<Mutex<Tracker>>, _slot: OwnedSemaphorePermit) {
    let _ = stream.set_nodelay(true);
    let (read, mut write) = stream.into_split();
    let mut reader = FrameReader::new(read, REQUEST_LIMIT).frame_timeout(FRAME_TIMEOUT);
    while let Ok(Some(request)) = reader.read_request().await {
        let method = request
            .msg
            .get("method")
            .cloned()
            .unwrap_or_else(|| Value::String(String::new()));
        let outcome = call(&tracker, &method).await;
        if !is_int(&request.id) {
            continue;
        }
        let frame = match &outcome {
            Ok(result) => encode_response(&request.id, &Outcome::Result(result), REPLY_LIMIT),
            Err(message) => {
                encode_response(&request.id, &Outcome::Error(FAILED, message), REPLY_LIMIT)
            }
        };
        let frame = match frame {
            Ok(frame) => frame,
            Err(too_large) => match encode_response(
                &request.id,
                &Outcome::Error(FAILED, &too_large.to_string()),
                REPLY_LIMIT,
            ) {
                Ok(frame) => frame,
                Err(_) => break,
            },
        };
        if write.write_all(&frame).await.is_err() {
            break;
        }
    }
}

/// Whether the reference answers this id: `isinstance(msg_id, int)` (a bool is an int there).
fn is_int(id: &Id) -> bool {
    match id {
        Id::Raw(_) | Id::Json(Value::Bool(_)) => true,
        Id::Json(Value::Number(number)) => number.is_i64() || number.is_u64(),
        Id::Json(_) => false,
    }
}

#[derive(Clone, Copy)]
enum Method {
    Diff,
    Snapshot,
    Setup,
    Advance,
    Flush,
}

/// Carries out one method under the tracker's lock, on a blocking thread.
async fn call(tracker: &Arc<Mutex<Tracker>>, method: &Value) -> Result<Value, String> {
    let method = match method.as_str() {
        Some("diff") => Method::Diff,
        Some("snapshot") => Method::Snapshot,
        Some("setup") => Method::Setup,
        Some("advance") => Method::Advance,
        Some("flush") => Method::Flush,
        _ => return Err(format!("unknown filetracking method: {}", py_repr(method))),
    };
    let mut tracker = Arc::clone(tracker).lock_owned().await;
    tokio::task::spawn_blocking(move || match method {
        Method::Diff => tracker.diff_scan().to_json(),
        Method::Snapshot => {
            let files = tracker.manifest();
            let count = files.len();
            json!({"files": files, "files_scanned": count})
        }
        Method::Setup => tracker.setup().to_json(),
        Method::Advance => {
            tracker.advance();
            json!({"advanced": true})
        }
        Method::Flush => tracker.flush().to_json(),
    })
    .await
    .map_err(|e| e.to_string())
}
