//! [`ServerCredentials`]: one server's entry as rmcp's `AuthorizationManager` loads, saves
//! and clears it, through its [`CredentialStore`] trait, and the refresh guard that
//! serializes refreshes across processes.

use async_trait::async_trait;
use rmcp::transport::auth::{AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials};
use serde_json::{Map, Value};

use super::file::CredentialsFile;
use super::format::{At, Doc, existing_mut, non_empty, read_cached, unchanged};
use super::lock::blocking;
use crate::config::ConfigError;
use crate::redact::redact_urls;

/// One server's credentials, as rmcp's `AuthorizationManager` reads and writes them: the
/// `current` issuer's entry.
///
/// `acquire_refresh_guard` takes the file's exclusive lock and holds it until rmcp drops the
/// guard (after the refresh's save): a second process refreshing the same server waits, and
/// its `load` under its own guard then reads the first one's rotated refresh token, never
/// the spent one. While the guard lives, writes through this store (and every clone of its
/// [`CredentialsFile`]) edit under the held lock instead of taking it again.
#[derive(Clone)]
pub struct ServerCredentials {
    file: CredentialsFile,
    url: String,
}

impl std::fmt::Debug for ServerCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerCredentials")
            .field("path", &self.file.path)
            .field("url", &redact_urls(&self.url))
            .finish()
    }
}

impl ServerCredentials {
    /// The `current` issuer's entry of this server in `doc`.
    fn current_of(&self, doc: &Doc) -> Result<Option<StoredCredentials>, ConfigError> {
        let at = At { path: &self.file.path, url: &self.url };
        let Some((issuer, entry)) = at.current(doc)? else { return Ok(None) };
        let entry = at.parse_entry(issuer, entry)?;
        let stored =
            StoredCredentials::new(entry.client_id, entry.token, entry.granted_scopes, entry.received_at);
        Ok(Some(stored.with_issuer(non_empty(issuer))))
    }
}

impl CredentialsFile {
    /// The [`CredentialStore`] rmcp gets for the server at `url` (as configured: the key is
    /// the exact string).
    pub fn for_server(&self, url: &str) -> ServerCredentials {
        ServerCredentials { file: self.clone(), url: url.to_owned() }
    }
}

#[async_trait]
impl CredentialStore for ServerCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        // rmcp asks before every request it sends (eleven times for one `tools`): a file as it
        // was when last parsed is answered from that, with one `stat` and no hop to a blocking
        // thread. Any write (a save here, a refresh in another process) makes it read again.
        if let Some(doc) = unchanged(&self.file.path) {
            return self.current_of(&doc).map_err(|e| AuthError::CredentialStoreError(e.to_string()));
        }
        let this = self.clone();
        blocking(move || {
            let doc = read_cached(&this.file.path)?;
            Ok(this.current_of(&doc)?)
        })
        .await
    }

    /// Writes the entry under `credentials.issuer` and makes it current. A secret kept for the
    /// same issuer and client id stays; one kept for another client id goes.
    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let this = self.clone();
        blocking(move || {
            this.file.write(&this.url, |at, doc| {
                let issuer = credentials.issuer.as_deref().unwrap_or_default();
                at.server_mut(doc)?.insert("current".into(), issuer.into());
                let entry = at.entry_mut(doc, issuer)?;
                if entry.get("clientId").and_then(Value::as_str) != Some(credentials.client_id.as_str()) {
                    entry.shift_remove("clientSecret");
                }
                entry.insert("clientId".into(), credentials.client_id.as_str().into());
                match &credentials.token_response {
                    Some(token) => {
                        let token = serde_json::to_value(token)
                            .map_err(|e| anyhow::anyhow!("cannot encode the token response: {e}"))?;
                        entry.insert("token".into(), token);
                    }
                    None => {
                        entry.shift_remove("token");
                    }
                }
                entry.insert("grantedScopes".into(), credentials.granted_scopes.clone().into());
                match credentials.token_received_at {
                    Some(secs) => entry.insert("receivedAt".into(), secs.into()),
                    None => entry.shift_remove("receivedAt"),
                };
                Ok(())
            })
        })
        .await
    }

    /// Removes the current issuer's entry (rmcp clears when the authorization server changed);
    /// other issuers' entries stay.
    async fn clear(&self) -> Result<(), AuthError> {
        let this = self.clone();
        blocking(move || {
            this.file.write(&this.url, |at, doc| {
                let Some(servers) = existing_mut(doc, "servers").map_err(|m| at.err("\"servers\"", m))?
                else {
                    return Ok(());
                };
                let Some(server) = existing_mut(servers, at.url).map_err(|m| at.err(&at.server_name(), m))?
                else {
                    return Ok(());
                };
                let issuer = match server.shift_remove("current") {
                    None | Some(Value::Null) => return Ok(()),
                    Some(Value::String(issuer)) => issuer,
                    Some(_) => {
                        return Err(at.err(&format!("{}: \"current\"", at.server_name()), "a string").into());
                    }
                };
                if let Some(issuers) =
                    existing_mut(server, "issuers").map_err(|m| at.err(&at.issuers_name(), m))?
                {
                    issuers.shift_remove(&issuer);
                }
                // A server left with nothing is dropped, so the file lists what is signed in.
                let empty =
                    server.iter().all(|(k, v)| k == "issuers" && v.as_object().is_some_and(Map::is_empty));
                if empty {
                    servers.shift_remove(at.url);
                }
                Ok(())
            })
        })
        .await
    }

    /// The authorization server said the refresh token is no good (`invalid_grant`): the
    /// tokens go, so `mcp get` says "not signed in" as the connection's error says to sign in.
    /// Only if they are still the rejected ones: another process may have signed in since.
    async fn on_refresh_token_rejected(&self, credentials: &StoredCredentials) -> Result<(), AuthError> {
        let this = self.clone();
        let rejected = credentials
            .token_response
            .as_ref()
            .map(|t| serde_json::to_value(t).map(|v| v["refresh_token"].clone()))
            .transpose()
            .map_err(|e| AuthError::CredentialStoreError(format!("cannot encode the token response: {e}")))?;
        let issuer = credentials.issuer.clone().unwrap_or_default();
        blocking(move || {
            this.file.write(&this.url, |at, doc| {
                let entry = at.entry_mut(doc, &issuer)?;
                let current = entry.get("token").map(|t| t["refresh_token"].clone());
                if rejected.is_some() && current == rejected {
                    for key in ["token", "grantedScopes", "receivedAt"] {
                        entry.shift_remove(key);
                    }
                }
                Ok(())
            })
        })
        .await
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let file = self.file.clone();
        blocking(move || {
            let lock = file.hold()?;
            // If the caller was cancelled meanwhile, this guard is dropped unseen and the lock
            // released with it.
            Ok(Some(CredentialRefreshGuard::new(lock)))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::signed_in::SignedIn;
    use super::super::test_support::{ISSUER_A, ISSUER_B, URL, creds, file_json, refresh_token_of, token};
    use super::*;

    #[tokio::test]
    async fn a_saved_sign_in_loads_back_and_shows_in_status() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let file = CredentialsFile::new(tmp.path().join("credentials.json"));
        let store = file.for_server(URL);
        assert!(store.load().await?.is_none());
        assert_eq!(file.status(URL)?, None);

        store.save(creds("client-1", Some(ISSUER_A), "a0", "r0")?).await?;
        let loaded = store.load().await?.ok_or_else(|| anyhow::anyhow!("nothing loaded"))?;
        assert_eq!(loaded.client_id, "client-1");
        assert_eq!(loaded.issuer.as_deref(), Some(ISSUER_A));
        assert_eq!(loaded.granted_scopes, ["read"]);
        assert_eq!(loaded.token_received_at, Some(1_000));
        assert_eq!(serde_json::to_value(&loaded.token_response)?, serde_json::to_value(token("a0", "r0")?)?);
        assert_eq!(
            file.status(URL)?,
            Some(SignedIn {
                issuer: Some(ISSUER_A.into()),
                expires_at: Some(4_600),
                has_refresh_token: true,
                scopes: vec!["read".into()],
                bound: false,
            })
        );
        assert_eq!(
            file_json(file.path())?,
            json!({"version": 1, "servers": {URL: {"current": ISSUER_A, "issuers": {ISSUER_A: {
                "clientId": "client-1",
                "token": {"access_token": "a0", "token_type": "bearer", "expires_in": 3600, "refresh_token": "r0"},
                "grantedScopes": ["read"], "receivedAt": 1000}}}}})
        );
        assert!(!format!("{store:?} {file:?}").contains("r0"));

        // No issuer in the server's metadata: kept under "", loaded back as none.
        let other = file.for_server("https://other.example.com/mcp");
        other.save(creds("client-2", None, "a9", "r9")?).await?;
        let loaded = other.load().await?.ok_or_else(|| anyhow::anyhow!("nothing loaded"))?;
        assert_eq!(loaded.issuer, None);
        assert_eq!(file_json(file.path())?["servers"]["https://other.example.com/mcp"]["current"], "");
        Ok(())
    }

    #[tokio::test]
    async fn a_rejected_refresh_token_signs_out_unless_replaced_meanwhile() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let file = CredentialsFile::new(tmp.path().join("credentials.json"));
        let store = file.for_server(URL);
        let old = creds("client-1", Some(ISSUER_A), "a0", "r0")?;
        store.save(old.clone()).await?;
        // Another process signed in again meanwhile: its new tokens stay.
        store.save(creds("client-1", Some(ISSUER_A), "a1", "r1")?).await?;
        store.on_refresh_token_rejected(&old).await?;
        assert!(file.status(URL)?.is_some());
        let now = store.load().await?.ok_or_else(|| anyhow::anyhow!("gone"))?;
        store.on_refresh_token_rejected(&now).await?;
        assert_eq!(file.status(URL)?, None, "a spent refresh token is not a sign-in");
        assert_eq!(store.load().await?.map(|c| c.client_id).as_deref(), Some("client-1"), "the client stays");
        Ok(())
    }

    #[tokio::test]
    async fn another_issuer_gets_its_own_entry_and_forget_removes_all() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let file = CredentialsFile::new(tmp.path().join("credentials.json"));
        let store = file.for_server(URL);
        store.save(creds("client-a", Some(ISSUER_A), "a0", "r0")?).await?;
        file.set_client_secret(URL, Some(ISSUER_A), "client-a", "secret-a")?;
        store.save(creds("client-b", Some(ISSUER_B), "b0", "rb0")?).await?;

        let loaded = store.load().await?.ok_or_else(|| anyhow::anyhow!("nothing loaded"))?;
        assert_eq!((loaded.client_id.as_str(), loaded.issuer.as_deref()), ("client-b", Some(ISSUER_B)));
        assert_eq!(refresh_token_of(&loaded)?, "rb0");
        let v = file_json(file.path())?;
        assert_eq!(v["servers"][URL]["issuers"][ISSUER_A]["clientId"], "client-a", "A's entry stays");
        assert_eq!(file.client_secret(URL, Some(ISSUER_A), "client-a")?.as_deref(), Some("secret-a"));
        assert_eq!(file.client_secret(URL, Some(ISSUER_B), "client-a")?, None, "never handed to B");
        assert_eq!(file.client_secret(URL, Some(ISSUER_B), "client-b")?, None);

        // rmcp clears on an issuer change: the current entry only.
        store.clear().await?;
        assert!(store.load().await?.is_none());
        assert_eq!(file.status(URL)?, None);
        assert_eq!(file_json(file.path())?["servers"][URL]["issuers"][ISSUER_A]["clientId"], "client-a");
        assert!(file_json(file.path())?["servers"][URL]["issuers"].get(ISSUER_B).is_none());

        store.save(creds("client-b", Some(ISSUER_B), "b1", "rb1")?).await?;
        assert!(file.forget(URL)?);
        assert!(store.load().await?.is_none());
        assert_eq!(file.client_secret(URL, Some(ISSUER_A), "client-a")?, None);
        assert_eq!(file_json(file.path())?["servers"], json!({}));
        assert!(!file.forget(URL)?);
        Ok(())
    }
}
