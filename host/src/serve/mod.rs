//! The MCP front: the checked surface as one MCP server, for any agent that speaks MCP. One
//! runtime behind every client; what a client sees is the runtime's after every host rule
//! (`surface.rs`), and what it asks goes to the server that owns it (`front.rs`, over what
//! every session shares: `shared.rs`), each call, read and prompt on one guarded path
//! (`guarded.rs`) under the request's scope (`scope.rs`), answered in its method's words
//! (`answer.rs`), a call's progress passed on under the client's token (`progress.rs`).
//! Servers' questions and notices go back to the client whose call they belong to
//! (`relay.rs`, `resource_watch.rs`); changes of the surface reach every client as
//! `list_changed` (`changes.rs`). A 2026-07-28 client, which cannot be sent a question, gets
//! it as an input-required result instead (`input_rounds.rs`), and every complete result with
//! `resultType: "complete"`, a server's too (`result_type.rs`). With the lazy surface a client
//! sees three tools that search, describe and call the rest (`lazy.rs`). Each request has its
//! span (`request_span.rs`) and a place on the board operators read (`in_flight.rs`). Both
//! protocol revisions, as rmcp serves them: 2025-11-25 sessions and stateless 2026-07-28
//! requests.
//!
//! The front serves any transport and knows no token, URL or policy file: who the caller is
//! ([`Caller`]) and what a request may reach ([`Scopes`]) are given to it by the side that
//! serves it, `gateway/`, which sits above and imports this module, never the other way.

mod answer;
mod caller;
mod changes;
mod front;
mod guarded;
mod in_flight;
mod input_rounds;
pub(crate) mod lazy;
mod progress;
mod relay;
mod request_span;
mod resource_watch;
mod result_type;
mod scope;
mod shared;
mod surface;

pub use caller::{Caller, Owner};
pub use changes::report as report_changes;
pub use front::Front;
pub use input_rounds::DEFAULT_LIMIT as DEFAULT_ROUNDS_LIMIT;
pub use lazy::{LAZY_SERVER, Lazy, lazy_tools};
pub use relay::Relay;
pub use scope::{Callable, Scope, Scopes};
pub use shared::{DEFAULT_LIST_WAIT, Shared};
