//! `serve --http --auth oidc`: serve as an OAuth 2.1 resource server (the MCP authorization
//! spec's server side). Every request carries a JWT access token from one issuer; it is
//! checked here against the issuer's published keys and becomes the request's
//! [`Caller`](crate::serve::Caller).
//!
//! - `options.rs`: `--issuer`, `--audience`, `--resource`, checked before serve starts;
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
mod options;
mod token;

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::serve::Caller;
pub use metadata::{refused, router};
pub use options::OidcOptions;
pub use token::Refusal;

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
    /// Whether the issuer's keys are known, so tokens can be checked (`/readyz`).
    pub fn keys_known(&self) -> bool {
        self.keys.known()
    }

    pub fn options(&self) -> &OidcOptions {
        &self.options
    }
}
