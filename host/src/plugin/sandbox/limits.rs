//! Per-call limits: memory through the store's limiter (every linear memory of the store
//! counted together, and caps on how many memories, tables and instances it may create), time
//! through the epoch deadline plus an outer timeout, and the share of a core (`cpu`) checked on
//! the same epoch callback. Going over traps that call only; `guard` turns the trap into the
//! fault that says which limit.

use std::time::{Duration, Instant};

use wasmtime::{ResourceLimiter, Store, StoreLimits, StoreLimitsBuilder, UpdateDeadline};

use super::cpu::{Meter, OverCpu};
use crate::config::Limits;

/// Extra time the outer timeout allows beyond the plugin's budget (many epoch ticks). The epoch
/// deadline fires first while the guest computes; the outer timeout catches a guest parked in a
/// host call (waiting on a socket, say), which epochs cannot interrupt.
const OUTER_TIMEOUT_SLACK: Duration = Duration::from_millis(250);

/// Linear memories one store may create. A Rust or C guest has one; a component that nests
/// more brings each its own, and the memory limit is meant for the plugin, not per memory.
pub(crate) const MAX_MEMORIES: u32 = 4;
/// Tables one store may create: a guest has one function table, and the component's adapter
/// shims a few more.
pub(crate) const MAX_TABLES: u32 = 16;
/// Core instances one store may create: a guest component is its module plus a handful of
/// shims; 30 nested instances is an attack on the pool, not a plugin.
pub(crate) const MAX_CORE_INSTANCES: u32 = 32;
/// Elements of any one table: a large guest's function table holds a few thousand.
pub(crate) const MAX_TABLE_ELEMENTS: usize = 100_000;

/// Memory caps that remember being hit, so a failed call can be reported as "memory limit"
/// instead of the guest's generic "allocation failed" abort.
pub(crate) struct MemoryGuard {
    limits: StoreLimits,
    /// The plugin's limit, for all its memories together.
    limit_bytes: usize,
    /// Bytes of every linear memory of the store so far (memories never shrink).
    total_bytes: usize,
    exceeded: bool,
}

impl MemoryGuard {
    /// Caps the store's linear memories, together, at `memory_mb` MiB, and how many memories,
    /// tables and instances it may create.
    pub fn new(memory_mb: u64) -> Self {
        let bytes = usize::try_from(memory_mb.saturating_mul(1 << 20)).unwrap_or(usize::MAX);
        let limits = StoreLimitsBuilder::new()
            .memory_size(bytes)
            .memories(MAX_MEMORIES as usize)
            .tables(MAX_TABLES as usize)
            .instances(MAX_CORE_INSTANCES as usize)
            .table_elements(MAX_TABLE_ELEMENTS)
            .build();
        Self { limits, limit_bytes: bytes, total_bytes: 0, exceeded: false }
    }

    /// Whether a growth was refused in this store: a trap after that is the memory limit.
    pub fn exceeded(&self) -> bool {
        self.exceeded
    }

    /// Bytes the store's linear memories have grown to, together (the plugin's memory metric).
    pub fn grown_bytes(&self) -> usize {
        self.total_bytes
    }
}

impl ResourceLimiter for MemoryGuard {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // A new memory arrives as a growth from 0, so this sees every byte of every memory.
        let total = self.total_bytes.saturating_sub(current).saturating_add(desired);
        let ok = total <= self.limit_bytes && self.limits.memory_growing(current, desired, maximum)?;
        if ok {
            self.total_bytes = total;
        }
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

    fn instances(&self) -> usize {
        self.limits.instances()
    }

    fn tables(&self) -> usize {
        self.limits.tables()
    }

    fn memories(&self) -> usize {
        self.limits.memories()
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

/// The epoch callback's answer once the time rule has passed: trap when the guest has used
/// its share of a core, else yield until the next tick.
fn cpu_or_yield(meter: &Meter) -> wasmtime::Result<UpdateDeadline> {
    if meter.over() { Err(OverCpu.into()) } else { Ok(UpdateDeadline::Yield(1)) }
}

/// Arms the store's time limit for one call. Every tick the guest yields to the async runtime
/// (so a spinning plugin never monopolises a worker thread) until the deadline, then traps.
/// The returned meter must wrap the call's future: it is what `limits.cpuPercent` counts.
#[must_use = "the call's future must be wrapped in the meter, or its CPU time is not counted"]
pub(crate) fn arm_deadline<T>(store: &mut Store<T>, limits: &Limits) -> Meter {
    let deadline = Instant::now() + Duration::from_millis(limits.call_ms);
    let meter = Meter::new(limits.cpu_percent);
    let checked = meter.clone();
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |_| {
        if Instant::now() >= deadline { Err(OutOfTime.into()) } else { cpu_or_yield(&checked) }
    });
    meter
}

/// A long-running call (a transport's pump) yields every tick and has no deadline, only its
/// share of a core (`limits.cpuPercent`, through the returned meter).
#[must_use = "the pump's future must be wrapped in the meter, or its CPU time is not counted"]
pub(crate) fn arm_yield_only<T>(store: &mut Store<T>, limits: &Limits) -> Meter {
    let meter = Meter::new(limits.cpu_percent);
    let checked = meter.clone();
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |_| cpu_or_yield(&checked));
    meter
}

/// A sandboxed server's limits: it may compute for `callMs` at a stretch, measured from the
/// last time it really waited (`waits`), and use `cpuPercent` of a core over the window
/// (through the returned meter); it yields every tick meanwhile, and idles for free.
#[must_use = "the run's future must be wrapped in the meter, or its CPU time is not counted"]
pub(crate) fn arm_busy_limit<T: super::waits::Waits>(store: &mut Store<T>, limits: &Limits) -> Meter {
    let limit = Duration::from_millis(limits.call_ms);
    let meter = Meter::new(limits.cpu_percent);
    let checked = meter.clone();
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |mut ctx| {
        let since = ctx.data_mut().waits().1.since();
        if since.elapsed() >= limit { Err(OutOfTime.into()) } else { cpu_or_yield(&checked) }
    });
    meter
}

/// How long the host waits for one call before abandoning it: the budget plus the slack.
pub(crate) fn outer_timeout(limits: &Limits) -> Duration {
    Duration::from_millis(limits.call_ms) + OUTER_TIMEOUT_SLACK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_memory_of_the_store_counts_against_one_limit() {
        let mut guard = MemoryGuard::new(64);
        let forty = 40 << 20;
        // A new memory arrives as a growth from zero; the first fits, the second does not.
        assert!(matches!(guard.memory_growing(0, forty, None), Ok(true)));
        assert!(!guard.exceeded());
        assert!(matches!(guard.memory_growing(0, forty, None), Ok(false)));
        assert!(guard.exceeded());
        // Growing the first memory within what is left is still fine.
        assert!(matches!(guard.memory_growing(forty, forty + (20 << 20), None), Ok(true)));
        assert_eq!(guard.memories(), MAX_MEMORIES as usize);
        assert_eq!(guard.instances(), MAX_CORE_INSTANCES as usize);
    }
}
