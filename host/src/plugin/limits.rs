//! Per-call limits: linear memory through the store's limiter, time through the epoch deadline
//! plus an outer timeout. Going over traps that call only; `guard` turns the trap into the
//! fault that says which limit.

use std::time::{Duration, Instant};

use wasmtime::{ResourceLimiter, Store, StoreLimits, StoreLimitsBuilder, UpdateDeadline};

use crate::config::Limits;

/// Extra time the outer timeout allows beyond the plugin's budget (many epoch ticks). The epoch
/// deadline fires first while the guest computes; the outer timeout catches a guest parked in a
/// host call (waiting on a socket, say), which epochs cannot interrupt.
const OUTER_TIMEOUT_SLACK: Duration = Duration::from_millis(250);

/// Memory caps that remember being hit, so a failed call can be reported as "memory limit"
/// instead of the guest's generic "allocation failed" abort.
pub(crate) struct MemoryGuard {
    limits: StoreLimits,
    exceeded: bool,
}

impl MemoryGuard {
    /// Caps each linear memory at `memory_mb` MiB.
    pub fn new(memory_mb: u64) -> Self {
        let bytes = usize::try_from(memory_mb.saturating_mul(1 << 20)).unwrap_or(usize::MAX);
        Self { limits: StoreLimitsBuilder::new().memory_size(bytes).build(), exceeded: false }
    }

    /// Whether a growth was refused in this store: a trap after that is the memory limit.
    pub fn exceeded(&self) -> bool {
        self.exceeded
    }
}

impl ResourceLimiter for MemoryGuard {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let ok = self.limits.memory_growing(current, desired, maximum)?;
        self.exceeded |= !ok;
        Ok(ok)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }
}

/// Raised from the epoch callback when a call has used up its time.
#[derive(Debug, thiserror::Error)]
#[error("time limit reached")]
struct OutOfTime;

/// Whether a call's error is the epoch deadline firing (and not the guest failing by itself).
pub(crate) fn ran_out_of_time(err: &wasmtime::Error) -> bool {
    err.chain().any(|c| c.is::<OutOfTime>())
}

/// Arms the store's time limit for one call. Every tick the guest yields to the async runtime
/// (so a spinning plugin never monopolises a worker thread) until the deadline, then traps.
pub(crate) fn arm_deadline<T>(store: &mut Store<T>, limits: &Limits) {
    let deadline = Instant::now() + Duration::from_millis(limits.call_ms);
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |_| {
        if Instant::now() >= deadline { Err(OutOfTime.into()) } else { Ok(UpdateDeadline::Yield(1)) }
    });
}

/// A long-running call (a transport's pump) yields every tick but has no deadline.
pub(crate) fn arm_yield_only<T>(store: &mut Store<T>) {
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(|_| Ok(UpdateDeadline::Yield(1)));
}

/// How long the host waits for one call before abandoning it: the budget plus the slack.
pub(crate) fn outer_timeout(limits: &Limits) -> Duration {
    Duration::from_millis(limits.call_ms) + OUTER_TIMEOUT_SLACK
}
