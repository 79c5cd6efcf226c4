//! Sessions that survive a request landing on another replica, with no store the replicas
//! share: only a key (`serve --http --session-key-env VAR`, `session_key.rs`). rmcp keeps a
//! 2025-11-25 session in the memory of the process that answered its `initialize`, and can
//! restore one it does not hold from a [`SessionStore`] by replaying that `initialize` (its
//! `try_restore_from_store`). Here the client is the store: the session id it is given is
//! rmcp's own id and the `initialize` parameters, sealed (authenticated encryption), so any
//! replica holding the key can rebuild the session and nobody else can forge or alter one.
//!
//! [`unseal`] sits in front of the service: on the way in it opens the `Mcp-Session-Id` header
//! back to rmcp's id (a value that does not open is an unknown session: 404, rmcp's words) and,
//! when this replica does not hold that session, leaves its parameters where [`Clients::load`]
//! finds them, so rmcp restores it; on the way out it seals the id of a new session with the
//! parameters rmcp handed [`Clients::store`] during its handshake.
//!
//! A sealed id also names its caller (the token's issuer and subject, [`Owner`]) and when it
//! was issued and expires ([`HttpOptions::session_lifetime`](super::HttpOptions)): a request
//! with an expired id, or from any other caller, is an unknown session (404), on every
//! replica, whether or not the replica holds the session. A `DELETE` ends the session where it
//! is held, and the replica that received it refuses the id from then on, until it expires
//! (`ended_sessions.rs`); another replica, which has no way to know (nothing is shared but the
//! key), serves the id until it expires, and a copy it took up closes once idle for
//! [`HttpOptions::SESSION_IDLE`](super::HttpOptions::SESSION_IDLE).
//!
//! What moves is what `initialize` said (the client's name, version and capabilities). What a
//! session did afterwards stays in the replica that saw it: resource subscriptions, roots
//! learned, the log level it set, a standalone `GET` stream and a question waiting for its
//! answer. Those need affinity (or the client sets them again).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::InitializeRequestParams;
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_server::SessionManager as _;
use rmcp::transport::streamable_http_server::session::{SessionState, SessionStore, SessionStoreError};

use super::bound_sessions::{BoundSessions, NOT_FOUND};
use super::ended_sessions::Ended;
use super::session_key::{Purpose, SessionKey};
use crate::serve::Owner;

/// How far ahead of this replica's clock another's may be when it issued an id.
const CLOCK_SKEW: u64 = 60;

/// What a sealed session id holds.
#[derive(serde::Serialize, serde::Deserialize)]
struct Sealed {
    /// rmcp's id for the session (a UUID: unique across replicas without coordination).
    id: String,
    /// The client's `initialize`, replayed by a replica that does not hold the session.
    init: InitializeRequestParams,
    /// Whose it is: only this caller may use it (`None`: callers have no names).
    owner: Option<Owner>,
    /// When it was issued, in Unix seconds.
    issued: u64,
    /// When it stops being a session, in Unix seconds.
    expires: u64,
}

/// Now, in Unix seconds.
fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// The [`SessionStore`] rmcp is given: the `initialize` parameters between rmcp's handshake
/// and [`unseal`] sealing them into the id (`store`), and between [`unseal`] opening an id and
/// rmcp restoring it (`load`). Entries live for one request.
#[derive(Default)]
pub struct Clients {
    pending: Mutex<HashMap<String, InitializeRequestParams>>,
}

impl Clients {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, InitializeRequestParams>> {
        self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[async_trait::async_trait]
impl SessionStore for Clients {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        Ok(self.lock().get(session_id).cloned().map(SessionState::new))
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        self.lock().insert(session_id.to_string(), state.initialize_params.clone());
        Ok(())
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        self.lock().remove(session_id);
        Ok(())
    }
}

/// The key, the sessions this replica holds, the store rmcp restores from, and the ids ended
/// here.
pub struct SealedSessions {
    key: SessionKey,
    lifetime: Duration,
    sessions: Arc<BoundSessions>,
    clients: Arc<Clients>,
    ended: Ended,
}

impl SealedSessions {
    /// Sealing with `key` ids that expire `lifetime` after they are issued, for the sessions
    /// `sessions` holds.
    pub fn new(key: SessionKey, lifetime: Duration, sessions: Arc<BoundSessions>) -> Arc<Self> {
        Arc::new(Self { key, lifetime, sessions, clients: Arc::default(), ended: Ended::default() })
    }

    /// The store to give rmcp (`StreamableHttpServerConfig::session_store`).
    pub fn store(&self) -> Arc<dyn SessionStore> {
        self.clients.clone()
    }

    fn open(&self, header: &HeaderValue) -> Option<Sealed> {
        let plain = self.key.open(Purpose::Session, header.to_str().ok()?)?;
        serde_json::from_slice(&plain).ok()
    }

    fn seal(&self, id: &str, owner: Option<Owner>) -> Option<HeaderValue> {
        let init = self.clients.lock().remove(id)?;
        let issued = now();
        let expires = issued.saturating_add(self.lifetime.as_secs());
        let plain = serde_json::to_vec(&Sealed { id: id.to_string(), init, owner, issued, expires }).ok()?;
        HeaderValue::from_str(&self.key.seal(Purpose::Session, &plain)?).ok()
    }
}

/// Opens the session id of a request and seals the one of a new session (module doc); with no
/// key (`None`), lets everything through as it is.
pub async fn unseal(
    State(sealed): State<Option<Arc<SealedSessions>>>,
    mut request: Request,
    next: Next,
) -> Response {
    let Some(sealed) = sealed else { return next.run(request).await };
    let owner = Owner::of(request.extensions());
    let mut restoring = None;
    if let Some(header) = request.headers().get(HEADER_SESSION_ID) {
        let Some(session) = sealed.open(header) else {
            return (StatusCode::NOT_FOUND, NOT_FOUND).into_response();
        };
        let Ok(local) = HeaderValue::from_str(&session.id) else {
            return (StatusCode::NOT_FOUND, NOT_FOUND).into_response();
        };
        let id = Arc::from(session.id.as_str());
        let now = now();
        if now >= session.expires || session.issued > now.saturating_add(CLOCK_SKEW) {
            // Expired for everyone: a copy held here goes now rather than once idle.
            let _ = sealed.sessions.close_session(&id).await;
            return (StatusCode::NOT_FOUND, NOT_FOUND).into_response();
        }
        if session.owner != owner || sealed.ended.has_ended(&session.id) {
            return (StatusCode::NOT_FOUND, NOT_FOUND).into_response();
        }
        let held = sealed.sessions.has_session(&id).await.unwrap_or(false);
        if request.method() == Method::DELETE {
            sealed.ended.end(&session.id, session.expires, now);
            // Nothing to end here: a replica that holds it closes it once idle.
            if !held {
                return StatusCode::ACCEPTED.into_response();
            }
        }
        if !held {
            sealed.clients.lock().insert(session.id.clone(), session.init);
            restoring = Some(session.id);
        }
        request.headers_mut().insert(HEADER_SESSION_ID, local);
    }
    let mut response = next.run(request).await;
    if let Some(id) = restoring {
        sealed.clients.lock().remove(&id);
    }
    let new = response.headers().get(HEADER_SESSION_ID).and_then(|v| v.to_str().ok()).map(str::to_string);
    if let Some(id) = new {
        let Some(value) = sealed.seal(&id, owner) else {
            tracing::error!("cannot seal the id of a new session");
            let _ = sealed.sessions.close_session(&Arc::from(id.as_str())).await;
            let said = "cannot seal the new session's id; try again\n";
            return (StatusCode::INTERNAL_SERVER_ERROR, said).into_response();
        };
        response.headers_mut().insert(HEADER_SESSION_ID, value);
    }
    response
}
