//! The current sign-in for a server, as `mcp get` and `mcp list` show it.

use crate::config::EditError;

use super::file::CredentialsFile;
use super::format::{At, non_empty, read_cached};

/// What `mcp get` and `mcp list` say about a server's sign-in ("oauth: signed in (issuer …,
/// expires …)"): facts about the token, never the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    /// The authorization server that issued the token; `None` when its metadata named none.
    pub issuer: Option<String>,
    /// When the access token expires, in seconds since 1970 (`receivedAt + expires_in`);
    /// `None` when the authorization server did not say.
    pub expires_at: Option<u64>,
    /// Whether toolport can renew the access token without asking the person again.
    pub has_refresh_token: bool,
    /// The scopes granted (what rmcp recorded; empty when unknown).
    pub scopes: Vec<String>,
    /// Whether the token is bound to a key toolport holds (DPoP).
    pub bound: bool,
}

impl CredentialsFile {
    /// The current sign-in for `url`; `None` when there is no token (never signed in, signed
    /// out, or the authorization server changed since).
    pub fn status(&self, url: &str) -> Result<Option<SignedIn>, EditError> {
        let doc = read_cached(&self.path)?;
        let at = At { path: &self.path, url };
        let Some((issuer, entry)) = at.current(&doc)? else { return Ok(None) };
        let entry = at.parse_entry(issuer, entry)?;
        if entry.token.is_none() {
            return Ok(None);
        }
        Ok(Some(SignedIn {
            issuer: non_empty(issuer),
            expires_at: entry.received_at.zip(entry.expires_in).map(|(at, ttl)| at.saturating_add(ttl)),
            has_refresh_token: entry.has_refresh_token,
            scopes: entry.granted_scopes,
            bound: entry.bound,
        }))
    }
}
