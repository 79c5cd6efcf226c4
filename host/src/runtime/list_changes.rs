//! The `list_changed` subscription a connection opens towards a server on the stateless
//! revision (2026-07-28), which sends those notifications only on a stream the client asked
//! for; each becomes the same [`Event`] the handler sends for a 2025 server.

use rmcp::RoleClient;
use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::Peer;
use tokio::sync::{mpsc, watch};

use super::event::Event;
use super::failed_request::service_error;
use crate::transport;

/// Under 2026-07-28 a server sends `list_changed` (tools, resources, prompts) only on a
/// `subscriptions/listen` stream the client opened (the 2025 revisions send it unasked, to the
/// handler). One subscription per connection for what the server announces, held by a task
/// that forwards each change as the same [`Event`] the handler would, ending with the
/// connection.
pub(super) fn listen_for_list_changes(
    peer: &Peer<RoleClient>,
    server: String,
    generation: u64,
    events: mpsc::UnboundedSender<Event>,
    mut closing: watch::Receiver<bool>,
) {
    let Some(info) = peer.peer_info().filter(|_| transport::is_stateless(peer)) else { return };
    let caps = &info.capabilities;
    let tools = caps.tools.as_ref().and_then(|t| t.list_changed) == Some(true);
    let resources = caps.resources.as_ref().and_then(|r| r.list_changed) == Some(true);
    let prompts = caps.prompts.as_ref().and_then(|p| p.list_changed) == Some(true);
    if !(tools || resources || prompts) {
        return;
    }
    let mut filter = SubscriptionFilter::builder();
    if tools {
        filter = filter.tools_list_changed();
    }
    if resources {
        filter = filter.resources_list_changed();
    }
    if prompts {
        filter = filter.prompts_list_changed();
    }
    let filter = filter.build();
    let peer = peer.clone();
    tokio::spawn(async move {
        let mut subscription = match peer.listen(filter).await {
            Ok(subscription) => subscription,
            Err(e) => {
                tracing::info!(server = %server, "no list_changed subscription: {}", service_error(&e));
                return;
            }
        };
        loop {
            let notification = tokio::select! {
                next = subscription.next() => match next {
                    Ok(Some(notification)) => notification,
                    _ => return,
                },
                _ = closing.changed() => {
                    if let Err(e) = subscription.cancel().await {
                        tracing::debug!(server = %server, "cannot cancel the list_changed subscription: {}", service_error(&e));
                    }
                    return;
                }
            };
            let (server, generation) = (server.clone(), generation);
            let event = match notification {
                ServerNotification::ToolListChangedNotification(_) => {
                    Event::ListChanged { server, generation }
                }
                ServerNotification::ResourceListChangedNotification(_) => {
                    Event::ResourcesChanged { server, generation }
                }
                ServerNotification::PromptListChangedNotification(_) => {
                    Event::PromptsChanged { server, generation }
                }
                _ => continue,
            };
            if events.send(event).is_err() {
                return;
            }
        }
    });
}
