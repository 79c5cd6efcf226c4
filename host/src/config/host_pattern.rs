//! Host grants: the `scheme://host:port` patterns of `grants.hosts`, parsed once and checked
//! in one place for raw sockets and for outgoing HTTP. In `config` so the grant commands refuse a
//! pattern with exactly the words and the rule the sandbox (`plugin/sandbox.rs`) reads it by.

use std::net::{IpAddr, SocketAddr};

use crate::config::ConfigError;

/// One parsed `grants.hosts` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostPattern {
    /// Lower-case scheme (`tcp`, `udp`, `http`, `https`, `ws`, …).
    pub scheme: String,
    /// An IP, an exact name, or `*.suffix`.
    pub host: HostMatch,
    /// `None` for `*`.
    pub port: Option<u16>,
}

/// How the host part of a pattern matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HostMatch {
    /// An IP literal.
    Ip(IpAddr),
    /// An exact DNS name (lower case).
    Name(String),
    /// `*.suffix`: any name with at least one label before `.suffix` (lower case).
    AnyLabel(String),
}

impl HostPattern {
    /// Parses `scheme://host:port`; the port may be `*`, or omitted for the scheme's default.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let bad =
            |why: &str| ConfigError(format!("bad host grant {text:?}: {why} (expected scheme://host:port)"));
        let (scheme, rest) = text.split_once("://").ok_or_else(|| bad("no scheme"))?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme.is_empty() || rest.is_empty() || rest.contains('/') {
            return Err(bad("no host, or a path"));
        }
        let (host, port) = match rest.strip_prefix('[') {
            Some(v6) => {
                let (ip, after) = v6.split_once(']').ok_or_else(|| bad("unclosed ["))?;
                (ip, after.strip_prefix(':'))
            }
            None => match rest.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (rest, None),
            },
        };
        let port = match port {
            Some("*") => None,
            Some(p) => Some(p.parse::<u16>().map_err(|_| bad("bad port"))?),
            None => Some(default_port(&scheme).ok_or_else(|| bad("no port and no default for this scheme"))?),
        };
        let host = host.to_ascii_lowercase();
        let host = if let Ok(ip) = host.parse::<IpAddr>() {
            HostMatch::Ip(ip)
        } else if let Some(suffix) = host.strip_prefix("*.") {
            HostMatch::AnyLabel(suffix.to_string())
        } else if host.is_empty() || host.contains('*') {
            return Err(bad("`*` only as the whole leading label"));
        } else {
            HostMatch::Name(host)
        };
        Ok(Self { scheme, host, port })
    }

    /// Whether a URL-level request (`scheme`, host name or IP text, port) is granted.
    pub fn allows_url(&self, scheme: &str, host: &str, port: u16) -> bool {
        if !self.scheme.eq_ignore_ascii_case(scheme) || self.port.is_some_and(|p| p != port) {
            return false;
        }
        let host = host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        match &self.host {
            HostMatch::Ip(ip) => host.parse::<IpAddr>().is_ok_and(|h| same_ip(h, *ip)),
            HostMatch::Name(_) | HostMatch::AnyLabel(_) => self.names(&host),
        }
    }

    /// Whether this pattern names the DNS name `host` (compared without case), exactly or under
    /// its `*.` wildcard, whatever its scheme and port: the rule for the guest's name lookups,
    /// which carry neither. An IP pattern names no host.
    pub fn names(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        match &self.host {
            HostMatch::Ip(_) => false,
            HostMatch::Name(name) => *name == host,
            HostMatch::AnyLabel(suffix) => {
                host.strip_suffix(suffix.as_str()).is_some_and(|head| head.len() > 1 && head.ends_with('.'))
            }
        }
    }

    /// Whether this pattern applies to raw sockets of this protocol: `udp://` grants UDP, every
    /// other scheme grants TCP (HTTP, WebSocket and TLS all ride on TCP).
    pub fn covers_socket(&self, udp: bool) -> bool {
        (self.scheme == "udp") == udp
    }

    /// Whether the socket address is granted, for patterns whose host is an IP or `localhost`.
    /// Names are resolved by the caller (see `sandbox`).
    pub fn allows_ip(&self, addr: SocketAddr) -> bool {
        if self.port.is_some_and(|p| p != addr.port()) {
            return false;
        }
        match &self.host {
            HostMatch::Ip(ip) => same_ip(addr.ip(), *ip),
            HostMatch::Name(name) if name == "localhost" => addr.ip().is_loopback(),
            HostMatch::Name(_) | HostMatch::AnyLabel(_) => false,
        }
    }
}

/// `scheme://host:port` for a URL, the port defaulted for `http`/`ws` (80) and
/// `https`/`wss` (443); `None` when the URL has no host or no port can be known. A transport
/// connection is granted its server's origin in this form.
pub(crate) fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let authority = rest.split(['/', '?', '#']).next()?;
    // Credentials in the URL are not part of the origin.
    let authority = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (ip, after) = v6.split_once(']')?;
            (format!("[{ip}]"), after.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        },
    };
    if host.is_empty() || host.contains('*') {
        return None;
    }
    let port = match port {
        Some(p) => p.parse::<u16>().ok()?,
        None => default_port(&scheme)?,
    };
    Some(format!("{scheme}://{}:{port}", host.to_ascii_lowercase()))
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    }
}

/// IPv4 and its IPv4-mapped IPv6 form are the same host.
fn same_ip(a: IpAddr, b: IpAddr) -> bool {
    a.to_canonical() == b.to_canonical()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> HostPattern {
        HostPattern::parse(s).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn parses_ports_wildcards_and_defaults() {
        assert_eq!(p("https://api.example.com").port, Some(443));
        assert_eq!(p("tcp://127.0.0.1:*").port, None);
        assert_eq!(p("http://[::1]:8080").host, HostMatch::Ip("::1".parse().unwrap_or_else(|_| panic!())));
        assert_eq!(p("https://*.example.com:443").host, HostMatch::AnyLabel("example.com".into()));
        assert!(HostPattern::parse("tcp://127.0.0.1").is_err());
        assert!(HostPattern::parse("example.com:80").is_err());
        assert!(HostPattern::parse("https://a.*.com:443").is_err());
        assert!(HostPattern::parse("https://x.com:443/path").is_err());
    }

    #[test]
    fn url_matching_respects_scheme_port_and_label_wildcard() {
        let any = p("https://*.example.com:443");
        assert!(any.allows_url("https", "api.example.com", 443));
        assert!(any.allows_url("https", "a.b.example.com", 443));
        assert!(!any.allows_url("https", "example.com", 443));
        assert!(!any.allows_url("https", "evilexample.com", 443));
        assert!(!any.allows_url("http", "api.example.com", 443));
        assert!(!any.allows_url("https", "api.example.com", 8443));
        let star_port = p("http://localhost:*");
        assert!(star_port.allows_url("http", "LOCALHOST", 1234));
    }

    #[test]
    fn name_lookups_match_exact_names_and_wildcards_only() {
        let exact = p("https://api.example.com:443");
        assert!(exact.names("api.example.com"));
        assert!(exact.names("API.Example.COM"));
        assert!(!exact.names("localhost"));
        assert!(!exact.names("secret-token-abc123.example.org"));
        assert!(!exact.names("api.example.com."));
        let any = p("tcp://*.example.com:*");
        assert!(any.names("a.example.com"));
        assert!(!any.names("example.com"));
        assert!(!any.names("evilexample.com"));
        assert!(!p("tcp://127.0.0.1:80").names("127.0.0.1"));
    }

    #[test]
    fn ip_matching_for_sockets() {
        let lo = p("tcp://127.0.0.1:8080");
        assert!(lo.allows_ip("127.0.0.1:8080".parse().unwrap_or_else(|_| panic!())));
        assert!(!lo.allows_ip("127.0.0.1:8081".parse().unwrap_or_else(|_| panic!())));
        assert!(lo.allows_ip("[::ffff:127.0.0.1]:8080".parse().unwrap_or_else(|_| panic!())));
        assert!(p("tcp://localhost:*").allows_ip("[::1]:9".parse().unwrap_or_else(|_| panic!())));
        assert!(!p("udp://127.0.0.1:53").covers_socket(false));
        assert!(p("https://x.com:443").covers_socket(false));
    }

    #[test]
    fn origins_keep_scheme_host_and_port() {
        assert_eq!(origin_of("tcp://127.0.0.1:9000").as_deref(), Some("tcp://127.0.0.1:9000"));
        assert_eq!(origin_of("http://Example.com/sse").as_deref(), Some("http://example.com:80"));
        assert_eq!(origin_of("wss://x.io/a?b=c").as_deref(), Some("wss://x.io:443"));
        assert_eq!(origin_of("ws://[::1]:8080/mcp").as_deref(), Some("ws://[::1]:8080"));
        assert_eq!(origin_of("http://user:pw@h.io:81/").as_deref(), Some("http://h.io:81"));
        assert_eq!(origin_of("tcp://host-without-port"), None);
        assert_eq!(origin_of("not a url"), None);
        assert_eq!(origin_of("http://*.evil.com/"), None);
    }

    #[test]
    fn every_origin_is_a_valid_grant() {
        for url in ["tcp://127.0.0.1:9000", "http://localhost/sse", "ws://[::1]:8080/mcp"] {
            let origin = origin_of(url).unwrap_or_default();
            let pattern = HostPattern::parse(&origin).unwrap_or_else(|e| panic!("{e}"));
            assert!(pattern.port.is_some(), "{origin}");
        }
    }
}
