//! The HTTP client under a person's sign-in (and the refreshes of its tokens): what rmcp's own
//! OAuth client does — rmcp's address rule ([`AddressPolicy`]), bounded bodies, same limits on
//! redirects — plus a DPoP proof on every request to the token endpoint once the sign-in is
//! [bound](TokenClient::bind). rmcp lets a caller supply this client
//! (`AuthorizationManager::new_with_oauth_http_client`) but not wrap its own, so it is restated
//! here.
//!
//! A `400 use_dpop_nonce` with a `DPoP-Nonce` header is answered once more with that nonce
//! (RFC 9449 §8); a nonce in any other answer is used from the next request on.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context as _, Result};
use futures::StreamExt as _;
use http::{HeaderValue, Method};
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy, OAuthHttpRequest,
};
use url::Url;

use super::{NONCE_HEADER, PROOF_HEADER, ProofKey, asks_for_nonce, without_query};
use crate::auth::address_policy::AddressPolicy;

/// rmcp's bounds for its OAuth client (`MAX_OAUTH_HTTP_RESPONSE_BODY_BYTES`,
/// `MAX_OAUTH_REDIRECTS`, `DEFAULT_HTTP_TIMEOUT`).
const MAX_BODY_BYTES: usize = 1024 * 1024;
const MAX_REDIRECTS: usize = 10;
const TIMEOUT: Duration = Duration::from_secs(30);

type HttpRequest = http::Request<Vec<u8>>;
type HttpResponse = http::Response<Vec<u8>>;

/// See the module documentation.
pub struct TokenClient {
    follow: reqwest::Client,
    stop: reqwest::Client,
    policy: AddressPolicy,
    binding: Mutex<Option<Binding>>,
}

/// What a bound sign-in proves its token requests with.
struct Binding {
    key: Arc<ProofKey>,
    /// Requests to this URL (query left out) carry a proof.
    token_endpoint: String,
    /// The authorization server's latest nonce.
    nonce: Option<String>,
}

fn error(message: String) -> OAuthHttpClientError {
    message.into()
}

/// Why a request to `url` is not sent: the address rule refuses its host.
fn refused(url: &reqwest::Url) -> String {
    format!("OAuth request to `{url}` refused: address not allowed")
}

impl TokenClient {
    /// The client for the OAuth requests of the server at `server`, not yet bound.
    pub fn new(server: &Url) -> Result<Arc<Self>> {
        let policy = AddressPolicy::for_server(server);
        let hops = policy.clone();
        let follow = reqwest::redirect::Policy::custom(move |attempt| {
            if !hops.allows_url(attempt.url()) {
                let refused = refused(attempt.url());
                attempt.error(refused)
            } else if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("OAuth request exceeded {MAX_REDIRECTS} redirects"))
            } else {
                attempt.follow()
            }
        });
        let follow = policy.client_with(follow, TIMEOUT).context("cannot build the sign-in's HTTP client")?;
        let stop = policy.client(TIMEOUT).context("cannot build the sign-in's HTTP client")?;
        Ok(Arc::new(Self { follow, stop, policy, binding: Mutex::new(None) }))
    }

    /// From now on, requests to `token_endpoint` carry a proof made with `key`.
    pub fn bind(&self, key: Arc<ProofKey>, token_endpoint: &str) {
        let token_endpoint = without_query(token_endpoint);
        *self.binding.lock().unwrap_or_else(PoisonError::into_inner) =
            Some(Binding { key, token_endpoint, nonce: None });
    }

    /// The key and nonce to prove `request` with; `None` when it needs no proof.
    fn proving(&self, request: &HttpRequest) -> Option<(Arc<ProofKey>, Option<String>)> {
        let binding = self.binding.lock().unwrap_or_else(PoisonError::into_inner);
        let binding = binding.as_ref()?;
        let to_token_endpoint = request.method() == Method::POST
            && without_query(&request.uri().to_string()) == binding.token_endpoint;
        to_token_endpoint.then(|| (binding.key.clone(), binding.nonce.clone()))
    }

    fn keep_nonce(&self, nonce: String) {
        if let Some(binding) = self.binding.lock().unwrap_or_else(PoisonError::into_inner).as_mut() {
            binding.nonce = Some(nonce);
        }
    }

    /// One request as it goes out, through the client of its redirect policy.
    async fn send(
        &self,
        request: HttpRequest,
        redirects: OAuthHttpRedirectPolicy,
        timeout: Option<Duration>,
    ) -> Result<HttpResponse, OAuthHttpClientError> {
        let client = match redirects {
            OAuthHttpRedirectPolicy::Stop => &self.stop,
            _ => &self.follow,
        };
        let mut request = reqwest::Request::try_from(request)?;
        if !self.policy.allows_url(request.url()) {
            return Err(error(refused(request.url())));
        }
        if let Some(timeout) = timeout {
            *request.timeout_mut() = Some(timeout);
        }
        let response = client.execute(request).await?;
        let mut answer = http::Response::builder().status(response.status()).version(response.version());
        for (name, value) in response.headers() {
            answer = answer.header(name, value);
        }
        let mut body = Vec::new();
        let mut chunks = response.bytes_stream();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk?;
            if chunk.len() > MAX_BODY_BYTES - body.len() {
                return Err(error(format!("OAuth HTTP response body exceeds {MAX_BODY_BYTES} bytes")));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(answer.body(body)?)
    }

    /// `request` with a proof, once more with the server's nonce when it asks for a new one.
    async fn send_proved(
        &self,
        request: HttpRequest,
        redirects: OAuthHttpRedirectPolicy,
        timeout: Option<Duration>,
        key: &ProofKey,
        nonce: Option<String>,
    ) -> Result<HttpResponse, OAuthHttpClientError> {
        let (parts, body) = request.into_parts();
        let url = &parts.uri.to_string();
        let send = |nonce: Option<String>| {
            let request = http::Request::from_parts(parts.clone(), body.clone());
            async move {
                let mut request = request;
                let proof =
                    key.proof("POST", url, None, nonce.as_deref()).map_err(|e| error(format!("{e:#}")))?;
                request.headers_mut().insert(PROOF_HEADER, HeaderValue::from_str(&proof)?);
                self.send(request, redirects, timeout).await
            }
        };
        let response = send(nonce.clone()).await?;
        match self.nonce_asked(&response) {
            Some(fresh) if nonce.as_ref() != Some(&fresh) => {
                tracing::debug!(
                    "the authorization server asks for a DPoP nonce; sending the token request again"
                );
                let response = send(Some(fresh)).await?;
                self.nonce_asked(&response);
                Ok(response)
            }
            _ => Ok(response),
        }
    }

    /// Keeps the nonce `response` carries, if any; returns it when the response refuses the
    /// proof for lacking it (`400 use_dpop_nonce`).
    fn nonce_asked(&self, response: &HttpResponse) -> Option<String> {
        let fresh = response.headers().get(NONCE_HEADER)?.to_str().ok()?.to_owned();
        self.keep_nonce(fresh.clone());
        let asks = response.status() == http::StatusCode::BAD_REQUEST
            && asks_for_nonce(&String::from_utf8_lossy(response.body()));
        asks.then_some(fresh)
    }
}

impl OAuthHttpClient for TokenClient {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let OAuthHttpRequest { request, redirect_policy, timeout, .. } = request;
            match self.proving(&request) {
                Some((key, nonce)) => self.send_proved(request, redirect_policy, timeout, &key, nonce).await,
                None => self.send(request, redirect_policy, timeout).await,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    /// A listener on this machine that answers every connection `200 {}` and counts them.
    async fn listener() -> anyhow::Result<(u16, Arc<AtomicUsize>)> {
        let socket = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = socket.local_addr()?.port();
        let count = Arc::new(AtomicUsize::new(0));
        let seen = count.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = socket.accept().await {
                seen.fetch_add(1, Ordering::SeqCst);
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).await.is_ok_and(|n| n == 1) {
                    head.push(byte[0]);
                }
                let answer =
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
                let _ = stream.write_all(answer.as_bytes()).await;
            }
        });
        Ok((port, count))
    }

    fn get(url: &str) -> anyhow::Result<HttpRequest> {
        Ok(http::Request::builder().method("GET").uri(url).body(Vec::new())?)
    }

    /// A sign-in's requests keep to rmcp's rule: for a server on the network, this machine is
    /// reached neither by its address nor by a name that resolves to it; for a server on this
    /// machine it is.
    #[tokio::test]
    async fn a_sign_in_reaches_this_machine_only_for_a_server_on_it() -> anyhow::Result<()> {
        let (port, connections) = listener().await?;
        let remote = TokenClient::new(&Url::parse("https://mcp.example.com/mcp")?)?;
        for url in [format!("http://127.0.0.1:{port}/token"), format!("http://localhost:{port}/token")] {
            let answer = remote.send(get(&url)?, OAuthHttpRedirectPolicy::Stop, None).await;
            assert!(answer.is_err(), "{url} was reached");
        }
        assert_eq!(connections.load(Ordering::SeqCst), 0);
        let local = TokenClient::new(&Url::parse(&format!("http://127.0.0.1:{port}/mcp"))?)?;
        let url = format!("http://localhost:{port}/token");
        let answer = local.send(get(&url)?, OAuthHttpRedirectPolicy::Stop, None).await;
        assert_eq!(answer.map(|a| a.status().as_u16()).map_err(|e| format!("{e:?}")), Ok(200));
        assert_eq!(connections.load(Ordering::SeqCst), 1);
        Ok(())
    }
}
