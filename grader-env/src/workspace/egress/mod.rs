//! The ways out of a sandbox that has a network of its own, and the policy on them (the
//! reference's `hud/environment/egress.py`).
//!
//! A sandbox with its own network namespace has no route anywhere: not to the internet, and
//! not to what else the host runs, the control channel included. Two kinds of route are given
//! back deliberately: hosts on the internet, through an HTTP proxy on the sandbox's
//! `127.0.0.1:3128` that applies the task's [`allowed_hosts`] (sessions get `http_proxy`,
//! `https_proxy` and their kin pointing at it), and [`Peer`] services the environment runs,
//! each forwarded to the address the task expects. Both are sockets created inside the
//! sandbox's namespace and served from the host (see `netns`); they end with the sandbox.
//!
//! [`allowed_hosts`]: super::WorkspaceBuilder::allowed_hosts

mod accept;
mod netns;
mod peer;
mod policy;
mod proxy;

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::Arc;

use tokio::task::JoinSet;

use super::error::WorkspaceError;

pub use peer::Peer;
pub use policy::ANY_HOST;
pub(crate) use policy::{Policy, valid_host};

/// The proxy's port on the sandbox's loopback (the reference's `BRIDGE_PORT`).
pub(crate) const PROXY_PORT: u16 = 3128;

/// A sandbox's routes out, as configured: the proxy's policy and the peers with the loopback
/// address each answers on.
#[derive(Debug, Clone)]
pub(crate) struct Egress {
    policy: Arc<Policy>,
    peers: Vec<Peer>,
    addresses: BTreeMap<String, Ipv4Addr>,
}

impl Egress {
    /// Routes through `policy` and to `peers`.
    ///
    /// # Errors
    /// [`WorkspaceError::Peer`] for a peer without a host name or a port, or one that cannot
    /// be given an address.
    pub(crate) fn new(policy: Policy, peers: Vec<Peer>) -> Result<Self, WorkspaceError> {
        if let Some((peer, reason)) = peers
            .iter()
            .find_map(|peer| peer::invalid(peer).map(|reason| (peer, reason)))
        {
            return Err(WorkspaceError::Peer {
                name: peer.name().to_owned(),
                reason,
            });
        }
        let addresses = peer::addresses(&peers, &[PROXY_PORT])
            .map_err(|(name, reason)| WorkspaceError::Peer { name, reason })?;
        Ok(Egress {
            policy: Arc::new(policy),
            peers,
            addresses,
        })
    }

    /// The proxy variables a session runs with (the reference's `proxy_environment`), in the
    /// spellings clients read, the peers left out of them (a peer is reached directly); none
    /// where no host is allowed, so that "this task has no network" does not read as a broken
    /// proxy.
    pub(crate) fn environment(&self) -> Vec<(String, String)> {
        if self.policy.is_empty() {
            return Vec::new();
        }
        let url = format!("http://127.0.0.1:{PROXY_PORT}");
        let mut bypass: Vec<String> = vec!["127.0.0.1".to_owned(), "localhost".to_owned()];
        for item in self
            .addresses
            .keys()
            .cloned()
            .chain(self.addresses.values().map(Ipv4Addr::to_string))
        {
            if !bypass.contains(&item) {
                bypass.push(item);
            }
        }
        let bypass = bypass.join(",");
        ["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"]
            .into_iter()
            .map(|key| (key.to_owned(), url.clone()))
            .chain(["no_proxy", "NO_PROXY"].map(|key| (key.to_owned(), bypass.clone())))
            .collect()
    }

    /// The sandbox's `/etc/hosts` where there are peers: `base` (the host's), then a line per
    /// peer name at its address (the reference's `hosts_text`); `None` without peers.
    pub(crate) fn hosts_text(&self, base: &str) -> Option<String> {
        if self.addresses.is_empty() {
            return None;
        }
        let mut text = base.trim_end_matches('\n').to_owned();
        if !text.trim().is_empty() {
            text.push('\n');
        } else {
            text.clear();
        }
        for (name, host) in &self.addresses {
            text.push_str(&format!("{host}\t{name}\n"));
        }
        Some(text)
    }

    /// Opens the routes inside the network namespace of `init` (the sandbox's init) and
    /// serves them until the returned [`Routes`] is dropped.
    ///
    /// # Errors
    /// [`WorkspaceError::Sandbox`] when the listeners cannot be made there.
    pub(crate) async fn open(
        &self,
        init: u32,
        path: &'static str,
    ) -> Result<Routes, WorkspaceError> {
        let proxy = !self.policy.is_empty();
        let mut addrs: Vec<SocketAddrV4> = Vec::new();
        if proxy {
            addrs.push(SocketAddrV4::new(Ipv4Addr::LOCALHOST, PROXY_PORT));
        }
        for peer in &self.peers {
            let host = self
                .addresses
                .get(peer.name())
                .copied()
                .unwrap_or(Ipv4Addr::LOCALHOST);
            addrs.push(SocketAddrV4::new(host, peer.port()));
        }
        let mut tasks = JoinSet::new();
        if addrs.is_empty() {
            return Ok(Routes { _tasks: tasks });
        }
        let wanted = addrs.clone();
        let listeners =
            tokio::task::spawn_blocking(move || netns::listeners_in(init, &wanted, path))
                .await
                .map_err(|e| WorkspaceError::Sandbox(e.to_string()))?
                .map_err(|e| {
                    WorkspaceError::Sandbox(format!("cannot open the sandbox's routes out: {e}"))
                })?;
        let mut listeners = listeners.into_iter();
        let as_tokio = |listener: std::net::TcpListener| {
            tokio::net::TcpListener::from_std(listener)
                .map_err(|e| WorkspaceError::Sandbox(format!("cannot serve a route out: {e}")))
        };
        if proxy && let Some(listener) = listeners.next() {
            tasks.spawn(proxy::serve(as_tokio(listener)?, Arc::clone(&self.policy)));
        }
        for (peer, listener) in self.peers.iter().zip(listeners) {
            tasks.spawn(peer::forward(as_tokio(listener)?, peer.target()));
        }
        Ok(Routes { _tasks: tasks })
    }
}

/// A sandbox's routes out while they are served: dropping it closes the listeners and every
/// connection through them.
pub(crate) struct Routes {
    _tasks: JoinSet<()>,
}
