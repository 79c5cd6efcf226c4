//! The one wasmtime `Engine` of the process, and the ticker that drives epoch interruption.
//!
//! One engine because compiled components, `InstancePre`s and the cache key all belong to an
//! engine; a second one would compile everything twice and split the cache.

use std::sync::OnceLock;
use std::time::Duration;

use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::plugin::sandbox::admission::STORE_SLOTS;
use crate::plugin::sandbox::limits::{MAX_CORE_INSTANCES, MAX_MEMORIES, MAX_TABLES};

/// How often the epoch advances. Time limits are enforced to this granularity, and a running
/// guest yields to the async runtime this often, so a busy plugin never hogs a worker thread.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// How much of a linear memory a pool slot keeps resident when it is freed (a Rust guest's
/// stack is 1 MiB at the bottom of its memory, its data and heap above).
const KEEP_RESIDENT: usize = 4 << 20;
/// And of a table.
const KEEP_RESIDENT_TABLE: usize = 64 << 10;

static ENGINE: OnceLock<Result<Engine, String>> = OnceLock::new();

/// The process-wide engine, built (and its ticker started) on first use.
pub(crate) fn engine() -> anyhow::Result<&'static Engine> {
    ENGINE.get_or_init(|| build().map_err(|e| format!("{e:#}"))).as_ref().map_err(|e| anyhow::anyhow!("{e}"))
}

fn build() -> anyhow::Result<Engine> {
    // The pooling allocator reuses pre-reserved slots for linear memories and stacks instead of
    // an mmap/munmap pair per instance: a fresh store per call is then roughly twice as cheap.
    // It reserves a lot of address space up front; where that is refused (a `ulimit -v`, say)
    // fall back to allocating on demand, which is slower but otherwise identical.
    //
    // The pool holds every store `admission` lets in, each at its caps (`limits`), so no
    // store is ever refused by the pool: the admission caps say no first, to the plugin
    // that asked (a store holds one component instance and runs one call at a time).
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(STORE_SLOTS);
    pool.total_core_instances(STORE_SLOTS * MAX_CORE_INSTANCES);
    pool.total_memories(STORE_SLOTS * MAX_MEMORIES);
    pool.total_tables(STORE_SLOTS * MAX_TABLES);
    pool.total_stacks(STORE_SLOTS);
    // The same caps per component as per store (`limits`), so one component cannot take a
    // large share of the pool's slots before its store's limiter sees it.
    pool.max_core_instances_per_component(MAX_CORE_INSTANCES);
    pool.max_memories_per_component(MAX_MEMORIES);
    pool.max_tables_per_component(MAX_TABLES);
    // A module may define several memories (multi-memory); the store's limiter counts them
    // all against the plugin's limit, so the pool need not refuse them one by one.
    pool.max_memories_per_module(MAX_MEMORIES);
    // A guard runs in a fresh store twice a call, so a slot's reset is on every call's path.
    // Reset by `memset` of the pages the guest touched (found with `PAGEMAP_SCAN` where the
    // kernel has it), up to a few MiB, instead of an `madvise` that drops every page: the next
    // instance then takes no page faults, and no core is interrupted to flush its TLB. A
    // slot is reset to its image either way: nothing of one call is left for the next.
    pool.pagemap_scan(wasmtime::Enabled::Auto);
    pool.linear_memory_keep_resident(KEEP_RESIDENT);
    pool.table_keep_resident(KEEP_RESIDENT_TABLE);
    let engine = Engine::new(&config(InstanceAllocationStrategy::Pooling(pool))).or_else(|e| {
        tracing::warn!("pooling instance allocator unavailable, allocating on demand: {e:#}");
        Engine::new(&config(InstanceAllocationStrategy::OnDemand))
    })?;
    let ticker = engine.clone();
    std::thread::Builder::new().name("toolport-epoch".into()).spawn(move || {
        loop {
            std::thread::sleep(EPOCH_TICK);
            ticker.increment_epoch();
        }
    })?;
    Ok(engine)
}

fn config(strategy: InstanceAllocationStrategy) -> Config {
    let mut config = Config::new();
    config.epoch_interruption(true);
    config.wasm_component_model(true);
    config.allocation_strategy(strategy);
    config
}
