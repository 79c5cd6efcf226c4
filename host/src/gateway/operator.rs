//! What `serve --http` tells the people who run it, beside `/mcp`:
//! - `GET /healthz`: `200 ok` while the process serves (liveness).
//! - `GET /readyz`: 200 once the runtime's background start has finished — every active server
//!   connected or failed — and, with `--auth oidc`, the issuer's keys are known (a replica that
//!   cannot check a token would answer every caller 503); 503 before. The body names each
//!   server and its state, and whether the issuer's keys are known, nothing more (it is
//!   unauthenticated).
//! - `GET /metrics` (only with `--metrics`, else 404): every instrument of the runtime's
//!   observer's meter in the Prometheus text format (`observe::metrics`).
//! - `GET /status`: servers with their states and tool counts, the clients connected and the
//!   requests in flight with their age, as JSON (what `toolport status --url` reads).
//!
//! Probes carry no token (Kubernetes' probes send none), so `/healthz` and `/readyz` are open
//! and say only names and states. `/metrics` and `/status` show everything (every server and
//! tool, every caller's clients and calls), so they are the operator's alone: they pass the
//! same check as `/mcp` (`bearer.rs`) when one is set, and then, with `--auth oidc`, where a
//! valid token is any caller's, the policy must permit the caller `Action::"operate"` on
//! `Endpoint::"/status"` (or `"/metrics"`), else 403 (`access.rs`). With a shared token the
//! token's holder is the operator, and with no check at all (loopback only) whoever reaches
//! the port is. All four pass the checks `/mcp` has
//! against DNS rebinding (`Host` and `Origin`, the same lists) and the listener's connection
//! caps; they take none of `/mcp`'s places for requests, so a full gateway still answers its
//! probes.

use std::sync::{Arc, Weak};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::FutureExt as _;
use serde_json::{Value, json};

use super::access::Access;
use super::bearer::Bearer;
use crate::observe::metrics::Live;
use crate::serve::{Caller, Shared};
use crate::status::ServerState;

/// The endpoints' paths.
const PATHS: [&str; 4] = ["/healthz", "/readyz", "/metrics", "/status"];

/// What the endpoints read and check.
pub struct Operator {
    /// The front every client is served by.
    pub shared: Arc<Shared>,
    /// Who may operate, under the policy (`access.rs`).
    pub access: Arc<Access>,
    /// The caller check of `/mcp`, made by `/metrics` and `/status` too.
    pub bearer: Bearer,
    /// The `Host` values `/mcp` accepts (`name` for any port, or `name:port`).
    pub hosts: Vec<String>,
    /// The `Origin` values `/mcp` accepts (`scheme://host:*` for any port).
    pub origins: Vec<String>,
    /// Whether `/metrics` is served (`--metrics`).
    pub metrics: bool,
}

/// The four endpoints, behind their own checks.
pub fn router(operator: Arc<Operator>) -> axum::Router {
    axum::Router::new()
        .route(PATHS[0], get(healthz))
        .route(PATHS[1], get(readyz))
        .route(PATHS[2], get(prometheus))
        .route(PATHS[3], get(status))
        .layer(axum::middleware::from_fn_with_state(operator.clone(), guard))
        .with_state(operator)
}

/// The gauges of the runtime's observer read serve's servers, held tools, clients and calls
/// in flight from now on (while the gateway lives: the source holds it weakly, so the
/// observer's meter, which the runtime holds, keeps nothing alive).
pub fn watch(shared: &Arc<Shared>) {
    let observer = shared.runtime.observer().clone();
    let shared: Weak<Shared> = Arc::downgrade(shared);
    observer.set_live(Arc::new(move || {
        let Some(shared) = shared.upgrade() else { return Live::default() };
        let rows = shared.runtime.status();
        let states = [
            ServerState::Connected,
            ServerState::Error,
            ServerState::Disabled,
            ServerState::Paused,
            ServerState::Missing,
        ];
        let servers = states
            .iter()
            .map(|s| (s.as_str(), rows.iter().filter(|r| r.state == *s).count() as u64))
            .collect();
        let held_tools = rows.iter().map(|r| r.held.len() as u64).sum();
        let (calls_in_flight, clients) = shared.board.counts();
        Live { servers, held_tools, calls_in_flight, clients }
    }));
}

/// `Host` and `Origin` as `/mcp` checks them; the token for what is not a probe.
async fn guard(State(operator): State<Arc<Operator>>, mut request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or_default();
    if !host_allowed(host, &operator.hosts) {
        return (StatusCode::FORBIDDEN, "Forbidden: Host header is not allowed\n").into_response();
    }
    if let Some(origin) = headers.get(header::ORIGIN)
        && !origin.to_str().is_ok_and(|o| origin_allowed(o, &operator.origins))
    {
        return (StatusCode::FORBIDDEN, "Forbidden: Origin header is not allowed\n").into_response();
    }
    let path = request.uri().path().to_string();
    if matches!(path.as_str(), "/healthz" | "/readyz") {
        return next.run(request).await;
    }
    if let Err(refused) = operator.bearer.admit(&mut request).await {
        return refused;
    }
    // With OIDC a valid token is any caller of `/mcp`; the policy says who operates.
    if operator.bearer.names_callers() {
        let caller = request.extensions().get::<Caller>();
        if let Err(body) = operator.access.operates(caller, &path) {
            return (StatusCode::FORBIDDEN, body).into_response();
        }
    }
    next.run(request).await
}

async fn healthz() -> &'static str {
    "ok\n"
}

async fn readyz(State(operator): State<Arc<Operator>>) -> Response {
    let runtime = &operator.shared.runtime;
    let keys_known = operator.bearer.keys_known();
    let ready = runtime.settled().now_or_never().is_some() && keys_known != Some(false);
    let servers: Vec<Value> =
        runtime.status().iter().map(|r| json!({"name": r.name, "state": r.state.as_str()})).collect();
    let mut body = json!({"ready": ready, "servers": servers});
    if let Some(known) = keys_known {
        body["issuerKeys"] = json!(if known { "known" } else { "not known yet" });
    }
    let code = if ready { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (code, json_body(&body)).into_response()
}

async fn prometheus(State(operator): State<Arc<Operator>>) -> Response {
    if !operator.metrics {
        return (StatusCode::NOT_FOUND, "/metrics is off: start serve with --metrics\n").into_response();
    }
    match operator.shared.runtime.observer().prometheus_text() {
        Some(Ok(text)) => {
            let kind = HeaderValue::from_static(prometheus_client::encoding::prometheus_text::CONTENT_TYPE);
            ([(header::CONTENT_TYPE, kind)], text).into_response()
        }
        Some(Err(e)) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
        None => (StatusCode::SERVICE_UNAVAILABLE, "the metrics were not started\n").into_response(),
    }
}

async fn status(State(operator): State<Arc<Operator>>) -> Response {
    json_body(&status_json(&operator.shared)).into_response()
}

/// `value` as an `application/json` body (axum's `Json` is a feature toolport leaves off).
fn json_body(value: &Value) -> impl IntoResponse {
    let kind = HeaderValue::from_static("application/json");
    ([(header::CONTENT_TYPE, kind)], format!("{value}\n"))
}

/// `/status`'s body: `toolport` (its version: how `toolport status` knows whom it reads), the
/// servers, the clients and the calls in flight.
fn status_json(shared: &Shared) -> Value {
    let runtime = &shared.runtime;
    let servers: Vec<Value> = runtime
        .status()
        .iter()
        .map(|r| {
            let mut row = json!({
                "name": r.name,
                "state": r.state.as_str(),
                "tools": r.tools,
                "held": r.held.len(),
            });
            if let Some(error) = &r.error {
                row["error"] = json!(error);
            }
            row
        })
        .collect();
    json!({
        "toolport": env!("CARGO_PKG_VERSION"),
        "ready": runtime.settled().now_or_never().is_some(),
        "servers": servers,
        "clients": shared.board.clients(),
        "calls": shared.board.calls(),
    })
}

/// Whether `host` (a `Host` header: `name`, `name:port`, `[v6]:port`) is one of `allowed`: an
/// entry without a port allows the name on any port.
fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let host = host.trim().to_ascii_lowercase();
    if host.is_empty() {
        return false;
    }
    let (name, port) = split_port(&host);
    allowed.iter().any(|entry| {
        let entry = entry.to_ascii_lowercase();
        let (entry_name, entry_port) = split_port(&entry);
        bare(entry_name) == bare(name) && (entry_port.is_none() || entry_port == port)
    })
}

/// Whether `origin` (`scheme://host[:port]`) is one of `allowed`, where `:*` is any port.
fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    allowed.iter().any(|entry| {
        let entry = entry.trim().trim_end_matches('/').to_ascii_lowercase();
        match entry.strip_suffix(":*") {
            Some(stem) => {
                origin == stem
                    || origin
                        .strip_prefix(stem)
                        .and_then(|rest| rest.strip_prefix(':'))
                        .is_some_and(|port| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()))
            }
            None => origin == entry,
        }
    })
}

/// `name:port` split; a bare IPv6 address (`::1`) has no port.
fn split_port(host: &str) -> (&str, Option<&str>) {
    if host.starts_with('[') {
        return match host.find("]:") {
            Some(at) => (&host[..=at], Some(&host[at + 2..])),
            None => (host, None),
        };
    }
    match host.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') => (name, Some(port)),
        _ => (host, None),
    }
}

/// An IPv6 address without its brackets, so `[::1]` and `::1` compare equal.
fn bare(name: &str) -> &str {
    name.trim_start_matches('[').trim_end_matches(']')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_origins_are_checked_as_mcp_checks_them() {
        let hosts: Vec<String> = ["localhost", "127.0.0.1", "::1", "[::1]", "gw.example:8080"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(host_allowed("127.0.0.1:4000", &hosts));
        assert!(host_allowed("localhost", &hosts));
        assert!(host_allowed("[::1]:9", &hosts));
        assert!(host_allowed("gw.example:8080", &hosts));
        assert!(!host_allowed("gw.example:8081", &hosts));
        assert!(!host_allowed("evil.example", &hosts));
        assert!(!host_allowed("", &hosts));
        let origins: Vec<String> =
            ["http://localhost:*", "https://app.example"].iter().map(|s| s.to_string()).collect();
        assert!(origin_allowed("http://localhost:5173", &origins));
        assert!(origin_allowed("http://localhost", &origins));
        assert!(origin_allowed("https://app.example", &origins));
        assert!(!origin_allowed("http://localhost.evil:1", &origins));
        assert!(!origin_allowed("http://evil.example", &origins));
    }
}
