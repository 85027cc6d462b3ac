//! Which hosts the proxy lets a sandbox reach, and which addresses count as the internet.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// In [`allowed_hosts`](crate::workspace::WorkspaceBuilder::allowed_hosts), the entry that
/// permits every host (the reference's `ANY_HOST`).
pub const ANY_HOST: &str = "*";

/// How a host is allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Permit {
    /// It is listed, or is a subdomain of a listed host.
    Named,
    /// Only [`ANY_HOST`] lets it through.
    Any,
}

/// The proxy's policy: the hosts it lets through, and whether it also connects to addresses
/// off the public internet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Policy {
    /// Lowercased host names (or [`ANY_HOST`]).
    hosts: BTreeSet<String>,
    /// Whether private, loopback and other non-global addresses may be reached.
    private: bool,
}

impl Policy {
    /// A policy letting through `hosts` (already checked by [`valid_host`]), lowercased.
    pub(crate) fn new(hosts: impl IntoIterator<Item = String>, private: bool) -> Self {
        Policy {
            hosts: hosts
                .into_iter()
                .map(|host| host.trim_end_matches('.').to_ascii_lowercase())
                .collect(),
            private,
        }
    }

    /// Whether no host at all is let through (then no proxy is served).
    pub(crate) fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }

    /// Whether `host` is allowed, and how: it is a listed host or a subdomain of one (the
    /// reference's `permitted`, compared without case or a final dot), or [`ANY_HOST`] is
    /// listed.
    pub(crate) fn permits(&self, host: &str) -> Option<Permit> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if host.is_empty() {
            return None;
        }
        let named = self.hosts.iter().any(|entry| {
            host == *entry
                || host
                    .strip_suffix(entry.as_str())
                    .is_some_and(|rest| rest.ends_with('.'))
        });
        if named {
            Some(Permit::Named)
        } else if self.hosts.contains(ANY_HOST) {
            Some(Permit::Any)
        } else {
            None
        }
    }

    /// Whether the proxy may connect to `ip` for a host allowed as `permit`: a public address,
    /// or, with [`allow_private_addresses`](crate::workspace::WorkspaceBuilder::allow_private_addresses),
    /// any address of a host listed by name (never one let through only by [`ANY_HOST`]).
    pub(crate) fn reaches(&self, ip: IpAddr, permit: Permit) -> bool {
        public(ip) || (self.private && permit == Permit::Named)
    }
}

/// Whether `entry` can be an allowed host: a name or address without whitespace, scheme, path,
/// port or credentials (`*` for any).
pub(crate) fn valid_host(entry: &str) -> bool {
    entry == ANY_HOST
        || (!entry.trim_end_matches('.').is_empty()
            && !entry
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || "/@:?#*[]\\".contains(c)))
}

/// Whether `ip` is on the public internet, as Python's `ipaddress` `is_global` (less its
/// handful of exceptions inside reserved blocks, which stay refused): not private, loopback,
/// link-local, shared (CGNAT), documentation, benchmarking, reserved, multicast or unspecified.
pub(crate) fn public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => public_v4(v4),
        // IPv4-mapped addresses (::ffff:0:0/96) are not global, whatever they map.
        IpAddr::V6(v6) => v6.to_ipv4_mapped().is_none() && public_v6(v6),
    }
}

fn public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(a == 0
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b))
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 192 && b == 0 && c == 2)
        || (a == 192 && b == 88 && c == 99)
        || (a == 192 && b == 168)
        || (a == 198 && (18..20).contains(&b))
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
        || a >= 224)
}

fn public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    !(ip.is_unspecified()
        || ip.is_loopback()
        // IPv4-translated (64:ff9b:1::/48) and the NAT64 well-known prefix (64:ff9b::/96).
        || (s[0] == 0x64 && s[1] == 0xff9b)
        // Discard-only (100::/64).
        || (s[0] == 0x100 && s[1] == 0 && s[2] == 0 && s[3] == 0)
        // IETF protocol assignments (2001::/23), documentation (2001:db8::/32, 3fff::/20),
        // 6to4 (2002::/16).
        || (s[0] == 0x2001 && s[1] < 0x200)
        || (s[0] == 0x2001 && s[1] == 0xdb8)
        || (s[0] & 0xfff0) == 0x3ff0
        || s[0] == 0x2002
        // Unique local (fc00::/7), link-local (fe80::/10), site-local (fec0::/10), multicast.
        || (s[0] & 0xfe00) == 0xfc00
        || (s[0] & 0xffc0) == 0xfe80
        || (s[0] & 0xffc0) == 0xfec0
        || (s[0] & 0xff00) == 0xff00
        // The rest of ::/8 (IPv4-compatible and reserved).
        || (s[0] & 0xff00) == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(hosts: &[&str]) -> Policy {
        Policy::new(hosts.iter().map(|h| (*h).to_owned()), false)
    }

    #[test]
    fn a_host_is_permitted_exactly_or_as_a_subdomain() {
        let allowed = policy(&["pypi.org", "Files.Pythonhosted.org"]);
        let named = Some(Permit::Named);
        assert_eq!(allowed.permits("pypi.org"), named);
        assert_eq!(allowed.permits("PyPI.org."), named);
        assert_eq!(allowed.permits("www.pypi.org"), named);
        assert_eq!(allowed.permits("files.pythonhosted.org"), named);
        for refused in ["evilpypi.org", "pypi.org.evil.com", "org", ""] {
            assert_eq!(allowed.permits(refused), None, "{refused}");
        }
        assert_eq!(
            policy(&["*"]).permits("anything.example"),
            Some(Permit::Any)
        );
        assert_eq!(policy(&["*", "pypi.org"]).permits("pypi.org"), named);
        assert_eq!(policy(&[]).permits("pypi.org"), None);
    }

    #[test]
    fn private_addresses_are_reached_only_for_hosts_named_and_only_when_allowed() {
        let private: IpAddr = Ipv4Addr::new(10, 0, 0, 5).into();
        let public_ip: IpAddr = Ipv4Addr::new(8, 8, 8, 8).into();
        let open = Policy::new(["mirror.internal".to_owned(), "*".to_owned()], true);
        assert!(open.reaches(private, Permit::Named));
        assert!(!open.reaches(private, Permit::Any));
        assert!(open.reaches(public_ip, Permit::Any));
        let closed = Policy::new(["mirror.internal".to_owned()], false);
        assert!(!closed.reaches(private, Permit::Named));
        assert!(closed.reaches(public_ip, Permit::Named));
    }

    #[test]
    fn entries_that_are_not_host_names_are_refused() {
        for good in ["pypi.org", "*", "10.0.0.5", "localhost", "example.com."] {
            assert!(valid_host(good), "{good}");
        }
        for bad in [
            "",
            ".",
            "http://pypi.org",
            "pypi.org:443",
            "a b",
            "*.pypi.org",
            "u@host",
            "[::1]",
        ] {
            assert!(!valid_host(bad), "{bad:?}");
        }
    }

    #[test]
    fn only_public_addresses_count_as_the_internet() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "192.0.2.1",
            "198.18.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:8.8.8.8",
            "64:ff9b::a00:1",
            "2002::1",
        ] {
            let ip: IpAddr = private.parse().unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
            assert!(!public(ip), "{private}");
        }
        for global in [
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "2606:4700::1111",
            "2a00:1450::1",
        ] {
            let ip: IpAddr = global.parse().unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
            assert!(public(ip), "{global}");
        }
    }
}
