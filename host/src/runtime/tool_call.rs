//! One `tools/call` on the wire: its progress notifications delivered to whoever made the call,
//! and `notifications/cancelled` sent when the caller gives up before the answer (a timeout, a
//! Ctrl-C, an ACP `session/cancel`: each drops the call's future), so the server stops working
//! on a result nobody will read.
//!
//! rmcp's `Peer::call_tool` cancels on drop too, but hides the request's progress token; this
//! sends the same request through rmcp's request handle so the token is known.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CancelledNotificationParam, ClientRequest,
    ProgressNotificationParam, ProgressToken, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, ServiceError};
use tokio::sync::Notify;
use tokio::sync::mpsc::UnboundedSender;

use super::questions::related::{Caller, InFlight};
use crate::text::escape_line;

/// How far a running call has got, as its server reports it (`notifications/progress`).
#[derive(Debug, Clone, PartialEq)]
pub struct CallProgress {
    /// Work done so far; grows with every report.
    pub progress: f64,
    /// Work in all, when the server knows it.
    pub total: Option<f64>,
    /// What it is doing, escaped for a terminal.
    pub message: Option<String>,
}

/// Where each running call's progress goes, by its progress token: shared by a connection's
/// handler, which receives the notifications, and the calls made on that connection.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProgressRoutes(Arc<Mutex<HashMap<ProgressToken, UnboundedSender<CallProgress>>>>);

impl ProgressRoutes {
    /// Hands a notification to the call it belongs to; one for no running call is dropped.
    pub fn deliver(&self, params: ProgressNotificationParam) {
        let Ok(routes) = self.0.lock() else { return };
        if let Some(to) = routes.get(&params.progress_token) {
            let message = params.message.map(|m| escape_line(&m).into_owned());
            let _ = to.send(CallProgress { progress: params.progress, total: params.total, message });
        }
    }

    /// Routes `token`'s reports to `to` until the returned guard drops.
    fn route(&self, token: ProgressToken, to: UnboundedSender<CallProgress>) -> Route {
        if let Ok(mut routes) = self.0.lock() {
            routes.insert(token.clone(), to);
        }
        Route { routes: self.clone(), token }
    }
}

/// A call's entry in [`ProgressRoutes`], removed with the call.
struct Route {
    routes: ProgressRoutes,
    token: ProgressToken,
}

impl Drop for Route {
    fn drop(&mut self) {
        if let Ok(mut routes) = self.routes.0.lock() {
            routes.remove(&self.token);
        }
    }
}

/// Cancellations on their way to a server. A call is usually abandoned because everything is
/// being torn down (Ctrl-C, the end of a command): closing a connection, and ending the
/// server's process, first wait for these, or the server would never hear of them.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
/// Woken whenever one of [`IN_FLIGHT`] has been written.
static WRITTEN: Notify = Notify::const_new();

/// How long closing waits for cancellations to be written.
const SETTLE_WAIT: Duration = Duration::from_millis(500);

/// Waits (at most [`SETTLE_WAIT`]) until every `notifications/cancelled` sent for an abandoned
/// call has been written to its server.
pub async fn settle_cancellations() {
    let _ = tokio::time::timeout(SETTLE_WAIT, async {
        loop {
            // Registered before the count is read, so a write in between still wakes it.
            let written = WRITTEN.notified();
            tokio::pin!(written);
            written.as_mut().enable();
            if IN_FLIGHT.load(Ordering::Acquire) == 0 {
                return;
            }
            written.await;
        }
    })
    .await;
}

/// Sends `notifications/cancelled` for a request whose caller went away before its answer.
struct Abandoned {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let peer = self.peer.clone();
        IN_FLIGHT.fetch_add(1, Ordering::AcqRel);
        runtime.spawn(async move {
            let reason = Some("the caller stopped waiting".to_string());
            let params = CancelledNotificationParam::new(Some(id), reason);
            if let Err(e) = peer.notify_cancelled(params).await {
                tracing::debug!("cannot send notifications/cancelled: {e}");
            }
            IN_FLIGHT.fetch_sub(1, Ordering::AcqRel);
            WRITTEN.notify_waiters();
        });
    }
}

/// Sends one `tools/call` and waits for its answer, the server's progress reports going to
/// `progress` meanwhile. Dropping the future before the answer (the caller's timeout, which
/// leaves out the time a person spends answering, or a cancel) cancels the call at the server.
/// The server's questions while it runs are `caller`'s (`related`).
pub(crate) async fn call_once(
    peer: &Peer<RoleClient>,
    routes: &ProgressRoutes,
    calls: &InFlight,
    params: CallToolRequestParams,
    progress: Option<UnboundedSender<CallProgress>>,
    caller: Option<Caller>,
) -> Result<CallToolResponse, ServiceError> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = peer.send_request_with_option(request, PeerRequestOptions::no_options()).await?;
    sent_as(&handle.id);
    let _route = progress.map(|to| routes.route(handle.progress_token.clone(), to));
    // Whose call this is, for the server's questions while it runs (`related`).
    let _entered = calls.enter(handle.id.clone(), caller);
    let mut abandoned = Abandoned { peer: peer.clone(), id: Some(handle.id.clone()) };
    let answer = handle.await_response().await;
    abandoned.id = None;
    match answer? {
        ServerResult::CallToolResult(result) => Ok(CallToolResponse::Complete(result)),
        ServerResult::InputRequiredResult(result) => Ok(CallToolResponse::InputRequired(result)),
        ServerResult::CreateTaskResult(result) => Ok(CallToolResponse::Task(result)),
        // A tool that returned nothing at all.
        ServerResult::EmptyResult(_) => {
            Ok(CallToolResponse::Complete(rmcp::model::CallToolResult::success(vec![])))
        }
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

/// Sends `request` (a read, a prompt) and waits for its answer; dropped before it, the request
/// is cancelled at the server, as a call is. Through rmcp's request handle rather than its
/// helpers, so the request's JSON-RPC id is known to the span it is sent in.
pub(crate) async fn request_once(
    peer: &Peer<RoleClient>,
    request: ClientRequest,
) -> Result<ServerResult, ServiceError> {
    let handle = peer.send_request_with_option(request, PeerRequestOptions::no_options()).await?;
    sent_as(&handle.id);
    let mut abandoned = Abandoned { peer: peer.clone(), id: Some(handle.id.clone()) };
    let answer = handle.await_response().await;
    abandoned.id = None;
    answer
}

/// The JSON-RPC id a request went out under, on the span it is sent in (a CLIENT span declares
/// `jsonrpc.request.id`; any other span ignores it).
fn sent_as(id: &RequestId) {
    let span = tracing::Span::current();
    if span.is_disabled() {
        return;
    }
    let id = match id {
        rmcp::model::NumberOrString::Number(n) => n.to_string(),
        rmcp::model::NumberOrString::String(s) => s.to_string(),
    };
    span.record("jsonrpc.request.id", id.as_str());
}
