//! How a judge's request reaches the model: the [`Transport`] trait, its HTTP implementation
//! on reqwest ([`HttpTransport`]), and the retry loop every transport gets
//! ([`RetryPolicy`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;

/// One HTTP `POST` a judge makes.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    /// The full URL (`{base}/chat/completions`).
    pub url: String,
    /// Headers to send, authorization included.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: Vec<u8>,
    /// How long the whole exchange may take, reading the reply's body included.
    pub timeout: Duration,
}

/// A reply, read whole.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// The headers, names in lowercase.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The first header of that name (give it in lowercase).
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// Why a request got no reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The connection could not be made.
    #[error("connection failed: {0}")]
    Connect(String),
    /// No complete reply within the request's timeout.
    #[error("no complete reply within {0:?}")]
    Timeout(Duration),
    /// The connection broke while sending or reading.
    #[error("the exchange failed: {0}")]
    Broken(String),
    /// The reply's body is larger than the transport accepts.
    #[error("the reply's body is larger than {limit} bytes")]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The endpoint answered with a redirect (a 3xx status). A judge never follows one:
    /// following it would send the request's body and its headers (a gateway's key, Azure's
    /// `api-key`) to whatever address the reply names, and take that address's verdict.
    #[error(
        "the endpoint answered {status} redirecting to {location:?}; the judge does not follow \
         redirects: configure the URL the endpoint redirects to"
    )]
    Redirected {
        /// The status (301, 302, 303, 307, 308, …).
        status: u16,
        /// The `Location` header as received (empty when there was none).
        location: String,
    },
}

impl TransportError {
    /// Whether trying again may help (everything but an oversized reply or a redirect).
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        !matches!(
            self,
            TransportError::TooLarge { .. } | TransportError::Redirected { .. }
        )
    }
}

/// Sends a judge's requests. [`HttpTransport`] is the default; implement this to bring your
/// own client (a proxy, a recorder, a non-HTTP model). Retries, deadlines, the cache and the
/// concurrency limit are applied around it, so an implementation only sends one request.
///
/// ```
/// use futures_util::future::BoxFuture;
/// use grader_core::judge::transport::{HttpRequest, HttpResponse, Transport, TransportError};
///
/// /// Answers every criterion with MET, without a network.
/// struct AlwaysMet;
///
/// impl Transport for AlwaysMet {
///     fn post(&self, _: HttpRequest) -> BoxFuture<'_, Result<HttpResponse, TransportError>> {
///         Box::pin(async {
///             let body = r#"{"choices":[{"message":{"content":"{\"criterion_status\":\"MET\"}"}}]}"#;
///             Ok(HttpResponse { status: 200, headers: vec![], body: body.into() })
///         })
///     }
/// }
/// ```
pub trait Transport: Send + Sync + 'static {
    /// Sends one request and reads its whole reply, within `request.timeout`.
    fn post(&self, request: HttpRequest) -> BoxFuture<'_, Result<HttpResponse, TransportError>>;
}

/// The largest reply body [`HttpTransport`] reads by default: 8 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 8 << 20;

/// [`Transport`] over HTTP/1.1 with reqwest (rustls, no system OpenSSL). Cheap to clone: clones
/// share one connection pool.
#[derive(Debug, Clone)]
pub struct HttpTransport {
    client: reqwest::Client,
    body_limit: usize,
}

impl HttpTransport {
    /// A client with this connect timeout. It follows no redirect: a 3xx reply is a
    /// [`TransportError::Redirected`] naming where it pointed (reqwest's default policy would
    /// re-send the body and every custom header to that address).
    ///
    /// # Errors
    /// When the TLS backend cannot be set up.
    pub fn new(connect_timeout: Duration) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .connect_timeout(connect_timeout)
            .pool_max_idle_per_host(100)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(HttpTransport::from_client(client))
    }

    /// Wraps a client you configured yourself. Its redirect policy is yours: a redirect it
    /// does not follow is a [`TransportError::Redirected`]; one it follows (reqwest's default
    /// policy follows up to 10) re-sends the request to the new address. Build it with
    /// `.redirect(reqwest::redirect::Policy::none())` to keep [`new`](Self::new)'s behaviour.
    #[must_use]
    pub fn from_client(client: reqwest::Client) -> Self {
        HttpTransport {
            client,
            body_limit: DEFAULT_BODY_LIMIT,
        }
    }

    /// Refuses reply bodies larger than `bytes` (default [`DEFAULT_BODY_LIMIT`]).
    #[must_use]
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    async fn exchange(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        let timeout = request.timeout;
        let mut builder = self
            .client
            .post(&request.url)
            .timeout(timeout)
            .body(request.body);
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        let classify = |error: reqwest::Error| {
            if error.is_timeout() {
                TransportError::Timeout(timeout)
            } else if error.is_connect() {
                TransportError::Connect(error_chain(&error))
            } else {
                TransportError::Broken(error_chain(&error))
            }
        };
        let mut response = builder.send().await.map_err(classify)?;
        let status = response.status().as_u16();
        if response.status().is_redirection() {
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
                .unwrap_or_default();
            return Err(TransportError::Redirected { status, location });
        }
        let headers = response
            .headers()
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_owned(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(classify)? {
            if body.len() + chunk.len() > self.body_limit {
                return Err(TransportError::TooLarge {
                    limit: self.body_limit,
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(HttpResponse {
            status,
            headers,
            body,
        })
    }
}

/// An error and its sources, joined with `: `.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

impl Transport for HttpTransport {
    fn post(&self, request: HttpRequest) -> BoxFuture<'_, Result<HttpResponse, TransportError>> {
        Box::pin(self.exchange(request))
    }
}

/// When to try a request again, as the reference's client (the OpenAI SDK with the HUD
/// gateway's six retries): on 408, 409, 429 and 5xx replies (unless `x-should-retry: false`;
/// any status with `x-should-retry: true`) and on connection errors and timeouts; waiting
/// what `retry-after-ms` or `retry-after` (seconds) asks when it is in (0, 120] s, and otherwise
/// `initial × 2^retry` capped at `max`, less a random 0–25 %. A `Retry-After` above 120 s is
/// not waited out: the reply is the error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (the reference: 6).
    pub max_retries: u32,
    /// The first backoff (the reference: 0.5 s).
    pub initial_backoff: Duration,
    /// The longest backoff (the reference: 8 s).
    pub max_backoff: Duration,
    /// The longest server-requested wait that is honoured (the reference: 120 s).
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 6,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// No retries.
    #[must_use]
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// The server's requested wait, from `retry-after-ms` or `retry-after` (seconds, possibly
    /// fractional).
    fn retry_after(response: &HttpResponse) -> Option<f64> {
        for (header, divisor) in [("retry-after-ms", 1000.0), ("retry-after", 1.0)] {
            if let Some(seconds) = response
                .header(header)
                .and_then(|value| value.trim().parse::<f64>().ok())
            {
                return Some(seconds / divisor);
            }
        }
        None
    }

    /// Whether a non-success reply is worth another attempt.
    #[must_use]
    pub fn should_retry(&self, response: &HttpResponse) -> bool {
        if Self::retry_after(response)
            .is_some_and(|s| s.is_finite() && s > self.max_retry_after.as_secs_f64())
        {
            return false;
        }
        match response.header("x-should-retry") {
            Some("true") => return true,
            Some("false") => return false,
            _ => {}
        }
        matches!(response.status, 408 | 409 | 429) || response.status >= 500
    }

    /// How long to wait before retry number `retry` (0 for the first), given the reply that
    /// failed, if any.
    #[must_use]
    pub fn delay(&self, retry: u32, response: Option<&HttpResponse>) -> Duration {
        if let Some(seconds) = response.and_then(Self::retry_after)
            && seconds.is_finite()
            && seconds > 0.0
            && seconds <= self.max_retry_after.as_secs_f64()
        {
            return Duration::from_secs_f64(seconds);
        }
        let exponent = i32::try_from(retry.min(1000)).unwrap_or(1000);
        let exponential = self.initial_backoff.as_secs_f64() * 2f64.powi(exponent);
        let capped = exponential.min(self.max_backoff.as_secs_f64());
        Duration::from_secs_f64(capped * (1.0 - 0.25 * unit_random()))
    }
}

/// A number in `[0, 1)` for jitter; not for anything that needs real randomness.
fn unit_random() -> f64 {
    use std::hash::{BuildHasher, RandomState};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let bits = RandomState::new().hash_one(n) >> 11;
    #[allow(clippy::cast_precision_loss)] // 53 bits fit an f64 exactly
    let unit = bits as f64 / (1u64 << 53) as f64;
    unit
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(status: u16, headers: &[(&str, &str)]) -> HttpResponse {
        HttpResponse {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            body: Vec::new(),
        }
    }

    #[test]
    fn retries_what_the_reference_retries() {
        let policy = RetryPolicy::default();
        for status in [408, 409, 429, 500, 503, 599] {
            assert!(policy.should_retry(&reply(status, &[])), "{status}");
        }
        for status in [400, 401, 404, 422] {
            assert!(!policy.should_retry(&reply(status, &[])), "{status}");
        }
        assert!(policy.should_retry(&reply(400, &[("x-should-retry", "true")])));
        assert!(!policy.should_retry(&reply(503, &[("x-should-retry", "false")])));
        assert!(!policy.should_retry(&reply(429, &[("retry-after", "121")])));
    }

    #[test]
    fn waits_what_the_server_asks_else_backs_off() {
        let policy = RetryPolicy::default();
        let asked = reply(429, &[("retry-after", "1.5")]);
        assert_eq!(policy.delay(0, Some(&asked)), Duration::from_millis(1500));
        let asked_ms = reply(429, &[("retry-after-ms", "20"), ("retry-after", "9")]);
        assert_eq!(policy.delay(3, Some(&asked_ms)), Duration::from_millis(20));
        for retry in 0..10 {
            let delay = policy.delay(retry, None).as_secs_f64();
            let full = (0.5 * 2f64.powi(i32::try_from(retry).unwrap_or(0))).min(8.0);
            assert!(delay <= full && delay >= 0.75 * full, "{retry}: {delay}");
        }
        // Zero is not a wait the reference honours: it backs off instead.
        assert!(policy.delay(0, Some(&reply(429, &[("retry-after", "0")]))) > Duration::ZERO);
    }
}
