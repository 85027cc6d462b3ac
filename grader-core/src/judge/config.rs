//! How a judge reaches its model: [`JudgeConfig`], one value cheap to clone and share, and
//! where the endpoint and key come from when it does not say (the environment's variables).

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::Semaphore;

use super::cache::JudgeCache;
use super::error::JudgeError;
use super::transport::{HttpTransport, RetryPolicy, Transport, TransportError};

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
    pub(super) inner: Arc<Settings>,
}

#[derive(Clone)]
pub(super) struct Settings {
    pub(super) base_url: Option<String>,
    pub(super) api_key: Option<String>,
    pub(super) headers: Vec<(String, String)>,
    pub(super) connect_timeout: Duration,
    pub(super) request_timeout: Duration,
    pub(super) deadline: Option<Duration>,
    pub(super) retry: RetryPolicy,
    pub(super) transport: Option<Arc<dyn Transport>>,
    pub(super) default_transport: Arc<OnceLock<Result<Arc<dyn Transport>, String>>>,
    pub(super) calls: Option<Arc<Semaphore>>,
    pub(super) lenient: bool,
    pub(super) batch: usize,
    pub(super) structured: bool,
    pub(super) cache: Option<JudgeCache>,
    pub(super) record_usage: bool,
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

/// The base URL and key: configured, else from the environment (see [`JudgeConfig::new`]).
pub(super) fn endpoint(settings: &Settings) -> Result<(String, String), JudgeError> {
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

pub(super) fn transport_of(settings: &Settings) -> Result<Arc<dyn Transport>, JudgeError> {
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
