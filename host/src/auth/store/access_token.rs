//! [`AccessToken`]: the current sign-in's access token for a server, as a request carries it,
//! read straight from the file. A signed-in connect sends it without rmcp's
//! `AuthorizationManager` (`auth/stored_token.rs`), which is only built for a refresh.

use std::sync::Arc;

use oauth2::TokenResponse as _;

use super::file::CredentialsFile;
use super::format::{At, Doc, read_cached, unchanged};
use crate::config::EditError;

/// rmcp's proactive refresh buffer (`AuthorizationManager::REFRESH_BUFFER_SECS`): a token is
/// due once less than `min(this, expires_in / 2)` seconds (at least one) remain, so a
/// short-lived token is not refreshed on every request and an expired one always is.
const REFRESH_BUFFER_SECS: u64 = 30;

/// One version of the current sign-in's access token. No `Debug`: it is the token.
#[derive(Clone)]
pub struct AccessToken {
    secret: String,
    /// Whether it is bound to the entry's DPoP key.
    pub bound: bool,
    expires_in: Option<u64>,
    received_at: Option<u64>,
    /// The version of the file it was read from: the file is unchanged while
    /// [`read_cached`] still answers with this very `Arc`.
    read_from: Arc<Doc>,
}

impl AccessToken {
    /// The token itself, for the `Authorization` header.
    pub fn secret(&self) -> &str {
        &self.secret
    }

    /// Whether it must be refreshed before use at `now` (seconds since 1970), by rmcp's rule
    /// (`get_access_token`). A token whose lifetime or issue time is unknown never is: the
    /// server's 401 says when it is spent.
    pub fn due(&self, now: u64) -> bool {
        let (Some(expires_in), Some(received_at)) = (self.expires_in, self.received_at) else {
            return false;
        };
        let remaining = expires_in.saturating_sub(now.saturating_sub(received_at));
        remaining < REFRESH_BUFFER_SECS.min(expires_in / 2).max(1)
    }
}

impl CredentialsFile {
    /// The current sign-in's access token for `url`; `None` when there is none (never signed
    /// in, signed out, or a refresh token the server rejected).
    pub fn access_token(&self, url: &str) -> Result<Option<AccessToken>, EditError> {
        let doc = read_cached(&self.path)?;
        let at = At { path: &self.path, url };
        let Some((issuer, entry)) = at.current(&doc)? else { return Ok(None) };
        let entry = at.parse_entry(issuer, entry)?;
        let Some(token) = entry.token else { return Ok(None) };
        Ok(Some(AccessToken {
            secret: token.access_token().secret().clone(),
            bound: entry.bound,
            expires_in: entry.expires_in,
            received_at: entry.received_at,
            read_from: doc.clone(),
        }))
    }

    /// Whether the file is still the version `token` was read from: one `stat`, no read. A
    /// file written in the last moments is never taken as unchanged (`file_stamp`).
    pub fn unchanged_since(&self, token: &AccessToken) -> bool {
        unchanged(&self.path).is_some_and(|doc| Arc::ptr_eq(&doc, &token.read_from))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rmcp::transport::auth::CredentialStore as _;

    use super::super::test_support::{ISSUER_A, URL, creds};
    use super::*;

    fn token(expires_in: Option<u64>, received_at: Option<u64>) -> AccessToken {
        AccessToken {
            secret: "a0".into(),
            bound: false,
            expires_in,
            received_at,
            read_from: Arc::new(Doc::new()),
        }
    }

    #[test]
    fn due_by_rmcps_rule() {
        let hour = token(Some(3600), Some(1_000));
        assert!(!hour.due(1_000));
        assert!(!hour.due(1_000 + 3600 - 30), "30 s left: not yet");
        assert!(hour.due(1_000 + 3600 - 29));
        assert!(hour.due(1_000 + 7200), "long expired");
        let short = token(Some(2), Some(1_000));
        assert!(!short.due(1_000), "half its life is the buffer, at least a second");
        assert!(short.due(1_002));
        assert!(!token(None, Some(1_000)).due(u64::MAX), "unknown lifetime: the server says");
        assert!(!token(Some(60), None).due(u64::MAX));
    }

    #[tokio::test]
    async fn read_from_the_file_and_unchanged_until_it_is_written() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let path = tmp.path().join("credentials.json");
        let file = CredentialsFile::new(path.clone());
        assert!(file.access_token(URL)?.is_none());
        file.for_server(URL).save(creds("client-1", Some(ISSUER_A), "a0", "r0")?).await?;
        // Aged past file_stamp's window, so the version read is kept.
        crate::file_stamp::backdate(&path, Duration::from_secs(60));
        let token = file.access_token(URL)?.ok_or_else(|| anyhow::anyhow!("no token"))?;
        assert_eq!((token.secret(), token.bound), ("a0", false));
        assert_eq!((token.expires_in, token.received_at), (Some(3600), Some(1_000)));
        assert!(file.unchanged_since(&token));

        file.for_server(URL).save(creds("client-1", Some(ISSUER_A), "a1", "r1")?).await?;
        assert!(!file.unchanged_since(&token), "written since");
        let again = file.access_token(URL)?.ok_or_else(|| anyhow::anyhow!("no token"))?;
        assert_eq!(again.secret(), "a1");
        Ok(())
    }
}
