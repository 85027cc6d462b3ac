//! What a judge's calls cost, in its info: tokens, latency, attempts, cache hits and
//! structured-output fallbacks, per criterion (or per vote of a panel) and in total.

use std::time::Duration;

use serde_json::Value;

use super::config::Settings;
use super::error::JudgeError;
use super::request::Vote;
use crate::params::json_safe;
use crate::score::Info;

/// Milliseconds, to the microsecond.
fn latency_ms(latency: Duration) -> f64 {
    let micros = u32::try_from(latency.as_micros()).unwrap_or(u32::MAX);
    f64::from(micros) / 1000.0
}

/// Sums of what the calls cost, for the judge's info.
#[derive(Default)]
pub(super) struct Totals {
    seen: std::collections::HashSet<u64>,
    prompt_tokens: u64,
    completion_tokens: u64,
    calls: u64,
    cache_hits: u64,
    structured_fallbacks: u64,
}

impl Totals {
    /// Adds a criterion's votes to the totals and records them in its info as configured.
    pub(super) fn record(
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

    pub(super) fn finish(&self, settings: &Settings, info: &mut Info) {
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
