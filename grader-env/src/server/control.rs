//! One control connection: the session it speaks for and the one task call it runs, as the
//! reference's `_Session`.
//!
//! `tasks.start` and `tasks.grade` run beside the read loop (polled by it), so a
//! `tasks.cancel` or a `bye` still reaches them; any other frame while one runs is refused
//! with -32600. A hang-up lets a start finish and park its task for a resume, and cancels a
//! grade, whose result nobody is left to receive. A malformed frame (not a JSON object) closes
//! the connection without a reply, as the reference's does.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use serde_json::{Map, Value, json};
use tokio::io::AsyncWriteExt as _;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{Mutex, oneshot, watch};

use super::channel::{Channel, NoTask, Resume};
use super::hello::{check_connection, check_route, no_workspace};
use super::limits::Slot;
use crate::frame::{
    FRAME_LIMIT, FrameError, FrameReader, Held, Id, Outcome, Request, encode_response,
};
use crate::pyfmt::{py_str, py_str_repr, py_truthy, py_type_name};

/// The write half of a connection, shared by the read loop and the task call it runs.
pub(crate) type Writer = Arc<WriteHalf>;

/// A connection's write half and how long a frame may take to be taken by the peer.
pub(crate) struct WriteHalf {
    pub(crate) half: Mutex<OwnedWriteHalf>,
    pub(crate) timeout: Duration,
}

/// Writes a frame; a peer that does not take it within the frame timeout (it sends but never
/// reads) ends the connection.
async fn write(writer: &Writer, bytes: &[u8]) -> Result<(), FrameError> {
    let mut half = writer.half.lock().await;
    let written = async {
        half.write_all(bytes).await?;
        half.flush().await
    };
    match tokio::time::timeout(writer.timeout, written).await {
        Ok(done) => Ok(done?),
        Err(_) => Err(FrameError::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!(
                "the peer did not take a {}-byte frame within {} s",
                bytes.len(),
                writer.timeout.as_secs_f64()
            ),
        ))),
    }
}

/// Sends a success reply (nothing for a notification, whose id is null).
async fn send_reply(writer: &Writer, id: &Id, result: &Value) -> Result<(), FrameError> {
    if id.is_null() {
        return Ok(());
    }
    write(
        writer,
        &encode_response(id, &Outcome::Result(result), FRAME_LIMIT)?,
    )
    .await
}

/// Sends an error frame even when it is too large (then with the size message instead), as
/// the reference's `_send_control_error`.
pub(crate) async fn send_control_error(
    writer: &Writer,
    id: &Id,
    code: i64,
    message: &str,
) -> Result<(), FrameError> {
    let bytes = match encode_response(id, &Outcome::Error(code, message), FRAME_LIMIT) {
        Ok(bytes) => bytes,
        Err(too_large) => {
            let text = too_large.to_string();
            encode_response(id, &Outcome::Error(-32000, &text), FRAME_LIMIT).or_else(|_| {
                encode_response(&Id::NULL, &Outcome::Error(-32000, &text), FRAME_LIMIT)
            })?
        }
    };
    write(writer, &bytes).await
}

/// Sends an error reply (nothing for a notification).
async fn send_error(writer: &Writer, id: &Id, code: i64, message: &str) -> Result<(), FrameError> {
    if id.is_null() {
        return Ok(());
    }
    send_control_error(writer, id, code, message).await
}

/// Python's `AttributeError` for `params.get` on a value that is not a dict.
fn no_get(value: &Value) -> String {
    format!("'{}' object has no attribute 'get'", py_type_name(value))
}

/// The task call in progress: its future is polled by the read loop itself (no task of its
/// own), beside the next frame. Dropping it drops the call, and a runner it holds aborts its
/// template.
struct Work {
    id: Id,
    method: String,
    stop: Option<oneshot::Sender<()>>,
    replied: Arc<AtomicBool>,
    future: Pin<Box<dyn Future<Output = Result<(), FrameError>> + Send>>,
    /// What its parsed frame is counted as in the budget, released with the call.
    _held: Held,
}

/// What the control loop needs of its connection's place in the server's table: to say when
/// it is idle (it may then give its place to a new connection) and for how long it may be.
pub(crate) struct Connection<'a> {
    pub(crate) slot: &'a mut Slot,
    pub(crate) idle_timeout: Duration,
}

struct Control {
    channel: Arc<Channel>,
    writer: Writer,
    id: String,
    work: Option<Work>,
}

/// Serves one control session until the peer says `bye`, hangs up, sends a frame that ends
/// the connection, or the server shuts down.
pub(crate) async fn run(
    channel: Arc<Channel>,
    first: Request,
    reader: &mut FrameReader<OwnedReadHalf>,
    writer: Writer,
    shutdown: &mut watch::Receiver<bool>,
    connection: Connection<'_>,
) -> Result<(), FrameError> {
    let id = channel.open_session();
    let mut control = Control {
        channel,
        writer,
        id,
        work: None,
    };
    let result = control.serve(first, reader, shutdown, connection).await;
    control.stop_work().await;
    control.channel.close_session(&control.id);
    if !control.channel.holds(&control.id) {
        control.channel.env.session_closed(&control.id).await;
    }
    result
}

async fn wait_work(work: &mut Option<Work>) -> Result<(), FrameError> {
    match work {
        Some(work) => work.future.as_mut().await,
        None => std::future::pending().await,
    }
}

impl Control {
    async fn serve(
        &mut self,
        first: Request,
        reader: &mut FrameReader<OwnedReadHalf>,
        shutdown: &mut watch::Receiver<bool>,
        connection: Connection<'_>,
    ) -> Result<(), FrameError> {
        let Connection { slot, idle_timeout } = connection;
        let mut pending = Some(first);
        // Since when the connection has waited for a frame with no task.
        let mut idle_since: Option<Instant> = None;
        loop {
            let msg = match pending.take() {
                Some(msg) => msg,
                None => {
                    // A session with a task (running, or held for its grade) is never idle:
                    // an agent may think for hours.
                    let holding = self.work.is_some() || self.channel.holds(&self.id);
                    if holding {
                        slot.busy();
                        idle_since = None;
                    } else {
                        slot.idle();
                    }
                    let since = *idle_since.get_or_insert_with(Instant::now);
                    tokio::select! {
                        biased;
                        _ = shutdown.changed() => return Ok(()),
                        () = slot.evicted(), if !holding => return Err(FrameError::Evicted),
                        () = tokio::time::sleep_until(since + idle_timeout), if !holding => {
                            if reader.pending() > 0 {
                                // A frame is arriving: the frame timeout bounds it.
                                idle_since = Some(Instant::now());
                                continue;
                            }
                            return Err(FrameError::Idle { timeout: idle_timeout });
                        }
                        done = wait_work(&mut self.work) => {
                            self.work = None;
                            done?;
                            continue;
                        }
                        frame = reader.read_request() => match frame? {
                            Some(msg) => msg,
                            None => {
                                if self.work.as_ref().is_some_and(|w| w.method == "tasks.start") {
                                    // Let the start finish: its task parks for a resume.
                                    tokio::select! {
                                        _ = shutdown.changed() => {}
                                        _ = wait_work(&mut self.work) => self.work = None,
                                    }
                                }
                                return Ok(());
                            }
                        },
                    }
                }
            };
            slot.busy();
            idle_since = None;
            // A task call that has already replied is over, whatever the scheduler says.
            if self
                .work
                .as_ref()
                .is_some_and(|w| w.replied.load(Ordering::Acquire))
            {
                let done = wait_work(&mut self.work).await;
                self.work = None;
                done?;
            }
            if !self.receive(msg).await? {
                return Ok(());
            }
        }
    }

    async fn stop_work(&mut self) {
        if let Some(mut work) = self.work.take() {
            if let Some(stop) = work.stop.take() {
                let _ = stop.send(());
            }
            let _ = work.future.as_mut().await;
        }
    }

    /// Acts on one frame; `false` once the peer has said goodbye.
    async fn receive(&mut self, request: Request) -> Result<bool, FrameError> {
        let Request { msg, id, held } = request;
        let method = msg
            .get("method")
            .cloned()
            .unwrap_or_else(|| Value::String(String::new()));
        let name = method.as_str().unwrap_or("");
        if method.is_string() && (name == "tasks.cancel" || name == "bye") {
            if let Some(work_id) = self.work.as_ref().map(|w| w.id.clone()) {
                self.stop_work().await;
                send_error(
                    &self.writer,
                    &work_id,
                    -32000,
                    &format!("{name} interrupted the task"),
                )
                .await?;
            }
            self.channel.cancel(&self.id).await;
            if name == "bye" {
                send_reply(&self.writer, &id, &json!({"goodbye": true})).await?;
                return Ok(false);
            }
            send_reply(&self.writer, &id, &json!({"cancelled": true})).await?;
        } else if self.work.is_some() {
            let message = format!("{}: a task call is still running", py_str(&method));
            send_error(&self.writer, &id, -32600, &message).await?;
        } else if method.is_string() && (name == "tasks.start" || name == "tasks.grade") {
            self.spawn_work(name, id, params_of(&msg), held);
        } else {
            let params = params_of(&msg);
            let outcome = match name {
                "hello" if method.is_string() => self.hello(&id, &params).await,
                "tasks.list" if method.is_string() => {
                    let tasks: Vec<Value> = self
                        .channel
                        .env
                        .templates
                        .iter()
                        .map(crate::Template::manifest)
                        .collect();
                    send_reply(&self.writer, &id, &json!({"tasks": tasks})).await
                }
                _ => {
                    let message = format!("method not found: {}", py_str(&method));
                    send_error(&self.writer, &id, -32601, &message).await
                }
            };
            if let Err(failure) = outcome {
                if matches!(failure, FrameError::Io(_)) {
                    return Err(failure);
                }
                send_error(&self.writer, &id, -32000, &failure.to_string()).await?;
            }
        }
        Ok(true)
    }

    fn spawn_work(&mut self, method: &str, id: Id, params: Value, held: Held) {
        let (stop_tx, stop_rx) = oneshot::channel();
        let replied = Arc::new(AtomicBool::new(false));
        let call = Call {
            channel: Arc::clone(&self.channel),
            writer: Arc::clone(&self.writer),
            session: self.id.clone(),
            id: id.clone(),
            replied: Arc::clone(&replied),
        };
        let future: Pin<Box<dyn Future<Output = Result<(), FrameError>> + Send>> =
            if method == "tasks.start" {
                Box::pin(call.start(params, stop_rx))
            } else {
                Box::pin(call.grade(params, stop_rx))
            };
        self.work = Some(Work {
            id,
            method: method.to_owned(),
            stop: Some(stop_tx),
            replied,
            future,
            _held: held,
        });
    }

    async fn hello(&mut self, id: &Id, params: &Value) -> Result<(), FrameError> {
        let Value::Object(params) = params else {
            return send_error(&self.writer, id, -32000, &no_get(params)).await;
        };
        let requested = params.get("session_id").unwrap_or(&Value::Null);
        if !requested.is_null() && requested.as_str() != Some(self.id.as_str()) {
            let Some(requested) = requested.as_str() else {
                return send_error(
                    &self.writer,
                    id,
                    -32602,
                    "hello: 'session_id' must be a string",
                )
                .await;
            };
            match self.channel.resume(&self.id, requested) {
                Resume::Live => {
                    let message =
                        format!("session {} has a live connection", py_str_repr(requested));
                    return send_error(&self.writer, id, -32600, &message).await;
                }
                Resume::Unknown => {
                    let message = format!("unknown session: {}", py_str_repr(requested));
                    return send_error(&self.writer, id, -32600, &message).await;
                }
                Resume::Resumed => self.id = requested.to_owned(),
            }
        }
        let empty = Value::Array(Vec::new());
        let Value::Array(routes) = params.get("workspace_routes").unwrap_or(&empty) else {
            return send_error(
                &self.writer,
                id,
                -32602,
                "hello: 'workspace_routes' must be a list",
            )
            .await;
        };
        let routes = match routes
            .iter()
            .map(check_route)
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(routes) => routes,
            Err(message) => {
                return send_error(&self.writer, id, -32602, &format!("hello: {message}")).await;
            }
        };
        let Value::Array(connections) = params.get("connections").unwrap_or(&empty) else {
            return send_error(
                &self.writer,
                id,
                -32602,
                "hello: 'connections' must be a list",
            )
            .await;
        };
        let connections = match connections
            .iter()
            .map(check_connection)
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(connections) => connections,
            Err(message) => {
                return send_error(&self.writer, id, -32602, &format!("hello: {message}")).await;
            }
        };
        if let Some(capability) = connections.first().or(routes.first()) {
            return send_error(&self.writer, id, -32000, &no_workspace(capability)).await;
        }
        let env = &self.channel.env;
        let bindings: Vec<crate::Capability> = env.bindings(&self.id).await;
        let result = json!({
            "session_id": self.id,
            "env": {"name": env.name, "version": env.version},
            "bindings": bindings,
        });
        send_reply(&self.writer, id, &result).await
    }
}

/// `msg.get("params") or {}`.
fn params_of(msg: &Map<String, Value>) -> Value {
    match msg.get("params") {
        Some(params) if py_truthy(params) => params.clone(),
        _ => Value::Object(Map::new()),
    }
}

/// One `tasks.start` or `tasks.grade`, running beside the read loop.
struct Call {
    channel: Arc<Channel>,
    writer: Writer,
    session: String,
    id: Id,
    replied: Arc<AtomicBool>,
}

impl Call {
    async fn reply(&self, result: Value) -> Result<(), FrameError> {
        if self.id.is_null() {
            self.replied.store(true, Ordering::Release);
            return Ok(());
        }
        match encode_response(&self.id, &Outcome::Result(&result), FRAME_LIMIT) {
            Ok(bytes) => {
                self.replied.store(true, Ordering::Release);
                write(&self.writer, &bytes).await
            }
            Err(too_large) => self.error(-32000, &too_large.to_string()).await,
        }
    }

    /// Logs a task that failed to start or to grade, as the reference logs the exception
    /// (see [`failure_log`](super::failure_log)).
    fn failed(&self, method: &str, task: &str, message: &str) {
        super::failure_log::task_failed(method, task, &self.session, message);
    }

    async fn error(&self, code: i64, message: &str) -> Result<(), FrameError> {
        self.replied.store(true, Ordering::Release);
        send_error(&self.writer, &self.id, code, message).await
    }

    async fn start(self, params: Value, mut stop: oneshot::Receiver<()>) -> Result<(), FrameError> {
        let Value::Object(params) = &params else {
            return self.error(-32000, &no_get(&params)).await;
        };
        let Some(Value::String(task_id)) = params.get("id") else {
            return self
                .error(-32602, "tasks.start: 'id' must be a string")
                .await;
        };
        let args = match params.get("args") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(args)) => args.clone(),
            Some(_) => {
                return self
                    .error(-32602, "tasks.start: 'args' must be an object")
                    .await;
            }
        };
        let env = Arc::clone(&self.channel.env);
        let Some(template) = env.templates.iter().find(|t| t.id() == task_id) else {
            let message = format!("unknown task: {}", py_str_repr(task_id));
            return self.error(-32602, &message).await;
        };
        self.channel.cancel(&self.session).await;
        let mut runner = match self.channel.begin(&self.session, template, args) {
            Ok(runner) => {
                self.channel.env.task_started(&self.session).await;
                runner
            }
            Err(message) => {
                self.failed("tasks.start", task_id, &message);
                return self.error(-32000, &message).await;
            }
        };
        let outcome = tokio::select! {
            biased;
            _ = &mut stop => None,
            prompt = runner.wait_prompt() => Some(prompt),
        };
        match outcome {
            None => {
                self.channel.finish(runner).await;
                Ok(())
            }
            Some(Err(message)) => {
                self.failed("tasks.start", task_id, &message);
                self.channel.finish(runner).await;
                self.error(-32000, &message).await
            }
            Some(Ok(prompt)) => {
                self.channel.hold(&self.session, runner);
                if self.id.is_null() {
                    return self.reply(Value::Null).await;
                }
                let prompt = Value::Object(prompt);
                match encode_response(&self.id, &Outcome::Result(&prompt), FRAME_LIMIT) {
                    Ok(bytes) => {
                        self.replied.store(true, Ordering::Release);
                        write(&self.writer, &bytes).await
                    }
                    Err(too_large) => {
                        self.channel.cancel(&self.session).await;
                        self.error(-32000, &too_large.to_string()).await
                    }
                }
            }
        }
    }

    async fn grade(self, params: Value, mut stop: oneshot::Receiver<()>) -> Result<(), FrameError> {
        let mut runner = match self.channel.take_for_grade(&self.session) {
            Ok(runner) => runner,
            Err(NoTask(message)) => return self.error(-32600, &message).await,
        };
        let Value::Object(payload) = params else {
            self.channel.finish(runner).await;
            return self.error(-32000, &no_get(&params)).await;
        };
        let runner_task = runner.task_id.clone();
        // What the agent left running is stopped, and its sessions refused, before the
        // template sees the answer and grades.
        self.channel.env.grading(&runner.session).await;
        let outcome = tokio::select! {
            biased;
            _ = &mut stop => None,
            grade = runner.grade(payload) => Some(grade),
        };
        self.channel.finish(runner).await;
        match outcome {
            None => Ok(()),
            Some(Ok(frame)) => self.reply(Value::Object(frame)).await,
            Some(Err(message)) => {
                self.failed("tasks.grade", &runner_task, &message);
                self.error(-32000, &message).await
            }
        }
    }
}
