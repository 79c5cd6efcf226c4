//! The plugin host (contract: wit/README.md): third-party code — transports, name policies,
//! tool shapes — runs as WASI components that can do nothing they were not granted, cannot hang
//! or exhaust the host, and are refused at load when built for another contract.
//!
//! Code map: one wasmtime engine per process (`engine`), compiled artifacts cached on disk
//! (`cache`), loading and checking a component (`load`, `inspect`), the host and its registry
//! of plugins (`host`, `builtin`). Each call runs in a store of its own (`store`), admitted to
//! the process-wide pool first (`admission`), under a closed-by-default sandbox opened only by
//! config grants (`sandbox`, `grants`; the WASI functions wasmtime leaves too open replaced in
//! `sockets_gate` with its `socket_budget`, and `files_gate`; stderr kept as a bounded tail,
//! `stderr`) and per-call limits (`limits`); policies and shapes go
//! through one guarded call (`guard`) and differ only in their export (`policy`, `shape`); a
//! transport is one long call per connection (`transport`). The generated bindings stay
//! private (`bindings`), converted at the boundary (`wire`, `model`), and each imported WIT
//! interface has its host impl in a file of its own (`log`, `channel` over the `mailbox`
//! resources). A one-off run (`toolport plugin run`) may also keep a plugin's log lines and read
//! its sandbox's denials (`trial`).
//!
//! This file only declares and re-exports: every type lives in a leaf module, so no module of
//! the plugin host imports its parent back.

mod bindings;
mod builtin;
mod compile;
mod error;
mod guard;
mod host;
mod kinds;
mod log;
mod messages;
mod model;
mod sandbox;
mod setup_error;
mod wire;

pub use builtin::{PLUGIN_BUILD_DIR, builtin_bytes};
pub use compile::cache::CacheOutcome;
pub use compile::inspect::{Inspection, PACKAGE, WIT_FOLDER, WIT_VERSION, inspect, sandbox_uses};
pub use compile::load::Origin;
pub use error::{Fault, PluginError};
pub use host::{PluginHost, PluginSummary};
pub use kinds::guard::{GuardAnswer, GuardPlugin, HookContext, HookKind};
pub use kinds::policy::NamePolicy;
pub(crate) use kinds::server::{Refusals, Started};
// The host's record of what a sandbox refused, kept the same way by the egress proxy of a
// sandboxed stdio server (`transport/egress.rs`).
pub use kinds::shape::ToolShape;
pub(crate) use messages::queue::{MAX_MESSAGE_BYTES, QueueReceiver, channel as queue};
pub use model::{ToolInfo, Verdict};
pub(crate) use sandbox::context::Denials;
pub use sandbox::log_sink::PluginLogLine;
pub use sandbox::socket_budget::raise_fd_limit;
pub use setup_error::SetupError;
