//! [`Peer`]: a service on the host that a sandbox with its own network reaches at the address
//! its task expects, and the forwarding that carries it there.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};

use super::accept::serve_each;

/// A bound on connecting to the service behind a peer (the reference's 15 s).
const CONNECT_WITHIN: Duration = Duration::from_secs(15);

/// A service the host runs that the sandbox may reach whatever the allowed hosts say (the
/// reference's `Peer`): the task calls it `name:port` (a database on `localhost:5432`, an API
/// on `api:8080`), and it answers at [`target`](Self::target) on the host.
///
/// A sandbox with a network of its own cannot address the host at all, so a service the
/// environment runs is as unreachable from it as the control channel; a peer hands one back.
/// Inside, the peer listens on `127.0.0.1:port` where that is free and on the next free
/// loopback address otherwise (`127.0.0.2`, …), and its name resolves there (the sandbox gets
/// its own `/etc/hosts`: the host's, plus a line per peer).
///
/// ```
/// use grader_env::workspace::Peer;
///
/// let database = Peer::new("db", 5432);
/// assert_eq!(database.target(), "127.0.0.1:5432".parse()?);
/// let api = Peer::new("api", 80).at("127.0.0.1:8080".parse()?);
/// assert_eq!(api.port(), 80);
/// # Ok::<(), std::net::AddrParseError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Peer {
    name: String,
    port: u16,
    target: Option<SocketAddr>,
}

impl Peer {
    /// The service the sandbox calls `name:port`, answering on the host's `127.0.0.1:port`
    /// unless [`at`](Self::at) says otherwise.
    #[must_use]
    pub fn new(name: impl Into<String>, port: u16) -> Self {
        Peer {
            name: name.into(),
            port,
            target: None,
        }
    }

    /// Where the service answers on the host.
    #[must_use]
    pub fn at(mut self, target: SocketAddr) -> Self {
        self.target = Some(target);
        self
    }

    /// The name the sandbox calls it.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The port the sandbox calls it on.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Where it answers on the host: [`at`](Self::at)'s address, or `127.0.0.1:port`.
    #[must_use]
    pub fn target(&self) -> SocketAddr {
        self.target
            .unwrap_or_else(|| SocketAddr::from((Ipv4Addr::LOCALHOST, self.port)))
    }
}

/// Why a peer cannot be served.
pub(crate) fn invalid(peer: &Peer) -> Option<&'static str> {
    if peer.port == 0 {
        Some("port 0 cannot be called")
    } else if peer.name.is_empty()
        || peer.name.len() > 253
        || !peer
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_')
    {
        Some("its name must be a host name (letters, digits, '-', '_' and '.')")
    } else {
        None
    }
}

/// The loopback address each peer name answers on inside the sandbox (the reference's
/// `bind_addresses`): `127.0.0.1` where all its ports are free there (`reserved` are taken),
/// else the next address down `127.0.0.0/8` where they are. A name given the same port twice
/// is refused.
pub(crate) fn addresses(
    peers: &[Peer],
    reserved: &[u16],
) -> Result<BTreeMap<String, Ipv4Addr>, (String, &'static str)> {
    let mut taken: Vec<(Ipv4Addr, u16)> = reserved
        .iter()
        .map(|port| (Ipv4Addr::LOCALHOST, *port))
        .collect();
    let mut ports: Vec<(&str, Vec<u16>)> = Vec::new();
    for peer in peers {
        match ports.iter_mut().find(|(name, _)| *name == peer.name) {
            Some((_, list)) if list.contains(&peer.port) => {
                return Err((peer.name.clone(), "the same port is given twice"));
            }
            Some((_, list)) => list.push(peer.port),
            None => ports.push((&peer.name, vec![peer.port])),
        }
    }
    let mut addresses = BTreeMap::new();
    for (name, list) in ports {
        let host = (1..=254_u8)
            .map(|last| Ipv4Addr::new(127, 0, 0, last))
            .find(|host| list.iter().all(|port| !taken.contains(&(*host, *port))))
            .ok_or_else(|| (name.to_owned(), "no loopback address is free for it"))?;
        taken.extend(list.iter().map(|port| (host, *port)));
        addresses.insert(name.to_owned(), host);
    }
    Ok(addresses)
}

/// Forwards every connection on `listener` to `target`, unread, until dropped (and the
/// connections with it).
pub(crate) async fn forward(listener: TcpListener, target: SocketAddr) {
    serve_each(listener, |mut inside| async move {
        if let Ok(Ok(mut outside)) =
            tokio::time::timeout(CONNECT_WITHIN, TcpStream::connect(target)).await
        {
            let _ = tokio::io::copy_bidirectional(&mut inside, &mut outside).await;
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_peer_on_a_taken_port_moves_down_the_loopback() {
        let peers = [
            Peer::new("db", 5432),
            Peer::new("replica", 5432),
            Peer::new("api", 3128),
            Peer::new("db", 6379),
        ];
        let addresses = addresses(&peers, &[3128]).unwrap_or_default();
        assert_eq!(addresses["db"], Ipv4Addr::new(127, 0, 0, 1));
        assert_eq!(addresses["replica"], Ipv4Addr::new(127, 0, 0, 2));
        assert_eq!(addresses["api"], Ipv4Addr::new(127, 0, 0, 2));
        assert_eq!(
            super::addresses(&[Peer::new("db", 1), Peer::new("db", 1)], &[]),
            Err(("db".to_owned(), "the same port is given twice"))
        );
    }

    #[test]
    fn a_peer_needs_a_host_name_and_a_port() {
        assert_eq!(invalid(&Peer::new("db", 5432)), None);
        assert!(invalid(&Peer::new("db", 0)).is_some());
        assert!(invalid(&Peer::new("", 1)).is_some());
        assert!(invalid(&Peer::new("a b", 1)).is_some());
        assert!(invalid(&Peer::new("db\n127.0.0.1 pypi.org", 1)).is_some());
    }
}
