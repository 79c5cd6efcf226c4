//! What serve is doing now, for operators (`/status`, the metrics' gauges): the clients
//! connected — each session with its `clientInfo` name and protocol revision — and the
//! requests in flight, each held by an [`InFlight`] guard its handler keeps until it answers,
//! however it ends. A client is forgotten once its transport closed (a 2025-11-25 session
//! ended; a 2026-07-28 request, which is a connection of its own, answered).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use rmcp::model::ProtocolVersion;
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde::Serialize;

/// The clients and the requests in flight.
#[derive(Default)]
pub struct Board {
    next: AtomicU64,
    calls: Mutex<Vec<Call>>,
    clients: Mutex<Vec<Client>>,
}

struct Call {
    id: u64,
    session: u64,
    method: &'static str,
    name: String,
    started: Instant,
}

struct Client {
    session: u64,
    name: String,
    version: String,
    protocol: Option<String>,
    peer: Peer<RoleServer>,
    since: Instant,
}

/// One request in flight; dropping it ends it.
pub struct InFlight {
    board: Arc<Board>,
    id: u64,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        lock(&self.board.calls).retain(|c| c.id != self.id);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A client as `/status` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ClientNow {
    /// serve's number for the session.
    pub session: u64,
    /// `clientInfo.name`, as the client gave it.
    pub name: String,
    /// `clientInfo.version`.
    pub version: String,
    /// The protocol revision of its session (or of its last request).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// Seconds since serve first saw it.
    pub connected_s: f64,
}

/// A request in flight as `/status` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct CallNow {
    /// The session that asked.
    pub session: u64,
    /// Its client's name.
    pub client: String,
    /// `tools/call`, `resources/read`, `prompts/get`.
    pub method: &'static str,
    /// The tool, URI or prompt asked for.
    pub name: String,
    /// Seconds since it arrived.
    pub age_s: f64,
}

impl Board {
    /// `method` of `name` from `session` is in flight until the guard drops; its client is
    /// noted too.
    pub fn start(
        self: &Arc<Self>,
        session: u64,
        context: &RequestContext<RoleServer>,
        method: &'static str,
        name: &str,
    ) -> InFlight {
        let protocol = context.protocol_version();
        let named = context.meta.client_info().map(|i| (i.name, i.version));
        self.seen(session, &context.peer, protocol, named);
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let name = match method {
            "resources/read" => shown_uri(name),
            _ => name.to_string(),
        };
        let call = Call { id, session, method, name, started: Instant::now() };
        lock(&self.calls).push(call);
        InFlight { board: self.clone(), id }
    }

    /// `session`, behind `peer`, is connected: named by its `initialize` (or, on 2026-07-28,
    /// by the request's `_meta` clientInfo, `named`).
    pub fn seen(
        &self,
        session: u64,
        peer: &Peer<RoleServer>,
        protocol: Option<ProtocolVersion>,
        named: Option<(String, String)>,
    ) {
        let protocol = protocol.map(|p| p.as_str().to_string());
        let mut clients = lock(&self.clients);
        clients.retain(|c| !c.peer.is_transport_closed());
        if let Some(known) = clients.iter_mut().find(|c| c.session == session) {
            if protocol.is_some() {
                known.protocol = protocol;
            }
            return;
        }
        let info = peer.peer_info();
        let (name, version) = named
            .or_else(|| info.as_ref().map(|i| (i.client_info.name.clone(), i.client_info.version.clone())))
            .unwrap_or_default();
        let protocol = protocol.or_else(|| info.map(|i| i.protocol_version.as_str().to_string()));
        clients.push(Client { session, name, version, protocol, peer: peer.clone(), since: Instant::now() });
    }

    /// The clients connected now, oldest first.
    pub fn clients(&self) -> Vec<ClientNow> {
        let mut clients = lock(&self.clients);
        clients.retain(|c| !c.peer.is_transport_closed());
        clients
            .iter()
            .map(|c| ClientNow {
                session: c.session,
                name: c.name.clone(),
                version: c.version.clone(),
                protocol: c.protocol.clone(),
                connected_s: round_ms(c.since.elapsed().as_secs_f64()),
            })
            .collect()
    }

    /// The requests in flight now, oldest first.
    pub fn calls(&self) -> Vec<CallNow> {
        let names: Vec<(u64, String)> =
            lock(&self.clients).iter().map(|c| (c.session, c.name.clone())).collect();
        let client = |session: u64| names.iter().find(|(s, _)| *s == session).map(|(_, n)| n.clone());
        lock(&self.calls)
            .iter()
            .map(|c| CallNow {
                session: c.session,
                client: client(c.session).unwrap_or_default(),
                method: c.method,
                name: c.name.clone(),
                age_s: round_ms(c.started.elapsed().as_secs_f64()),
            })
            .collect()
    }

    /// How many requests are in flight and how many clients are connected.
    pub fn counts(&self) -> (u64, u64) {
        let calls = lock(&self.calls).len() as u64;
        let mut clients = lock(&self.clients);
        clients.retain(|c| !c.peer.is_transport_closed());
        (calls, clients.len() as u64)
    }
}

/// A resource URI as `/status` shows it: without its user info, query and fragment, which may
/// carry a caller's secret (`slow://admin:pw@doc?token=x#f` is `slow://doc`). Scheme, host and
/// path say what is read; nothing is added or re-encoded.
fn shown_uri(uri: &str) -> String {
    let uri = &uri[..uri.find(['?', '#']).unwrap_or(uri.len())];
    let Some(start) = uri.find("://").map(|i| i + 3) else { return uri.to_string() };
    let authority = &uri[start..uri[start..].find('/').map_or(uri.len(), |i| start + i)];
    match authority.rfind('@') {
        Some(at) => format!("{}{}", &uri[..start], &uri[start + at + 1..]),
        None => uri.to_string(),
    }
}

/// Seconds to the millisecond: what a person reads, and stable JSON.
fn round_ms(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_is_shown_without_user_info_query_or_fragment() {
        assert_eq!(shown_uri("slow://admin:pw@doc?token=x#f"), "slow://doc");
        assert_eq!(shown_uri("https://u@h.example:8443/a/b?x=1"), "https://h.example:8443/a/b");
        assert_eq!(shown_uri("file:///tmp/a@b.txt"), "file:///tmp/a@b.txt");
        assert_eq!(shown_uri("demo://item/1#part"), "demo://item/1");
        assert_eq!(shown_uri("urn:x?y"), "urn:x");
    }
}
