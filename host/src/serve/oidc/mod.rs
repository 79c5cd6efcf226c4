//! `serve --http --auth oidc`: serve as an OAuth 2.1 resource server (the MCP authorization
//! spec's server side). Every request carries a JWT access token from one issuer; it is
//! checked here against the issuer's published keys and becomes the request's
//! [`Caller`](super::Caller).
//!
//! - `discovery.rs`: where the issuer publishes its keys (OpenID discovery, else RFC 8414);
//! - `keys.rs`: the keys, cached by `kid`, refreshed, re-fetched for an unknown `kid` at most
//!   once per [`keys::REFETCH_AT_MOST_EVERY`];
//! - `token.rs`: the checks (asymmetric signature, `iss`, `aud`, `exp`, `nbf`) and the caller;
//! - `metadata.rs`: RFC 9728 protected-resource metadata and the 401's `WWW-Authenticate`.
//!
//! The issuer is asked at start, in the background: serve listens at once, and until the keys
//! are known a request with a token is answered 503 naming why (the issuer cannot be reached,
//! its document is wrong, …), retried with a backoff. An issuer down at start so does not end
//! serve; the keys it fetched later are kept while a refresh fails.

mod discovery;
mod keys;
mod metadata;
mod token;

use std::sync::Arc;

use anyhow::{Context as _, bail};
use tokio_util::sync::CancellationToken;
use url::Url;

use super::caller::Caller;
pub use metadata::{refused, router};

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
    fn fixed_resource(&self) -> Option<String> {
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

/// Why a request was not let in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No bearer token: 401, pointing at the metadata.
    Missing,
    /// A token that does not pass, and why (never the token itself): 401 `invalid_token`.
    Invalid(String),
    /// The issuer's keys are not known yet, and why: 503.
    Unavailable(String),
}

/// The checker of one issuer's tokens, its keys kept fresh by a task of its own.
pub struct Verifier {
    options: OidcOptions,
    keys: Arc<keys::Keys>,
}

impl Verifier {
    /// Starts asking the issuer for its keys (in the background, until `stop`).
    pub fn start(options: OidcOptions, stop: CancellationToken) -> anyhow::Result<Arc<Self>> {
        let keys = Arc::new(keys::Keys::new(&options.issuer)?);
        tokio::spawn(keys.clone().keep_fresh(stop));
        Ok(Arc::new(Self { options, keys }))
    }

    /// The caller `bearer` (the token of `Authorization: Bearer`, when there was one) names.
    pub async fn verify(&self, bearer: Option<&str>) -> Result<Caller, Refusal> {
        let Some(token) = bearer else { return Err(Refusal::Missing) };
        token::verify(token, &self.keys, &self.options.issuer, &self.options.audience).await
    }

    /// The options it checks with.
    pub fn options(&self) -> &OidcOptions {
        &self.options
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
