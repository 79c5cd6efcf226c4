//! Which addresses the OAuth requests toolport sends itself may reach (the `jwt_bearer`
//! grant's issuer metadata and token request, and every request of a person's sign-in and its
//! refreshes through `dpop/token_client.rs`; rmcp sends the machine grants'): rmcp 3.11's rule for its
//! own OAuth client, restated here because rmcp keeps it private
//! (`transport/auth/metadata_resolver.rs`, `MetadataAddressResolver` and `AddressClass::of`,
//! over `AuthorizationManager::is_disallowed_metadata_ipv4`/`_ipv6`). Keep the two in step.
//!
//! The rule, relative to the server's own url (the base rmcp's `AuthorizationManager::new`
//! gets from toolport for every other OAuth request of that server):
//! - a public address is always reached;
//! - a loopback address only for a server on loopback, a private one (10/8, 172.16/12,
//!   192.168/16, 100.64/10, fc00::/7) only for a server whose url is a private IP literal;
//!   what a name resolves to never widens this (the server may control its own DNS);
//! - link-local (169.254/16 and fe80::/10, where cloud instance metadata answers),
//!   unspecified, broadcast, multicast and reserved addresses never, nor the cloud metadata
//!   names (`metadata.google.internal`, …);
//! - IPv4 addresses inside IPv6 ones (mapped, compatible, NAT64, 6to4) count as the IPv4 one.
//!
//! One difference: rmcp also lets a request reach the base url's own IP literal whatever its
//! class. Here the base is the server and the requests go to its authorization server, so a
//! server at a link-local address earns that address no exception.
//!
//! It holds for the names a request resolves (a reqwest resolver that drops every address the
//! rule refuses) and for IP literals, which reqwest connects to without resolving. A proxy
//! named by `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY` is not filtered, as in rmcp: the proxy
//! resolves the target. Redirects are followed only where rmcp's client follows them, with the
//! rule checked at each hop. And `http` is used only between loopback
//! hosts (rmcp's `is_allowed_client_credentials_endpoint`): a token is never sent in clear text
//! across a network.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs as _};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

/// rmcp's `CLOUD_METADATA_HOSTS`: names that reach a cloud's instance metadata service.
const CLOUD_METADATA_HOSTS: [&str; 3] = ["metadata", "metadata.google.internal", "metadata.azure.internal"];
/// The proxy variables reqwest reads, whose hosts are not filtered (rmcp's `PROXY_ENV_VARS`).
const PROXY_ENV_VARS: [&str; 6] =
    ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"];

/// What kind of address an IP is, for the rule (rmcp's `AddressClass`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressClass {
    Public,
    Loopback,
    Private,
    /// Link-local, unspecified, broadcast, multicast, reserved: never reached.
    Blocked,
}

impl AddressClass {
    /// The class of `ip` (rmcp's `AddressClass::of`).
    pub fn of(ip: IpAddr) -> Self {
        let ip = match ip {
            IpAddr::V6(v6) => embedded_ipv4(v6).map_or(IpAddr::V6(v6), IpAddr::V4),
            v4 => v4,
        };
        match ip {
            IpAddr::V4(v4) if !disallowed_ipv4(v4) => Self::Public,
            IpAddr::V4(v4) if v4.is_loopback() => Self::Loopback,
            IpAddr::V4(v4) if v4.is_private() || shared_ipv4(v4) => Self::Private,
            IpAddr::V4(_) => Self::Blocked,
            IpAddr::V6(v6) if !disallowed_ipv6(v6) => Self::Public,
            IpAddr::V6(v6) if v6.is_loopback() => Self::Loopback,
            IpAddr::V6(v6) if (v6.segments()[0] & 0xfe00) == 0xfc00 => Self::Private,
            IpAddr::V6(_) => Self::Blocked,
        }
    }
}

/// 100.64.0.0/10, carrier-grade NAT's shared space: private in rmcp's rule.
fn shared_ipv4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    a == 100 && (64..=127).contains(&b)
}

/// rmcp's `is_disallowed_metadata_ipv4`: every IPv4 address that is not public.
fn disallowed_ipv4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_unspecified()
        || ip.is_multicast()
        || a == 0
        || shared_ipv4(ip)
        || (a == 198 && matches!(b, 18 | 19))
}

/// rmcp's `embedded_ipv4`: the IPv4 address inside an IPv4-mapped, IPv4-compatible, NAT64
/// (`64:ff9b::/96`) or 6to4 (`2002::/16`) one.
fn embedded_ipv4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let [a, b, c, d, e, f, g, h] = ip.segments();
    let low = Ipv4Addr::from((u32::from(g) << 16) | u32::from(h));
    match [a, b, c, d, e, f] {
        [0, 0, 0, 0, 0, 0xffff] | [0x64, 0xff9b, 0, 0, 0, 0] => Some(low),
        [0, 0, 0, 0, 0, 0] if !ip.is_loopback() && !ip.is_unspecified() => Some(low),
        [0x2002, ..] => Some(Ipv4Addr::from((u32::from(b) << 16) | u32::from(c))),
        _ => None,
    }
}

/// rmcp's `is_disallowed_metadata_ipv6`: every IPv6 address that is not public.
fn disallowed_ipv6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_ipv4(ip) {
        return disallowed_ipv4(v4);
    }
    let s = ip.segments();
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (s[0] & 0xffc0) == 0xfe80
        || (s[0] & 0xfe00) == 0xfc00
        || s[..2] == [0x2001, 0]
        || s[..3] == [0x64, 0xff9b, 1]
}

/// Whether `host` is this machine by its name or address (rmcp's `is_loopback_metadata_host`).
pub fn is_loopback_host(host: Host<&str>) -> bool {
    match host {
        Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        Host::Ipv4(ip) => ip.is_loopback(),
        Host::Ipv6(ip) => ip.is_loopback(),
    }
}

/// What a refused address is, for the message.
fn what_is(ip: IpAddr) -> &'static str {
    let link_local = match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => {
            embedded_ipv4(v6).is_some_and(|v4| v4.is_link_local()) || (v6.segments()[0] & 0xffc0) == 0xfe80
        }
    };
    match AddressClass::of(ip) {
        _ if link_local => "a link-local address (where cloud instance metadata answers)",
        AddressClass::Loopback => "a loopback address, reached only for a server on this machine",
        AddressClass::Private => {
            "a private address, reached only for a server whose url is a private address"
        }
        AddressClass::Public => "a public address",
        AddressClass::Blocked => "a reserved address",
    }
}

/// The rule for the OAuth requests of one server.
#[derive(Debug, Clone)]
pub struct AddressPolicy {
    /// The classes beyond public that the server's url allows (rmcp's `base_classes`).
    allowed: Vec<AddressClass>,
    /// Whether the server is on this machine (what `http` needs).
    server_is_local: bool,
}

impl AddressPolicy {
    /// The rule for the server at `server` (its url, `${VAR}`s expanded).
    pub fn for_server(server: &Url) -> Self {
        let allowed = match server.host() {
            Some(Host::Ipv4(ip)) => vec![AddressClass::of(IpAddr::V4(ip))],
            Some(Host::Ipv6(ip)) => vec![AddressClass::of(IpAddr::V6(ip))],
            Some(host) if is_loopback_host(host.clone()) => vec![AddressClass::Loopback],
            _ => Vec::new(),
        };
        Self { allowed, server_is_local: server.host().is_some_and(is_loopback_host) }
    }

    fn allows(&self, class: AddressClass) -> bool {
        match class {
            AddressClass::Public => true,
            AddressClass::Loopback | AddressClass::Private => self.allowed.contains(&class),
            AddressClass::Blocked => false,
        }
    }

    /// `text` (what `what` names, e.g. `oauth.tokenEndpoint`) as a URL a token may be sent
    /// to: `https` (or `http` between loopback hosts) to a host the rule allows by its name or
    /// its literal address. What the name resolves to is checked by [`Self::client`].
    pub fn check(&self, what: &str, text: &str) -> Result<Url> {
        let url = Url::parse(text).map_err(|e| anyhow!("{what} {text} is not a URL ({e})"))?;
        let host = url.host().ok_or_else(|| anyhow!("{what} {text} names no host"))?;
        // Where before how: a metadata address is the reason to give, whatever the scheme.
        let ip = match &host {
            Host::Ipv4(ip) => Some(IpAddr::V4(*ip)),
            Host::Ipv6(ip) => Some(IpAddr::V6(*ip)),
            Host::Domain(name) => {
                let name = normalize_host(name);
                if CLOUD_METADATA_HOSTS.contains(&name.as_str()) {
                    bail!("{what} {text} is refused: {name} is a cloud instance metadata service");
                }
                None
            }
        };
        if let Some(ip) = ip.filter(|ip| !self.allows(AddressClass::of(*ip))) {
            bail!("{what} {text} is refused: {ip} is {}", what_is(ip));
        }
        match url.scheme() {
            "https" => Ok(url),
            "http" if self.server_is_local && is_loopback_host(host) => Ok(url),
            "http" => bail!(
                "{what} {text} is plain http: the token is sent only over https (http only between \
                 a server and an authorization server both on this machine)"
            ),
            other => bail!("{what} {text} is not a web address ({other}:)"),
        }
    }

    /// A client that reaches only what the rule allows: names resolved through [`Filtered`],
    /// redirects not followed (a 3xx is an answer, not a way around the rule), `timeout` on
    /// every request.
    pub fn client(&self, timeout: Duration) -> Result<reqwest::Client> {
        self.client_with(reqwest::redirect::Policy::none(), timeout)
    }

    /// [`Self::client`] with another redirect policy (one that checks each hop with
    /// [`Self::allows_url`]: names are checked by the resolver, IP literals are not resolved).
    pub fn client_with(
        &self,
        redirect: reqwest::redirect::Policy,
        timeout: Duration,
    ) -> Result<reqwest::Client> {
        let proxies = PROXY_ENV_VARS.iter().filter_map(|v| std::env::var(v).ok()).filter_map(|proxy| {
            let proxy = if proxy.contains("://") { proxy } else { format!("http://{proxy}") };
            Url::parse(&proxy).ok()?.host_str().map(normalize_host)
        });
        let resolver = Filtered { policy: self.clone(), unfiltered: proxies.collect::<Vec<_>>().into() };
        super::tls::client_builder()
            .redirect(redirect)
            .timeout(timeout)
            .dns_resolver(resolver)
            .build()
            .context("cannot build the HTTP client")
    }

    /// Whether the host of `url`, when it is an IP literal, is one the rule allows (rmcp's
    /// `allows_url`); a name is checked when it resolves.
    pub fn allows_url(&self, url: &Url) -> bool {
        match url.host() {
            Some(Host::Ipv4(ip)) => self.allows(AddressClass::of(IpAddr::V4(ip))),
            Some(Host::Ipv6(ip)) => self.allows(AddressClass::of(IpAddr::V6(ip))),
            _ => true,
        }
    }

    /// `resolved` (the addresses of `host`) without those the rule refuses; an error naming
    /// what it resolved to when none is left.
    fn filter(&self, host: &str, resolved: Vec<SocketAddr>) -> Result<Vec<SocketAddr>, String> {
        let refused: Vec<IpAddr> =
            resolved.iter().map(SocketAddr::ip).filter(|ip| !self.allows(AddressClass::of(*ip))).collect();
        let kept: Vec<SocketAddr> =
            resolved.into_iter().filter(|a| self.allows(AddressClass::of(a.ip()))).collect();
        match (kept.is_empty(), refused.first()) {
            (false, _) => Ok(kept),
            (true, Some(ip)) => {
                Err(format!("{host} resolves to {ip}, which is refused: {ip} is {}", what_is(*ip)))
            }
            (true, None) => Err(format!("{host} resolves to no address")),
        }
    }
}

fn normalize_host(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// The system resolver with [`AddressPolicy`]'s rule applied to its answers (rmcp's
/// `MetadataAddressResolver` over its `SystemResolver`).
struct Filtered {
    policy: AddressPolicy,
    /// Proxy hosts, resolved as they are.
    unfiltered: Arc<[String]>,
}

impl Resolve for Filtered {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        let unfiltered = self.unfiltered.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let lookup = host.clone();
            let resolved: Vec<SocketAddr> =
                tokio::task::spawn_blocking(move || (lookup.as_str(), 0).to_socket_addrs()).await??.collect();
            if unfiltered.contains(&normalize_host(&host)) {
                return Ok(Box::new(resolved.into_iter()) as Addrs);
            }
            let kept = policy.filter(&host, resolved)?;
            Ok(Box::new(kept.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(ip: &str) -> AddressClass {
        AddressClass::of(ip.parse().unwrap_or_else(|e| panic!("{ip}: {e}")))
    }

    fn policy(server: &str) -> AddressPolicy {
        AddressPolicy::for_server(&Url::parse(server).unwrap_or_else(|e| panic!("{server}: {e}")))
    }

    /// rmcp's own cases (`metadata_resolver.rs`, `classifies_addresses`).
    #[test]
    fn addresses_are_classed_as_rmcp_classes_them() {
        for (ip, want) in [
            ("93.184.216.34", AddressClass::Public),
            ("2606:4700::1111", AddressClass::Public),
            ("127.0.0.1", AddressClass::Loopback),
            ("::1", AddressClass::Loopback),
            ("::ffff:127.0.0.1", AddressClass::Loopback),
            ("10.0.0.1", AddressClass::Private),
            ("172.16.0.1", AddressClass::Private),
            ("192.168.1.1", AddressClass::Private),
            ("100.64.0.1", AddressClass::Private),
            ("fd00::1", AddressClass::Private),
            ("169.254.169.254", AddressClass::Blocked),
            ("::ffff:169.254.169.254", AddressClass::Blocked),
            ("::169.254.169.254", AddressClass::Blocked),
            ("64:ff9b::a9fe:a9fe", AddressClass::Blocked),
            ("2002:a9fe:a9fe::", AddressClass::Blocked),
            ("fe80::1", AddressClass::Blocked),
            ("0.0.0.0", AddressClass::Blocked),
            ("::", AddressClass::Blocked),
            ("255.255.255.255", AddressClass::Blocked),
            ("224.0.0.1", AddressClass::Blocked),
            ("198.18.0.1", AddressClass::Blocked),
        ] {
            assert_eq!(class(ip), want, "{ip}");
        }
    }

    #[test]
    fn urls_are_checked_by_scheme_name_and_literal_address() {
        let public = policy("https://mcp.example.com/mcp");
        assert!(public.check("oauth.issuer", "https://auth.example.com").is_ok());
        let refused = |p: &AddressPolicy, url: &str| {
            p.check("oauth.tokenEndpoint", url).err().map(|e| e.to_string()).unwrap_or_default()
        };
        assert_eq!(
            refused(&public, "https://169.254.169.254/latest/api/token"),
            "oauth.tokenEndpoint https://169.254.169.254/latest/api/token is refused: 169.254.169.254 is \
             a link-local address (where cloud instance metadata answers)"
        );
        assert!(refused(&public, "https://[::ffff:a9fe:a9fe]/t").contains("link-local"));
        assert!(refused(&public, "https://10.1.2.3/t").contains("10.1.2.3 is a private address"));
        assert!(refused(&public, "https://127.0.0.1/t").contains("127.0.0.1 is a loopback address"));
        assert!(refused(&public, "https://metadata.google.internal/t").contains("cloud instance metadata"));
        assert!(refused(&public, "http://auth.example.com/t").contains("is plain http"));
        assert!(refused(&public, "http://127.0.0.1:9/t").contains("is a loopback address"));
        assert!(refused(&public, "ftp://auth.example.com/t").contains("not a web address"));

        let local = policy("http://127.0.0.1:8080/mcp");
        assert!(local.check("oauth.issuer", "http://127.0.0.1:9000").is_ok());
        assert!(local.check("oauth.issuer", "http://localhost:9000").is_ok());
        assert!(refused(&local, "http://169.254.169.254/t").contains("link-local"));
        assert!(refused(&local, "https://10.0.0.1/t").contains("private address"));
        assert!(refused(&local, "http://auth.example.com/t").contains("is plain http"));

        let private = policy("https://10.0.0.5/mcp");
        assert!(private.check("oauth.issuer", "https://10.0.0.9").is_ok());
        assert!(refused(&private, "https://127.0.0.1/t").contains("loopback"));
        assert!(refused(&private, "https://169.254.169.254/t").contains("link-local"));
    }

    /// What a name resolves to never widens the rule: a public server's name resolving to a
    /// private or link-local address is refused, one good address among bad ones is kept.
    #[test]
    fn resolved_addresses_are_filtered() {
        let addr = |ip: &str| SocketAddr::new(ip.parse().unwrap_or_else(|e| panic!("{ip}: {e}")), 0);
        let public = policy("https://mcp.example.com/mcp");
        assert_eq!(
            public.filter("imds.attacker.test", vec![addr("169.254.169.254")]),
            Err("imds.attacker.test resolves to 169.254.169.254, which is refused: 169.254.169.254 is a \
                 link-local address (where cloud instance metadata answers)"
                .to_string())
        );
        assert!(public.filter("corp", vec![addr("10.0.0.9")]).is_err());
        assert!(public.filter("localhost", vec![addr("127.0.0.1")]).is_err());
        assert_eq!(
            public.filter("mixed", vec![addr("127.0.0.1"), addr("93.184.216.34")]),
            Ok(vec![addr("93.184.216.34")])
        );
        let local = policy("http://localhost:8080/mcp");
        assert_eq!(local.filter("localhost", vec![addr("127.0.0.1")]), Ok(vec![addr("127.0.0.1")]));
        assert!(local.filter("imds", vec![addr("169.254.169.254")]).is_err());
    }
}
