//! The interactive session: one live runtime, the `/mcp` command language on top of it, and
//! the session-only layer of state (pauses).
//!
//! Which layer each command touches (`docs/src/agents.md` "`toolport session`"): `add`/`remove` the
//! global store, `enable`/`disable` the workspace file, `pause`/`resume`/`retry` only this
//! session's memory and connections. After a change the runtime is reconciled with the freshly
//! resolved config, which connects or closes only the servers whose activity changed; `retry`
//! reconnects only the server it names. [`Session::execute`] is the whole language and does no
//! terminal I/O, so tests and the binary's line editor drive the same code.
//!
//! The layers, each importing only those before it: [`actions`] (the `/mcp` table) →
//! [`command`] (parsing) and [`complete`] (completion) → `live` (the session and its
//! non-`/mcp` commands) → `handlers` (one handler per `/mcp` action). The terminal's loop is
//! the binary's (`cli/session_editor.rs`).

pub mod actions;
pub mod command;
pub mod complete;
mod handlers;
pub(crate) mod live;

pub use live::{Reply, Session};
