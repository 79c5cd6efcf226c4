//! The 2025-11-25 sessions of `serve --http`, as rmcp's [`SessionManager`]: its
//! [`LocalSessionManager`] underneath, with what a server shared by several people needs.
//!
//! - **A session is its caller's.** The caller whose `initialize` opened it (the token's issuer
//!   and subject, [`Owner`]) is recorded when rmcp hands the handshake over; [`guard`], in front
//!   of rmcp, answers a request naming the session from anyone else (a `POST` of a request, a
//!   notification or a JSON-RPC response, a `GET` stream, a `DELETE`) exactly as an unknown
//!   session: 404, rmcp's words. Before, bob's token on alice's session id was served as hers.
//! - **Its questions' ids are unguessable** (`question_ids.rs`): a response is taken only for
//!   an id toolport sent.
//! - **Sessions are counted where they are made.** `--max-sessions` is checked in
//!   `create_session` (and in `restore_session`, a replica taking up a sealed session), not by
//!   reading the request beforehand: a parse of `method` that differed from rmcp's (an escaped
//!   `"initializ\u0065"` failed the borrowed read) let 1,000 sessions past a cap of 512. A
//!   refusal is rmcp's 500 for a failed `create_session`; [`guard`] turns it into a 503 that
//!   says what to do.
//! - A `DELETE` naming a session not held here is 404, as the transport spec says of every
//!   request naming an unknown or ended session: rmcp's `close_session` treats an unknown id
//!   as done and answers 202. With sealed sessions (`sealed_sessions.rs`, in front of this) the
//!   id seen here is already rmcp's own.
//! - A `DELETE` that ends a session answers 200, as the TypeScript and Python SDKs' servers do
//!   (rmcp answers 202): the Python SDK's client takes only 200 or 204 and otherwise logs
//!   `Session termination failed: 202` on every close.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, GetExtensions as _, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::store::EventStore;
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId, SessionManager};

use super::question_ids::QuestionIds;
use crate::serve::Owner;

/// rmcp's own words for an unknown session, so a refusal reads like any unknown one.
pub const NOT_FOUND: &str = "Not Found: Session not found";

tokio::task_local! {
    /// Set by [`BoundSessions`] when it refused to make a session, for [`guard`] (the same
    /// task: rmcp's service runs inside the middleware's future).
    static REFUSED: Cell<bool>;
}

/// The sessions this replica holds (module doc).
pub struct BoundSessions {
    inner: LocalSessionManager,
    max: usize,
    /// Who opened each session, from its `initialize`; `None`: callers have no names.
    owners: Mutex<HashMap<SessionId, Option<Owner>>>,
    /// Held while a session is counted and made, so two at once cannot both take the last place.
    making: tokio::sync::Mutex<()>,
}

/// Why a session could not be made or used.
#[derive(Debug, thiserror::Error)]
pub enum BoundSessionsError {
    /// rmcp's own.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
    /// `--max-sessions` are held.
    #[error("{}", full_message(*.0))]
    Full(usize),
}

/// What a client refused a session is told.
fn full_message(max: usize) -> String {
    format!(
        "toolport serve holds as many sessions as it may ({max}); end one (DELETE /mcp) or wait: a \
         session idle for {} s is closed\n",
        super::HttpOptions::SESSION_IDLE.as_secs()
    )
}

impl BoundSessions {
    /// At most `max` sessions held at once, each closed after `inner`'s idle time.
    pub fn new(inner: LocalSessionManager, max: usize) -> Arc<Self> {
        Arc::new(Self { inner, max: max.max(1), owners: Mutex::default(), making: Default::default() })
    }

    fn owners(&self) -> MutexGuard<'_, HashMap<SessionId, Option<Owner>>> {
        self.owners.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Who opened `id`; `None` when it is not held here or not bound yet (its handshake
    /// running).
    pub fn owner(&self, id: &SessionId) -> Option<Option<Owner>> {
        self.owners().get(id).cloned()
    }

    /// Whether a place is free; when not, the refusal is noted for [`guard`].
    async fn place_free(&self) -> Result<(), BoundSessionsError> {
        if self.inner.sessions.read().await.len() < self.max {
            return Ok(());
        }
        let _ = REFUSED.try_with(|refused| refused.set(true));
        tracing::info!("refused a session: {} are held (--max-sessions)", self.max);
        Err(BoundSessionsError::Full(self.max))
    }
}

impl SessionManager for BoundSessions {
    type Error = BoundSessionsError;
    type Transport = QuestionIds<<LocalSessionManager as SessionManager>::Transport>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let _making = self.making.lock().await;
        self.place_free().await?;
        let (id, transport) = self.inner.create_session().await?;
        Ok((id, QuestionIds::new(transport)))
    }

    /// The handshake: the caller of the request that carries it (its `Parts`, which rmcp put
    /// in the message's extensions) becomes the session's owner.
    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let owner = match &message {
            ClientJsonRpcMessage::Request(request) => {
                let parts = request.request.extensions().get::<axum::http::request::Parts>();
                parts.and_then(|parts| Owner::of(&parts.extensions))
            }
            _ => None,
        };
        self.owners().insert(id.clone(), owner);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.owners().remove(id);
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }

    /// A sealed session taken up here (`sealed_sessions.rs`) is a session made here: counted.
    async fn restore_session(&self, id: SessionId) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        let _making = self.making.lock().await;
        if self.inner.has_session(&id).await? {
            return Ok(RestoreOutcome::AlreadyPresent);
        }
        self.place_free().await?;
        Ok(match self.inner.restore_session(id).await? {
            RestoreOutcome::Restored(transport) => RestoreOutcome::Restored(QuestionIds::new(transport)),
            RestoreOutcome::AlreadyPresent => RestoreOutcome::AlreadyPresent,
            _ => RestoreOutcome::NotSupported,
        })
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}

/// In front of rmcp's service: a request naming a session held here for another caller, or a
/// `DELETE` naming one not held here, is an unknown session (404); a session refused at the
/// cap is a 503 saying so (module doc).
pub async fn guard(State(sessions): State<Arc<BoundSessions>>, request: Request, next: Next) -> Response {
    if let Some(id) = request.headers().get(HEADER_SESSION_ID).and_then(|v| v.to_str().ok()) {
        let id = SessionId::from(id);
        let held = sessions.inner.has_session(&id).await.unwrap_or(false);
        let someone_else = sessions.owner(&id).is_some_and(|owner| owner != Owner::of(request.extensions()));
        if someone_else || (!held && request.method() == Method::DELETE) {
            return (StatusCode::NOT_FOUND, NOT_FOUND).into_response();
        }
    }
    let ends = request.method() == Method::DELETE;
    REFUSED
        .scope(Cell::new(false), async move {
            let mut response = next.run(request).await;
            if REFUSED.with(Cell::get) {
                return (StatusCode::SERVICE_UNAVAILABLE, full_message(sessions.max)).into_response();
            }
            if ends && response.status() == StatusCode::ACCEPTED {
                *response.status_mut() = StatusCode::OK;
            }
            response
        })
        .await
}
