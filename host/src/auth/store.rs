//! `credentials.json`: what OAuth sign-ins to HTTP servers earned, kept for rmcp's
//! `AuthorizationManager` through its [`CredentialStore`] trait ([`ServerCredentials`]).
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
//! - Every read goes to the file, nothing is cached: another toolport process may have rotated
//!   the refresh token since, and with many providers the old one is then spent.
//! - Refreshes are serialized across processes by the same lock: see
//!   [`ServerCredentials`]'s refresh guard.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use async_trait::async_trait;
use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, CredentialRefreshGuard, CredentialStore, OAuthTokenResponse,
    StoredCredentials,
};
use serde_json::{Map, Value};

use super::dpop::{self, ProofKey};
use crate::config::{ConfigError, EditError, FileLock, LockAt, Perms, parse_json};
use crate::redact::redact_urls;

/// The layout this toolport reads and writes. A file with another `version` is refused, not
/// rewritten: a newer toolport wrote it, and rewriting it here could drop what it means.
const VERSION: u64 = 1;

/// Where an entry keeps its DPoP key.
const DPOP_KEY: &str = "dpopKey";

type Doc = Map<String, Value>;

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
    path: PathBuf,
    /// The lock of the refresh guard alive in this process, if any. A `Weak`, so dropping the
    /// guard releases the lock; writes upgrade it and edit through it. `flock` locks belong to
    /// an open file: taking a second one here would wait for ourselves.
    held: Arc<Mutex<Weak<FileLock>>>,
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
    /// The file at `path`; nothing is read or created until it is used.
    pub fn new(path: PathBuf) -> Self {
        Self { path, held: Arc::new(Mutex::new(Weak::new())), sign_in_here: false }
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

    /// The [`CredentialStore`] rmcp gets for the server at `url` (as configured: the key is
    /// the exact string).
    pub fn for_server(&self, url: &str) -> ServerCredentials {
        ServerCredentials { file: self.clone(), url: url.to_owned() }
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
        let doc = read(&self.path)?;
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
        let doc = read(&self.path)?;
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
        let doc = read(&self.path)?;
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
        let doc = read(&self.path)?;
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

    /// The current sign-in for `url`; `None` when there is no token (never signed in, signed
    /// out, or the authorization server changed since).
    pub fn status(&self, url: &str) -> Result<Option<SignedIn>, EditError> {
        let doc = read(&self.path)?;
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

    /// Runs `edit` on the file under its lock: the held one while this process's refresh guard
    /// lives, else a lock of its own.
    fn write<T>(
        &self,
        url: &str,
        edit: impl FnOnce(&At<'_>, &mut Doc) -> Result<T, EditError>,
    ) -> Result<T, EditError> {
        let at = At { path: &self.path, url };
        let edit = |doc: &mut Doc| {
            at.check_version(doc)?;
            edit(&at, doc)
        };
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(lock) = held.upgrade() {
            // The slot stays locked for the edit, so two tasks writing under the same guard
            // cannot interleave their read-modify-writes.
            return lock.edit_doc(Perms::OwnerOnly, edit);
        }
        // Not held across the wait: the guard being taken now has to fill the slot.
        drop(held);
        FileLock::acquire(&self.path, LockAt::Beside)?.edit_doc(Perms::OwnerOnly, edit)
    }
}

#[async_trait]
impl CredentialStore for ServerCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let this = self.clone();
        blocking(move || {
            let doc = read(&this.file.path)?;
            let at = At { path: &this.file.path, url: &this.url };
            let Some((issuer, entry)) = at.current(&doc)? else { return Ok(None) };
            let entry = at.parse_entry(issuer, entry)?;
            let stored =
                StoredCredentials::new(entry.client_id, entry.token, entry.granted_scopes, entry.received_at);
            Ok(Some(stored.with_issuer(non_empty(issuer))))
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
            let lock = Arc::new(FileLock::acquire(&file.path, LockAt::Beside)?);
            *file.held.lock().unwrap_or_else(PoisonError::into_inner) = Arc::downgrade(&lock);
            // If the caller was cancelled meanwhile, this guard is dropped unseen and the lock
            // released with it.
            Ok(Some(CredentialRefreshGuard::new(lock)))
        })
        .await
    }
}

/// Runs file work off the async threads: a lock may be held by another process's refresh.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, EditError> + Send + 'static,
) -> Result<T, AuthError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result.map_err(|e| AuthError::CredentialStoreError(e.to_string())),
        Err(e) => Err(AuthError::CredentialStoreError(format!("the credential store's task failed: {e}"))),
    }
}

/// The file as it is now; a missing one is empty. No lock: writes replace the file by rename,
/// so a read always sees one whole version.
/// A server object's `wantedScopes` (what is not a string is skipped: a sign-in then asks
/// for what it would have anyway).
fn wanted(server: Option<&Doc>) -> Vec<String> {
    match server.and_then(|s| s.get("wantedScopes")) {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

fn read(path: &Path) -> Result<Doc, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Doc::new()),
        Err(e) => return Err(ConfigError(format!("{}: cannot read: {e}", path.display()))),
    };
    match parse_json(path, &text)? {
        Value::Object(doc) => {
            At { path, url: "" }.check_version(&doc)?;
            Ok(doc)
        }
        _ => Err(ConfigError(format!("{}: the top level must be a JSON object", path.display()))),
    }
}

fn non_empty(issuer: &str) -> Option<String> {
    Some(issuer.to_owned()).filter(|i| !i.is_empty())
}

/// `parent[key]` as an object; absent and `null` are `None`. The error is what it must be.
fn existing<'d>(parent: &'d Doc, key: &str) -> Result<Option<&'d Doc>, &'static str> {
    match parent.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(_) => Err("an object"),
    }
}

/// [`existing`], to edit.
fn existing_mut<'d>(parent: &'d mut Doc, key: &str) -> Result<Option<&'d mut Doc>, &'static str> {
    match parent.get_mut(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(_) => Err("an object"),
    }
}

/// `parent[key]` as an object to edit, created when absent or `null`.
fn object_mut<'d>(parent: &'d mut Doc, key: &str) -> Result<&'d mut Doc, &'static str> {
    let slot = parent.entry(key).or_insert(Value::Null);
    if slot.is_null() {
        *slot = Value::Object(Doc::new());
    }
    slot.as_object_mut().ok_or("an object")
}

/// One issuer's entry as read: the fields toolport knows (the file keeps any others). No
/// `Debug`: it holds the tokens and the client secret.
struct Entry {
    client_id: String,
    client_secret: Option<String>,
    token: Option<OAuthTokenResponse>,
    /// What [`SignedIn`] shows of the token, read from its JSON: oauth2's `TokenResponse`
    /// trait is not re-exported by rmcp.
    expires_in: Option<u64>,
    has_refresh_token: bool,
    /// The token's `token_type` is `DPoP`.
    bound: bool,
    granted_scopes: Vec<String>,
    received_at: Option<u64>,
}

/// A server's place in the file, and the messages that point there (`server "<url>",
/// issuer "<issuer>": "clientId" must be a string`). URLs are shown with their secrets
/// masked; values never are (they may be tokens).
struct At<'a> {
    path: &'a Path,
    url: &'a str,
}

impl At<'_> {
    fn err(&self, what: &str, must_be: &str) -> ConfigError {
        ConfigError(format!("{}: {what} must be {must_be}", self.path.display()))
    }

    fn server_name(&self) -> String {
        format!("server \"{}\"", redact_urls(self.url))
    }

    fn issuers_name(&self) -> String {
        format!("{}: \"issuers\"", self.server_name())
    }

    fn entry_name(&self, issuer: &str) -> String {
        format!("{}, issuer \"{issuer}\"", self.server_name())
    }

    fn check_version(&self, doc: &Doc) -> Result<(), ConfigError> {
        match doc.get("version") {
            None | Some(Value::Null) => Ok(()),
            Some(v) if v.as_u64() == Some(VERSION) => Ok(()),
            Some(v) => Err(ConfigError(format!(
                "{}: \"version\" is {v}, and this toolport reads version {VERSION} (was it written by a newer toolport?)",
                self.path.display()
            ))),
        }
    }

    fn server<'d>(&self, doc: &'d Doc) -> Result<Option<&'d Doc>, ConfigError> {
        match existing(doc, "servers").map_err(|m| self.err("\"servers\"", m))? {
            Some(servers) => existing(servers, self.url).map_err(|m| self.err(&self.server_name(), m)),
            None => Ok(None),
        }
    }

    fn entry<'d>(&self, server: &'d Doc, issuer: &str) -> Result<Option<&'d Doc>, ConfigError> {
        match existing(server, "issuers").map_err(|m| self.err(&self.issuers_name(), m))? {
            Some(issuers) => existing(issuers, issuer).map_err(|m| self.err(&self.entry_name(issuer), m)),
            None => Ok(None),
        }
    }

    /// The `current` issuer and its entry; `None` when there is neither.
    fn current<'d>(&self, doc: &'d Doc) -> Result<Option<(&'d str, &'d Doc)>, ConfigError> {
        let Some(server) = self.server(doc)? else { return Ok(None) };
        let issuer = match server.get("current") {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::String(issuer)) => issuer.as_str(),
            Some(_) => return Err(self.err(&format!("{}: \"current\"", self.server_name()), "a string")),
        };
        Ok(self.entry(server, issuer)?.map(|entry| (issuer, entry)))
    }

    /// The server's object, created (with the file's `version`) if missing.
    fn server_mut<'d>(&self, doc: &'d mut Doc) -> Result<&'d mut Doc, ConfigError> {
        if doc.get("version").is_none_or(Value::is_null) {
            doc.insert("version".into(), VERSION.into());
        }
        let servers = object_mut(doc, "servers").map_err(|m| self.err("\"servers\"", m))?;
        object_mut(servers, self.url).map_err(|m| self.err(&self.server_name(), m))
    }

    /// The issuer's entry, created if missing.
    fn entry_mut<'d>(&self, doc: &'d mut Doc, issuer: &str) -> Result<&'d mut Doc, ConfigError> {
        let issuers =
            object_mut(self.server_mut(doc)?, "issuers").map_err(|m| self.err(&self.issuers_name(), m))?;
        object_mut(issuers, issuer).map_err(|m| self.err(&self.entry_name(issuer), m))
    }

    fn parse_entry(&self, issuer: &str, entry: &Doc) -> Result<Entry, ConfigError> {
        let field =
            |key: &str, must_be: &str| self.err(&format!("{}: \"{key}\"", self.entry_name(issuer)), must_be);
        let string = |key: &str| match entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(field(key, "a string")),
        };
        let client_id = string("clientId")?.ok_or_else(|| {
            ConfigError(format!("{}: {} has no \"clientId\"", self.path.display(), self.entry_name(issuer)))
        })?;
        let client_secret = string("clientSecret")?;
        let bound = entry
            .get("token")
            .and_then(|t| t.get("token_type"))
            .and_then(Value::as_str)
            .is_some_and(|t| t.eq_ignore_ascii_case(dpop::SCHEME));
        let (token, expires_in, has_refresh_token) = match entry.get("token") {
            None | Some(Value::Null) => (None, None, false),
            Some(json) => {
                // serde's message is left out: it can quote the value, and the value is a token.
                let token: OAuthTokenResponse = serde_json::from_value(json.clone())
                    .map_err(|_| field("token", "an OAuth token response (sign in again)"))?;
                let refresh =
                    json.get("refresh_token").and_then(Value::as_str).is_some_and(|t| !t.is_empty());
                (Some(token), json.get("expires_in").and_then(Value::as_u64), refresh)
            }
        };
        let granted_scopes = match entry.get("grantedScopes") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|s| s.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| field("grantedScopes", "an array of strings"))?,
            Some(_) => return Err(field("grantedScopes", "an array of strings")),
        };
        let received_at = match entry.get("receivedAt") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().ok_or_else(|| field("receivedAt", "a number of seconds since 1970"))?),
        };
        Ok(Entry {
            client_id,
            client_secret,
            token,
            expires_in,
            has_refresh_token,
            bound,
            granted_scopes,
            received_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rmcp::transport::auth::{
        AuthorizationManager, AuthorizationMetadata, OAuthClientConfig, OAuthHttpClient,
        OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRequest,
    };
    use serde_json::json;

    use super::*;

    const URL: &str = "https://mcp.example.com/mcp";
    const ISSUER_A: &str = "https://auth-a.example.com";
    const ISSUER_B: &str = "https://auth-b.example.com";
    /// Long enough for a second task to reach the lock if it were not taken; short for a test.
    const SETTLE: Duration = Duration::from_millis(300);
    /// A deadlock fails the test instead of hanging it.
    const PATIENCE: Duration = Duration::from_secs(10);

    fn token(access: &str, refresh: &str) -> anyhow::Result<OAuthTokenResponse> {
        Ok(serde_json::from_value(json!({
            "access_token": access, "token_type": "bearer", "expires_in": 3600, "refresh_token": refresh
        }))?)
    }

    fn creds(
        client_id: &str,
        issuer: Option<&str>,
        access: &str,
        refresh: &str,
    ) -> anyhow::Result<StoredCredentials> {
        Ok(StoredCredentials::new(
            client_id.into(),
            Some(token(access, refresh)?),
            vec!["read".into()],
            Some(1_000),
        )
        .with_issuer(issuer.map(str::to_owned)))
    }

    fn refresh_token_of(creds: &StoredCredentials) -> anyhow::Result<Value> {
        Ok(serde_json::to_value(&creds.token_response)?["refresh_token"].clone())
    }

    fn file_json(path: &Path) -> anyhow::Result<Value> {
        Ok(serde_json::from_str(&std::fs::read_to_string(path)?)?)
    }

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
    async fn a_malformed_file_is_named_with_its_position_and_never_written() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let path = tmp.path().join("credentials.json");
        let bad = "{\"version\": 1,\n  \"servers\": {,}\n}\n";
        std::fs::write(&path, bad)?;
        let file = CredentialsFile::new(path.clone());
        let store = file.for_server(URL);
        let prefix = format!("{}:2:", path.display());

        let err = store.save(creds("client-1", Some(ISSUER_A), "a0", "r0")?).await.err();
        assert!(
            matches!(&err, Some(AuthError::CredentialStoreError(m)) if m.starts_with(&prefix)),
            "{err:?}"
        );
        let err = store.load().await.err();
        assert!(
            matches!(&err, Some(AuthError::CredentialStoreError(m)) if m.starts_with(&prefix)),
            "{err:?}"
        );
        let err = file.forget(URL).err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(err, format!("{}:2:15: key must be a string", path.display()));
        assert!(file.status(URL).is_err());
        assert!(file.set_client_secret(URL, None, "c", "s").is_err());
        assert_eq!(std::fs::read_to_string(&path)?, bad, "the bytes stay");

        // Well-formed JSON of the wrong shape: named by its place, values not quoted.
        std::fs::write(
            &path,
            json!({"servers": {URL: {"current": "", "issuers": {"": {"clientId": 7, "clientSecret": "s3cret"}}}}})
                .to_string(),
        )?;
        let err = file.status(URL).err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(
            err,
            format!("{}: server \"{URL}\", issuer \"\": \"clientId\" must be a string", path.display())
        );
        std::fs::write(&path, json!({"version": 2}).to_string())?;
        let err = file.forget(URL).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("\"version\" is 2, and this toolport reads version 1"), "{err}");
        assert_eq!(std::fs::read_to_string(&path)?, json!({"version": 2}).to_string());
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_refresh_guard_holds_off_another_process_but_not_its_own_save() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let path = tmp.path().join("credentials.json");
        let ours = CredentialsFile::new(path.clone()).for_server(URL);
        // Another process: its own slot, its own lock file descriptor.
        let theirs = CredentialsFile::new(path.clone()).for_server(URL);
        ours.save(creds("client-1", Some(ISSUER_A), "a0", "r0")?).await?;

        let guard = ours.acquire_refresh_guard().await?;
        assert!(guard.is_some());
        tokio::time::timeout(PATIENCE, ours.save(creds("client-1", Some(ISSUER_A), "a1", "r1")?))
            .await
            .map_err(|_| anyhow::anyhow!("save under our own guard deadlocked"))??;

        let waiter = tokio::spawn(async move {
            let guard = theirs.acquire_refresh_guard().await?;
            let loaded = theirs.load().await?;
            drop(guard);
            Ok::<_, AuthError>(loaded)
        });
        tokio::time::sleep(SETTLE).await;
        assert!(!waiter.is_finished(), "the other process got the guard while ours was held");
        drop(guard);
        let loaded = tokio::time::timeout(PATIENCE, waiter).await???;
        let loaded = loaded.ok_or_else(|| anyhow::anyhow!("nothing loaded"))?;
        assert_eq!(refresh_token_of(&loaded)?, "r1", "it sees the token saved under our guard");
        Ok(())
    }

    /// A token endpoint that rotates refresh tokens as strict providers do: each one works
    /// once, a spent one is `invalid_grant`. The answer takes [`SETTLE`], so a second refresh
    /// arrives while the first is under way.
    struct RotatingProvider {
        /// The refresh token that works now, and how many were issued.
        valid: Mutex<(String, u32)>,
        /// Every refresh token presented, in order.
        presented: Mutex<Vec<String>>,
    }

    impl OAuthHttpClient for RotatingProvider {
        fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
            Box::pin(async move {
                let presented = url::form_urlencoded::parse(request.request.body())
                    .find(|(k, _)| k == "refresh_token")
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default();
                self.presented.lock().unwrap_or_else(PoisonError::into_inner).push(presented.clone());
                let issued = {
                    let mut valid = self.valid.lock().unwrap_or_else(PoisonError::into_inner);
                    (valid.0 == presented).then(|| {
                        valid.1 += 1;
                        valid.0 = format!("r{}", valid.1);
                        valid.1
                    })
                };
                tokio::time::sleep(SETTLE).await;
                let (status, body) = match issued {
                    Some(n) => (
                        200,
                        json!({"access_token": format!("a{n}"), "token_type": "bearer",
                        "expires_in": 3600, "refresh_token": format!("r{n}")}),
                    ),
                    None => (400, json!({"error": "invalid_grant"})),
                };
                Ok::<_, OAuthHttpClientError>(
                    http::Response::builder()
                        .status(status)
                        .header("content-type", "application/json")
                        .body(serde_json::to_vec(&body)?)?,
                )
            })
        }
    }

    async fn manager(
        file: &CredentialsFile,
        provider: Arc<RotatingProvider>,
    ) -> anyhow::Result<AuthorizationManager> {
        let mut manager = AuthorizationManager::new_with_oauth_http_client(URL, provider).await?;
        let mut metadata = AuthorizationMetadata::default();
        metadata.authorization_endpoint = format!("{ISSUER_A}/authorize");
        metadata.token_endpoint = format!("{ISSUER_A}/token");
        metadata.issuer = Some(ISSUER_A.into());
        manager.set_metadata(metadata);
        manager.configure_client(OAuthClientConfig::new("client-1", "http://127.0.0.1:8765/callback"))?;
        manager.set_credential_store(file.for_server(URL));
        Ok(manager)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_processes_refreshing_at_once_both_stay_signed_in() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let path = tmp.path().join("credentials.json");
        let (one, two) = (CredentialsFile::new(path.clone()), CredentialsFile::new(path.clone()));
        one.for_server(URL).save(creds("client-1", Some(ISSUER_A), "a0", "r0")?).await?;
        let provider = Arc::new(RotatingProvider {
            valid: Mutex::new(("r0".into(), 0)),
            presented: Mutex::new(Vec::new()),
        });
        let (first, second) =
            (manager(&one, provider.clone()).await?, manager(&two, provider.clone()).await?);

        let outcome = tokio::time::timeout(PATIENCE, async {
            let first = tokio::spawn(async move { first.refresh_token().await });
            // The second starts while the first is at the token endpoint, holding the lock.
            while provider.presented.lock().unwrap_or_else(PoisonError::into_inner).is_empty() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let second = tokio::spawn(async move { second.refresh_token().await });
            Ok::<_, anyhow::Error>((first.await??, second.await??))
        })
        .await
        .map_err(|_| anyhow::anyhow!("the refreshes deadlocked"))??;

        assert_eq!(serde_json::to_value(&outcome.0)?["access_token"], "a1");
        assert_eq!(serde_json::to_value(&outcome.1)?["access_token"], "a2");
        assert_eq!(
            *provider.presented.lock().unwrap_or_else(PoisonError::into_inner),
            ["r0", "r1"],
            "the second refresh used the rotated token, not the spent one"
        );
        let v = file_json(&path)?;
        assert_eq!(v["servers"][URL]["issuers"][ISSUER_A]["token"]["refresh_token"], "r2");
        assert_eq!(one.status(URL)?.map(|s| s.has_refresh_token), Some(true));
        Ok(())
    }
}
