//! `serve --http`: rmcp's streamable HTTP service at `/mcp` under axum, with what a server on
//! a port needs that stdio does not: `Host` and `Origin` checked against DNS rebinding (rmcp's
//! checks, given loopback lists), a bearer token required off loopback (compared in constant
//! time), connections capped and given a header deadline (`listener.rs`), a request body
//! read whole, within its size and a deadline, before the request takes one of the places in
//! flight (a response that streams holds its place until it ends; standalone `GET` streams
//! have places of their own, so they cannot starve requests), sessions capped where they are
//! made and bound to the caller that opened them (idle ones end after
//! [`HttpOptions::SESSION_IDLE`]; `bound_sessions.rs`), and `DELETE` of an unknown or ended
//! session answered 404. Each of the workspace's bundles at `/mcp/<bundle>`, the same
//! service scoped by the path (`access.rs`; an unknown bundle is 404). Beside `/mcp`, the operator's `/healthz`, `/readyz`, `/metrics`
//! and `/status` (`operator.rs`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use axum::body::Body;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::access;
use super::bearer::{Bearer, HttpAuth};
use super::bound_sessions::{self, BoundSessions};
use super::listener::{self, ConnectionLimits};
use super::operator;
use super::rate_limit::{Limiters, RateLimit};
use super::sealed_sessions::{self, SealedSessions};
use super::session_key::SessionKey;
use crate::serve::{Front, Shared};

/// How `serve --http` listens.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen (port 0: any free port).
    pub addr: SocketAddr,
    /// How callers are known (a shared token, or JWTs from an issuer); required unless `addr`
    /// is loopback.
    pub auth: HttpAuth,
    /// `Host` values accepted besides loopback's (`example.com`, `example.com:8080`).
    pub allowed_hosts: Vec<String>,
    /// Browser origins accepted besides loopback's (`https://app.example.com`).
    pub allowed_origins: Vec<String>,
    /// The largest request body, in bytes.
    pub max_body_bytes: usize,
    /// Requests served at once; more are refused with 503 until one has ended. Standalone
    /// `GET` streams have as many places again, of their own.
    pub max_requests: usize,
    /// Connections open at once (more are refused with 503 as they arrive).
    pub max_connections: usize,
    /// Connections open at once from one peer address.
    pub max_connections_per_peer: usize,
    /// Sessions (2025-11-25 clients) held at once; an `initialize` beyond them gets 503.
    pub max_sessions: usize,
    /// Whether `GET /metrics` serves the Prometheus text (`--metrics`; `operator.rs`): the
    /// runtime's observer's meter, which must have the Prometheus reader
    /// (`Observer::with_metrics(true)`).
    pub metrics: bool,
    /// The key replicas share (`--session-key-env`): session ids sealed so that any replica
    /// can restore a session (`sealed_sessions.rs`). `None`: sessions live in this process.
    pub session_key: Option<SessionKey>,
    /// How long a sealed session id serves after it was issued (`--session-lifetime`); then
    /// it is an unknown session, and the client opens another.
    pub session_lifetime: Duration,
    /// Requests to `/mcp` per caller (`--rate-limit`; `rate_limit.rs`).
    pub rate_limit: Option<RateLimit>,
    /// `tools/call`s per caller per tool (`--tool-rate-limit`).
    pub tool_rate_limit: Option<RateLimit>,
}

impl HttpOptions {
    /// The default largest request body: 4 MiB.
    pub const MAX_BODY_BYTES: usize = 4 << 20;
    /// The default number of requests served at once.
    pub const MAX_REQUESTS: usize = 64;
    /// The default number of connections open at once (a process's descriptors are often
    /// capped at 1,024: the rest stay for servers and files).
    pub const MAX_CONNECTIONS: usize = 512;
    /// The default number of connections from one address (every local client shares
    /// 127.0.0.1, so this is not small).
    pub const MAX_CONNECTIONS_PER_PEER: usize = 256;
    /// The default number of sessions held at once (each costs about 64 KB: BENCHMARKS.md).
    pub const MAX_SESSIONS: usize = 512;
    /// The default [`HttpOptions::session_lifetime`]: a working day and more, so a client
    /// rarely meets it mid-task.
    pub const SESSION_LIFETIME: Duration = Duration::from_secs(24 * 3600);
    /// How long a session may stay idle before it is closed (rmcp's `keep_alive`).
    pub const SESSION_IDLE: Duration = Duration::from_secs(300);
    /// How long a client has to send a request's headers.
    pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
    /// How long a client has to send a request's whole body.
    pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);

    /// Loopback-only defaults for `addr`.
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            auth: HttpAuth::Open,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_body_bytes: Self::MAX_BODY_BYTES,
            max_requests: Self::MAX_REQUESTS,
            max_connections: Self::MAX_CONNECTIONS,
            max_connections_per_peer: Self::MAX_CONNECTIONS_PER_PEER,
            max_sessions: Self::MAX_SESSIONS,
            metrics: false,
            session_key: None,
            session_lifetime: Self::SESSION_LIFETIME,
            rate_limit: None,
            tool_rate_limit: None,
        }
    }
}

impl HttpOptions {
    /// Refuses what must not start: an address other than loopback without a token, or OIDC
    /// options that cannot work.
    pub fn check(&self) -> anyhow::Result<()> {
        if !self.addr.ip().is_loopback() && self.auth == HttpAuth::Open {
            anyhow::bail!(
                "refusing to serve MCP on {} without a token: an address other than loopback needs \
                 --token-env VAR (the environment variable holding the bearer token every client must send) \
                 or --auth oidc --issuer URL --audience A (JWT access tokens from an issuer)",
                self.addr
            );
        }
        if let HttpAuth::Oidc(oidc) = &self.auth {
            oidc.check()?;
        }
        Ok(())
    }
}

/// The loopback names a local client uses, with and without a port.
const LOOPBACK_HOSTS: [&str; 4] = ["localhost", "127.0.0.1", "::1", "[::1]"];

/// Binds, reports the bound address through `ready`, and serves until `stop` is cancelled.
pub async fn serve(
    shared: Arc<Shared>,
    access: Arc<access::Access>,
    options: HttpOptions,
    stop: CancellationToken,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    options.check()?;
    let observer = shared.runtime.observer().clone();
    if options.metrics && !observer.has_prometheus() {
        anyhow::bail!(
            "serve --http --metrics needs a meter with the Prometheus reader in the runtime's observer: \
             build it with Observer::with_metrics(true)"
        );
    }
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
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(HttpOptions::SESSION_IDLE);
    let sessions = BoundSessions::new(sessions, options.max_sessions);
    let bearer = Bearer::start(&options.auth, &stop)?;
    let sealed = options
        .session_key
        .clone()
        .map(|key| SealedSessions::new(key, options.session_lifetime, sessions.clone()));
    config.session_store = sealed.as_ref().map(|sealed| sealed.store());
    let operator = operator::Operator {
        shared: shared.clone(),
        access,
        bearer: bearer.clone(),
        hosts: config.allowed_hosts.clone(),
        origins: config.allowed_origins.clone(),
        metrics: options.metrics,
    };
    let runtime = shared.runtime.clone();
    let routes = shared.clone();
    let service =
        StreamableHttpService::new(move || Ok(Front::new(shared.clone())), sessions.clone(), config);
    let gate = Gate {
        bearer: bearer.clone(),
        places: Arc::new(Semaphore::new(options.max_requests)),
        streams: Arc::new(Semaphore::new(options.max_requests)),
        max_body_bytes: options.max_body_bytes,
        limits: Limiters::new(options.rate_limit, options.tool_rate_limit, observer),
        shared: routes,
    };
    if let Some(limits) = &gate.limits {
        limits.sweep(stop.child_token());
    }
    let router = axum::Router::new()
        .route_service("/mcp", service.clone())
        .route_service("/mcp/{bundle}", service.clone())
        // `/mcp/docs/` is `/mcp/docs`, as `access::bundle_in` reads it (an unknown one gets
        // `known_bundle`'s 404 with its hint, not an empty one).
        .route_service("/mcp/{bundle}/", service)
        .layer(axum::middleware::from_fn_with_state(sessions, bound_sessions::guard))
        .layer(axum::middleware::from_fn_with_state(sealed, sealed_sessions::unseal))
        .layer(axum::middleware::from_fn_with_state(runtime, access::known_bundle))
        .layer(axum::middleware::from_fn_with_state(Arc::new(gate), admit))
        .merge(operator::router(Arc::new(operator)))
        .merge(bearer.routes());
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .with_context(|| format!("cannot listen on {}", options.addr))?;
    ready(listener.local_addr().context("cannot read the bound address")?);
    let limits = ConnectionLimits {
        total: options.max_connections.max(1),
        per_peer: options.max_connections_per_peer.max(1),
        header_timeout: HttpOptions::HEADER_TIMEOUT,
    };
    listener::serve(listener, router, limits, stop).await.context("the HTTP server failed")
}

/// The caller check, the places for requests and for standalone streams, and the rate limits
/// (the session cap is kept where sessions are made: `bound_sessions.rs`).
struct Gate {
    bearer: Bearer,
    places: Arc<Semaphore>,
    streams: Arc<Semaphore>,
    max_body_bytes: usize,
    limits: Option<Arc<Limiters>>,
    /// How a `tools/call` is routed, for the per-tool limit (`rate_limit.rs`).
    shared: Arc<Shared>,
}

/// Lets a request in if it carries a good token (`bearer.rs`: with OIDC it then names its
/// caller), its body arrives whole in time and within its
/// size, and a place is free; the place is held by the response body, so a streamed answer
/// counts until its stream ends. A body still arriving holds no place: 64 bodies that never
/// end no longer shut everyone out.
async fn admit(State(gate): State<Arc<Gate>>, mut request: Request, next: Next) -> Response {
    if let Err(refused) = gate.bearer.admit(&mut request).await {
        return refused;
    }
    let standalone = request.method() == Method::GET;
    let (parts, body) = match whole(request, gate.max_body_bytes).await {
        Ok(read) => read,
        Err(refused) => return refused,
    };
    if let Some(limits) = &gate.limits
        && let Some(refused) = limits.refusal(&parts, &body, &gate.shared).await
    {
        return refused;
    }
    let places = if standalone { &gate.streams } else { &gate.places };
    let Ok(place) = places.clone().try_acquire_owned() else {
        let what = if standalone { "streams open" } else { "requests in flight" };
        return (StatusCode::SERVICE_UNAVAILABLE, format!("too many {what}; try again\n")).into_response();
    };
    let response = next.run(Request::from_parts(parts, Body::from(body))).await;
    response.map(|body| {
        Body::new(body.map_frame(move |frame| {
            let _held = &place;
            frame
        }))
    })
}

/// `request`'s head and its body read whole: within `limit` bytes (else 413) and
/// [`HttpOptions::BODY_TIMEOUT`] (else 408).
async fn whole(request: Request, limit: usize) -> Result<(Parts, Bytes), Response> {
    let (parts, body) = request.into_parts();
    let read = http_body_util::Limited::new(body, limit).collect();
    let bytes = match tokio::time::timeout(HttpOptions::BODY_TIMEOUT, read).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            let said = format!("the request body is over {limit} bytes (--max-body-bytes)\n");
            return Err((StatusCode::PAYLOAD_TOO_LARGE, said).into_response());
        }
        Ok(Err(e)) => {
            return Err(
                (StatusCode::BAD_REQUEST, format!("cannot read the request body: {e}\n")).into_response()
            );
        }
        Err(_) => {
            let said =
                format!("the request body did not arrive within {} s\n", HttpOptions::BODY_TIMEOUT.as_secs());
            return Err((StatusCode::REQUEST_TIMEOUT, said).into_response());
        }
    };
    Ok((parts, bytes))
}

/// A parked call per session at most, by default as by `--max-sessions`.
const _: () = assert!(HttpOptions::MAX_SESSIONS == crate::serve::DEFAULT_ROUNDS_LIMIT);
