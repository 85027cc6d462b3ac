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
//!   policy, your own [`Transport`](transport::Transport), a cap on concurrent calls.
//! - Opt-in: several criteria per call ([`JudgeConfig::batch`]), JSON-schema structured output
//!   with a fallback to text ([`JudgeConfig::structured`]), a panel of models deciding by strict
//!   majority ([`LlmJudge::panel`]), a cache of replies ([`JudgeConfig::cache`]), and tokens,
//!   latency and attempts in info ([`JudgeConfig::record_usage`]).
//!
//! Here the model is stood in for by a [`Transport`](transport::Transport) that finds every
//! positive criterion met and no mistake made; normally the default HTTP transport reaches the
//! endpoint.
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

// The judge's own parts, bottom up: what a criterion is, why it fails, how it reaches the
// model, one call, what the calls cost, and the judge that runs them all.
mod config;
mod criterion;
mod error;
mod llm_judge;
mod request;
mod usage;

pub use cache::JudgeCache;
pub use config::{
    API_KEY_VAR, BASE_URL_VAR, DEFAULT_BASE_URL, JudgeConfig, OPENAI_API_KEY_VAR,
    OPENAI_BASE_URL_VAR, OPENAI_DEFAULT_BASE_URL,
};
pub use criterion::Criterion;
pub use error::JudgeError;
pub use llm_judge::{DEFAULT_MODEL, LlmJudge, NAME};
pub use request::{KEEP_BODY_CHARS, MAX_TOKENS};
pub use verdict::{Verdict, VerdictError};
