//! A client's `resources/subscribe` passed on to the server that owns the URI. Up to
//! 2025-11-25 that is the server's own `resources/subscribe`; 2026-07-28 removed it (SEP-2577)
//! for a `subscriptions/listen` stream naming the URIs, so toward such a server the
//! subscription is a stream of its own, held in the relay until the last client unsubscribes,
//! its `notifications/resources/updated` handed to the relay's subscribers as a 2025 server's
//! are.
#![allow(deprecated)] // resources/subscribe is what 2025-11-25 clients and servers use

use std::sync::Arc;

use rmcp::model::{ServerNotification, SubscribeRequestParams, SubscriptionFilter};
use rmcp::service::ServiceError;
use rmcp::{Peer, RoleClient};
use tokio::sync::oneshot;

use super::relay::Relay;

/// Subscribes to `request.uri` on the server behind `peer`, the way its revision does.
pub async fn subscribe(
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
