//! Capabilities: the tools an agent reaches through the environment, declared as manifests
//! (`name`, `protocol`, `url`, `params`) that `hello` sends as its `bindings`.

use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One capability's manifest, as the reference's `Capability.to_manifest` writes it.
///
/// ```
/// use grader_env::Capability;
///
/// let shell = Capability::new("shell", "ssh/2", "ssh://127.0.0.1:2222")
///     .param("user", "agent");
/// assert_eq!(
///     serde_json::to_string(&shell)?,
///     r#"{"name":"shell","protocol":"ssh/2","url":"ssh://127.0.0.1:2222","params":{"user":"agent"}}"#
/// );
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capability {
    /// The name the agent asks for (`tunnel.open`'s `capability`).
    pub name: String,
    /// The protocol spoken there, e.g. `ssh/2` or `mcp/2025-06-18`.
    pub protocol: String,
    /// Where it is served; `tunnel.open` dials this URL's host and port.
    pub url: String,
    /// Protocol parameters.
    pub params: Map<String, Value>,
}

impl Capability {
    /// A capability with no parameters.
    #[must_use]
    pub fn new(
        name: impl Into<String>,
        protocol: impl Into<String>,
        url: impl Into<String>,
    ) -> Self {
        Capability {
            name: name.into(),
            protocol: protocol.into(),
            url: url.into(),
            params: Map::new(),
        }
    }

    /// Adds one parameter.
    #[must_use]
    pub fn param(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.params.insert(key.into(), value.into());
        self
    }

    /// The host and port `tunnel.open` dials, read as Python's `urlsplit` reads them, or
    /// `None` when the URL names no port.
    #[must_use]
    pub fn host_port(&self) -> Option<(String, u16)> {
        let rest = self.url.split_once("://").map_or("", |(_, rest)| rest);
        let netloc = rest.split(['/', '?', '#']).next().unwrap_or("");
        let hostport = netloc.rsplit_once('@').map_or(netloc, |(_, h)| h);
        let (host, port) = if let Some(stripped) = hostport.strip_prefix('[') {
            let (host, after) = stripped.split_once(']')?;
            (host, after.strip_prefix(':')?)
        } else {
            hostport.rsplit_once(':')?
        };
        if host.is_empty() {
            return None;
        }
        Some((host.to_ascii_lowercase(), port.parse().ok()?))
    }
}

/// The environment's published capabilities, shared with its `initialize` hooks so that a
/// hook starting a daemon can publish its address.
#[derive(Debug, Clone, Default)]
pub struct Capabilities {
    inner: Arc<Mutex<Vec<Capability>>>,
}

impl Capabilities {
    /// Publishes `capability`, replacing one of the same name (so a re-run hook overwrites
    /// its stale address), as the reference's `add_capability`.
    pub fn add(&self, capability: Capability) {
        let mut list = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        list.retain(|c| c.name != capability.name);
        list.push(capability);
    }

    /// The capability of that name.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<Capability> {
        let list = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        list.iter().find(|c| c.name == name).cloned()
    }

    /// Every published capability, in publication order.
    #[must_use]
    pub fn list(&self) -> Vec<Capability> {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;

    #[test]
    fn host_and_port_as_urlsplit_reads_them() {
        let at = |url: &str| Capability::new("c", "p", url).host_port();
        assert_eq!(
            at("ssh://u@LocalHost:22/x"),
            Some(("localhost".to_owned(), 22))
        );
        assert_eq!(at("tcp://[::1]:80"), Some(("::1".to_owned(), 80)));
        assert_eq!(at("http://example"), None);
        assert_eq!(at("nothing"), None);
    }
}
