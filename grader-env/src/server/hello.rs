//! `hello`'s `workspace_routes` and `connections`, checked as the reference's `from_wire` and
//! dataclass checks do, with its messages.
//!
//! This crate's environments run no workspaces, so a well-formed route or connection is then
//! refused as the reference refuses one naming a workspace that does not exist.

use serde_json::{Map, Value};

use crate::pyfmt::py_str_repr;

/// A route or connection's capability, once it is well formed.
pub(crate) fn check_route(value: &Value) -> Result<String, String> {
    let Value::Object(map) = value else {
        return Err("workspace routes must be objects".to_owned());
    };
    let (Some(Value::String(capability)), Some(Value::String(host))) =
        (map.get("capability"), map.get("host"))
    else {
        return Err("workspace route capability and host must be strings".to_owned());
    };
    let Some(port) = map
        .get("port")
        .and_then(|p| p.as_i64().filter(|_| p.is_i64() || p.is_u64()))
    else {
        return Err("workspace route port must be an integer".to_owned());
    };
    if capability.is_empty() || capability.trim() != capability {
        return Err("workspace route capability must not be empty or padded".to_owned());
    }
    if host.is_empty() || host.chars().any(char::is_whitespace) {
        return Err("workspace route host must be a hostname without whitespace".to_owned());
    }
    if host.parse::<std::net::IpAddr>().is_ok() {
        return Err("workspace routes require a hostname, not an IP address".to_owned());
    }
    if !(1..=65535).contains(&port) {
        return Err("workspace route port must be between 1 and 65535".to_owned());
    }
    Ok(capability.clone())
}

pub(crate) fn check_connection(value: &Value) -> Result<String, String> {
    let Value::Object(map) = value else {
        return Err("connections must be objects".to_owned());
    };
    let (Some(Value::String(name)), Some(Value::String(capability)), Some(Value::String(url))) =
        (map.get("name"), map.get("capability"), map.get("url"))
    else {
        return Err("connection name, capability, and url must be strings".to_owned());
    };
    let Some(Value::Object(headers)) = map.get("headers") else {
        return Err("connection headers must map strings to strings".to_owned());
    };
    if !headers.values().all(Value::is_string) {
        return Err("connection headers must map strings to strings".to_owned());
    }
    let name_ok = name.len() <= 63
        && name.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if !name_ok {
        return Err(
            "connection name must start with a lowercase letter and contain only \
                    lowercase letters, digits, underscores, or hyphens"
                .to_owned(),
        );
    }
    if capability.is_empty() || capability.trim() != capability {
        return Err("connection capability must not be empty or padded".to_owned());
    }
    check_connection_url(url)?;
    check_headers(headers)?;
    Ok(capability.clone())
}

fn check_connection_url(url: &str) -> Result<(), String> {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", ""));
    let netloc = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = netloc.rsplit_once('@').map_or(netloc, |(_, h)| h);
    let host = host.split(':').next().unwrap_or("");
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") || host.is_empty() {
        return Err("connection url must be an HTTP(S) URL with a hostname".to_owned());
    }
    if netloc.contains('@') {
        return Err("connection url must not contain credentials".to_owned());
    }
    if rest.contains('?') || rest.contains('#') {
        return Err("connection url must not contain a query or fragment".to_owned());
    }
    Ok(())
}

fn check_headers(headers: &Map<String, Value>) -> Result<(), String> {
    if headers.is_empty() {
        return Err("connection headers must not be empty".to_owned());
    }
    for (name, value) in headers {
        let token = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !token {
            return Err(format!(
                "invalid connection header name: {}",
                py_str_repr(name)
            ));
        }
        let text = value.as_str().unwrap_or("");
        if text.is_empty() || text.contains(['\r', '\n']) {
            return Err(format!(
                "invalid connection header value for {}",
                py_str_repr(name)
            ));
        }
    }
    Ok(())
}

/// The reference's refusal of a route or connection for a workspace it does not run.
pub(crate) fn no_workspace(capability: &str) -> String {
    format!(
        "workspace capability {} does not exist",
        py_str_repr(capability)
    )
}
