//! A byte-budgeted message queue: what a transport plugin's outbox puts its messages on.
//!
//! An unbounded queue let a plugin under a 64 MiB memory cap push the host to gigabytes: its
//! own memory is capped, but every message it hands over lives in the host until rmcp reads
//! it. Here each queued message holds permits of a semaphore worth its size, given back when
//! the host takes it off, so one connection never holds more than [`QUEUE_BUDGET_BYTES`]
//! (plus one message in flight). A sender that finds the budget used up waits (backpressure);
//! one that keeps the queue full for [`QUEUE_FULL_DEADLINE`] is failed, since a host that is
//! alive drains the budget in far less time: the plugin is producing faster than it ever can.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::plugin::error::Fault;

/// Bytes one connection may have queued for the host. A `tools/list` of hundreds of tools is
/// a few MiB; 16 MiB keeps bursts flowing while 300 idle connections still cannot add up to
/// more than the host can afford.
pub(crate) const QUEUE_BUDGET_BYTES: usize = 16 * 1024 * 1024;
/// The largest single message: the same cap as a stdio server's line (64 MiB), so a server
/// cannot send through a plugin what it could not send over stdio. A message larger than the
/// budget is let through alone, when the queue is empty.
pub(crate) const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;
/// How long a plugin may keep its queue at the limit before its connection is failed. The host
/// drains 16 MiB in well under a second even in a debug build on a loaded machine; ten seconds
/// of a queue that never drains to half is a flood, not a burst.
pub(crate) const QUEUE_FULL_DEADLINE: Duration = Duration::from_secs(10);

/// Why a message was not queued. Both fail the connection: the guest traps with this error and
/// `guard` reports it as the plugin's queue limit.
#[derive(Debug, thiserror::Error)]
pub(crate) enum QueueError {
    /// One message over [`MAX_MESSAGE_BYTES`].
    #[error("a message of {bytes} bytes, over the {} MiB cap", MAX_MESSAGE_BYTES >> 20)]
    TooLarge {
        /// Its size.
        bytes: usize,
    },
    /// The queue stayed at its budget for [`QUEUE_FULL_DEADLINE`].
    #[error("the queue stayed full for {} s", QUEUE_FULL_DEADLINE.as_secs())]
    Full,
    /// The host has dropped the receiving end: the connection is over.
    #[error("the host closed the connection")]
    Closed,
}

/// One queued message and the budget it holds until the host takes it.
struct Queued {
    text: String,
    _permit: OwnedSemaphorePermit,
}

/// The plugin's end: queues messages within the budget.
pub(crate) struct QueueSender {
    tx: UnboundedSender<Queued>,
    budget: Arc<Semaphore>,
    /// The budget's size in bytes, and how long it may stay used up.
    limit: Limit,
    /// When a send first found the budget used up, since the queue last drained to half.
    full_since: Option<Instant>,
}

/// The host's end: takes messages off, giving their budget back.
#[derive(Debug)]
pub struct QueueReceiver {
    rx: UnboundedReceiver<Queued>,
}

/// A budget and its deadline: the constants in production, small ones in unit tests.
#[derive(Debug, Clone, Copy)]
struct Limit {
    bytes: usize,
    full_for: Duration,
}

/// A queue with the per-connection budget.
pub(crate) fn channel() -> (QueueSender, QueueReceiver) {
    with_limit(Limit { bytes: QUEUE_BUDGET_BYTES, full_for: QUEUE_FULL_DEADLINE })
}

fn with_limit(limit: Limit) -> (QueueSender, QueueReceiver) {
    let (tx, rx) = unbounded_channel();
    let budget = Arc::new(Semaphore::new(limit.bytes));
    (QueueSender { tx, budget, limit, full_since: None }, QueueReceiver { rx })
}

impl QueueSender {
    /// Queues `text`, waiting while the budget is used up; fails if it is over the size cap,
    /// if the queue has been full for the deadline, or once the host is gone.
    pub async fn send(&mut self, text: String) -> Result<(), QueueError> {
        if text.len() > MAX_MESSAGE_BYTES {
            return Err(QueueError::TooLarge { bytes: text.len() });
        }
        if self.tx.is_closed() {
            return Err(QueueError::Closed);
        }
        if self.budget.available_permits() >= self.limit.bytes / 2 {
            self.full_since = None;
        }
        // At least one permit, so even empty messages count; at most the whole budget, so a
        // message over the budget goes through alone. Both bounds fit u32 (64 MiB < 4 GiB).
        let wanted = u32::try_from(text.len().clamp(1, self.limit.bytes)).unwrap_or(u32::MAX);
        let permit = match Arc::clone(&self.budget).try_acquire_many_owned(wanted) {
            Ok(permit) => permit,
            Err(_) => {
                let since = *self.full_since.get_or_insert_with(Instant::now);
                let left = self.limit.full_for.saturating_sub(since.elapsed());
                let waiting = Arc::clone(&self.budget).acquire_many_owned(wanted);
                // A host that closes the connection must not leave the plugin waiting out the
                // deadline.
                let room = async {
                    tokio::select! {
                        permit = waiting => permit.map_err(|_| QueueError::Closed),
                        () = self.tx.closed() => Err(QueueError::Closed),
                    }
                };
                match tokio::time::timeout(left, room).await {
                    Ok(permit) => permit?,
                    Err(_elapsed) => return Err(QueueError::Full),
                }
            }
        };
        self.tx.send(Queued { text, _permit: permit }).map_err(|_| QueueError::Closed)
    }
}

/// The fault a call's error stands for when the queue refused a message: the queue limit
/// for a flood, bad output for one oversized message.
pub(crate) fn queue_fault(err: &wasmtime::Error) -> Option<Fault> {
    let refused = err.chain().find_map(|c| c.downcast_ref::<QueueError>())?;
    Some(match refused {
        QueueError::Full => Fault::QueueLimit { limit_mb: (QUEUE_BUDGET_BYTES >> 20) as u64 },
        other => Fault::BadOutput { message: other.to_string() },
    })
}

impl QueueReceiver {
    /// The next message; `None` once the plugin's end is gone and the queue is empty.
    pub async fn recv(&mut self) -> Option<String> {
        self.rx.recv().await.map(|queued| queued.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUDGET: usize = 4096;
    const FULL_FOR: Duration = Duration::from_millis(300);

    #[tokio::test]
    async fn a_full_queue_waits_then_fails_while_a_drained_one_flows() {
        let (mut tx, mut rx) = with_limit(Limit { bytes: BUDGET, full_for: FULL_FOR });
        let chunk = "x".repeat(BUDGET / 4);
        for _ in 0..4 {
            assert!(tx.send(chunk.clone()).await.is_ok());
        }
        // Full: the next send waits; taking one message off lets it through.
        let (sent, got) = tokio::join!(tx.send(chunk.clone()), async {
            tokio::time::sleep(FULL_FOR / 3).await;
            rx.recv().await
        });
        assert!(sent.is_ok());
        assert_eq!(got.map(|t| t.len()), Some(chunk.len()));
        // Still full and nobody reading: the deadline (counted from the first wait) fails it.
        assert!(matches!(tx.send(chunk.clone()).await, Err(QueueError::Full)));
        // Drained, the same sender flows again; one message over the budget goes alone.
        for _ in 0..4 {
            assert!(rx.recv().await.is_some());
        }
        assert!(tx.send("z".repeat(BUDGET * 2)).await.is_ok());
        assert_eq!(rx.recv().await.map(|t| t.len()), Some(BUDGET * 2));
        let huge = "y".repeat(MAX_MESSAGE_BYTES + 1);
        assert!(matches!(tx.send(huge).await, Err(QueueError::TooLarge { .. })));
        drop(rx);
        assert!(matches!(tx.send(String::new()).await, Err(QueueError::Closed)));
    }

    #[tokio::test]
    async fn a_sender_waiting_for_room_returns_when_the_host_closes() {
        let (mut tx, rx) = with_limit(Limit { bytes: BUDGET, full_for: Duration::from_secs(600) });
        assert!(tx.send("x".repeat(BUDGET)).await.is_ok());
        let closing = async {
            tokio::time::sleep(FULL_FOR).await;
            drop(rx);
        };
        let (sent, ()) = tokio::join!(tx.send("more".into()), closing);
        assert!(matches!(sent, Err(QueueError::Closed)), "{sent:?}");
    }
}
