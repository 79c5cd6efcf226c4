//! [`CredentialsFile`]: the file at its path, and what a sign-in keeps beside rmcp's tokens
//! (a confidential client's secret, the authorization server's metadata, a DPoP key, the
//! scopes a server asked for), and logout.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::transport::auth::AuthorizationMetadata;
use serde_json::Value;

use super::format::{At, DPOP_KEY, Doc, existing_mut, read_cached, wanted};
use super::lock::HeldLock;
use crate::auth::dpop::ProofKey;
use crate::config::{EditError, FileLock};

/// The credentials file at a path the caller chose (`<home>/credentials.json`).
///
/// Clones share one slot for the lock a refresh guard of this process holds, so every write
/// made through them while a refresh is under way goes through that lock instead of waiting
/// for it: make one per process and hand out [`CredentialsFile::for_server`] from it. Two
/// `new` on the same path coordinate like two processes.
///
/// The methods here block on the file lock (at most for one refresh of another process);
/// async code calls them in `spawn_blocking`.
#[derive(Clone)]
pub struct CredentialsFile {
    pub(super) path: PathBuf,
    /// The lock of the refresh guard alive in this process, if any (`lock.rs`).
    held: HeldLock,
    /// Whether this process may run a sign-in by itself when a server asks for more scope: only
    /// where a person is at hand ([`CredentialsFile::signing_in_here`]). A browser opened by a
    /// background `serve` or a scripted command has nobody to look at it, and a page opened
    /// unasked is how a person is talked into approving what they did not start.
    sign_in_here: bool,
}

impl std::fmt::Debug for CredentialsFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CredentialsFile").field("path", &self.path).finish_non_exhaustive()
    }
}

impl CredentialsFile {
    /// The file at `path`; nothing is read or created until it is used.
    pub fn new(path: PathBuf) -> Self {
        Self { path, held: HeldLock::default(), sign_in_here: false }
    }

    /// This file, for a process with a person at hand (the interactive session): a server's
    /// `403 insufficient_scope` runs the sign-in for the larger scope in the browser. Without
    /// it the scope is kept ([`CredentialsFile::want_scopes`]) and the request fails with
    /// "authorization required: run toolport mcp login NAME".
    pub fn signing_in_here(mut self) -> Self {
        self.sign_in_here = true;
        self
    }

    /// See [`CredentialsFile::signing_in_here`].
    pub fn signs_in_here(&self) -> bool {
        self.sign_in_here
    }

    /// Where the file is, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `edit` on the file under its lock: the held one while this process's refresh guard
    /// lives, else a lock of its own.
    pub(super) fn write<T>(
        &self,
        url: &str,
        edit: impl FnOnce(&At<'_>, &mut Doc) -> Result<T, EditError>,
    ) -> Result<T, EditError> {
        let at = At { path: &self.path, url };
        self.held.edit(&self.path, |doc| {
            at.check_version(doc)?;
            edit(&at, doc)
        })
    }

    /// Takes the file's exclusive lock for a refresh guard and puts it in the slot every
    /// clone of this file writes through until the guard is dropped.
    pub(super) fn hold(&self) -> Result<Arc<FileLock>, EditError> {
        self.held.hold(&self.path)
    }

    /// Keeps the secret of a client registered confidentially (dynamic client registration)
    /// at `issuer` for `url`. rmcp's `StoredCredentials` has no place for it, and without it a
    /// refresh after a restart would fail. A different `client_id` than the entry's is a new
    /// registration: the old client's tokens are dropped with it.
    pub fn set_client_secret(
        &self,
        url: &str,
        issuer: Option<&str>,
        client_id: &str,
        secret: &str,
    ) -> Result<(), EditError> {
        let issuer = issuer.unwrap_or_default();
        self.write(url, |at, doc| {
            let entry = at.entry_mut(doc, issuer)?;
            if entry.get("clientId").and_then(Value::as_str) != Some(client_id) {
                for key in ["token", "grantedScopes", "receivedAt"] {
                    entry.shift_remove(key);
                }
                entry.insert("clientId".into(), client_id.into());
            }
            entry.insert("clientSecret".into(), secret.into());
            Ok(())
        })
    }

    /// The secret kept for `client_id` at `issuer` for `url`; `None` for a public client, or
    /// when the entry belongs to another client (a secret never goes out with another id).
    pub fn client_secret(
        &self,
        url: &str,
        issuer: Option<&str>,
        client_id: &str,
    ) -> Result<Option<String>, EditError> {
        let issuer = issuer.unwrap_or_default();
        let doc = read_cached(&self.path)?;
        let at = At { path: &self.path, url };
        let Some(server) = at.server(&doc)? else { return Ok(None) };
        let Some(entry) = at.entry(server, issuer)? else { return Ok(None) };
        let entry = at.parse_entry(issuer, entry)?;
        Ok(entry.client_secret.filter(|_| entry.client_id == client_id))
    }

    /// Keeps the authorization server's metadata, as the sign-in at `issuer` discovered it,
    /// beside that sign-in's tokens: a connect with a stored token then costs no discovery
    /// round trips. A server that moves is noticed by its 401, and the sign-in that follows
    /// discovers afresh. Call it after the tokens are saved (it amends their entry).
    pub fn set_metadata(
        &self,
        url: &str,
        issuer: Option<&str>,
        metadata: &AuthorizationMetadata,
    ) -> Result<(), EditError> {
        let issuer = issuer.unwrap_or_default();
        let value =
            serde_json::to_value(metadata).map_err(|e| anyhow::anyhow!("cannot encode the metadata: {e}"))?;
        self.write(url, |at, doc| {
            at.entry_mut(doc, issuer)?.insert("metadata".into(), value);
            Ok(())
        })
    }

    /// The metadata kept with the current sign-in for `url`; `None` when there is none or it
    /// no longer reads (then rmcp discovers, as without it).
    pub fn metadata(&self, url: &str) -> Result<Option<AuthorizationMetadata>, EditError> {
        let doc = read_cached(&self.path)?;
        let at = At { path: &self.path, url };
        let Some((_, entry)) = at.current(&doc)? else { return Ok(None) };
        Ok(entry.get("metadata").and_then(|m| serde_json::from_value(m.clone()).ok()))
    }

    /// Keeps `key` as the key the sign-in at `issuer` bound its tokens to, or removes the one
    /// kept when `None` (a bearer sign-in). Call it after the tokens are saved.
    pub fn set_dpop_key(
        &self,
        url: &str,
        issuer: Option<&str>,
        key: Option<&ProofKey>,
    ) -> Result<(), EditError> {
        let issuer = issuer.unwrap_or_default();
        self.write(url, |at, doc| {
            let entry = at.entry_mut(doc, issuer)?;
            match key {
                Some(key) => entry.insert(DPOP_KEY.into(), key.to_stored()),
                None => entry.shift_remove(DPOP_KEY),
            };
            Ok(())
        })
    }

    /// The key the current sign-in for `url` bound its tokens to; `None` for bearer tokens. A
    /// key that does not read is an error naming its place (the tokens are useless without it).
    pub fn dpop_key(&self, url: &str) -> Result<Option<ProofKey>, EditError> {
        let doc = read_cached(&self.path)?;
        let at = At { path: &self.path, url };
        let Some((issuer, entry)) = at.current(&doc)? else { return Ok(None) };
        match entry.get(DPOP_KEY) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => ProofKey::from_stored(value).map(Some).map_err(|e| {
                at.err(
                    &format!("{}: \"{DPOP_KEY}\"", at.entry_name(issuer)),
                    &format!("a DPoP key ({e}; sign in again)"),
                )
                .into()
            }),
        }
    }

    /// Remembers scopes the server at `url` refused a request for (`403 insufficient_scope`)
    /// where no sign-in could run: the next `mcp login` asks for them too.
    pub fn want_scopes(&self, url: &str, scopes: &[String]) -> Result<(), EditError> {
        self.write(url, |at, doc| {
            let mut wanted = wanted(at.server(doc)?);
            for scope in scopes {
                if !wanted.contains(scope) {
                    wanted.push(scope.clone());
                }
            }
            at.server_mut(doc)?.insert("wantedScopes".into(), wanted.into());
            Ok(())
        })
    }

    /// The scopes [`CredentialsFile::want_scopes`] kept for `url`.
    pub fn wanted_scopes(&self, url: &str) -> Result<Vec<String>, EditError> {
        let doc = read_cached(&self.path)?;
        Ok(wanted(At { path: &self.path, url }.server(&doc)?))
    }

    /// Forgets the wanted scopes once a sign-in asked for them.
    pub fn wanted_scopes_asked(&self, url: &str) -> Result<(), EditError> {
        self.write(url, |at, doc| {
            if at.server(doc)?.is_some_and(|s| s.contains_key("wantedScopes")) {
                at.server_mut(doc)?.shift_remove("wantedScopes");
            }
            Ok(())
        })
    }

    /// Logout: removes every issuer's entry for `url`. `true` if there was one.
    pub fn forget(&self, url: &str) -> Result<bool, EditError> {
        self.write(url, |at, doc| {
            let Some(servers) = existing_mut(doc, "servers").map_err(|m| at.err("\"servers\"", m))? else {
                return Ok(false);
            };
            Ok(servers.shift_remove(url).is_some())
        })
    }
}

#[cfg(test)]
mod tests {
    use rmcp::transport::auth::{AuthorizationMetadata, CredentialStore as _, StoredCredentials};
    use serde_json::json;

    use super::super::test_support::{ISSUER_A, ISSUER_B, URL, creds, file_json};
    use super::*;

    /// A DPoP sign-in's key lives beside its token: a refresh keeps it, a bearer sign-in
    /// removes it, another issuer's sign-in does not see it, a logout takes it away, and a
    /// key that does not read is named, not shown.
    #[tokio::test]
    async fn a_dpop_key_lives_and_goes_with_its_sign_in() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let file = CredentialsFile::new(tmp.path().join("credentials.json"));
        let store = file.for_server(URL);
        let dpop_token = |access: &str| -> anyhow::Result<StoredCredentials> {
            let token = serde_json::from_value(json!({
                "access_token": access, "token_type": "DPoP", "expires_in": 3600, "refresh_token": "r"
            }))?;
            Ok(StoredCredentials::new("client-1".into(), Some(token), vec![], Some(1_000))
                .with_issuer(Some(ISSUER_A.into())))
        };
        store.save(dpop_token("a0")?).await?;
        let key = ProofKey::generate()?;
        file.set_dpop_key(URL, Some(ISSUER_A), Some(&key))?;
        assert!(file.status(URL)?.is_some_and(|s| s.bound));
        let public =
            |k: &ProofKey| k.proof("GET", URL, None, None).map(|p| p.split('.').next().map(str::to_owned));
        let kept = file.dpop_key(URL)?.ok_or_else(|| anyhow::anyhow!("no key kept"))?;
        assert_eq!(public(&kept)?, public(&key)?);
        // A refresh saves a new token: the key stays.
        store.save(dpop_token("a1")?).await?;
        assert!(file.dpop_key(URL)?.is_some());
        // Another issuer's sign-in is current now: its entry has no key.
        store.save(creds("client-2", Some(ISSUER_B), "b0", "r0")?).await?;
        assert!(file.dpop_key(URL)?.is_none());
        assert!(file.status(URL)?.is_some_and(|s| !s.bound));
        // A bearer sign-in at the first issuer again: nothing left of the old key.
        store.save(creds("client-1", Some(ISSUER_A), "a2", "r0")?).await?;
        file.set_dpop_key(URL, Some(ISSUER_A), None)?;
        assert!(file.dpop_key(URL)?.is_none());
        assert!(file_json(file.path())?["servers"][URL]["issuers"][ISSUER_A].get("dpopKey").is_none());
        // A broken key names its place and shows nothing of the file.
        store.save(dpop_token("a3")?).await?;
        let mut doc = file_json(file.path())?;
        doc["servers"][URL]["issuers"][ISSUER_A]["dpopKey"] = json!({"alg": "ES256", "pkcs8": "c2VjcmV0"});
        std::fs::write(file.path(), doc.to_string())?;
        let err = file.dpop_key(URL).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            err.contains("issuer \"https://auth-a.example.com\": \"dpopKey\" must be a DPoP key"),
            "{err}"
        );
        assert!(!err.contains("c2VjcmV0"), "{err}");
        assert!(file.forget(URL)?);
        assert!(file.dpop_key(URL)?.is_none());
        Ok(())
    }

    #[tokio::test]
    async fn metadata_stays_with_its_sign_in_across_refreshes_and_goes_with_the_issuer() -> anyhow::Result<()>
    {
        let tmp = tempfile::tempdir()?;
        let file = CredentialsFile::new(tmp.path().join("credentials.json"));
        let store = file.for_server(URL);
        store.save(creds("client-1", Some(ISSUER_A), "a0", "r0")?).await?;
        let metadata: AuthorizationMetadata = serde_json::from_value(json!({
            "authorization_endpoint": "https://a.example/authorize",
            "token_endpoint": "https://a.example/token",
            "issuer": ISSUER_A,
        }))?;
        file.set_metadata(URL, Some(ISSUER_A), &metadata)?;
        // A refresh rewrites the token, not what the sign-in discovered.
        store.save(creds("client-1", Some(ISSUER_A), "a1", "r1")?).await?;
        let kept = file.metadata(URL)?.map(|m| m.token_endpoint);
        assert_eq!(kept.as_deref(), Some("https://a.example/token"));
        // Another issuer's sign-in has none until its own sign-in stores it.
        store.save(creds("client-2", Some(ISSUER_B), "b0", "rb0")?).await?;
        assert!(file.metadata(URL)?.is_none());
        Ok(())
    }

    #[tokio::test]
    async fn a_secret_stays_with_its_client_only() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let file = CredentialsFile::new(tmp.path().join("credentials.json"));
        let store = file.for_server(URL);
        file.set_client_secret(URL, Some(ISSUER_A), "client-1", "s3cret")?;
        assert_eq!(file.status(URL)?, None, "a registration alone is no sign-in");
        store.save(creds("client-1", Some(ISSUER_A), "a0", "r0")?).await?;
        assert_eq!(file.client_secret(URL, Some(ISSUER_A), "client-1")?.as_deref(), Some("s3cret"));

        store.save(creds("client-2", Some(ISSUER_A), "a1", "r1")?).await?;
        assert_eq!(file.client_secret(URL, Some(ISSUER_A), "client-1")?, None);
        assert_eq!(file.client_secret(URL, Some(ISSUER_A), "client-2")?, None);
        assert!(file_json(file.path())?["servers"][URL]["issuers"][ISSUER_A].get("clientSecret").is_none());

        // A new registration at the issuer drops what the old client earned.
        file.set_client_secret(URL, Some(ISSUER_A), "client-3", "other")?;
        let loaded = store.load().await?.ok_or_else(|| anyhow::anyhow!("nothing loaded"))?;
        assert_eq!(loaded.client_id, "client-3");
        assert!(loaded.token_response.is_none());
        Ok(())
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn the_file_is_owner_only_new_or_loosened() -> anyhow::Result<()> {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |p: &Path| std::fs::metadata(p).map(|m| m.permissions().mode() & 0o777);
        let tmp = tempfile::tempdir()?;
        let file = CredentialsFile::new(tmp.path().join("credentials.json"));
        file.for_server(URL).save(creds("client-1", Some(ISSUER_A), "a0", "r0")?).await?;
        assert_eq!(mode(file.path())?, 0o600);

        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o644))?;
        file.set_client_secret(URL, Some(ISSUER_A), "client-1", "s3cret")?;
        assert_eq!(mode(file.path())?, 0o600, "a write tightens a loosened file");

        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o644))?;
        assert!(!file.forget("https://never.example.com/mcp")?);
        assert_eq!(mode(file.path())?, 0o600, "even a write that changes nothing");
        Ok(())
    }

    #[tokio::test]
    async fn unknown_fields_survive_every_write() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let path = tmp.path().join("credentials.json");
        std::fs::write(
            &path,
            json!({"x-top": 1, "version": 1, "servers": {URL: {"x-server": true, "current": ISSUER_A, "issuers": {
                ISSUER_A: {"clientId": "client-1", "x-entry": "kept", "token": {"access_token": "a0", "token_type": "bearer"}}
            }}}})
            .to_string(),
        )?;
        let file = CredentialsFile::new(path.clone());
        let store = file.for_server(URL);
        store.save(creds("client-1", Some(ISSUER_A), "a1", "r1")?).await?;
        file.set_client_secret(URL, Some(ISSUER_A), "client-1", "s3cret")?;
        let v = file_json(&path)?;
        assert_eq!(v["x-top"], 1);
        assert_eq!(v["servers"][URL]["x-server"], true);
        assert_eq!(v["servers"][URL]["issuers"][ISSUER_A]["x-entry"], "kept");
        assert_eq!(v["servers"][URL]["issuers"][ISSUER_A]["token"]["access_token"], "a1");
        let keys: Vec<_> = v.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
        assert_eq!(keys, ["x-top", "version", "servers"], "key order is kept too");
        Ok(())
    }
}
