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
//! What moves is what `initialize` said (the client's name, version and capabilities). What a
//! session did afterwards stays in the replica that saw it: resource subscriptions, roots
//! learned, the log level it set, a standalone `GET` stream and a question waiting for its
//! answer. Those need affinity (or the client sets them again). A `DELETE` ends the session
//! where it is held; another replica that holds a restored copy closes it when it has been
//! idle for [`HttpOptions::SESSION_IDLE`](super::HttpOptions::SESSION_IDLE), and the sealed id
//! stays valid until the key changes (nothing is shared to remember that it ended).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::InitializeRequestParams;
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_server::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{SessionState, SessionStore, SessionStoreError};

use super::session_key::{Purpose, SessionKey};

/// rmcp's own words for an unknown session, so a forged id reads like any unknown one.
const NOT_FOUND: &str = "Not Found: Session not found";

/// What a sealed session id holds.
#[derive(serde::Serialize, serde::Deserialize)]
struct Sealed {
    /// rmcp's id for the session (a UUID: unique across replicas without coordination).
    id: String,
    /// The client's `initialize`, replayed by a replica that does not hold the session.
    init: InitializeRequestParams,
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

/// The key, the sessions this replica holds, and the store rmcp restores from.
pub struct SealedSessions {
    key: SessionKey,
    sessions: Arc<LocalSessionManager>,
    clients: Arc<Clients>,
}

impl SealedSessions {
    /// Sealing with `key`, for the sessions `sessions` holds.
    pub fn new(key: SessionKey, sessions: Arc<LocalSessionManager>) -> Arc<Self> {
        Arc::new(Self { key, sessions, clients: Arc::default() })
    }

    /// The store to give rmcp (`StreamableHttpServerConfig::session_store`).
    pub fn store(&self) -> Arc<dyn SessionStore> {
        self.clients.clone()
    }

    fn open(&self, header: &HeaderValue) -> Option<Sealed> {
        let plain = self.key.open(Purpose::Session, header.to_str().ok()?)?;
        serde_json::from_slice(&plain).ok()
    }

    fn seal(&self, id: &str) -> Option<HeaderValue> {
        let init = self.clients.lock().remove(id)?;
        let plain = serde_json::to_vec(&Sealed { id: id.to_string(), init }).ok()?;
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
    let mut restoring = None;
    if let Some(header) = request.headers().get(HEADER_SESSION_ID) {
        let Some(session) = sealed.open(header) else {
            return (StatusCode::NOT_FOUND, NOT_FOUND).into_response();
        };
        let Ok(local) = HeaderValue::from_str(&session.id) else {
            return (StatusCode::NOT_FOUND, NOT_FOUND).into_response();
        };
        let held = sealed.sessions.has_session(&Arc::from(session.id.as_str())).await.unwrap_or(false);
        if !held {
            // Nothing to end here: the replica that holds it closes it once idle.
            if request.method() == Method::DELETE {
                return StatusCode::ACCEPTED.into_response();
            }
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
        let Some(value) = sealed.seal(&id) else {
            tracing::error!("cannot seal the id of a new session");
            let _ = sealed.sessions.close_session(&Arc::from(id.as_str())).await;
            let said = "cannot seal the new session's id; try again\n";
            return (StatusCode::INTERNAL_SERVER_ERROR, said).into_response();
        };
        response.headers_mut().insert(HEADER_SESSION_ID, value);
    }
    response
}
