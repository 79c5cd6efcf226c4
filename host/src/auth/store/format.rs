//! The file's layout: the document as read, a server's and an issuer's places in it, the
//! messages that point there, and one issuer's entry parsed.

use std::path::Path;
use std::sync::Arc;

use rmcp::transport::auth::OAuthTokenResponse;
use serde_json::{Map, Value};

use crate::auth::dpop;
use crate::config::{ConfigError, parse_json};
use crate::file_stamp::Parsed;
use crate::redact::redact_urls;

/// The layout this toolport reads and writes. A file with another `version` is refused, not
/// rewritten: a newer toolport wrote it, and rewriting it here could drop what it means.
const VERSION: u64 = 1;

/// Where an entry keeps its DPoP key.
pub(super) const DPOP_KEY: &str = "dpopKey";

pub(super) type Doc = Map<String, Value>;

/// A server object's `wantedScopes` (what is not a string is skipped: a sign-in then asks
/// for what it would have anyway).
pub(super) fn wanted(server: Option<&Doc>) -> Vec<String> {
    match server.and_then(|s| s.get("wantedScopes")) {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

/// What the read-only lookups see: [`read`], unless the file is unchanged since it was last
/// parsed here (`file_stamp`): a signed-in server's requests check their token against the
/// file, and a connect looks up the metadata, the DPoP key and the client's secret besides.
/// Writes read afresh under the file's lock. Shared, not copied: one version of the file is
/// one `Arc`, so "the same version as before" is a pointer comparison.
pub(super) fn read_cached(path: &Path) -> Result<Arc<Doc>, ConfigError> {
    PARSED.read_through(path, || read(path).map(Arc::new))
}

/// What `credentials.json` held when [`read_cached`] last read it, per file.
static PARSED: Parsed<Arc<Doc>> = Parsed::new();

/// Whether the file is unchanged since [`read_cached`] last parsed it: then what it held, with
/// one `stat` (no read, no thread hop).
pub(super) fn unchanged(path: &Path) -> Option<Arc<Doc>> {
    PARSED.unchanged(path)
}

/// The file as it is now; a missing one is empty. No lock: writes replace the file by rename,
/// so a read always sees one whole version.
pub(super) fn read(path: &Path) -> Result<Doc, ConfigError> {
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

pub(super) fn non_empty(issuer: &str) -> Option<String> {
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
pub(super) fn existing_mut<'d>(parent: &'d mut Doc, key: &str) -> Result<Option<&'d mut Doc>, &'static str> {
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
pub(super) struct Entry {
    pub(super) client_id: String,
    pub(super) client_secret: Option<String>,
    pub(super) token: Option<OAuthTokenResponse>,
    /// What [`SignedIn`](super::signed_in::SignedIn) shows of the token, read from its JSON: oauth2's `TokenResponse`
    /// trait is not re-exported by rmcp.
    pub(super) expires_in: Option<u64>,
    pub(super) has_refresh_token: bool,
    /// The token's `token_type` is `DPoP`.
    pub(super) bound: bool,
    pub(super) granted_scopes: Vec<String>,
    pub(super) received_at: Option<u64>,
}

/// A server's place in the file, and the messages that point there (`server "<url>",
/// issuer "<issuer>": "clientId" must be a string`). URLs are shown with their secrets
/// masked; values never are (they may be tokens).
pub(super) struct At<'a> {
    pub(super) path: &'a Path,
    pub(super) url: &'a str,
}

impl At<'_> {
    pub(super) fn err(&self, what: &str, must_be: &str) -> ConfigError {
        ConfigError(format!("{}: {what} must be {must_be}", self.path.display()))
    }

    pub(super) fn server_name(&self) -> String {
        format!("server \"{}\"", redact_urls(self.url))
    }

    pub(super) fn issuers_name(&self) -> String {
        format!("{}: \"issuers\"", self.server_name())
    }

    pub(super) fn entry_name(&self, issuer: &str) -> String {
        format!("{}, issuer \"{issuer}\"", self.server_name())
    }

    pub(super) fn check_version(&self, doc: &Doc) -> Result<(), ConfigError> {
        match doc.get("version") {
            None | Some(Value::Null) => Ok(()),
            Some(v) if v.as_u64() == Some(VERSION) => Ok(()),
            Some(v) => Err(ConfigError(format!(
                "{}: \"version\" is {v}, and this toolport reads version {VERSION} (was it written by a newer toolport?)",
                self.path.display()
            ))),
        }
    }

    pub(super) fn server<'d>(&self, doc: &'d Doc) -> Result<Option<&'d Doc>, ConfigError> {
        match existing(doc, "servers").map_err(|m| self.err("\"servers\"", m))? {
            Some(servers) => existing(servers, self.url).map_err(|m| self.err(&self.server_name(), m)),
            None => Ok(None),
        }
    }

    pub(super) fn entry<'d>(&self, server: &'d Doc, issuer: &str) -> Result<Option<&'d Doc>, ConfigError> {
        match existing(server, "issuers").map_err(|m| self.err(&self.issuers_name(), m))? {
            Some(issuers) => existing(issuers, issuer).map_err(|m| self.err(&self.entry_name(issuer), m)),
            None => Ok(None),
        }
    }

    /// The `current` issuer and its entry; `None` when there is neither.
    pub(super) fn current<'d>(&self, doc: &'d Doc) -> Result<Option<(&'d str, &'d Doc)>, ConfigError> {
        let Some(server) = self.server(doc)? else { return Ok(None) };
        let issuer = match server.get("current") {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::String(issuer)) => issuer.as_str(),
            Some(_) => return Err(self.err(&format!("{}: \"current\"", self.server_name()), "a string")),
        };
        Ok(self.entry(server, issuer)?.map(|entry| (issuer, entry)))
    }

    /// The server's object, created (with the file's `version`) if missing.
    pub(super) fn server_mut<'d>(&self, doc: &'d mut Doc) -> Result<&'d mut Doc, ConfigError> {
        if doc.get("version").is_none_or(Value::is_null) {
            doc.insert("version".into(), VERSION.into());
        }
        let servers = object_mut(doc, "servers").map_err(|m| self.err("\"servers\"", m))?;
        object_mut(servers, self.url).map_err(|m| self.err(&self.server_name(), m))
    }

    /// The issuer's entry, created if missing.
    pub(super) fn entry_mut<'d>(&self, doc: &'d mut Doc, issuer: &str) -> Result<&'d mut Doc, ConfigError> {
        let issuers =
            object_mut(self.server_mut(doc)?, "issuers").map_err(|m| self.err(&self.issuers_name(), m))?;
        object_mut(issuers, issuer).map_err(|m| self.err(&self.entry_name(issuer), m))
    }

    pub(super) fn parse_entry(&self, issuer: &str, entry: &Doc) -> Result<Entry, ConfigError> {
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
    use rmcp::transport::auth::{AuthError, CredentialStore as _};
    use serde_json::json;

    use super::super::CredentialsFile;
    use super::super::test_support::{ISSUER_A, URL, creds};

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
}
