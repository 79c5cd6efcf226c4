//! OAuth 2.1 for remote servers (on rmcp's `auth`): the credential store ([`store`],
//! `<home>/credentials.json`), the person's sign-in ([`sign_in`], with its [`browser`] and
//! loopback [`callback`]), machine-to-machine tokens ([`machine`], and `workload` for the JWT
//! bearer grant, with the address rule of `address_policy`), the HTTP client that signs
//! requests and steps up scopes ([`http_client`], a stored sign-in's token through
//! `stored_token`), and DPoP, which binds a sign-in's tokens to a key of its own (`dpop`).
//!
//! A server needs no configuration to use OAuth: one that answers 401 with a challenge shows
//! "authorization required: run toolport mcp login NAME" until someone does; after that its
//! tokens are used and refreshed without asking. Tokens and secrets never reach output, logs,
//! plugins or ACP: they live only in the store and in requests' `Authorization` headers.

mod address_policy;
pub mod callback;
mod dpop;
pub mod http_client;
pub mod machine;
pub mod sign_in;
mod sign_in_span;
pub mod store;
mod stored_token;
pub(crate) mod tls;
mod workload;

pub use dpop::ProofKey;
pub use http_client::OAuthHttp;
pub use sign_in::{Completion, SignedIn, login, no_login, not_remote};
pub use store::CredentialsFile;

use crate::config::{Grant, ServerDef};

pub use crate::cause::AUTHORIZATION_REQUIRED;

/// The whole error of a server that needs a sign-in: what it is and the command that fixes it.
pub fn sign_in_hint(server: &str) -> String {
    format!("{AUTHORIZATION_REQUIRED}: run toolport mcp login {server}")
}

/// `message` with the fix added when it is a bare [`AUTHORIZATION_REQUIRED`] (what
/// [`crate::cause::deepest_cause`] makes of a 401 or an unanswerable 403), for the server
/// `server` whose definition's grant is `grant` (see [`grant`]): the login command, or for a
/// machine grant, which has nobody to log in, what was refused.
pub fn fix_for(message: String, server: &str, grant: Option<Grant>) -> String {
    if message != AUTHORIZATION_REQUIRED {
        return message;
    }
    match grant.filter(|g| *g != Grant::AuthorizationCode) {
        Some(grant) => format!(
            "{AUTHORIZATION_REQUIRED}: the server refused the token of oauth.grant {}",
            grant.as_str()
        ),
        None => sign_in_hint(server),
    }
}

/// `def`'s OAuth grant, when it names one.
pub fn grant(def: &ServerDef) -> Option<Grant> {
    def.oauth.as_ref().map(|o| o.grant)
}
