//! A server's progress reports handed over in the order they arrived. rmcp runs the handler of
//! each notification in a task of its own but settles a request's answer in its receive loop,
//! so a call's last `notifications/progress` could be handled after the answer that follows it
//! on the wire, when nobody waits for it any more: the caller's bar stopped at 9/10 and `serve`
//! never passed the last report on. Reading reports as the transport yields them keeps each
//! one ahead of the answer it precedes.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, ProgressNotificationParam, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// Where a connection's progress reports go, called in the receive loop (so it must not
/// block: the runtime's routes only send on a channel).
#[derive(Clone, Default)]
pub struct ProgressTap(Option<Arc<dyn Fn(ProgressNotificationParam) + Send + Sync>>);

impl ProgressTap {
    /// Reports go to `deliver`.
    pub fn new(deliver: impl Fn(ProgressNotificationParam) + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(deliver)))
    }

    fn note(&self, message: &RxJsonRpcMessage<RoleClient>) {
        let (Some(deliver), JsonRpcMessage::Notification(notification)) = (&self.0, message) else { return };
        if let ServerNotification::ProgressNotification(progress) = &notification.notification {
            deliver(progress.params.clone());
        }
    }
}

/// `inner`, with every progress report given to the tap as it is received. The message still
/// goes on to rmcp (whose handler ignores it), so nothing else changes.
pub struct InOrder<T> {
    inner: T,
    tap: ProgressTap,
}

impl<T> InOrder<T> {
    /// Wraps `inner`.
    pub fn new(inner: T, tap: ProgressTap) -> Self {
        Self { inner, tap }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for InOrder<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        self.tap.note(&message);
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
