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
//! | `guard` | `guard` | [`GuardGuest`]`::on_request`, `::on_response` | [`Context`], [`RequestKind`], [`Decision`] |
//!
//! Every kind also gets [`Level`], the log macros ([`info!`](crate::info) and
//! `trace!`/`debug!`/`warn!`/`error!`, into the host's log) and `toolport_guest::export!(MyType)`,
//! which exports the implementation as the component's world. The kinds that look at tools
//! (all but `guard`) get [`Tool`], [`Server`] and the tool-aware JSON helpers ([`input_schema`],
//! [`output_schema`], [`annotations`], [`server_options`], [`shape_text`]); a guard gets
//! [`params_json`], [`answer_json`], [`Decision::mutate`], [`Decision::deny`] and
//! [`RequestKind::method`]. Without a feature only the kind-independent JSON helpers
//! ([`parse_json`], [`json_text`], [`strings`], [`replace_strings`]) remain.
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

/// Keeps `items` only when exactly one kind is enabled. The condition is written once, here: two
/// kinds are the `compile_error!` below, and leaving the world out then spares the author a page
/// of errors from two sets of bindings.
macro_rules! one_kind {
    ($($item:item)*) => {$(
        #[cfg(any(
            all(feature = "name-policy", not(feature = "tool-shape"), not(feature = "transport"), not(feature = "guard")),
            all(feature = "tool-shape", not(feature = "name-policy"), not(feature = "transport"), not(feature = "guard")),
            all(feature = "transport", not(feature = "name-policy"), not(feature = "tool-shape"), not(feature = "guard")),
            all(feature = "guard", not(feature = "name-policy"), not(feature = "tool-shape"), not(feature = "transport")),
        ))]
        $item
    )*};
}

one_kind! {
    mod log;
    /// The chosen kind's bindings (`exports`, `toolport`) and short names, re-exported at the root.
    pub mod world;
    pub use world::*;
    /// A guard's helpers: its params and answer as JSON, its decisions built from values.
    #[cfg(feature = "guard")]
    mod hooks;
    #[cfg(feature = "guard")]
    pub use hooks::{answer_json, params_json};
}

pub use json::{json_text, parse_json, replace_strings, strings};

#[cfg(any(
    all(feature = "name-policy", feature = "tool-shape"),
    all(feature = "name-policy", feature = "transport"),
    all(feature = "name-policy", feature = "guard"),
    all(feature = "tool-shape", feature = "transport"),
    all(feature = "tool-shape", feature = "guard"),
    all(feature = "transport", feature = "guard"),
))]
compile_error!(
    "toolport-guest: enable exactly one of the features `name-policy`, `tool-shape`, `transport`, \
     `guard`: a plugin component exports one world, so one crate is one kind of plugin"
);
