//! Host impl of the `toolport:plugin/channel` interface: the `inbox` and `outbox` resources
//! (`mailbox`) as a transport plugin sees them.

use wasmtime::component::Resource;
use wasmtime_wasi::p2::{DynPollable, subscribe};

use super::mailbox::{Inbox, Outbox};
use crate::plugin::bindings::transport::toolport::plugin::channel::{Host, HostInbox, HostOutbox, Received};
use crate::plugin::sandbox::store::State;

impl HostInbox for State {
    fn subscribe(&mut self, inbox: Resource<Inbox>) -> wasmtime::Result<Resource<DynPollable>> {
        subscribe(self.table(), inbox)
    }

    fn try_recv(&mut self, inbox: Resource<Inbox>) -> wasmtime::Result<Received> {
        Ok(match self.table().get_mut(&inbox)?.try_next() {
            Ok(Some(message)) => Received::Message(message),
            Ok(None) => Received::Empty,
            Err(_closed) => Received::Closed,
        })
    }

    fn drop(&mut self, inbox: Resource<Inbox>) -> wasmtime::Result<()> {
        self.table().delete(inbox)?;
        Ok(())
    }
}

impl HostOutbox for State {
    /// Async in the bindings: a full queue makes the guest wait here (backpressure).
    async fn send(
        &mut self,
        outbox: Resource<Outbox>,
        message: String,
    ) -> wasmtime::Result<Result<(), String>> {
        self.table().get_mut(&outbox)?.send(message).await
    }

    fn drop(&mut self, outbox: Resource<Outbox>) -> wasmtime::Result<()> {
        self.table().delete(outbox)?;
        Ok(())
    }
}

/// The interface itself has no functions beyond its resources'.
impl Host for State {}
