//! The resources behind the `channel` interface: the host-owned queues one transport
//! connection moves whole JSON-RPC messages through. Kept apart from their host impl
//! (`channel`) so the bindings can name them without importing that impl back.

use tokio::sync::mpsc::{UnboundedReceiver, error::TryRecvError};
use wasmtime_wasi::p2::Pollable;

use super::queue::{QueueError, QueueSender};

/// Messages from the host to the plugin (host → server direction).
pub struct Inbox {
    rx: UnboundedReceiver<String>,
    /// A message taken off the queue while waiting for readiness, handed out by `try-recv`.
    pending: Option<String>,
    closed: bool,
}

/// The host has closed the inbox: the plugin should finish and return.
pub(crate) struct Closed;

impl Inbox {
    /// The plugin's end of the queue whose sender the host keeps.
    pub(crate) fn new(rx: UnboundedReceiver<String>) -> Self {
        Self { rx, pending: None, closed: false }
    }

    /// The next message without waiting: `Ok(None)` when none is queued yet.
    pub(crate) fn try_next(&mut self) -> Result<Option<String>, Closed> {
        if let Some(message) = self.pending.take() {
            return Ok(Some(message));
        }
        match self.rx.try_recv() {
            Ok(message) => Ok(Some(message)),
            Err(TryRecvError::Empty) if !self.closed => Ok(None),
            Err(_) => {
                self.closed = true;
                Err(Closed)
            }
        }
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for Inbox {
    async fn ready(&mut self) {
        if self.pending.is_some() || self.closed {
            return;
        }
        match self.rx.recv().await {
            Some(message) => self.pending = Some(message),
            None => self.closed = true,
        }
    }
}

/// Messages from the plugin to the host (server → host direction), within the connection's
/// byte budget (`queue`).
pub struct Outbox {
    tx: QueueSender,
}

impl Outbox {
    /// The plugin's end of the queue whose receiver the host reads.
    pub(crate) fn new(tx: QueueSender) -> Self {
        Self { tx }
    }

    /// Queues one message for the host, waiting while the budget is used up. The guest gets
    /// `Err` once the host has dropped the connection; a flood or an oversized message is a
    /// trap (`Err` of the outer result), which fails the connection with the queue's fault.
    pub(crate) async fn send(&mut self, message: String) -> wasmtime::Result<Result<(), String>> {
        match self.tx.send(message).await {
            Ok(()) => Ok(Ok(())),
            Err(QueueError::Closed) => Ok(Err(QueueError::Closed.to_string())),
            Err(refused) => Err(refused.into()),
        }
    }
}
