//! `--auth oidc`'s options, checked before serve starts.

use anyhow::{Context as _, bail};
use url::Url;

/// How `--auth oidc` checks tokens (`--issuer`, `--audience`, `--resource`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcOptions {
    /// The issuer, exactly as tokens name it in `iss` (`https://login.example.com/tenant`).
    pub issuer: String,
    /// What a token's `aud` must contain: this server's identifier at the issuer (RFC 8707).
    pub audience: String,
    /// This server's resource URL, as the protected-resource metadata and the 401's
    /// `resource_metadata` name it (`https://gw.example.com/mcp`). When not given: the audience
    /// when that is an `http(s)` URL, else `http://<the request's Host>/mcp` (what a client
    /// reaching serve directly uses; behind a proxy that ends TLS, give it).
    pub resource: Option<String>,
}

impl OidcOptions {
    /// Refuses what cannot work: an issuer that is not a URL, or plain http off this machine
    /// (the keys that decide every caller would come unauthenticated); an empty audience; a
    /// resource that is not an http(s) URL.
    pub fn check(&self) -> anyhow::Result<()> {
        let issuer =
            Url::parse(&self.issuer).with_context(|| format!("--issuer {} is not a URL", self.issuer))?;
        match issuer.scheme() {
            "https" => {}
            "http" if is_loopback(&issuer) => {}
            "http" => bail!(
                "--issuer {} is plain http: an issuer off this machine must be https (its keys decide \
                 who may call)",
                self.issuer
            ),
            _ => bail!("--issuer {} is not an http(s) URL", self.issuer),
        }
        if self.audience.trim().is_empty() {
            bail!("--audience is empty: give the identifier the issuer puts in this server's tokens' `aud`");
        }
        if let Some(resource) = &self.resource {
            let parsed =
                Url::parse(resource).with_context(|| format!("--resource {resource} is not a URL"))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                bail!("--resource {resource} is not an http(s) URL");
            }
        }
        Ok(())
    }

    /// The resource URL given, else the audience when it is one.
    pub fn fixed_resource(&self) -> Option<String> {
        self.resource.clone().or_else(|| {
            Url::parse(&self.audience)
                .ok()
                .filter(|u| matches!(u.scheme(), "http" | "https"))
                .map(|_| self.audience.clone())
        })
    }
}

/// Whether `url`'s host is this machine.
fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(issuer: &str, audience: &str) -> OidcOptions {
        OidcOptions { issuer: issuer.into(), audience: audience.into(), resource: None }
    }

    #[test]
    fn the_issuer_must_be_https_off_this_machine() {
        assert!(options("https://login.example.com", "a").check().is_ok());
        assert!(options("http://127.0.0.1:8080", "a").check().is_ok());
        assert!(options("http://localhost:8080", "a").check().is_ok());
        let plain = options("http://login.example.com", "a").check().map_err(|e| e.to_string());
        assert_eq!(
            plain,
            Err("--issuer http://login.example.com is plain http: an issuer off this machine must be \
                 https (its keys decide who may call)"
                .into())
        );
        assert_eq!(
            options("login", "a").check().map_err(|e| e.to_string()),
            Err("--issuer login is not a URL".into())
        );
        assert!(options("https://login.example.com", " ").check().is_err());
    }

    #[test]
    fn the_resource_is_the_audience_when_that_is_a_url() {
        assert_eq!(
            options("https://i", "https://gw.example/mcp").fixed_resource().as_deref(),
            Some("https://gw.example/mcp")
        );
        assert_eq!(options("https://i", "api://toolport").fixed_resource(), None);
        let given = OidcOptions { resource: Some("https://gw/mcp".into()), ..options("https://i", "x") };
        assert_eq!(given.fixed_resource().as_deref(), Some("https://gw/mcp"));
    }
}
