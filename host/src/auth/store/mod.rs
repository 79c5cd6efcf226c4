//! `credentials.json`: what OAuth sign-ins to HTTP servers earned, kept for rmcp's
//! `AuthorizationManager` through its [`CredentialStore`](rmcp::transport::auth::CredentialStore)
//! trait ([`ServerCredentials`](server_credentials::ServerCredentials)).
//!
//! `format.rs` reads the layout below and names a place in it; `file.rs` is the
//! [`CredentialsFile`] and what a sign-in keeps beside the tokens; `lock.rs` the one lock every
//! write and refresh takes; `server_credentials.rs` rmcp's store; `signed_in.rs` what
//! `mcp get` shows; `access_token.rs` the token a request carries.
//!
//! ```json
//! {"version": 1, "servers": {"https://mcp.example.com/mcp": {
//!   "current": "https://auth.example.com",
//!   "issuers": {"https://auth.example.com": {
//!     "clientId": "…", "clientSecret": "…",
//!     "token": {"access_token": "…", "token_type": "bearer", "expires_in": 3600, "refresh_token": "…"},
//!     "grantedScopes": ["read"], "receivedAt": 1767225600,
//!     "dpopKey": {"alg": "ES256", "pkcs8": "…"}}}}}}
//! ```
//!
//! - Entries are keyed by the authorization server's issuer as well as the server's URL: a
//!   server that moves to another authorization server gets a fresh entry, so a client id
//!   registered at the old one is never handed to the new one. `current` is the issuer of the
//!   last sign-in (`""`: the server's metadata named none).
//! - `dpopKey`: the private key a DPoP sign-in bound its tokens to (`auth/dpop/`); only beside a
//!   token whose `token_type` is `DPoP`. A new sign-in replaces or removes it, and it goes with
//!   the entry.
//! - `wantedScopes` (beside `current`): scopes the server refused a request for
//!   (`403 insufficient_scope`) in a process that does not sign in by itself (everything but
//!   the interactive session); the next `mcp login` asks for them with those granted before.
//! - Every write goes through `config/write.rs`: the lock `credentials.json.lock`, the file
//!   re-read under it, unknown fields kept, a temporary file, fsync, rename; owner-only (0600)
//!   whatever the umask or the old file allowed. A malformed file is an error naming
//!   `path:line:column` and is never overwritten.
//! - Every read goes to the file, or to what was parsed from it while the file is unchanged
//!   (`file_stamp`: one `stat`): another toolport process may have rotated the refresh token
//!   since, and with many providers the old one is then spent. A request's access token
//!   ([`AccessToken`](access_token::AccessToken)) is checked against the file the same way.
//! - Refreshes are serialized across processes by the same lock: see
//!   [`ServerCredentials`](server_credentials::ServerCredentials)'s refresh guard (`lock.rs`).

mod access_token;
mod file;
mod format;
mod lock;
mod server_credentials;
mod signed_in;
#[cfg(test)]
mod test_support;

pub use access_token::AccessToken;
pub use file::CredentialsFile;
pub use server_credentials::ServerCredentials;
pub use signed_in::SignedIn;
