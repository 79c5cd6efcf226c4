//! Store data: the WASI and HTTP contexts, the resource table, and the limiter of one store.
//! Also the one linker every plugin kind is pre-instantiated against. The host impls of our
//! own WIT interfaces live one file per interface (`log`, `channel`), as wasmtime's do.

use std::sync::{Arc, OnceLock};

use wasmtime::component::{HasSelf, Linker, ResourceTable, ResourceTableError};
use wasmtime::{Engine, Store};
use wasmtime_wasi::sockets::WasiSocketsCtxView;
use wasmtime_wasi::{WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::admission::{Admission, Ticket};
use super::asked::{self, Asked, NoteAsked};
use super::context::{HostsGate, LinksGate, Sandbox};
use super::dir_listing;
use super::files_gate::{self, GatedFiles};
use super::limits::MemoryGuard;
use super::log_sink::LogSink;
use super::sockets_gate::{self, GatedSockets};
use super::stderr::StderrTail;
use super::waits::{self, BusyClock, Waits};
use crate::plugin::bindings;
use crate::plugin::error::Fault;

/// The data of one store: what the guest sees (WASI, HTTP, its resources) and what the host
/// keeps watch with (the HTTP gate, the memory cap, the captured stderr, the log budget).
pub(crate) struct State {
    wasi: wasmtime_wasi::WasiCtx,
    /// Whether the context's file-system calls run on the guest's thread (`local_fs`).
    files_on_thread: bool,
    http: WasiHttpCtx,
    table: ResourceTable,
    gate: HostsGate,
    /// Which links the guest may make in its folders (`files_gate`).
    links: LinksGate,
    pub(crate) memory: MemoryGuard,
    pub(crate) stderr: StderrTail,
    /// Whose store this is, for the host log.
    pub(crate) plugin: Arc<str>,
    /// Lines logged so far through the `log` interface (capped in `log`).
    pub(crate) log_lines: u32,
    /// Where those lines are also kept, when a caller asked (`plugin/trial.rs`).
    pub(crate) log_sink: Option<LogSink>,
    /// When the guest last waited (a sandboxed server's time limit counts from there).
    busy: BusyClock,
    /// Whether the guest read its environment or listed its folders (`asked`).
    pub(crate) asked: Asked,
    /// This store's place in the instance pool, given back when it drops.
    _ticket: Ticket,
}

/// Host resources one store may hold (streams, pollables, sockets, requests): far more than a
/// guest keeps open, few enough that a guest subscribing in a loop fails itself, not the host.
const MAX_HANDLES: usize = 16_384;

/// The handle limit, when `err` (how a call or a run ended) is the resource table refusing one
/// handle more: a full table traps the guest, and wasmtime's words for it name no limit.
pub(crate) fn handle_refusal(err: &wasmtime::Error) -> Option<Fault> {
    matches!(err.downcast_ref::<ResourceTableError>(), Some(ResourceTableError::Full))
        .then_some(Fault::HandleLimit { limit: MAX_HANDLES })
}

impl State {
    /// A store for one call (or one transport connection) of `plugin`, confined by `sandbox`:
    /// the plugin's own for policies and shapes, one widened by the server's origin for each
    /// transport connection. Admitted to the instance pool first (`admission`): at a cap, the
    /// fault names it and no store is made.
    pub fn store(
        engine: &Engine,
        plugin: &str,
        admission: &Admission,
        sandbox: &Sandbox,
        memory_mb: u64,
    ) -> Result<Store<State>, Fault> {
        Self::store_with(engine, plugin, admission, sandbox, memory_mb, |_| {})
    }

    /// [`Self::store`] with `extra` applied to the WASI context: a sandboxed server's
    /// arguments, environment and stdio.
    pub fn store_with(
        engine: &Engine,
        plugin: &str,
        admission: &Admission,
        sandbox: &Sandbox,
        memory_mb: u64,
        extra: impl FnOnce(&mut WasiCtxBuilder),
    ) -> Result<Store<State>, Fault> {
        let ticket = admission.admit()?;
        let made = sandbox.wasi_ctx(extra).map_err(|e| Fault::Sandbox { message: e.0 })?;
        let mut table = ResourceTable::new();
        table.set_max_capacity(MAX_HANDLES);
        let state = State {
            wasi: made.wasi,
            files_on_thread: made.files_on_thread,
            http: WasiHttpCtx::new(),
            table,
            gate: sandbox.hosts_gate(),
            links: sandbox.links_gate(),
            memory: MemoryGuard::new(memory_mb),
            stderr: made.stderr,
            plugin: plugin.into(),
            log_lines: 0,
            log_sink: sandbox.log_sink().cloned(),
            busy: BusyClock::default(),
            asked: Asked::default(),
            _ticket: ticket,
        };
        let mut store = Store::new(engine, state);
        store.limiter(|s| &mut s.memory);
        Ok(store)
    }

    /// The store's socket budget (shared: it says later why a socket was refused).
    pub fn socket_budget(&self) -> super::socket_budget::SocketBudget {
        self.gate.budget().clone()
    }

    /// Why the host refused the guest a socket, if it did.
    pub fn socket_refusal(&self) -> Option<Fault> {
        self.gate.budget().refusal()
    }

    /// The resource table, for hosts that hand resources to a guest.
    pub fn table(&mut self) -> &mut ResourceTable {
        &mut self.table
    }
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl GatedFiles for State {
    fn links(&self) -> &LinksGate {
        &self.links
    }

    fn files_on_thread(&self) -> bool {
        self.files_on_thread
    }
}

impl NoteAsked for State {
    fn asked(&mut self) -> &mut Asked {
        &mut self.asked
    }
}

impl Waits for State {
    fn waits(&mut self) -> (&mut ResourceTable, &mut BusyClock) {
        (&mut self.table, &mut self.busy)
    }
}

impl WasiHttpView for State {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView { ctx: &mut self.http, table: &mut self.table, hooks: &mut self.gate }
    }
}

/// `types` declares records only: its `Host` trait has nothing to implement.
impl bindings::policy::toolport::plugin::types::Host for State {}

static LINKER: OnceLock<Result<Linker<State>, String>> = OnceLock::new();

/// The linker with everything a plugin may import: WASI 0.2 (closed by the sandbox, its name
/// lookup replaced by the gated one), outgoing HTTP (filtered by the gate), `log`, and the
/// transport channel.
pub(crate) fn linker(engine: &'static Engine) -> anyhow::Result<&'static Linker<State>> {
    LINKER
        .get_or_init(|| build_linker(engine).map_err(|e| format!("{e:#}")))
        .as_ref()
        .map_err(|e| anyhow::anyhow!("{e}"))
}

fn build_linker(engine: &Engine) -> anyhow::Result<Linker<State>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    // wasmtime's name lookup resolves any name once switched on, its sockets have no limit,
    // its `open-at` opens a FIFO (blocking a thread for good), and its `symlink-at` writes a
    // target that leads out of the folder; ours ask first. Its `read-directory` stats every
    // entry for the kind the listing already gives; ours does not (`dir_listing`).
    linker.allow_shadowing(true);
    files_gate::add_to_linker(&mut linker)?;
    dir_listing::add_to_linker(&mut linker)?;
    asked::add_to_linker(&mut linker)?;
    waits::add_to_linker(&mut linker)?;
    sockets_gate::add_to_linker(&mut linker, |s: &mut State| GatedSockets {
        sockets: WasiSocketsCtxView { ctx: s.wasi.sockets(), table: &mut s.table },
        gate: &s.gate,
    })?;
    linker.allow_shadowing(false);
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    bindings::policy::toolport::plugin::log::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    bindings::transport::toolport::plugin::channel::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    Ok(linker)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_table_is_named_as_the_handle_limit_through_any_context() {
        let full = wasmtime::Error::from(ResourceTableError::Full).context(
            "error while executing at wasm backtrace:\n    0:   0x1234 - <unknown>!<wasm function 7>",
        );
        assert_eq!(
            handle_refusal(&full).map(|f| f.to_string()).as_deref(),
            Some("reached its handle limit (16384)")
        );
        let other = wasmtime::Error::from(ResourceTableError::NotPresent);
        assert!(handle_refusal(&other).is_none(), "only a full table is the limit");
    }
}
