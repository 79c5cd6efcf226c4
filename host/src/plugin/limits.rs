//! Per-call limits: linear memory through the store's limiter, time through the epoch deadline
//! plus an outer timeout. Going over traps that call only; the error says which limit.

use std::time::{Duration, Instant};

use wasmtime::{ResourceLimiter, Store, StoreLimits, StoreLimitsBuilder, UpdateDeadline};

use super::error::PluginError;
use super::store::State;
use crate::config::Limits;

/// Extra time the outer timeout allows beyond the plugin's budget (many epoch ticks). The epoch deadline fires
/// first while the guest computes; the outer timeout catches a guest parked in a host call
/// (waiting on a socket, say), which epochs cannot interrupt.
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

/// Arms the store's time limit for one call. Every tick the guest yields to the async runtime
/// (so a spinning plugin never monopolises a worker thread) until the deadline, then traps.
pub(crate) fn arm_deadline(store: &mut Store<State>, limits: &Limits) {
    let deadline = Instant::now() + Duration::from_millis(limits.call_ms);
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |_| {
        if Instant::now() >= deadline { Err(OutOfTime.into()) } else { Ok(UpdateDeadline::Yield(1)) }
    });
}

/// A long-running call (a transport's pump) yields every tick but has no deadline.
pub(crate) fn arm_yield_only(store: &mut Store<State>) {
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(|_| Ok(UpdateDeadline::Yield(1)));
}

/// The outer timeout for one call.
pub(crate) fn outer_timeout(limits: &Limits) -> Duration {
    Duration::from_millis(limits.call_ms) + OUTER_TIMEOUT_SLACK
}

/// Maps the outcome of a guarded call to the plugin's error vocabulary.
pub(crate) fn classify<T>(
    plugin: &str,
    limits: &Limits,
    store: &Store<State>,
    outcome: Result<wasmtime::Result<T>, tokio::time::error::Elapsed>,
) -> Result<T, PluginError> {
    let name = plugin.to_string();
    let err = match outcome {
        Err(_) => return Err(PluginError::TimeLimit { name, limit_ms: limits.call_ms }),
        Ok(Ok(value)) => return Ok(value),
        Ok(Err(err)) => err,
    };
    if err.chain().any(|c| c.is::<OutOfTime>()) {
        return Err(PluginError::TimeLimit { name, limit_ms: limits.call_ms });
    }
    if store.data().memory.exceeded {
        return Err(PluginError::MemoryLimit { name, limit_mb: limits.memory_mb });
    }
    let stderr = String::from_utf8_lossy(&store.data().stderr.contents()).into_owned();
    let message = match panic_message(&stderr) {
        Some(panic) => panic,
        None => format!("{err:#}"),
    };
    tracing::warn!(plugin, "plugin trapped: {err:#}");
    Err(PluginError::Trap { name, message })
}

/// The `panicked at …` line(s) a Rust guest printed before aborting, if any.
fn panic_message(stderr: &str) -> Option<String> {
    let start = stderr.find("panicked at")?;
    let mut lines = stderr[start..].lines();
    let head = lines.next()?.trim_end_matches(':').trim();
    Some(match lines.next().map(str::trim) {
        Some(text) if !text.is_empty() => format!("{head}: {text}"),
        _ => head.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panic_message_keeps_location_and_text() {
        let stderr =
            "\nthread '<unnamed>' panicked at src/lib.rs:40:24:\nboom\nnote: run with RUST_BACKTRACE=1\n";
        assert_eq!(panic_message(stderr).as_deref(), Some("panicked at src/lib.rs:40:24: boom"));
        assert_eq!(panic_message("nothing here"), None);
    }
}
