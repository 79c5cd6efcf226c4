//! `serve --http`: rmcp's streamable HTTP service at `/mcp` under axum, with what a server on
//! a port needs that stdio does not: `Host` and `Origin` checked against DNS rebinding (rmcp's
//! checks, given loopback lists), a bearer token required off loopback (compared in constant
//! time), and caps on body size and on requests in flight (a response that streams holds its
//! place until it ends), and `DELETE` of an unknown or ended session answered 404
//! (`ended_sessions.rs`).

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use subtle::ConstantTimeEq as _;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::ended_sessions;
use super::front::{Front, Shared};

/// How `serve --http` listens.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen (port 0: any free port).
    pub addr: SocketAddr,
    /// The bearer token every request must carry; required unless `addr` is loopback.
    pub token: Option<String>,
    /// `Host` values accepted besides loopback's (`example.com`, `example.com:8080`).
    pub allowed_hosts: Vec<String>,
    /// Browser origins accepted besides loopback's (`https://app.example.com`).
    pub allowed_origins: Vec<String>,
    /// The largest request body, in bytes.
    pub max_body_bytes: usize,
    /// Requests served at once; more are refused with 503 until one has ended.
    pub max_requests: usize,
}

impl HttpOptions {
    /// The default largest request body: 4 MiB.
    pub const MAX_BODY_BYTES: usize = 4 << 20;
    /// The default number of requests served at once.
    pub const MAX_REQUESTS: usize = 64;

    /// Loopback-only defaults for `addr`.
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            token: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_body_bytes: Self::MAX_BODY_BYTES,
            max_requests: Self::MAX_REQUESTS,
        }
    }
}

impl HttpOptions {
    /// Refuses what must not start: an address other than loopback without a token.
    pub fn check(&self) -> anyhow::Result<()> {
        if !self.addr.ip().is_loopback() && self.token.is_none() {
            anyhow::bail!(
                "refusing to serve MCP on {} without a token: an address other than loopback needs \
                 --token-env VAR (the environment variable holding the bearer token every client must send)",
                self.addr
            );
        }
        Ok(())
    }
}

/// The loopback names a local client uses, with and without a port.
const LOOPBACK_HOSTS: [&str; 4] = ["localhost", "127.0.0.1", "::1", "[::1]"];

/// Binds, reports the bound address through `ready`, and serves until `stop` is cancelled.
pub async fn serve(
    shared: Arc<Shared>,
    options: HttpOptions,
    stop: CancellationToken,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    options.check()?;
    let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect();
    if !options.addr.ip().is_loopback() && !options.addr.ip().is_unspecified() {
        hosts.push(options.addr.ip().to_string());
    }
    hosts.extend(options.allowed_hosts.iter().cloned());
    let mut origins: Vec<String> = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]
        .iter()
        .map(|o| o.to_string())
        .collect();
    origins.extend(options.allowed_origins.iter().cloned());
    let mut config = StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token());
    config.allowed_hosts = hosts;
    config.allowed_origins = origins;
    let sessions = Arc::new(LocalSessionManager::default());
    let service =
        StreamableHttpService::new(move || Ok(Front::new(shared.clone())), sessions.clone(), config);
    let gate = Gate { token: options.token.clone(), places: Arc::new(Semaphore::new(options.max_requests)) };
    let router = axum::Router::new()
        .route_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(sessions, ended_sessions::refuse_unknown))
        .layer(tower_http::limit::RequestBodyLimitLayer::new(options.max_body_bytes))
        .layer(axum::middleware::from_fn_with_state(Arc::new(gate), admit));
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .with_context(|| format!("cannot listen on {}", options.addr))?;
    ready(listener.local_addr().context("cannot read the bound address")?);
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { stop.cancelled().await })
        .await
        .context("the HTTP server failed")
}

/// The token and the places for requests in flight.
struct Gate {
    token: Option<String>,
    places: Arc<Semaphore>,
}

/// Lets a request in if it carries the token and a place is free; the place is held by the
/// response body, so a streamed answer counts until its stream ends.
async fn admit(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    if let Some(token) = &gate.token
        && !carries(&request, token)
    {
        let mut refused = (StatusCode::UNAUTHORIZED, "a bearer token is required\n").into_response();
        refused.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return refused;
    }
    let Ok(place) = gate.places.clone().try_acquire_owned() else {
        return (StatusCode::SERVICE_UNAVAILABLE, "too many requests in flight; try again\n").into_response();
    };
    let response = next.run(request).await;
    response.map(|body| {
        Body::new(body.map_frame(move |frame| {
            let _held = &place;
            frame
        }))
    })
}

/// `Authorization: Bearer <token>`, compared in constant time.
fn carries(request: &Request, token: &str) -> bool {
    let Some(value) = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let Some(given) = value.strip_prefix("Bearer ") else { return false };
    given.as_bytes().ct_eq(token.as_bytes()).into()
}
