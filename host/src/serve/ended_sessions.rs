//! `DELETE /mcp` of a session that does not exist answers 404, as the transport spec says of
//! every request naming an unknown or ended session. rmcp's service checks the session on
//! `GET` and `POST` but not on `DELETE`: its `handle_delete` calls the session manager's
//! `close_session`, which [`LocalSessionManager`] treats as done when the id is unknown, and
//! answers 202 for any id. So the check is made here, in front of the service, against the
//! same session manager. With sealed sessions (`sealed_sessions.rs`, in front of this) the id
//! seen here is already rmcp's own: a sealed id that does not open was answered 404 there, and
//! one that opens but is held by another replica was answered 202 there.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_server::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

/// rmcp's own words for a `GET` or `POST` of an unknown session, so all three read alike.
const NOT_FOUND: &str = "Not Found: Session not found";

/// Answers 404 to a `DELETE` naming a session the manager does not hold; lets everything
/// else (a `DELETE` without a session id included: rmcp answers that with 400) through.
pub async fn refuse_unknown(
    State(sessions): State<Arc<LocalSessionManager>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() == Method::DELETE
        && let Some(id) = request.headers().get(HEADER_SESSION_ID).and_then(|v| v.to_str().ok())
        && !sessions.has_session(&Arc::from(id)).await.unwrap_or(false)
    {
        return (StatusCode::NOT_FOUND, NOT_FOUND).into_response();
    }
    next.run(request).await
}
