//! The LLM judge: [`LlmJudge`], the reference's `LLMJudgeGrader` (`hud.graders`, `hud==0.6.21`),
//! exact by default, with opt-in improvements (feature `judge`).
//!
//! By default a judge does what the reference does: one chat-completions call per criterion,
//! all at once, with the reference's prompts ([`prompts`]), model default ([`DEFAULT_MODEL`]) and
//! `max_tokens` ([`MAX_TOKENS`]), against `HUD_GATEWAY_URL` with the key `HUD_API_KEY` (when
//! those are unset, `OPENAI_BASE_URL` and `OPENAI_API_KEY`, which the reference does not read:
//! see [`JudgeConfig::new`]); each
//! reply read by the reference's strict parser ([`verdict`]) and the verdicts combined by its
//! formula ([`value`]) into a subscore named `LLMJudgeGrader` with one child per criterion.
//! Calls are retried as the reference's client retries them ([`transport::RetryPolicy`]).
//!
//! Where it is better:
//! - A failure is never a score: a reply with no verdict, an HTTP error after the retries, a
//!   timeout or a malformed body is a [`JudgeError`] naming the criterion and carrying what was
//!   received. [`JudgeConfig::lenient`] keeps the other criteria instead.
//! - Everything about the endpoint is per judge ([`JudgeConfig`]): base URL, key, headers,
//!   connect and request timeouts, an overall deadline from the judge's start, the retry
//!   policy, your own [`Transport`], a cap on concurrent calls.
//! - Opt-in: several criteria per call ([`JudgeConfig::batch`]), JSON-schema structured output
//!   with a fallback to text ([`JudgeConfig::structured`]), a panel of models deciding by strict
//!   majority ([`LlmJudge::panel`]), a cache of replies ([`JudgeConfig::cache`]), and tokens,
//!   latency and attempts in info ([`JudgeConfig::record_usage`]).
//!
//! Here the model is stood in for by a [`Transport`] that finds every positive criterion met
//! and no mistake made; normally the default HTTP transport reaches the endpoint.
//!
//! ```
//! use futures_util::future::BoxFuture;
//! use grader_core::judge::transport::{HttpRequest, HttpResponse, Transport, TransportError};
//! use grader_core::judge::{Criterion, JudgeConfig, LlmJudge};
//!
//! struct Agreeable;
//!
//! impl Transport for Agreeable {
//!     fn post(&self, request: HttpRequest) -> BoxFuture<'_, Result<HttpResponse, TransportError>> {
//!         let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap_or_default();
//!         let user_message = body["messages"][1]["content"].as_str().unwrap_or_default();
//!         let met = if user_message.contains("positive") { "MET" } else { "UNMET" };
//!         let content = format!(r#"{{"criterion_status": "{met}", "explanation": "checked"}}"#);
//!         let reply = serde_json::json!({"choices": [{"message": {"content": content}}]});
//!         Box::pin(async move {
//!             Ok(HttpResponse { status: 200, headers: vec![], body: reply.to_string().into() })
//!         })
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let graded = LlmJudge::new(
//!     "Paris is the capital of France.",
//!     [Criterion::new("Names Paris"), Criterion::weighted("Says Lyon is the capital", -1.0)],
//! )
//! .question("What is the capital of France?")
//! .config(JudgeConfig::new().api_key("key").transport(Agreeable))
//! .grade(0.6)
//! .await?;
//! assert_eq!((graded.name(), graded.value()), ("LLMJudgeGrader", 1.0));
//! let children = graded.children().unwrap();
//! assert_eq!((children[1].weight(), children[1].value()), (-1.0, 0.0));
//! # Ok::<(), grader_core::GraderError>(())
//! # }).unwrap();
//! ```

pub mod cache;
pub mod prompts;
pub mod transport;
pub mod value;
pub mod verdict;

use std::borrow::Cow;
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use serde_json::{Value, json};
use tokio::sync::Semaphore;
use tokio::time::Instant;

use cache::CachedReply;
pub use cache::JudgeCache;
use transport::{HttpRequest, HttpResponse, HttpTransport, RetryPolicy, Transport, TransportError};
pub use verdict::{Verdict, VerdictError};

use crate::error::Failure;
use crate::grader::Grader;
use crate::grading::Grading;
use crate::params::json_safe;
use crate::score::{Info, Score, SubScore};

/// The judge's subscore name, as the reference's.
pub const NAME: &str = "LLMJudgeGrader";
/// The reference's default model.
pub const DEFAULT_MODEL: &str = "claude-sonnet-5-5";
/// The reference's `max_tokens`.
pub const MAX_TOKENS: u32 = 1024;
/// The reference's default base URL (its setting `hud_gateway_url`).
pub const DEFAULT_BASE_URL: &str = "https://inference.hud.ai";
/// The variable the base URL is read from when none is configured.
pub const BASE_URL_VAR: &str = "HUD_GATEWAY_URL";
/// The variable the API key is read from when none is configured.
pub const API_KEY_VAR: &str = "HUD_API_KEY";
/// The variable the base URL is read from when none is configured, `HUD_GATEWAY_URL` is unset
/// and the key is not `HUD_API_KEY` (see [`JudgeConfig::new`]). Not read by the reference.
pub const OPENAI_BASE_URL_VAR: &str = "OPENAI_BASE_URL";
/// The variable the API key is read from when none is configured and `HUD_API_KEY` is unset.
/// Not read by the reference.
pub const OPENAI_API_KEY_VAR: &str = "OPENAI_API_KEY";
/// The base URL for a key from `OPENAI_API_KEY` when `OPENAI_BASE_URL` is unset (the OpenAI
/// client's default).
pub const OPENAI_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// How many characters of a reply body an error keeps.
pub const KEEP_BODY_CHARS: usize = 2000;

/// One thing the answer should (positive weight) or should not (negative weight) contain.
///
/// A plain text has weight 1, as in the reference; `(text, weight)` converts too.
///
/// ```
/// use grader_core::judge::Criterion;
///
/// let plain: Criterion = "Names Paris".into();
/// let penalty: Criterion = ("Claims Lyon is the capital", -2.0).into();
/// assert_eq!((plain.weight(), penalty.weight()), (1.0, -2.0));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Criterion {
    requirement: String,
    weight: f64,
    weighted: bool,
}

impl Criterion {
    /// A criterion of weight 1.
    #[must_use]
    pub fn new(requirement: impl Into<String>) -> Self {
        Criterion {
            requirement: requirement.into(),
            weight: 1.0,
            weighted: false,
        }
    }

    /// A criterion with a weight; negative makes it a penalty (MET means the mistake was made).
    #[must_use]
    pub fn weighted(requirement: impl Into<String>, weight: f64) -> Self {
        Criterion {
            requirement: requirement.into(),
            weight,
            weighted: true,
        }
    }

    /// The text.
    #[must_use]
    pub fn requirement(&self) -> &str {
        &self.requirement
    }

    /// The weight.
    #[must_use]
    pub fn weight(&self) -> f64 {
        self.weight
    }

    /// As the reference records it under `_parameters`: the text, or `[text, weight]`.
    fn recorded(&self) -> Value {
        if self.weighted {
            json!([self.requirement, json_safe(&self.weight, "f64")])
        } else {
            Value::String(self.requirement.clone())
        }
    }
}

impl From<&str> for Criterion {
    fn from(text: &str) -> Self {
        Criterion::new(text)
    }
}

impl From<String> for Criterion {
    fn from(text: String) -> Self {
        Criterion::new(text)
    }
}

impl<S: Into<String>> From<(S, f64)> for Criterion {
    fn from((text, weight): (S, f64)) -> Self {
        Criterion::weighted(text, weight)
    }
}

/// Why a judge could not judge.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum JudgeError {
    /// No key was configured and `HUD_API_KEY` and `OPENAI_API_KEY` are unset or empty.
    #[error(
        "the judge needs an API key: set HUD_API_KEY (or OPENAI_API_KEY), or use JudgeConfig::api_key"
    )]
    MissingApiKey,
    /// A criterion's weight is NaN or infinite.
    #[error("criterion {criterion:?}: weight {weight:?} is not a finite number")]
    InvalidWeight {
        /// The criterion's text.
        criterion: String,
        /// The weight.
        weight: f64,
    },
    /// The reply had no verdict in it.
    #[error("criterion {criterion:?} (model {model}): {source}")]
    NoVerdict {
        /// The criterion's text.
        criterion: String,
        /// The model asked.
        model: String,
        /// What the parser found, with the reply's start.
        #[source]
        source: VerdictError,
    },
    /// The endpoint answered with an error status, after any retries.
    #[error(
        "criterion {criterion:?} (model {model}): HTTP {status} after {attempts} attempt(s): {body:?}"
    )]
    Status {
        /// The criterion's text.
        criterion: String,
        /// The model asked.
        model: String,
        /// The last status.
        status: u16,
        /// Attempts made.
        attempts: u32,
        /// The last reply's body, truncated.
        body: String,
    },
    /// No reply: connection errors or timeouts, after any retries.
    #[error("criterion {criterion:?} (model {model}): {source} (after {attempts} attempt(s))")]
    Transport {
        /// The criterion's text.
        criterion: String,
        /// The model asked.
        model: String,
        /// Attempts made.
        attempts: u32,
        /// The last attempt's error.
        #[source]
        source: TransportError,
    },
    /// The judge's overall deadline passed before this criterion was judged.
    #[error(
        "criterion {criterion:?} (model {model}): the judge's deadline of {deadline:?} passed \
         (after {attempts} attempt(s))"
    )]
    Deadline {
        /// The criterion's text.
        criterion: String,
        /// The model asked.
        model: String,
        /// The deadline, counted from the judge's start.
        deadline: Duration,
        /// Attempts started.
        attempts: u32,
    },
    /// A success status with a body that is not a chat completion.
    #[error("criterion {criterion:?} (model {model}): malformed reply ({reason}): {body:?}")]
    Malformed {
        /// The criterion's text.
        criterion: String,
        /// The model asked.
        model: String,
        /// What is wrong with it.
        reason: String,
        /// The body, truncated.
        body: String,
    },
    /// A panel gave no strict majority either way (a failed judge withholds its vote).
    #[error(
        "criterion {criterion:?}: no strict majority of {judges} judges ({met} MET, {unmet} UNMET, \
         {failed} failed)"
    )]
    NoMajority {
        /// The criterion's text.
        criterion: String,
        /// Panel size.
        judges: usize,
        /// MET votes.
        met: usize,
        /// UNMET votes.
        unmet: usize,
        /// Judges that gave no vote.
        failed: usize,
    },
}

impl JudgeError {
    /// The criterion this error is about, if it is about one.
    #[must_use]
    pub fn criterion(&self) -> Option<&str> {
        match self {
            JudgeError::MissingApiKey => None,
            JudgeError::InvalidWeight { criterion, .. }
            | JudgeError::NoVerdict { criterion, .. }
            | JudgeError::Status { criterion, .. }
            | JudgeError::Transport { criterion, .. }
            | JudgeError::Deadline { criterion, .. }
            | JudgeError::Malformed { criterion, .. }
            | JudgeError::NoMajority { criterion, .. } => Some(criterion),
        }
    }
}

impl From<JudgeError> for Failure {
    fn from(error: JudgeError) -> Self {
        Failure::Judge(Box::new(error))
    }
}

/// How a judge reaches its model and what it does beyond the reference. One value, cheap to
/// clone and share between judges (clones share the HTTP connection pool, the cache and the
/// call limit).
///
/// ```
/// use std::time::Duration;
/// use grader_core::judge::JudgeConfig;
///
/// let config = JudgeConfig::new()
///     .base_url("http://127.0.0.1:8000/v1")
///     .api_key("secret")
///     .header("x-team", "qa")
///     .request_timeout(Duration::from_secs(60))
///     .deadline(Duration::from_secs(300))
///     .max_concurrent_calls(32)
///     .lenient(true);
/// assert!(format!("{config:?}").contains("<redacted>"));
/// ```
#[derive(Clone, Default)]
pub struct JudgeConfig {
    inner: Arc<Settings>,
}

#[derive(Clone)]
struct Settings {
    base_url: Option<String>,
    api_key: Option<String>,
    headers: Vec<(String, String)>,
    connect_timeout: Duration,
    request_timeout: Duration,
    deadline: Option<Duration>,
    retry: RetryPolicy,
    transport: Option<Arc<dyn Transport>>,
    default_transport: Arc<OnceLock<Result<Arc<dyn Transport>, String>>>,
    calls: Option<Arc<Semaphore>>,
    lenient: bool,
    batch: usize,
    structured: bool,
    cache: Option<JudgeCache>,
    record_usage: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            base_url: None,
            api_key: None,
            headers: Vec::new(),
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(600),
            deadline: Some(Duration::from_secs(600)),
            retry: RetryPolicy::default(),
            transport: None,
            default_transport: Arc::default(),
            calls: None,
            lenient: false,
            batch: 1,
            structured: false,
            cache: None,
            record_usage: false,
        }
    }
}

impl fmt::Debug for JudgeConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.inner;
        f.debug_struct("JudgeConfig")
            .field("base_url", &s.base_url)
            .field("api_key", &s.api_key.as_ref().map(|_| "<redacted>"))
            .field(
                "headers",
                &s.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("connect_timeout", &s.connect_timeout)
            .field("request_timeout", &s.request_timeout)
            .field("deadline", &s.deadline)
            .field("retry", &s.retry)
            .field("custom_transport", &s.transport.is_some())
            .field("max_concurrent_calls", &s.calls.as_ref().map(|_| "set"))
            .field("lenient", &s.lenient)
            .field("batch", &s.batch)
            .field("structured", &s.structured)
            .field("cache", &s.cache.is_some())
            .field("record_usage", &s.record_usage)
            .finish()
    }
}

impl JudgeConfig {
    /// The reference's behaviour: `HUD_GATEWAY_URL` and `HUD_API_KEY` (read when a judge
    /// runs), 5 s to connect, 600 s per request, 6 retries; plus an overall deadline of 600 s
    /// from the judge's start.
    ///
    /// Where the endpoint comes from, first match wins (an empty variable counts as unset):
    ///
    /// | key | base URL (unless [`base_url`](Self::base_url) is set) |
    /// |---|---|
    /// | [`api_key`](Self::api_key) | `HUD_GATEWAY_URL`, else `OPENAI_BASE_URL`, else `https://inference.hud.ai` |
    /// | `HUD_API_KEY` | `HUD_GATEWAY_URL`, else `https://inference.hud.ai` |
    /// | `OPENAI_API_KEY` | `OPENAI_BASE_URL`, else `https://api.openai.com/v1` |
    ///
    /// With none of the three keys the judge fails with [`JudgeError::MissingApiKey`]. A key
    /// read from one provider's variable is never sent to the other's URL variable. The
    /// reference reads only the `HUD_` variables. A key set here but empty is refused too.
    #[must_use]
    pub fn new() -> Self {
        JudgeConfig::default()
    }

    fn edit(mut self, change: impl FnOnce(&mut Settings)) -> Self {
        change(Arc::make_mut(&mut self.inner));
        self
    }

    /// The endpoint's base URL; requests go to `{base}/chat/completions`.
    #[must_use]
    pub fn base_url(self, url: impl Into<String>) -> Self {
        let url = url.into();
        self.edit(|s| s.base_url = Some(url))
    }

    /// The API key, sent as `Authorization: Bearer {key}`.
    #[must_use]
    pub fn api_key(self, key: impl Into<String>) -> Self {
        let key = key.into();
        self.edit(|s| s.api_key = Some(key))
    }

    /// One more header on every request.
    #[must_use]
    pub fn header(self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let pair = (name.into(), value.into());
        self.edit(|s| s.headers.push(pair))
    }

    /// How long connecting may take (default 5 s, as the reference's client).
    #[must_use]
    pub fn connect_timeout(self, timeout: Duration) -> Self {
        self.edit(|s| {
            s.connect_timeout = timeout;
            s.default_transport = Arc::default();
        })
    }

    /// How long one attempt may take, the reply's body included (default 600 s, as the
    /// reference's client).
    #[must_use]
    pub fn request_timeout(self, timeout: Duration) -> Self {
        self.edit(|s| s.request_timeout = timeout)
    }

    /// How long the whole judge may take, waiting for a call slot, retries and backoff
    /// included, counted from its start (default 600 s); `None` for no limit.
    #[must_use]
    pub fn deadline(self, deadline: impl Into<Option<Duration>>) -> Self {
        let deadline = deadline.into();
        self.edit(|s| s.deadline = deadline)
    }

    /// When and how to retry (default: as the reference).
    #[must_use]
    pub fn retry(self, policy: RetryPolicy) -> Self {
        self.edit(|s| s.retry = policy)
    }

    /// Sends requests with this transport instead of the built-in HTTP client.
    #[must_use]
    pub fn transport(self, transport: impl Transport) -> Self {
        let transport: Arc<dyn Transport> = Arc::new(transport);
        self.edit(|s| s.transport = Some(transport))
    }

    /// At most `n` calls in flight at once across every judge sharing this configuration
    /// (the reference has no limit).
    #[must_use]
    pub fn max_concurrent_calls(self, n: usize) -> Self {
        let calls = Arc::new(Semaphore::new(n.max(1)));
        self.edit(|s| s.calls = Some(calls))
    }

    /// Keep the other criteria when some cannot be judged (default: strict, the grading fails
    /// with the first error). A failed criterion stays a child with its error in info and counts
    /// against the agent: a positive criterion as UNMET, a penalty as MET. The judge's info
    /// says how many failed and why. When every criterion fails the judge fails.
    #[must_use]
    pub fn lenient(self, lenient: bool) -> Self {
        self.edit(|s| s.lenient = lenient)
    }

    /// Ask about up to `n` criteria in one call (default 1: one call per criterion, as the
    /// reference). Each criterion keeps its own child, verdict and reason.
    #[must_use]
    pub fn batch(self, n: usize) -> Self {
        self.edit(|s| s.batch = n.max(1))
    }

    /// Ask for JSON-schema structured output (`response_format`). An endpoint that refuses it
    /// (HTTP 400 or 422) is asked again without it, and the judge's info says so.
    #[must_use]
    pub fn structured(self, structured: bool) -> Self {
        self.edit(|s| s.structured = structured)
    }

    /// Remember replies: a request asked before gets its stored reply without a call.
    #[must_use]
    pub fn cache(self, cache: JudgeCache) -> Self {
        self.edit(|s| s.cache = Some(cache))
    }

    /// Record tokens (from the reply's `usage`), latency and attempts in info.
    #[must_use]
    pub fn record_usage(self, record: bool) -> Self {
        self.edit(|s| s.record_usage = record)
    }
}

/// The reference's `LLMJudgeGrader`: grades an answer against weighted criteria with an LLM.
///
/// Graded like every [`Grader`]; [`judge`](Self::judge) gives the reference's subscore without
/// `_parameters`. The name is `LLMJudgeGrader`; `_parameters` records `answer`, `criteria`
/// (texts, or `[text, weight]`), `question` and `model` (or `models` for a panel).
///
/// Where it differs: `_parameters` always holds all four inputs, defaults included (a
/// `question` of `""`, the default model). The reference's `Grader.grade(**kwargs)` records
/// the keyword arguments the caller passed, so a call without `question` or `model` records
/// neither there. Both describe the same grading; ours says it whole, so two results compare
/// without knowing the defaults of the version that made them.
#[derive(Debug, Clone)]
pub struct LlmJudge {
    answer: String,
    criteria: Vec<Criterion>,
    question: String,
    models: Vec<String>,
    config: JudgeConfig,
}

impl LlmJudge {
    /// A judge of `answer` against `criteria`, with the reference's defaults.
    #[must_use]
    pub fn new(
        answer: impl Into<String>,
        criteria: impl IntoIterator<Item = impl Into<Criterion>>,
    ) -> Self {
        LlmJudge {
            answer: answer.into(),
            criteria: criteria.into_iter().map(Into::into).collect(),
            question: String::new(),
            models: vec![DEFAULT_MODEL.to_owned()],
            config: JudgeConfig::default(),
        }
    }

    /// The question the answer responds to (sent as `<query>`).
    #[must_use]
    pub fn question(mut self, question: impl Into<String>) -> Self {
        self.question = question.into();
        self
    }

    /// The model to ask (default [`DEFAULT_MODEL`]).
    #[must_use]
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.models = vec![model.into()];
        self
    }

    /// Ask several models and decide each criterion by strict majority: MET when more than
    /// half of the panel says MET, UNMET when more than half says UNMET, otherwise a
    /// [`JudgeError::NoMajority`]. A judge that fails withholds its vote and still counts in the
    /// panel's size. Every vote is recorded in the criterion's info under `votes`.
    #[must_use]
    pub fn panel(mut self, models: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let models: Vec<String> = models.into_iter().map(Into::into).collect();
        if !models.is_empty() {
            self.models = models;
        }
        self
    }

    /// How to reach the model (default [`JudgeConfig::new`]).
    #[must_use]
    pub fn config(mut self, config: JudgeConfig) -> Self {
        self.config = config;
        self
    }

    /// Runs the judge: the reference's `compute_score`, a subscore named `LLMJudgeGrader`
    /// with info `model` and one child per criterion (name = text, weight, value 1 or 0, info
    /// `reason`). No criteria gives value 0 with info `error: "no criteria provided"`.
    ///
    /// # Errors
    /// A [`JudgeError`] naming the criterion when one cannot be judged (unless
    /// [`lenient`](JudgeConfig::lenient), where only all failing is an error).
    pub async fn judge(self) -> Result<SubScore, JudgeError> {
        run(self).await
    }

    /// The grading of this judge at `weight`: [`Grader::grade`], callable without importing
    /// the trait (the [module's example](self) grades this way). Await it, or add it to a
    /// gather or a tree.
    pub fn grade<'a>(self, weight: f64) -> Grading<'a, Self> {
        Grading::new(self, weight)
    }
}

impl Grader for LlmJudge {
    fn name(&self) -> Cow<'_, str> {
        NAME.into()
    }

    fn parameters(&self) -> Info {
        let mut params = Info::new();
        params.insert("answer".into(), self.answer.clone().into());
        params.insert(
            "criteria".into(),
            self.criteria.iter().map(Criterion::recorded).collect(),
        );
        params.insert("question".into(), self.question.clone().into());
        if let [model] = self.models.as_slice() {
            params.insert("model".into(), model.clone().into());
        } else {
            params.insert("models".into(), self.models.clone().into());
        }
        params
    }

    async fn score(self) -> Result<Score, Failure> {
        let sub = run(self).await?;
        Ok(Score::from(sub))
    }
}

/// What one call produced.
#[derive(Debug, Clone, Default)]
struct CallRecord {
    /// Unique per call made (or cache hit), so that a batched reply is counted once.
    id: u64,
    content: String,
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    latency: Duration,
    attempts: u32,
    cache_hit: bool,
    structured_fallback: bool,
}

/// A call's failure before any criterion is named.
#[derive(Debug, Clone)]
enum CallError {
    Status {
        status: u16,
        attempts: u32,
        body: String,
    },
    Transport {
        attempts: u32,
        source: TransportError,
    },
    Deadline {
        deadline: Duration,
        attempts: u32,
    },
    Malformed {
        reason: String,
        body: String,
    },
}

impl CallError {
    fn named(self, criterion: &str, model: &str) -> JudgeError {
        let (criterion, model) = (criterion.to_owned(), model.to_owned());
        match self {
            CallError::Status {
                status,
                attempts,
                body,
            } => JudgeError::Status {
                criterion,
                model,
                status,
                attempts,
                body,
            },
            CallError::Transport { attempts, source } => JudgeError::Transport {
                criterion,
                model,
                attempts,
                source,
            },
            CallError::Deadline { deadline, attempts } => JudgeError::Deadline {
                criterion,
                model,
                deadline,
                attempts,
            },
            CallError::Malformed { reason, body } => JudgeError::Malformed {
                criterion,
                model,
                reason,
                body,
            },
        }
    }
}

/// One model's vote on one criterion.
#[derive(Debug, Clone)]
struct Vote {
    verdict: Verdict,
    record: CallRecord,
}

/// Everything a run shares between its calls.
struct Run<'a> {
    settings: &'a Settings,
    transport: Arc<dyn Transport>,
    url: String,
    headers: Vec<(String, String)>,
    answer: &'a str,
    question: &'a str,
    criteria: &'a [Criterion],
    deadline: Option<(Instant, Duration)>,
}

fn lossy_head(bytes: &[u8], chars: usize) -> String {
    verdict::head(&String::from_utf8_lossy(bytes), chars).to_owned()
}

/// The JSON schema of a one-criterion verdict, for structured output.
#[derive(schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)] // only its schema is used
struct VerdictSchema {
    criterion_status: StatusSchema,
    explanation: String,
}

/// The JSON schema of a batched verdict, for structured output.
#[derive(schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)] // only its schema is used
struct BatchSchema {
    verdicts: Vec<BatchItemSchema>,
}

#[derive(schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)] // only its schema is used
struct BatchItemSchema {
    id: u32,
    criterion_status: StatusSchema,
    explanation: String,
}

#[derive(schemars::JsonSchema)]
#[allow(dead_code, clippy::upper_case_acronyms)] // only its schema is used
enum StatusSchema {
    MET,
    UNMET,
}

/// The `response_format` asking for `T`'s schema.
fn response_format<T: schemars::JsonSchema>(name: &str) -> Value {
    let mut schema = schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
        map.remove("title");
    }
    json!({
        "type": "json_schema",
        "json_schema": {"name": name, "strict": true, "schema": schema},
    })
}

impl Run<'_> {
    /// The request body for `chunk` of the criteria (one criterion: the reference's request).
    fn body(&self, chunk: &[usize], model: &str, structured: bool) -> Vec<u8> {
        let (system, user, format) = if let [index] = chunk {
            let criterion = &self.criteria[*index];
            (
                prompts::SYSTEM_PROMPT,
                prompts::user_prompt(
                    &criterion.requirement,
                    criterion.weight,
                    self.answer,
                    self.question,
                ),
                structured.then(|| response_format::<VerdictSchema>("verdict")),
            )
        } else {
            (
                prompts::BATCH_SYSTEM_PROMPT,
                prompts::batch_user_prompt(
                    chunk.iter().map(|&i| {
                        (
                            self.criteria[i].requirement.as_str(),
                            self.criteria[i].weight,
                        )
                    }),
                    self.answer,
                    self.question,
                ),
                structured.then(|| response_format::<BatchSchema>("verdicts")),
            )
        };
        let mut body = json!({
            "model": model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "max_tokens": MAX_TOKENS,
        });
        if let (Some(format), Value::Object(map)) = (format, &mut body) {
            map.insert("response_format".into(), format);
        }
        serde_json::to_vec(&body).unwrap_or_default()
    }

    /// The slots one HTTP call holds while it is in flight (not while it backs off): one
    /// [`Resource::Judge`](crate::limit::Resource::Judge) slot of the shared limiter in force
    /// (see [`limit`](crate::limit); none outside a limiter's scope), and one of this
    /// configuration's own cap ([`JudgeConfig::max_concurrent_calls`]). Every attempt passes
    /// here and nowhere else.
    async fn call_slot(
        &self,
    ) -> (
        crate::limit::Permit,
        Option<tokio::sync::OwnedSemaphorePermit>,
    ) {
        let shared = crate::limit::acquire(crate::limit::Resource::Judge).await;
        let own = match &self.settings.calls {
            Some(calls) => Arc::clone(calls).acquire_owned().await.ok(),
            None => None,
        };
        (shared, own)
    }

    /// Sends `body` until it succeeds or the retry policy gives up.
    async fn send(&self, body: &[u8], attempts: &AtomicU32) -> Result<HttpResponse, CallError> {
        let policy = &self.settings.retry;
        let mut retry = 0;
        loop {
            let timeout = match self.deadline {
                Some((at, _)) => self
                    .settings
                    .request_timeout
                    .min(at.saturating_duration_since(Instant::now())),
                None => self.settings.request_timeout,
            };
            let slot = self.call_slot().await;
            attempts.fetch_add(1, Ordering::Relaxed);
            let outcome = self
                .transport
                .post(HttpRequest {
                    url: self.url.clone(),
                    headers: self.headers.clone(),
                    body: body.to_vec(),
                    timeout,
                })
                .await;
            drop(slot);
            let attempts = attempts.load(Ordering::Relaxed);
            let failed = match outcome {
                Ok(response) if (200..300).contains(&response.status) => return Ok(response),
                Ok(response) => {
                    if retry < policy.max_retries && policy.should_retry(&response) {
                        Some(response)
                    } else {
                        return Err(CallError::Status {
                            status: response.status,
                            attempts,
                            body: lossy_head(&response.body, KEEP_BODY_CHARS),
                        });
                    }
                }
                Err(error) => {
                    if retry < policy.max_retries && error.is_retryable() {
                        None
                    } else {
                        return Err(CallError::Transport {
                            attempts,
                            source: error,
                        });
                    }
                }
            };
            tokio::time::sleep(policy.delay(retry, failed.as_ref())).await;
            retry += 1;
        }
    }

    /// Asks `model` about `chunk`, from the cache when it can; returns the reply's content.
    async fn call(
        &self,
        chunk: &[usize],
        model: &str,
    ) -> Result<(CallRecord, Option<String>), CallError> {
        let structured = self.settings.structured;
        let body = self.body(chunk, model, structured);
        let key = self
            .settings
            .cache
            .as_ref()
            .map(|_| JudgeCache::key(&self.url, &body));
        if let (Some(cache), Some(key)) = (&self.settings.cache, &key)
            && let Some(hit) = cache.get(key)
        {
            let record = CallRecord {
                id: next_call_id(),
                content: hit.content,
                prompt_tokens: hit.prompt_tokens,
                completion_tokens: hit.completion_tokens,
                cache_hit: true,
                ..CallRecord::default()
            };
            return Ok((record, None));
        }
        let started = Instant::now();
        let attempts = AtomicU32::new(0);
        let exchange = async {
            match self.send(&body, &attempts).await {
                Err(CallError::Status {
                    status: 400 | 422, ..
                }) if structured => {
                    let plain = self.body(chunk, model, false);
                    self.send(&plain, &attempts).await.map(|r| (r, true))
                }
                other => other.map(|r| (r, false)),
            }
        };
        let (response, structured_fallback) =
            match self.deadline {
                Some((at, deadline)) => tokio::time::timeout_at(at, exchange)
                    .await
                    .unwrap_or_else(|_| {
                        Err(CallError::Deadline {
                            deadline,
                            attempts: attempts.load(Ordering::Relaxed),
                        })
                    })?,
                None => exchange.await?,
            };
        let mut record = read_completion(&response.body)?;
        record.id = next_call_id();
        record.latency = started.elapsed();
        record.attempts = attempts.load(Ordering::Relaxed);
        record.structured_fallback = structured_fallback;
        Ok((record, key))
    }

    /// Asks `model` about `chunk` and reads one verdict per criterion.
    async fn votes(&self, chunk: &[usize], model: &str) -> Vec<Result<Vote, JudgeError>> {
        let name = |i: usize| self.criteria[i].requirement.as_str();
        let (record, key) = match self.call(chunk, model).await {
            Ok(done) => done,
            Err(error) => {
                return chunk
                    .iter()
                    .map(|&i| Err(error.clone().named(name(i), model)))
                    .collect();
            }
        };
        let verdicts = if chunk.len() == 1 {
            vec![verdict::parse_verdict(&record.content)]
        } else {
            verdict::parse_batch(&record.content, chunk.len())
        };
        if let (Some(cache), Some(key)) = (&self.settings.cache, key)
            && verdicts.iter().all(Result::is_ok)
        {
            cache.put(
                &key,
                &CachedReply {
                    content: record.content.clone(),
                    prompt_tokens: record.prompt_tokens,
                    completion_tokens: record.completion_tokens,
                },
            );
        }
        chunk
            .iter()
            .zip(verdicts)
            .map(|(&i, outcome)| match outcome {
                Ok(verdict) => Ok(Vote {
                    verdict,
                    record: record.clone(),
                }),
                Err(source) => Err(JudgeError::NoVerdict {
                    criterion: name(i).to_owned(),
                    model: model.to_owned(),
                    source,
                }),
            })
            .collect()
    }
}

/// Milliseconds, to the microsecond.
fn latency_ms(latency: Duration) -> f64 {
    let micros = u32::try_from(latency.as_micros()).unwrap_or(u32::MAX);
    f64::from(micros) / 1000.0
}

fn next_call_id() -> u64 {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    CALLS.fetch_add(1, Ordering::Relaxed)
}

/// Reads a chat completion's first message and its token counts.
fn read_completion(body: &[u8]) -> Result<CallRecord, CallError> {
    let malformed = |reason: &str| CallError::Malformed {
        reason: reason.to_owned(),
        body: lossy_head(body, KEEP_BODY_CHARS),
    };
    let value: Value =
        serde_json::from_slice(body).map_err(|_| malformed("the body is not JSON"))?;
    let message = value
        .get("choices")
        .and_then(|choices| choices.get(0))
        .and_then(|choice| choice.get("message"))
        .ok_or_else(|| malformed("no choices[0].message"))?;
    let content = match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        None | Some(Value::Null) => String::new(),
        Some(_) => return Err(malformed("choices[0].message.content is not a string")),
    };
    let usage = value.get("usage");
    let tokens = |key: &str| usage.and_then(|u| u.get(key)).and_then(Value::as_u64);
    Ok(CallRecord {
        content,
        prompt_tokens: tokens("prompt_tokens"),
        completion_tokens: tokens("completion_tokens"),
        ..CallRecord::default()
    })
}

/// The base URL and key: configured, else from the environment (see [`JudgeConfig::new`]).
fn endpoint(settings: &Settings) -> Result<(String, String), JudgeError> {
    endpoint_from(settings, |name| std::env::var(name).ok())
}

/// [`endpoint`] with the environment read through `var`; an empty variable counts as unset.
fn endpoint_from(
    settings: &Settings,
    var: impl Fn(&str) -> Option<String>,
) -> Result<(String, String), JudgeError> {
    let var = |name: &str| var(name).filter(|value| !value.is_empty());
    let (key, base) = if let Some(key) = settings.api_key.clone() {
        if key.is_empty() {
            return Err(JudgeError::MissingApiKey);
        }
        let base = var(BASE_URL_VAR)
            .or_else(|| var(OPENAI_BASE_URL_VAR))
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        (key, base)
    } else if let Some(key) = var(API_KEY_VAR) {
        let base = var(BASE_URL_VAR).unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        (key, base)
    } else if let Some(key) = var(OPENAI_API_KEY_VAR) {
        let base = var(OPENAI_BASE_URL_VAR).unwrap_or_else(|| OPENAI_DEFAULT_BASE_URL.to_owned());
        (key, base)
    } else {
        return Err(JudgeError::MissingApiKey);
    };
    let base = settings.base_url.clone().unwrap_or(base);
    Ok((
        format!("{}/chat/completions", base.trim_end_matches('/')),
        key,
    ))
}

fn transport_of(settings: &Settings) -> Result<Arc<dyn Transport>, JudgeError> {
    if let Some(transport) = &settings.transport {
        return Ok(Arc::clone(transport));
    }
    settings
        .default_transport
        .get_or_init(|| {
            HttpTransport::new(settings.connect_timeout)
                .map(|t| Arc::new(t) as Arc<dyn Transport>)
                .map_err(|error| error.to_string())
        })
        .clone()
        .map_err(|message| JudgeError::Transport {
            criterion: String::new(),
            model: String::new(),
            attempts: 0,
            source: TransportError::Connect(message),
        })
}

/// Each model's vote on one criterion, in panel order.
type Votes = Vec<(String, Result<Vote, JudgeError>)>;

/// The criterion's outcome under a panel: the strict majority of its votes.
fn decide(criterion: &Criterion, votes: Votes) -> (Result<Verdict, JudgeError>, Votes) {
    let judges = votes.len();
    if judges == 1 {
        let outcome = votes[0].1.clone().map(|vote| vote.verdict);
        return (outcome, votes);
    }
    let met = votes
        .iter()
        .filter(|(_, v)| v.as_ref().is_ok_and(|v| v.verdict.met))
        .count();
    let unmet = votes
        .iter()
        .filter(|(_, v)| v.as_ref().is_ok_and(|v| !v.verdict.met))
        .count();
    let outcome = if 2 * met > judges || 2 * unmet > judges {
        let met_wins = 2 * met > judges;
        let reason = votes
            .iter()
            .find_map(|(_, v)| v.as_ref().ok().filter(|v| v.verdict.met == met_wins))
            .map(|v| v.verdict.reason.clone())
            .unwrap_or_default();
        Ok(Verdict {
            met: met_wins,
            reason,
        })
    } else {
        Err(JudgeError::NoMajority {
            criterion: criterion.requirement.clone(),
            judges,
            met,
            unmet,
            failed: judges - met - unmet,
        })
    };
    (outcome, votes)
}

async fn run(judge: LlmJudge) -> Result<SubScore, JudgeError> {
    let started = Instant::now();
    let LlmJudge {
        answer,
        criteria,
        question,
        models,
        config,
    } = judge;
    if criteria.is_empty() {
        let mut info = Info::new();
        info.insert("error".into(), "no criteria provided".into());
        return Ok(SubScore::from_valid_parts(
            NAME.to_owned(),
            1.0,
            0.0,
            None,
            Some(info),
        ));
    }
    if let Some(bad) = criteria.iter().find(|c| !c.weight.is_finite()) {
        return Err(JudgeError::InvalidWeight {
            criterion: bad.requirement.clone(),
            weight: bad.weight,
        });
    }
    let settings = &*config.inner;
    let (url, key) = endpoint(settings)?;
    let mut headers = vec![
        ("authorization".to_owned(), format!("Bearer {key}")),
        ("content-type".to_owned(), "application/json".to_owned()),
    ];
    headers.extend(settings.headers.iter().cloned());
    let run = Run {
        settings,
        transport: transport_of(settings)?,
        url,
        headers,
        answer: &answer,
        question: &question,
        criteria: &criteria,
        deadline: settings.deadline.map(|d| (started + d, d)),
    };

    // Every (chunk, model) call at once; results land per criterion, per model.
    let indices: Vec<usize> = (0..criteria.len()).collect();
    let chunks: Vec<&[usize]> = indices.chunks(settings.batch).collect();
    let run = &run;
    let mut calls: FuturesUnordered<_> = chunks
        .iter()
        .flat_map(|&chunk| {
            models
                .iter()
                .enumerate()
                .map(move |(m, model)| async move { (chunk, m, run.votes(chunk, model).await) })
        })
        .collect();
    let mut votes: Vec<Vec<Option<Result<Vote, JudgeError>>>> =
        vec![vec![None; models.len()]; criteria.len()];
    // Strict with one model: the first failure is the judge's error, once every call has
    // ended, as the reference lets its other calls finish (so both send the same requests).
    let strict = !settings.lenient && models.len() == 1;
    let mut first_failure = None;
    while let Some((chunk, m, outcomes)) = calls.next().await {
        for (&i, outcome) in chunk.iter().zip(outcomes) {
            if strict
                && first_failure.is_none()
                && let Err(error) = &outcome
            {
                first_failure = Some(error.clone());
            }
            votes[i][m] = Some(outcome);
        }
    }
    drop(calls);
    if let Some(error) = first_failure {
        return Err(error);
    }

    let mut children = Vec::with_capacity(criteria.len());
    let mut errors = Vec::new();
    let mut totals = Totals::default();
    for (criterion, criterion_votes) in criteria.iter().zip(votes) {
        let criterion_votes: Votes = models
            .iter()
            .cloned()
            .zip(criterion_votes.into_iter().map(|v| {
                v.unwrap_or_else(|| {
                    Err(JudgeError::Malformed {
                        criterion: criterion.requirement.clone(),
                        model: String::new(),
                        reason: "no reply was recorded".into(),
                        body: String::new(),
                    })
                })
            }))
            .collect();
        let (outcome, criterion_votes) = decide(criterion, criterion_votes);
        let mut info = Info::new();
        let value = match outcome {
            Ok(verdict) => {
                info.insert("reason".into(), verdict.reason.into());
                if verdict.met { 1.0 } else { 0.0 }
            }
            Err(error) => {
                if !settings.lenient {
                    return Err(error);
                }
                info.insert("error".into(), error.to_string().into());
                errors.push(error);
                // A failure never helps the agent: a penalty counts as made, the rest as unmet.
                if criterion.weight < 0.0 { 1.0 } else { 0.0 }
            }
        };
        totals.record(settings, &criterion_votes, models.len(), &mut info);
        children.push(SubScore::from_valid_parts(
            criterion.requirement.clone(),
            criterion.weight,
            value,
            None,
            Some(info),
        ));
    }
    if errors.len() == criteria.len() {
        return Err(errors.swap_remove(0));
    }
    let value = value::rubric_value(children.iter().map(|c| (c.value(), c.weight())));
    let mut info = Info::new();
    if let [model] = models.as_slice() {
        info.insert("model".into(), model.clone().into());
    } else {
        info.insert("models".into(), models.clone().into());
    }
    if !errors.is_empty() {
        info.insert("failed_criteria".into(), errors.len().into());
        info.insert(
            "errors".into(),
            errors
                .iter()
                .map(|e| Value::String(e.to_string()))
                .collect(),
        );
    }
    totals.finish(settings, &mut info);
    Ok(SubScore::from_valid_parts(
        NAME.to_owned(),
        1.0,
        value,
        Some(children),
        Some(info),
    ))
}

/// Sums of what the calls cost, for the judge's info.
#[derive(Default)]
struct Totals {
    seen: std::collections::HashSet<u64>,
    prompt_tokens: u64,
    completion_tokens: u64,
    calls: u64,
    cache_hits: u64,
    structured_fallbacks: u64,
}

impl Totals {
    /// Adds a criterion's votes to the totals and records them in its info as configured.
    fn record(
        &mut self,
        settings: &Settings,
        votes: &[(String, Result<Vote, JudgeError>)],
        judges: usize,
        info: &mut Info,
    ) {
        let mut listed = Vec::new();
        for (model, vote) in votes {
            let mut entry = Info::new();
            entry.insert("model".into(), model.clone().into());
            match vote {
                Ok(vote) => {
                    let met = if vote.verdict.met { "MET" } else { "UNMET" };
                    entry.insert("verdict".into(), met.into());
                    entry.insert("reason".into(), vote.verdict.reason.clone().into());
                    let r = &vote.record;
                    // A batched reply is shared by its criteria: count it once.
                    if self.seen.insert(r.id) {
                        self.prompt_tokens += r.prompt_tokens.unwrap_or(0);
                        self.completion_tokens += r.completion_tokens.unwrap_or(0);
                        self.calls += u64::from(!r.cache_hit);
                        self.cache_hits += u64::from(r.cache_hit);
                        self.structured_fallbacks += u64::from(r.structured_fallback);
                    }
                    if settings.cache.is_some() {
                        entry.insert("cache_hit".into(), r.cache_hit.into());
                    }
                    if settings.record_usage {
                        entry.insert("prompt_tokens".into(), r.prompt_tokens.into());
                        entry.insert("completion_tokens".into(), r.completion_tokens.into());
                        entry.insert(
                            "latency_ms".into(),
                            json_safe(&latency_ms(r.latency), "f64"),
                        );
                        entry.insert("attempts".into(), r.attempts.into());
                    }
                }
                Err(error) => {
                    entry.insert("error".into(), error.to_string().into());
                }
            }
            listed.push(entry);
        }
        if judges > 1 {
            info.insert(
                "votes".into(),
                listed.into_iter().map(Value::Object).collect(),
            );
        } else if let Some(mut only) = listed.pop() {
            for key in [
                "cache_hit",
                "prompt_tokens",
                "completion_tokens",
                "latency_ms",
                "attempts",
            ] {
                if let Some(value) = only.remove(key) {
                    info.insert(key.into(), value);
                }
            }
        }
    }

    fn finish(&self, settings: &Settings, info: &mut Info) {
        if settings.cache.is_some() {
            info.insert("cache_hits".into(), self.cache_hits.into());
        }
        if settings.structured {
            info.insert(
                "structured_fallbacks".into(),
                self.structured_fallbacks.into(),
            );
        }
        if settings.batch > 1 {
            info.insert("batch".into(), settings.batch.into());
        }
        if settings.record_usage {
            info.insert("calls".into(), self.calls.into());
            info.insert("prompt_tokens".into(), self.prompt_tokens.into());
            info.insert("completion_tokens".into(), self.completion_tokens.into());
        }
    }
}

#[cfg(test)]
mod endpoint_tests {
    use super::*;

    fn resolve(settings: &Settings, vars: &[(&str, &str)]) -> Result<(String, String), JudgeError> {
        endpoint_from(settings, |name| {
            vars.iter()
                .find(|(var, _)| *var == name)
                .map(|(_, value)| (*value).to_owned())
        })
    }

    fn ok(url: &str, key: &str) -> (String, String) {
        (format!("{url}/chat/completions"), key.to_owned())
    }

    #[test]
    fn the_hud_variables_come_first_and_the_openai_ones_when_they_are_unset() {
        let none = Settings::default();
        let hud = [("HUD_GATEWAY_URL", "http://hud"), ("HUD_API_KEY", "hk")];
        let openai = [
            ("OPENAI_BASE_URL", "http://oa/v1"),
            ("OPENAI_API_KEY", "ok"),
        ];
        let both: Vec<_> = hud.iter().chain(&openai).copied().collect();
        assert_eq!(
            resolve(&none, &both).expect("resolves"),
            ok("http://hud", "hk")
        );
        assert_eq!(
            resolve(&none, &openai).expect("resolves"),
            ok("http://oa/v1", "ok")
        );
        assert_eq!(
            resolve(&none, &hud).expect("resolves"),
            ok("http://hud", "hk")
        );
        // Empty variables count as unset.
        let empty_hud: Vec<_> = [("HUD_GATEWAY_URL", ""), ("HUD_API_KEY", "")]
            .iter()
            .chain(&openai)
            .copied()
            .collect();
        assert_eq!(
            resolve(&none, &empty_hud).expect("resolves"),
            ok("http://oa/v1", "ok")
        );
        // Each provider's default URL.
        assert_eq!(
            resolve(&none, &[("HUD_API_KEY", "hk")]).expect("resolves"),
            ok(DEFAULT_BASE_URL, "hk")
        );
        assert_eq!(
            resolve(&none, &[("OPENAI_API_KEY", "ok")]).expect("resolves"),
            ok(OPENAI_DEFAULT_BASE_URL, "ok")
        );
    }

    #[test]
    fn a_key_is_never_sent_to_the_other_providers_url_variable() {
        let none = Settings::default();
        let hud_key = [("HUD_API_KEY", "hk"), ("OPENAI_BASE_URL", "http://oa/v1")];
        assert_eq!(
            resolve(&none, &hud_key).expect("resolves"),
            ok(DEFAULT_BASE_URL, "hk")
        );
        let openai_key = [("OPENAI_API_KEY", "ok"), ("HUD_GATEWAY_URL", "http://hud")];
        assert_eq!(
            resolve(&none, &openai_key).expect("resolves"),
            ok(OPENAI_DEFAULT_BASE_URL, "ok")
        );
    }

    #[test]
    fn configured_values_win_and_no_key_is_a_typed_error() {
        let all = [
            ("HUD_GATEWAY_URL", "http://hud"),
            ("HUD_API_KEY", "hk"),
            ("OPENAI_BASE_URL", "http://oa/v1"),
            ("OPENAI_API_KEY", "ok"),
        ];
        let configured = JudgeConfig::new().base_url("http://mine/").api_key("mk");
        assert_eq!(
            resolve(&configured.inner, &all).expect("resolves"),
            ok("http://mine", "mk")
        );
        let key_only = JudgeConfig::new().api_key("mk");
        assert_eq!(
            resolve(&key_only.inner, &all[2..]).expect("resolves"),
            ok("http://oa/v1", "mk")
        );
        assert_eq!(
            resolve(&key_only.inner, &all).expect("resolves"),
            ok("http://hud", "mk")
        );
        let base_only = JudgeConfig::new().base_url("http://mine");
        assert_eq!(
            resolve(&base_only.inner, &all[2..]).expect("resolves"),
            ok("http://mine", "ok")
        );
        for (settings, vars) in [
            (Settings::default(), &all[..0]),
            (
                Settings::default(),
                &[("HUD_API_KEY", ""), ("OPENAI_API_KEY", "")][..],
            ),
            ((*JudgeConfig::new().api_key("").inner).clone(), &all[..]),
        ] {
            assert!(matches!(
                resolve(&settings, vars),
                Err(JudgeError::MissingApiKey)
            ));
        }
    }
}
