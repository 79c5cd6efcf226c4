//! Requests signed with a stored sign-in: the access token from `credentials.json`, sent as is
//! (`Bearer`, or DPoP-bound through [`Proofs`]) while it is valid, and refreshed through rmcp's
//! `AuthorizationManager` when it is not.
//!
//! rmcp's `AuthClient` does the same with a manager built per connect (two HTTP clients for the
//! token endpoint, the store read, the client configured) and asks the manager for the token
//! before every request (a lock, the credential store's load, the whole file's parse copied
//! and the token parsed again): three quarters of what a signed-in `tools` executed beyond a
//! static header's, for a token that is nearly always valid. Here a request costs a `stat` of
//! the file (another process may have refreshed or signed in again since) and a look at the
//! clock; the manager is built only for a refresh, which keeps rmcp's rules:
//!
//! - a token due by rmcp's clock rule ([`AccessToken::due`]) is refreshed before it is sent;
//!   when no refresh is possible (no refresh token, or the server rejects it) the request goes
//!   out unsigned and the server's 401 says to sign in;
//! - a token the server rejects (401) is refreshed once and the request sent again, unless
//!   the refresh gives the same token back;
//! - the refreshed tokens are written back by the manager through the store
//!   ([`ServerCredentials`](super::store)), under the file's lock, so refreshes of several
//!   processes are serialized; one refresh at a time in this connection too, and a request
//!   that waited for one uses its token instead of refreshing again.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use oauth2::TokenResponse as _;
use rmcp::transport::auth::{AuthError, AuthorizationManager, OAuthClientConfig};
use rmcp::transport::streamable_http_client::{StreamableHttpClient, StreamableHttpError};

use super::dpop::requests::Proofs;
use super::dpop::token_client::TokenClient;
use super::store::{AccessToken, CredentialsFile};
use crate::config::{EditError, ServerDef};
use crate::http_layer::{Headers, Layered, Request};

/// The redirect URI a manager restored from the store is configured with: only a new
/// authorization uses a redirect, and that builds its own manager.
const STORED_REDIRECT: &str = "http://127.0.0.1/callback";

type HttpError<C> = StreamableHttpError<<C as StreamableHttpClient>::Error>;

/// See the module documentation.
pub(super) struct StoredToken<C> {
    /// The client below: binds the token to the sign-in's DPoP key, if it has one.
    proofs: Layered<Proofs<C>>,
    def: ServerDef,
    file: CredentialsFile,
    url: String,
    /// The token as last read from the file; `None` when the file held none.
    token: Mutex<Option<AccessToken>>,
    /// Held while a refresh runs.
    refreshing: tokio::sync::Mutex<()>,
}

impl<C: StreamableHttpClient + Clone + Send + Sync + 'static> StoredToken<C> {
    /// The stored sign-in of `url` (the definition's exact string), sending through `plain`;
    /// `None` when nothing is stored. An entry that does not read (a malformed key or token)
    /// is the connection's error.
    pub(super) fn new(
        def: &ServerDef,
        file: &CredentialsFile,
        url: &str,
        plain: &C,
    ) -> Result<Option<Self>, String> {
        let fail = |e: EditError| format!("{e:#}");
        let Some(token) = file.access_token(url).map_err(fail)? else { return Ok(None) };
        let key = if token.bound { file.dpop_key(url).map_err(fail)? } else { None };
        let proofs = match key {
            Some(key) => Proofs::bound(plain.clone(), Arc::new(key)),
            None => Proofs::bearer(plain.clone()),
        };
        Ok(Some(Self {
            proofs,
            def: def.clone(),
            file: file.clone(),
            url: url.to_owned(),
            token: Mutex::new(Some(token)),
            refreshing: tokio::sync::Mutex::new(()),
        }))
    }

    /// Sends `request` with the stored token (or `auth_header`, when rmcp has one), once more
    /// with a refreshed token when the server rejects it.
    pub(super) async fn send<R: Request>(
        &self,
        request: R,
        auth_header: Option<String>,
        headers: Headers,
    ) -> Result<R::Output, HttpError<C>> {
        let token = match auth_header {
            Some(token) => Some(token),
            None => self.token().await?,
        };
        let Some(sent) = token else { return request.send_via(&self.proofs, None, headers).await };
        match request.clone().send_via(&self.proofs, Some(sent.clone()), headers.clone()).await {
            Err(StreamableHttpError::AuthRequired(challenge)) => match self.refresh(&sent).await {
                Ok(fresh) if fresh != sent => {
                    tracing::debug!(server = %self.def.name, "token refused; sending again with a refreshed one");
                    request.send_via(&self.proofs, Some(fresh), headers).await
                }
                Ok(_) | Err(AuthError::AuthorizationRequired) => {
                    Err(StreamableHttpError::AuthRequired(challenge))
                }
                Err(e) => Err(e.into()),
            },
            other => other,
        }
    }

    /// The token for the next request: the stored one, refreshed first when due; `None` when
    /// nothing usable is stored (the request then goes out unsigned, and its 401 says to sign
    /// in).
    async fn token(&self) -> Result<Option<String>, AuthError> {
        let Some(token) = self.current()? else { return Ok(None) };
        if !token.due(now_secs()) {
            return Ok(Some(token.secret().to_owned()));
        }
        tracing::info!(server = %self.def.name, "the access token expired or nearly so; refreshing it");
        match self.refresh(token.secret()).await {
            Ok(fresh) => Ok(Some(fresh)),
            Err(AuthError::AuthorizationRequired) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The file's token: the one read before while the file is unchanged (one `stat`), else
    /// read again (another process refreshed, signed in again or out).
    fn current(&self) -> Result<Option<AccessToken>, AuthError> {
        let mut held = self.token.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(token) = held.as_ref()
            && self.file.unchanged_since(token)
        {
            return Ok(Some(token.clone()));
        }
        let now = self
            .file
            .access_token(&self.url)
            .map_err(|e| AuthError::CredentialStoreError(format!("{e:#}")))?;
        held.clone_from(&now);
        Ok(now)
    }

    /// A token in place of `sent` (due, or refused by the server): one another refresh saved
    /// since `sent` was read, else a new one from the authorization server. `Err` of
    /// [`AuthError::AuthorizationRequired`] when only a new sign-in can help.
    async fn refresh(&self, sent: &str) -> Result<String, AuthError> {
        let _one = self.refreshing.lock().await;
        if let Some(now) = self.current()?
            && now.secret() != sent
            && !now.due(now_secs())
        {
            return Ok(now.secret().to_owned());
        }
        let Some(manager) =
            manager(&self.def, &self.file, &self.url).await.map_err(AuthError::InternalError)?
        else {
            return Err(AuthError::AuthorizationRequired);
        };
        let refreshed = manager.refresh_token().await;
        // Whatever happened, the file is the truth now (saved, or signed out on a rejection).
        *self.token.lock().unwrap_or_else(PoisonError::into_inner) = None;
        match refreshed {
            Ok(tokens) => {
                tracing::info!(server = %self.def.name, "refreshed the access token");
                Ok(tokens.access_token().secret().clone())
            }
            Err(e @ (AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_))) => {
                tracing::warn!(server = %self.def.name, "cannot refresh the access token ({e}); a new sign-in is needed");
                Err(AuthError::AuthorizationRequired)
            }
            Err(e) => Err(e),
        }
    }
}

/// Seconds since 1970, as rmcp stamps a token's `receivedAt`.
fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default()
}

/// rmcp's manager over the stored tokens of `url`, configured as the client that obtained them
/// (with its secret, for a confidential client, and its DPoP key for the refreshes); `None`
/// when nothing is stored.
async fn manager(
    def: &ServerDef,
    file: &CredentialsFile,
    url: &str,
) -> Result<Option<AuthorizationManager>, String> {
    let fail = |e: EditError| format!("{e:#}");
    let Some(signed_in) = file.status(url).map_err(fail)? else { return Ok(None) };
    let server = url::Url::parse(url).map_err(|e| format!("the server url is not usable: {e}"))?;
    let client = TokenClient::new(&server).map_err(|e| format!("{e:#}"))?;
    let mut manager = AuthorizationManager::new_with_oauth_http_client(url, client.clone())
        .await
        .map_err(|e| e.to_string())?;
    manager.set_credential_store(file.for_server(url));
    let key = if signed_in.bound { file.dpop_key(url).map_err(fail)?.map(Arc::new) } else { None };
    // What the sign-in discovered: no discovery round trips before the refresh.
    if let Some(metadata) = file.metadata(url).map_err(fail)? {
        if let Some(key) = key {
            client.bind(key, &metadata.token_endpoint);
        }
        manager.set_metadata(metadata);
    }
    match manager.initialize_from_store().await {
        Ok(true) => {}
        Ok(false) => return Ok(None),
        // Discovery failing (the server is down) is the request's error.
        Err(e) => {
            tracing::info!(server = %def.name, "stored sign-in not usable: {e}");
            return Ok(None);
        }
    }
    // The same sign-in `initialize_from_store` took up: its metadata is the entry's own, so no
    // issuer change can have cleared it in between.
    let issuer = signed_in.issuer;
    if let Ok((client_id, _)) = manager.get_credentials().await {
        let own = def.oauth.as_ref().filter(|o| o.client_id.as_deref() == Some(client_id.as_str()));
        let secret = match own.and_then(|o| o.client_secret.clone()) {
            Some(secret) => Some(secret),
            None => file.client_secret(url, issuer.as_deref(), &client_id).map_err(|e| format!("{e:#}"))?,
        };
        if let Some(secret) = secret {
            let config = OAuthClientConfig::new(client_id, STORED_REDIRECT).with_client_secret(secret);
            manager.configure_client(config).map_err(|e| e.to_string())?;
        }
    }
    Ok(Some(manager))
}

#[cfg(test)]
mod tests {
    //! A DPoP-bound sign-in against a loopback server that plays the MCP server and its token
    //! endpoint, recording what each request carried.

    use std::collections::HashMap;

    use axum::http::{HeaderMap, StatusCode, Uri, header};
    use axum::response::IntoResponse as _;
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use rmcp::transport::auth::{AuthorizationMetadata, CredentialStore as _, StoredCredentials};
    use serde_json::{Value, json};
    use sha2::{Digest as _, Sha256};
    use tokio::net::TcpListener;

    use super::super::dpop::ProofKey;
    use super::*;
    use crate::auth::OAuthHttp;

    /// One request as the server saw it.
    #[derive(Debug, Clone)]
    struct Seen {
        path: String,
        headers: HashMap<String, String>,
        body: String,
    }

    type Log = Arc<Mutex<Vec<Seen>>>;

    /// The server: `/token` refreshes to `at-2`; `/mcp` refuses every token but `at-2` (401,
    /// `invalid_token`) and answers a request with an empty result. Returns its origin.
    async fn serve(log: Log) -> anyhow::Result<String> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let origin = format!("http://{}", listener.local_addr()?);
        let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: String| {
            let log = log.clone();
            async move {
                let headers = headers
                    .iter()
                    .map(|(k, v)| (k.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                    .collect();
                let seen = Seen { path: uri.path().to_owned(), headers, body };
                log.lock().unwrap_or_else(PoisonError::into_inner).push(seen.clone());
                let json = [(header::CONTENT_TYPE, "application/json")];
                if seen.path == "/token" {
                    let tokens = json!({"access_token": "at-2", "token_type": "DPoP", "expires_in": 3600,
                        "refresh_token": "rt-2"});
                    (StatusCode::OK, json, tokens.to_string()).into_response()
                } else if seen.headers.get("authorization").map(String::as_str) == Some("DPoP at-2") {
                    let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
                    (StatusCode::OK, json, answer.to_string()).into_response()
                } else {
                    let challenge = [(header::WWW_AUTHENTICATE, "DPoP error=\"invalid_token\"")];
                    (StatusCode::UNAUTHORIZED, challenge, json).into_response()
                }
            }
        });
        tokio::spawn(async move { axum::serve(listener, app).await });
        Ok(origin)
    }

    /// A DPoP-bound sign-in to `url` stored in `file`, its token `access` received at `received_at`.
    async fn sign_in(
        file: &CredentialsFile,
        url: &str,
        origin: &str,
        access: &str,
        received_at: u64,
    ) -> anyhow::Result<ProofKey> {
        let token = serde_json::from_value(json!({"access_token": access, "token_type": "DPoP",
            "expires_in": 3600, "refresh_token": "rt-1"}))?;
        let issuer = Some(origin.to_string());
        let stored = StoredCredentials::new("client-1".into(), Some(token), vec![], Some(received_at))
            .with_issuer(issuer.clone());
        file.for_server(url).save(stored).await?;
        let metadata: AuthorizationMetadata = serde_json::from_value(json!({
            "issuer": origin, "authorization_endpoint": format!("{origin}/authorize"),
            "token_endpoint": format!("{origin}/token")}))?;
        file.set_metadata(url, issuer.as_deref(), &metadata)?;
        let key = ProofKey::generate()?;
        file.set_dpop_key(url, issuer.as_deref(), Some(&key))?;
        Ok(key)
    }

    fn claims(proof: &str) -> Value {
        let text = proof.split('.').nth(1).unwrap_or_default();
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(text).unwrap_or_default()).unwrap_or(Value::Null)
    }

    async fn ping(client: &Layered<OAuthHttp<reqwest::Client>>, url: &str) -> anyhow::Result<()> {
        let message = serde_json::from_value(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))?;
        client
            .post_message(url.into(), message, None, None, HashMap::new())
            .await
            .map_err(|e| anyhow::anyhow!("the ping failed: {e}"))?;
        Ok(())
    }

    /// The server refuses the stored token: one refresh, proven with the sign-in's key, and the
    /// request sent again with the new token, bound to the same key; the file holds the new
    /// tokens, still DPoP, beside the same key.
    #[tokio::test]
    async fn a_refused_bound_token_is_refreshed_bound_and_sent_again() -> anyhow::Result<()> {
        let log: Log = Arc::default();
        let origin = serve(log.clone()).await?;
        let url = format!("{origin}/mcp");
        let tmp = tempfile::tempdir()?;
        let file = CredentialsFile::new(tmp.path().join("credentials.json"));
        sign_in(&file, &url, &origin, "at-1", now_secs()).await?;
        let def = ServerDef { name: "remote".into(), url: Some(url.clone()), ..ServerDef::default() };
        let client =
            OAuthHttp::new(&def, Some(&file), &crate::observe::Observer::default(), reqwest::Client::new())
                .await
                .map_err(anyhow::Error::msg)?;

        ping(&client, &url).await?;

        let seen = log.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let paths: Vec<&str> = seen.iter().map(|s| s.path.as_str()).collect();
        assert_eq!(paths, ["/mcp", "/token", "/mcp"], "one refresh, one retry");
        for (request, token) in [(&seen[0], "at-1"), (&seen[2], "at-2")] {
            assert_eq!(
                request.headers.get("authorization").map(String::as_str),
                Some(&*format!("DPoP {token}"))
            );
            let proof = claims(request.headers.get("dpop").map(String::as_str).unwrap_or_default());
            assert_eq!(proof["htm"], "POST");
            assert_eq!(proof["htu"], url.as_str());
            assert_eq!(proof["ath"], URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes())));
        }
        let refresh = &seen[1];
        assert!(refresh.body.contains("grant_type=refresh_token"), "{}", refresh.body);
        assert!(refresh.body.contains("refresh_token=rt-1"), "{}", refresh.body);
        let refresh_proof = claims(refresh.headers.get("dpop").map(String::as_str).unwrap_or_default());
        assert_eq!(refresh_proof["htu"], format!("{origin}/token"), "the refresh is proven too");
        let key_of =
            |proof: &str| jsonwebtoken::decode_header(proof).ok().and_then(|h| h.jwk).map(|j| json!(j));
        let first_key = key_of(seen[0].headers.get("dpop").map(String::as_str).unwrap_or_default());
        assert!(first_key.is_some());
        for request in &seen[1..] {
            assert_eq!(
                key_of(request.headers.get("dpop").map(String::as_str).unwrap_or_default()),
                first_key
            );
        }

        let stored = file.access_token(&url)?.ok_or_else(|| anyhow::anyhow!("signed out"))?;
        assert_eq!((stored.secret(), stored.bound), ("at-2", true), "written back, still bound");
        assert!(file.dpop_key(&url)?.is_some(), "the key stays");

        // The next request carries the new token at once.
        ping(&client, &url).await?;
        let seen = log.lock().unwrap_or_else(PoisonError::into_inner).clone();
        assert_eq!(seen.len(), 4, "no refresh, no refusal");
        assert_eq!(seen[3].headers.get("authorization").map(String::as_str), Some("DPoP at-2"));
        Ok(())
    }

    /// A stored token past its lifetime is refreshed before the request, which then goes out
    /// once, with the new token; a valid one goes out as stored, with no token request.
    #[tokio::test]
    async fn an_expired_bound_token_is_refreshed_before_the_request() -> anyhow::Result<()> {
        let log: Log = Arc::default();
        let origin = serve(log.clone()).await?;
        let url = format!("{origin}/mcp");
        let tmp = tempfile::tempdir()?;
        let file = CredentialsFile::new(tmp.path().join("credentials.json"));
        sign_in(&file, &url, &origin, "at-1", now_secs() - 7200).await?;
        let def = ServerDef { name: "remote".into(), url: Some(url.clone()), ..ServerDef::default() };
        let client =
            OAuthHttp::new(&def, Some(&file), &crate::observe::Observer::default(), reqwest::Client::new())
                .await
                .map_err(anyhow::Error::msg)?;

        ping(&client, &url).await?;
        ping(&client, &url).await?;

        let seen = log.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let paths: Vec<&str> = seen.iter().map(|s| s.path.as_str()).collect();
        assert_eq!(paths, ["/token", "/mcp", "/mcp"], "refreshed once, before the first request");
        assert!(
            seen[1..].iter().all(|s| s.headers.get("authorization").map(String::as_str) == Some("DPoP at-2"))
        );
        assert_eq!(file.access_token(&url)?.map(|t| t.secret().to_owned()).as_deref(), Some("at-2"));
        Ok(())
    }
}
