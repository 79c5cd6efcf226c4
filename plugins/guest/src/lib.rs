//! `toolport-guest`: what a toolport plugin needs besides its own logic, so plugin crates do not
//! copy the contract by hand.
//!
//! Enable exactly **one** feature, the plugin's kind (a component exports one world):
//!
//! | feature | world | implement | short names |
//! |---|---|---|---|
//! | `name-policy` | `name-policy` | [`PolicyGuest`]`::review` | [`Verdict`] |
//! | `tool-shape` | `tool-shape` | [`ShapeGuest`]`::convert` | |
//! | `transport` | `transport` | [`TransportGuest`]`::run` | [`Inbox`], [`Outbox`], [`Received`], [`wasip2`] |
//!
//! Every kind also gets [`Tool`], [`Server`], [`Level`], the log macros ([`info!`](crate::info) and
//! `trace!`/`debug!`/`warn!`/`error!`, into the host's log), the tool-aware JSON helpers
//! ([`input_schema`], [`output_schema`], [`annotations`], [`server_options`], [`shape_text`]) and
//! `toolport_guest::export!(MyType)`, which exports the implementation as the component's world. Without a feature only the
//! kind-independent JSON helpers ([`parse_json`], [`json_text`]) remain.
//!
//! ```ignore
//! use toolport_guest::{PolicyGuest, Server, Tool, Verdict};
//!
//! struct Mine;
//! impl PolicyGuest for Mine {
//!     fn review(server: Server, tools: Vec<Tool>) -> Vec<Verdict> {
//!         toolport_guest::info!("{}: {} tools", server.name, tools.len());
//!         tools.iter().map(|_| Verdict::Keep).collect()
//!     }
//! }
//! toolport_guest::export!(Mine);
//! ```
//!
//! The contract is `wit/since_v0.1.0` (in the toolport repository this crate's `wit` is a link
//! to the repository's one copy; a project made by `toolport plugin new` carries it as files).

mod json;
#[cfg(any(
    all(feature = "name-policy", not(feature = "tool-shape"), not(feature = "transport")),
    all(feature = "tool-shape", not(feature = "name-policy"), not(feature = "transport")),
    all(feature = "transport", not(feature = "name-policy"), not(feature = "tool-shape")),
))]
mod log;
/// The chosen kind's bindings (`exports`, `toolport`) and short names, re-exported at the root.
#[cfg(any(
    all(feature = "name-policy", not(feature = "tool-shape"), not(feature = "transport")),
    all(feature = "tool-shape", not(feature = "name-policy"), not(feature = "transport")),
    all(feature = "transport", not(feature = "name-policy"), not(feature = "tool-shape")),
))]
pub mod world;

pub use json::{json_text, parse_json};
#[cfg(any(
    all(feature = "name-policy", not(feature = "tool-shape"), not(feature = "transport")),
    all(feature = "tool-shape", not(feature = "name-policy"), not(feature = "transport")),
    all(feature = "transport", not(feature = "name-policy"), not(feature = "tool-shape")),
))]
pub use world::*;

#[cfg(any(
    all(feature = "name-policy", feature = "tool-shape"),
    all(feature = "name-policy", feature = "transport"),
    all(feature = "tool-shape", feature = "transport"),
))]
compile_error!(
    "toolport-guest: enable exactly one of the features `name-policy`, `tool-shape`, `transport`: \
     a plugin component exports one world, so one crate is one kind of plugin"
);
