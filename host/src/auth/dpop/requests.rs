//! MCP requests with a DPoP-bound token: the layer under the stored sign-in's token
//! (`auth/stored_token.rs`) and rmcp's `AuthClient` that presents the token it is handed as
//! `Authorization: DPoP <token>` with a fresh proof of the request's method, URL and token
//! (RFC 9449 §7.1), where rmcp's client would send `Bearer`. Without a binding it changes
//! nothing.
//!
//! A server that wants a nonce answers `401` with `error="use_dpop_nonce"` and the nonce in a
//! `DPoP-Nonce` header (§9). The client below keeps a 401's headers to itself (it returns only
//! the `WWW-Authenticate` value), so the nonce is read from the answer to a `ping` sent
//! directly, with the same token and session and a proof without nonce: a request that changes
//! nothing if the server takes it. The request is then sent once more with the nonce, which the
//! following requests of the connection carry too.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use http::header::{ACCEPT, AUTHORIZATION};
use http::{HeaderName, HeaderValue};
use rmcp::transport::auth::AuthError;
use rmcp::transport::streamable_http_client::{StreamableHttpClient, StreamableHttpError};
use serde_json::json;

use super::{NONCE_HEADER, PROOF_HEADER, ProofKey, SCHEME, asks_for_nonce};
use crate::http_layer::{Headers, HttpLayer, Layered, Request};

/// How long the nonce's `ping` may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// The standard headers of a request (SEP-2243) that name what it is: the `ping` names its own.
const NAMING_HEADERS: [&str; 2] = ["mcp-method", "mcp-name"];

type HttpError<C> = StreamableHttpError<<C as StreamableHttpClient>::Error>;

/// See the module documentation.
#[derive(Clone)]
pub struct Proofs<C> {
    inner: C,
    binding: Option<Arc<Binding>>,
}

/// A connection's key and the server's latest nonce.
struct Binding {
    key: Arc<ProofKey>,
    nonce: Mutex<Option<String>>,
    /// The client of the nonce's `ping`, built the first time a server asks for a nonce.
    probe: OnceLock<reqwest::Client>,
}

impl<C> Proofs<C> {
    /// Tokens go out as rmcp sends them (`Bearer`).
    pub fn bearer(inner: C) -> Layered<Self> {
        Layered(Self { inner, binding: None })
    }

    /// Tokens go out bound to `key`.
    pub fn bound(inner: C, key: Arc<ProofKey>) -> Layered<Self> {
        let binding = Binding { key, nonce: Mutex::new(None), probe: OnceLock::new() };
        Layered(Self { inner, binding: Some(Arc::new(binding)) })
    }
}

impl Binding {
    fn nonce(&self) -> Option<String> {
        self.nonce.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// `headers` with the token and a proof for `method` to `uri`.
    fn headers<E>(
        &self,
        method: &str,
        uri: &str,
        token: &str,
        mut headers: Headers,
    ) -> Result<Headers, StreamableHttpError<E>>
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        let failed = |what: String| StreamableHttpError::Auth(AuthError::InternalError(what));
        let proof = self
            .key
            .proof(method, uri, Some(token), self.nonce().as_deref())
            .map_err(|e| failed(format!("cannot make a DPoP proof: {e:#}")))?;
        let mut authorization = HeaderValue::from_str(&format!("{SCHEME} {token}"))
            .map_err(|_| failed("the access token is not a valid header value".into()))?;
        authorization.set_sensitive(true);
        let proof = HeaderValue::from_str(&proof)
            .map_err(|_| failed("the DPoP proof is not a valid header value".into()))?;
        headers.insert(AUTHORIZATION, authorization);
        headers.insert(HeaderName::from_static(PROOF_HEADER), proof);
        Ok(headers)
    }

    /// The server's nonce, from its answer to a `ping` with a proof that has none; `None` when
    /// it gives none.
    async fn learn_nonce(
        &self,
        uri: &str,
        token: &str,
        session: Option<&str>,
        headers: &Headers,
    ) -> Option<String> {
        let proof = self.key.proof("POST", uri, Some(token), None).ok()?;
        let probe = match self.probe.get() {
            Some(probe) => probe,
            None => {
                let built = crate::auth::tls::client_builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .timeout(PROBE_TIMEOUT)
                    .build();
                match built {
                    Ok(client) => self.probe.get_or_init(|| client),
                    Err(e) => {
                        tracing::warn!("cannot build the HTTP client to learn the DPoP nonce: {e}");
                        return None;
                    }
                }
            }
        };
        let mut request = probe
            .post(uri)
            .header(ACCEPT, "application/json, text/event-stream")
            .header(AUTHORIZATION, format!("{SCHEME} {token}"))
            .header(PROOF_HEADER, proof)
            .header("mcp-method", "ping")
            .json(&json!({"jsonrpc": "2.0", "id": "toolport-dpop-nonce", "method": "ping"}));
        for (name, value) in headers {
            let naming = NAMING_HEADERS.contains(&name.as_str()) || name.as_str().starts_with("mcp-param-");
            if !naming && name != AUTHORIZATION && name.as_str() != PROOF_HEADER {
                request = request.header(name, value);
            }
        }
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        let response = request.send().await.ok()?;
        let nonce = response.headers().get(NONCE_HEADER)?.to_str().ok()?.to_owned();
        *self.nonce.lock().unwrap_or_else(PoisonError::into_inner) = Some(nonce.clone());
        Some(nonce)
    }
}

impl<C: StreamableHttpClient> Proofs<C> {
    /// Sends with `send` (given the headers to use) the request `method` to `uri` carrying
    /// `token`: bound when there is a binding and a token, once more with the server's nonce
    /// when it asks for one.
    async fn present<T, F, Fut>(
        &self,
        method: &str,
        uri: &str,
        session: Option<&str>,
        token: Option<String>,
        headers: Headers,
        send: F,
    ) -> Result<T, HttpError<C>>
    where
        F: Fn(Option<String>, Headers) -> Fut,
        Fut: Future<Output = Result<T, HttpError<C>>>,
    {
        let (Some(binding), Some(token)) = (&self.binding, token.as_deref()) else {
            return send(token, headers).await;
        };
        let sent_nonce = binding.nonce();
        match send(None, binding.headers(method, uri, token, headers.clone())?).await {
            Err(StreamableHttpError::AuthRequired(challenge))
                if asks_for_nonce(&challenge.www_authenticate_header) =>
            {
                match binding.learn_nonce(uri, token, session, &headers).await {
                    Some(nonce) if Some(&nonce) != sent_nonce.as_ref() => {
                        tracing::debug!("the server asks for a DPoP nonce; sending the request again");
                        send(None, binding.headers(method, uri, token, headers)?).await
                    }
                    _ => Err(StreamableHttpError::AuthRequired(challenge)),
                }
            }
            other => other,
        }
    }
}

impl<C: StreamableHttpClient + Sync> HttpLayer for Proofs<C> {
    type Error = C::Error;

    async fn send<R: Request>(
        &self,
        request: R,
        auth_header: Option<String>,
        headers: Headers,
    ) -> Result<R::Output, HttpError<C>> {
        let (uri, session) = (request.uri(), request.session_id());
        self.present(R::METHOD, uri, session, auth_header, headers, |token, headers| {
            request.clone().send_via(&self.inner, token, headers)
        })
        .await
    }
}
