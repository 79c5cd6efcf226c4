//! A downstream call's progress, passed on to the client that called: each report the server
//! sends during the call becomes a `notifications/progress` under the client's own token
//! (the server's token is the runtime's, not the client's).

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;

use crate::runtime::CallProgress;

/// A downstream call's progress, sent to the client under the client's own token, until the
/// call drops its end of `reports`.
pub(super) async fn pass(
    mut reports: mpsc::UnboundedReceiver<CallProgress>,
    token: ProgressToken,
    peer: Peer<RoleServer>,
) {
    while let Some(report) = reports.recv().await {
        let mut params = ProgressNotificationParam::new(token.clone(), report.progress);
        if let Some(total) = report.total {
            params = params.with_total(total);
        }
        if let Some(message) = report.message {
            params = params.with_message(message);
        }
        if peer.notify_progress(params).await.is_err() {
            return;
        }
    }
}
