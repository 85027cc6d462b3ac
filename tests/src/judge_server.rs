//! A scripted OpenAI-compatible server on 127.0.0.1 for the judge's tests and benchmark.
//!
//! [`ScriptedServer::start`] serves `POST /chat/completions` (under any prefix) on its own
//! thread and runtime, records every request, and answers each with what the script returns
//! for it: a chat completion with some content, an error status with headers, a raw body, a
//! body that never ends, or any of those after a delay. The script sees the request's JSON and
//! how many earlier requests had the same body, so "429 first, then MET" is easy to say for
//! each criterion independently of the order the requests arrive in. Dropping the server stops
//! it and everything it started.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// What the server answers to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// 200 with a chat completion whose first message has this content.
    Content(String),
    /// 200 with a chat completion whose message content is JSON `null`.
    NullContent,
    /// 200 with this content and `usage` token counts.
    WithUsage(String, u64, u64),
    /// This status, these headers and this body.
    Status(u16, Vec<(String, String)>, String),
    /// 200 with `content-type: application/json` and this body as it is.
    Raw(String),
    /// 200 and a body that starts and never ends (a chunk every 50 ms).
    Endless,
    /// The reply after a wait.
    After(Duration, Box<Reply>),
}

impl Reply {
    /// A chat completion with this content.
    pub fn content(text: impl Into<String>) -> Self {
        Reply::Content(text.into())
    }

    /// `{"criterion_status": status, "explanation": reason}` as content.
    #[must_use]
    pub fn verdict(status: &str, reason: &str) -> Self {
        Reply::Content(json!({"criterion_status": status, "explanation": reason}).to_string())
    }

    /// A status with no headers and a short JSON error body.
    #[must_use]
    pub fn status(code: u16) -> Self {
        Reply::Status(
            code,
            Vec::new(),
            json!({"error": {"message": format!("scripted {code}")}}).to_string(),
        )
    }

    /// 429 asking to wait `seconds` (`Retry-After`).
    #[must_use]
    pub fn rate_limited(seconds: &str) -> Self {
        Reply::Status(
            429,
            vec![("retry-after".into(), seconds.into())],
            json!({"error": {"message": "slow down"}}).to_string(),
        )
    }

    /// The same reply after `wait`.
    #[must_use]
    pub fn after(self, wait: Duration) -> Self {
        Reply::After(wait, Box::new(self))
    }
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The headers, names in lowercase.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`null` when it was not JSON).
    pub body: Value,
    /// The body's bytes as they arrived (lossily decoded as UTF-8).
    pub raw: String,
}

impl Recorded {
    /// The first header of that name (lowercase).
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The user message's text.
    #[must_use]
    pub fn user_prompt(&self) -> &str {
        self.body["messages"][1]["content"].as_str().unwrap_or("")
    }
}

/// What the script is given for each request.
#[derive(Debug)]
pub struct Call<'a> {
    /// The request body as JSON.
    pub body: &'a Value,
    /// How many earlier requests had exactly this body (0 for the first).
    pub repeat: usize,
}

impl Call<'_> {
    /// The user message's text.
    #[must_use]
    pub fn user_prompt(&self) -> &str {
        self.body["messages"][1]["content"].as_str().unwrap_or("")
    }

    /// The text of the (first) criterion in the user message.
    #[must_use]
    pub fn criterion(&self) -> &str {
        let prompt = self.user_prompt();
        prompt
            .split_once("<criterion>\n")
            .and_then(|(_, rest)| rest.split_once("\n</criterion>"))
            .map_or("", |(criterion, _)| criterion)
    }

    /// The criteria of a batched request: `(id, text)` in the order asked.
    #[must_use]
    pub fn batch_criteria(&self) -> Vec<(u64, String)> {
        let mut found = Vec::new();
        let mut rest = self.user_prompt();
        while let Some((_, after)) = rest.split_once("<criterion id=\"") {
            let Some((id, after)) = after.split_once('"') else {
                break;
            };
            let Some((_, after)) = after.split_once(">\n") else {
                break;
            };
            let Some((text, after)) = after.split_once("\n</criterion>") else {
                break;
            };
            if let Ok(id) = id.parse() {
                found.push((id, text.to_owned()));
            }
            rest = after;
        }
        found
    }

    /// The model asked.
    #[must_use]
    pub fn model(&self) -> &str {
        self.body["model"].as_str().unwrap_or("")
    }
}

type Script = dyn Fn(&Call<'_>) -> Reply + Send + Sync;

struct Shared {
    script: Box<Script>,
    requests: Mutex<Vec<Recorded>>,
    repeats: Mutex<HashMap<String, usize>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

/// Counts a request in flight until dropped.
struct InFlight<'a>(&'a Shared);

impl<'a> InFlight<'a> {
    fn enter(shared: &'a Shared) -> Self {
        let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        shared.max_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight(shared)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A running scripted server; dropping it stops it.
pub struct ScriptedServer {
    address: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ScriptedServer {
    /// Starts a server on a free port of 127.0.0.1 that answers with `script`.
    ///
    /// # Panics
    /// When no port can be bound or the thread cannot start.
    pub fn start(script: impl Fn(&Call<'_>) -> Reply + Send + Sync + 'static) -> Self {
        let shared = Arc::new(Shared {
            script: Box::new(script),
            requests: Mutex::default(),
            repeats: Mutex::default(),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
        });
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let address = listener.local_addr().expect("local address");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let state = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("scripted-judge-server".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("server runtime");
                runtime.block_on(async move {
                    let listener =
                        tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                    let app = Router::new().fallback(answer).with_state(state);
                    tokio::select! {
                        _ = axum::serve(listener, app) => {}
                        _ = stopped => {}
                    }
                });
                // Dropping the runtime drops every connection task still running.
                drop(runtime);
            })
            .expect("start the server thread");
        ScriptedServer {
            address,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// The base URL to configure a judge with (`http://127.0.0.1:PORT/v1`).
    #[must_use]
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.address)
    }

    /// Every request received so far, in arrival order.
    #[must_use]
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many requests arrived so far.
    #[must_use]
    pub fn request_count(&self) -> usize {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// The most requests that were being answered at once.
    #[must_use]
    pub fn max_in_flight(&self) -> usize {
        self.shared.max_in_flight.load(Ordering::SeqCst)
    }

    /// Forgets the requests recorded so far.
    pub fn clear(&self) {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        self.shared
            .repeats
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn answer(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let raw = String::from_utf8_lossy(&body).into_owned();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let recorded = Recorded {
        path: uri.path().to_owned(),
        headers: headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: body.clone(),
        raw,
    };
    shared
        .requests
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(recorded);
    if !uri.path().ends_with("/chat/completions") {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    }
    let repeat = {
        let mut repeats = shared
            .repeats
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let count = repeats.entry(body.to_string()).or_insert(0);
        *count += 1;
        *count - 1
    };
    let reply = (shared.script)(&Call {
        body: &body,
        repeat,
    });
    let _counted = InFlight::enter(&shared);
    respond(reply, &body).await
}

fn completion(content: Value, body: &Value, usage: Option<(u64, u64)>) -> Response {
    let mut reply = json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": body["model"],
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop",
        }],
    });
    if let Some((prompt, completion)) = usage {
        reply["usage"] = json!({
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        });
    }
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        reply.to_string(),
    )
        .into_response()
}

fn respond(reply: Reply, body: &Value) -> futures_util::future::BoxFuture<'_, Response> {
    Box::pin(async move {
        match reply {
            Reply::Content(text) => completion(Value::String(text), body, None),
            Reply::NullContent => completion(Value::Null, body, None),
            Reply::WithUsage(text, prompt, done) => {
                completion(Value::String(text), body, Some((prompt, done)))
            }
            Reply::Status(code, headers, text) => {
                let mut response = (
                    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                    text,
                )
                    .into_response();
                for (name, value) in headers {
                    if let (Ok(name), Ok(value)) = (
                        HeaderName::try_from(name.as_str()),
                        HeaderValue::try_from(value.as_str()),
                    ) {
                        response.headers_mut().insert(name, value);
                    }
                }
                response
            }
            Reply::Raw(text) => (
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                text,
            )
                .into_response(),
            Reply::Endless => {
                let chunks = futures_util::stream::unfold(0_u64, |n| async move {
                    let chunk = if n == 0 {
                        Bytes::from_static(b"{\"choices\": [")
                    } else {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        Bytes::from_static(b"  ")
                    };
                    Some((Ok::<_, Infallible>(chunk), n + 1))
                });
                (
                    [(axum::http::header::CONTENT_TYPE, "application/json")],
                    Body::from_stream(chunks),
                )
                    .into_response()
            }
            Reply::After(wait, reply) => {
                tokio::time::sleep(wait).await;
                respond(*reply, body).await
            }
        }
    })
}
