//! The egress proxy: HTTP `CONNECT` tunnels and absolute-form HTTP requests, let through to
//! the hosts the policy names and only to addresses it reaches, as the reference's `_Proxy`.
//!
//! Requests are parsed by hyper, not by hand: a hand-rolled parser gets keep-alive, chunked
//! bodies and header framing wrong in ways that surface as a package manager failing halfway
//! through an index. A refusal is loud and diagnosable from inside the sandbox: a status with
//! an `X-Proxy-Error` header naming why (`blocked-by-allowlist`, `blocked-by-address`,
//! `invalid-target`, `upstream-failure`), the reference's reasons.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

use super::accept::serve_each;
use super::policy::{Permit, Policy};

/// A response body: the upstream's, streamed, or none.
type Body = BoxBody<Bytes, hyper::Error>;

/// Tasks a connection started besides itself (a tunnel's relay, an upstream connection's
/// driver): ended with it.
type Side = Arc<Mutex<JoinSet<()>>>;

/// A bound on resolving and connecting to an upstream (the reference's 15 s for tunnels).
const CONNECT_WITHIN: Duration = Duration::from_secs(15);

/// A bound on a client's request head: a connection that never sends is closed.
const HEAD_WITHIN: Duration = Duration::from_secs(60);

/// Headers that belong to one hop and are not forwarded to the next (the reference's list).
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "keep-alive",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Serves the proxy on `listener` until dropped: every connection, and every tunnel and
/// upstream connection it opened, ends with this future.
pub(crate) async fn serve(listener: TcpListener, policy: Arc<Policy>) {
    serve_each(listener, |stream| connection(stream, Arc::clone(&policy))).await;
}

/// One client connection: its requests in turn, then whatever it left running (a tunnel).
async fn connection(stream: TcpStream, policy: Arc<Policy>) {
    let side: Side = Arc::default();
    let service = {
        let side = Arc::clone(&side);
        hyper::service::service_fn(move |request| {
            let policy = Arc::clone(&policy);
            let side = Arc::clone(&side);
            async move { Ok::<_, Infallible>(respond(request, &policy, &side).await) }
        })
    };
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_WITHIN)
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades()
        .await;
    let mut left = side
        .lock()
        .map(|mut set| std::mem::take(&mut *set))
        .unwrap_or_default();
    while left.join_next().await.is_some() {}
}

/// Runs `task` for as long as the connection lasts.
fn keep(side: &Side, task: impl Future<Output = ()> + Send + 'static) {
    if let Ok(mut set) = side.lock() {
        set.spawn(task);
    }
}

async fn respond(mut request: Request<Incoming>, policy: &Policy, side: &Side) -> Response<Body> {
    if request.method() == Method::CONNECT {
        let Some((host, port)) = target(request.uri(), 443) else {
            return refuse(StatusCode::BAD_REQUEST, "invalid-target");
        };
        let Some(permit) = policy.permits(&host) else {
            return refuse(StatusCode::FORBIDDEN, "blocked-by-allowlist");
        };
        let mut upstream = match connect(&host, port, policy, permit).await {
            Ok(upstream) => upstream,
            Err(refusal) => return refusal,
        };
        let upgrade = hyper::upgrade::on(&mut request);
        keep(side, async move {
            if let Ok(upgraded) = upgrade.await {
                let mut client = TokioIo::new(upgraded);
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            }
        });
        return Response::new(empty());
    }
    if request.uri().scheme_str() != Some("http") {
        return match request.uri().scheme() {
            // Origin-form: a request meant for a server, not a proxy; no host to check.
            None => refuse(StatusCode::FORBIDDEN, "blocked-by-allowlist"),
            Some(_) => refuse(StatusCode::BAD_REQUEST, "invalid-target"),
        };
    }
    let Some((host, port)) = target(request.uri(), 80) else {
        return refuse(StatusCode::FORBIDDEN, "blocked-by-allowlist");
    };
    let Some(permit) = policy.permits(&host) else {
        return refuse(StatusCode::FORBIDDEN, "blocked-by-allowlist");
    };
    let upstream = match connect(&host, port, policy, permit).await {
        Ok(upstream) => upstream,
        Err(refusal) => return refusal,
    };
    forward(request, upstream, side)
        .await
        .unwrap_or_else(|_| refuse(StatusCode::BAD_GATEWAY, "upstream-failure"))
}

/// Sends `request` on `upstream` in origin form, without its hop-by-hop headers, with `Host`
/// as its target names it; the response comes back the same way.
async fn forward(
    request: Request<Incoming>,
    upstream: TcpStream,
    side: &Side,
) -> Result<Response<Body>, hyper::Error> {
    let (mut parts, body) = request.into_parts();
    let authority = parts.uri.authority().map(|a| a.as_str().to_owned());
    parts.uri = parts
        .uri
        .path_and_query()
        .map_or_else(|| Uri::from_static("/"), |p| Uri::from(p.clone()));
    strip_hop_by_hop(&mut parts.headers);
    if let Some(host) = authority.and_then(|a| HeaderValue::from_str(&a).ok()) {
        parts.headers.insert(header::HOST, host);
    }
    let (mut sender, driver) =
        hyper::client::conn::http1::handshake(TokioIo::new(upstream)).await?;
    keep(side, async move {
        let _ = driver.await;
    });
    let response = sender
        .send_request(Request::from_parts(parts, body))
        .await?;
    let (mut parts, body) = response.into_parts();
    strip_hop_by_hop(&mut parts.headers);
    Ok(Response::from_parts(parts, body.boxed()))
}

/// Removes the hop-by-hop headers, and those the `Connection` header names.
fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in HOP_BY_HOP {
        headers.remove(name);
    }
}

/// The host (without brackets) and port a request's target names; `None` for no host, or a
/// port given that is not one (`:99999` is refused, not read as the default).
fn target(uri: &Uri, default_port: u16) -> Option<(String, u16)> {
    let authority = uri.authority()?;
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']');
    if host.is_empty() {
        return None;
    }
    let after_host = authority
        .as_str()
        .rsplit('@')
        .next()
        .and_then(|hostport| hostport.strip_prefix(authority.host()))
        .unwrap_or_default();
    let port = match (authority.port_u16(), after_host) {
        (Some(port), _) => port,
        (None, "") => default_port,
        (None, _) => return None,
    };
    Some((host.to_owned(), port))
}

/// A connection to `host:port` at the first of its addresses the policy reaches; a refusal
/// to send back otherwise.
async fn connect(
    host: &str,
    port: u16,
    policy: &Policy,
    permit: Permit,
) -> Result<TcpStream, Response<Body>> {
    let upstream_failure = || refuse(StatusCode::BAD_GATEWAY, "upstream-failure");
    let addrs: Vec<SocketAddr> =
        match tokio::time::timeout(CONNECT_WITHIN, tokio::net::lookup_host((host, port))).await {
            Ok(Ok(addrs)) => addrs.collect(),
            _ => return Err(upstream_failure()),
        };
    let (mut blocked, mut failed) = (false, false);
    for addr in addrs {
        if !policy.reaches(addr.ip(), permit) {
            blocked = true;
            continue;
        }
        if let Ok(Ok(stream)) = tokio::time::timeout(CONNECT_WITHIN, TcpStream::connect(addr)).await
        {
            let _ = stream.set_nodelay(true);
            return Ok(stream);
        }
        failed = true;
    }
    Err(if blocked && !failed {
        refuse(StatusCode::FORBIDDEN, "blocked-by-address")
    } else {
        upstream_failure()
    })
}

/// A refusal: `status`, an empty body, and `X-Proxy-Error: reason`.
fn refuse(status: StatusCode, reason: &'static str) -> Response<Body> {
    let mut response = Response::new(empty());
    *response.status_mut() = status;
    response.headers_mut().insert(
        HeaderName::from_static("x-proxy-error"),
        HeaderValue::from_static(reason),
    );
    response
}

fn empty() -> Body {
    Empty::new().map_err(|never| match never {}).boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_names_a_host_and_a_port_or_nothing() {
        let at = |text: &str| target(&text.parse::<Uri>().unwrap_or_default(), 443);
        assert_eq!(at("pypi.org:8443"), Some(("pypi.org".to_owned(), 8443)));
        assert_eq!(at("pypi.org"), Some(("pypi.org".to_owned(), 443)));
        assert_eq!(
            at("http://u@pypi.org/x"),
            Some(("pypi.org".to_owned(), 443))
        );
        assert_eq!(at("[::1]:22"), Some(("::1".to_owned(), 22)));
        assert_eq!(at("pypi.org:99999"), None);
        assert_eq!(at("/no/host"), None);
    }
}
