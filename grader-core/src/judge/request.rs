//! One call to the model: the request body (the reference's, or a batch), the call slot it
//! holds, the retries, the cache, and reading the verdicts out of the reply.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::cache::{CachedReply, JudgeCache};
use super::config::Settings;
use super::criterion::Criterion;
use super::error::JudgeError;
use super::prompts;
use super::transport::{HttpRequest, HttpResponse, Transport, TransportError};
use super::verdict::{self, Verdict};

/// The reference's `max_tokens`.
pub const MAX_TOKENS: u32 = 1024;
/// How many characters of a reply body an error keeps.
pub const KEEP_BODY_CHARS: usize = 2000;

/// What one call produced.
#[derive(Debug, Clone, Default)]
pub(super) struct CallRecord {
    /// Unique per call made (or cache hit), so that a batched reply is counted once.
    pub(super) id: u64,
    pub(super) content: String,
    pub(super) prompt_tokens: Option<u64>,
    pub(super) completion_tokens: Option<u64>,
    pub(super) latency: Duration,
    pub(super) attempts: u32,
    pub(super) cache_hit: bool,
    pub(super) structured_fallback: bool,
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
pub(super) struct Vote {
    pub(super) verdict: Verdict,
    pub(super) record: CallRecord,
}

/// Everything a run shares between its calls.
pub(super) struct Run<'a> {
    pub(super) settings: &'a Settings,
    pub(super) transport: Arc<dyn Transport>,
    pub(super) url: String,
    pub(super) headers: Vec<(String, String)>,
    pub(super) answer: &'a str,
    pub(super) question: &'a str,
    pub(super) criteria: &'a [Criterion],
    pub(super) deadline: Option<(Instant, Duration)>,
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
    /// configuration's own cap
    /// ([`JudgeConfig::max_concurrent_calls`](super::JudgeConfig::max_concurrent_calls)).
    /// Every attempt passes here and nowhere else.
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
    pub(super) async fn votes(
        &self,
        chunk: &[usize],
        model: &str,
    ) -> Vec<Result<Vote, JudgeError>> {
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
