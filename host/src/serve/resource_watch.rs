//! A client's `resources/subscribe` passed on to the server that owns the URI. Up to
//! 2025-11-25 that is the server's own `resources/subscribe`; 2026-07-28 removed it (SEP-2577)
//! for a `subscriptions/listen` stream naming the URIs, so toward such a server the
//! subscription is a stream of its own, held in the relay until the last client unsubscribes,
//! its `notifications/resources/updated` handed to the relay's subscribers as a 2025 server's
//! are. A client may subscribe only to what its scope may read; anything else is "not found",
//! as a read of it would be.
#![allow(deprecated)] // resources/subscribe is what 2025-11-25 clients and servers use

use std::sync::Arc;

use rmcp::model::{ServerNotification, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams};
use rmcp::service::{RequestContext, ServiceError};
use rmcp::{ErrorData as McpError, Peer, RoleClient, RoleServer};
use tokio::sync::oneshot;

use super::answer::unknown_resource;
use super::front::Front;
use super::relay::Relay;
use super::scope::Verdict;

impl Front {
    /// A client's `resources/subscribe`: the first subscriber of a URI subscribes at the
    /// server that owns it, and the relay passes its updates to every subscriber.
    pub(super) async fn subscribe_client(
        &self,
        request: SubscribeRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let server = self.resource_owner(&request.uri).await?;
        if !matches!(
            self.shared.access.scope(self.runtime(), context).read(&server, &request.uri),
            Verdict::Allowed(_)
        ) {
            return Err(unknown_resource(&request.uri));
        }
        let relay = self.shared.relay.clone();
        if relay.subscribe(&request.uri, self.session, context.peer.clone()) {
            let subject = format!("subscription to {}", crate::text::escape_line(&request.uri));
            let uri = request.uri.clone();
            let watcher = relay.clone();
            let sent = self.forward(&server, subject, |peer| subscribe(peer, request, watcher));
            // A refused subscription leaves no subscriber behind, or the next client's
            // subscription would be taken as already made.
            if let Err(e) = sent.await {
                relay.unsubscribe(&uri, self.session);
                return Err(e);
            }
        }
        Ok(())
    }

    /// A client's `resources/unsubscribe`: the last subscriber of a URI ends the subscription
    /// at the server.
    pub(super) async fn unsubscribe_client(&self, request: UnsubscribeRequestParams) -> Result<(), McpError> {
        let server = self.resource_owner(&request.uri).await?;
        let relay = &self.shared.relay;
        if relay.unsubscribe(&request.uri, self.session) && !relay.unwatch(&request.uri) {
            let subject = format!("subscription to {}", crate::text::escape_line(&request.uri));
            self.forward(&server, subject, |peer| async move { peer.unsubscribe(request).await }).await?;
        }
        Ok(())
    }
}

/// Subscribes to `request.uri` on the server behind `peer`, the way its revision does.
async fn subscribe(
    peer: Peer<RoleClient>,
    request: SubscribeRequestParams,
    relay: Arc<Relay>,
) -> Result<(), ServiceError> {
    if !crate::transport::is_stateless(&peer) {
        return peer.subscribe(request).await;
    }
    let filter = SubscriptionFilter::builder().resource_subscription(request.uri.clone()).build();
    let mut subscription = peer.listen(filter).await?;
    let (stop, mut stopped) = oneshot::channel();
    relay.watch(&request.uri, stop);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                next = subscription.next() => match next {
                    Ok(Some(ServerNotification::ResourceUpdatedNotification(updated))) => {
                        relay.resource_updated(&updated.params);
                    }
                    Ok(Some(_)) => {}
                    _ => return,
                },
                _ = &mut stopped => {
                    if let Err(e) = subscription.cancel().await {
                        tracing::debug!(uri = %request.uri, "cannot end the resource subscription: {e}");
                    }
                    return;
                }
            }
        }
    });
    Ok(())
}
