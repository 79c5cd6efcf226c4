//! Whether a guest asked for its environment or its folders, so a failure's hint
//! (`grant_hint`) names only what it really looked for: a transport whose server refused the
//! connection read no variable, and a hint about `grants.env` would send its author the wrong
//! way. wasmtime's own functions answer; only the note is ours.
//!
//! The note is coarse on purpose: WASI hands over the whole environment (or every folder) in
//! one call, so the host learns *that* the guest looked, never for what. A Rust guest's panic
//! reads `RUST_BACKTRACE`, so a panic counts as having looked at the environment — which is
//! right for the case that matters (`env::var("TOKEN").expect(…)`).

use wasmtime::component::Linker;
use wasmtime_wasi::WasiView;
use wasmtime_wasi::cli::WasiCliView as _;
use wasmtime_wasi::filesystem::WasiFilesystemView as _;
use wasmtime_wasi::p2::bindings::cli::environment::Host as _;
use wasmtime_wasi::p2::bindings::filesystem::preopens::Host as _;

/// What one store's guest has asked for so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Asked {
    /// It read its environment (`get-environment`).
    pub env: bool,
    /// It listed its folders (`get-directories`), which a guest's libc does before it opens
    /// its first path.
    pub dirs: bool,
}

/// What the wrapped functions need of a store's data.
pub(crate) trait NoteAsked: WasiView + 'static {
    /// Where this store keeps its note.
    fn asked(&mut self) -> &mut Asked;
}

/// The interfaces wasmtime defines the two functions in, by the names its linker uses (guests
/// importing any 0.2 version are matched to them).
const ENVIRONMENT: &str = "wasi:cli/environment@0.2.12";
const PREOPENS: &str = "wasi:filesystem/preopens@0.2.12";

/// Replaces wasmtime's `get-environment` and `get-directories`. Call it after
/// `wasmtime_wasi::p2::add_to_linker_*` with shadowing allowed.
pub(crate) fn add_to_linker<T: NoteAsked>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    linker.instance(ENVIRONMENT)?.func_wrap("get-environment", |mut store, (): ()| {
        let data = store.data_mut();
        data.asked().env = true;
        Ok((data.cli().get_environment()?,))
    })?;
    linker.instance(PREOPENS)?.func_wrap("get-directories", |mut store, (): ()| {
        let data = store.data_mut();
        data.asked().dirs = true;
        Ok((data.filesystem().get_directories()?,))
    })
}
