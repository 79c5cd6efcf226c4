//! What every client session of the front shares: the one runtime, the relay of servers'
//! questions and notices, the calls waiting between two requests, the lazy surface, the board
//! operators read and the scopes requests are decided by. Built once by whoever serves the
//! front (the gateway), and handed to each session's [`Front`](super::front::Front).

use std::sync::Arc;

use super::in_flight::Board;
use super::input_rounds::Rounds;
use super::lazy::Lazy;
use super::relay::Relay;
use super::scope::Scopes;
use crate::runtime::Runtime;

/// How long after serve started a listing waits for servers still connecting that have no
/// last-known listing (`serve --list-wait`; a server with one is listed from it at once). A
/// client lists right after `initialize`, which is answered at once, and many clients list
/// only once (Codex, the Python SDK's default client), so what is missing from that first
/// listing is missing for good: 8 s fits a `uvx` or `npx` server started from a warm cache
/// (2 to 5 s) with room, and stays under Codex's 10 s `startup_timeout_sec`, which bounds
/// `initialize` and that first `tools/list` together. The wait ends as soon as every server
/// has connected or failed, so it costs nothing when they are quick; a hung one delays only
/// the listings of these first seconds, by no more than this. What comes up later is
/// announced by `list_changed`.
pub const DEFAULT_LIST_WAIT: std::time::Duration = std::time::Duration::from_secs(8);

/// What every session shares.
pub struct Shared {
    /// The one runtime behind every client.
    pub runtime: Runtime,
    /// Where servers' questions and notices go.
    pub relay: Arc<Relay>,
    /// Calls of 2026-07-28 clients waiting for an answer between two requests.
    pub rounds: Arc<Rounds>,
    /// Whether the lazy surface is shown, and its search index.
    pub lazy: Lazy,
    /// The clients connected and the requests in flight, for operators (the gateway's `operator.rs`).
    pub board: Arc<Board>,
    /// Each request's scope (`scope.rs`): its caller, bundle and policy, as the side that
    /// serves the front decides them (the gateway's `access.rs`).
    pub access: Arc<dyn Scopes>,
    /// How long after the start a listing waits for servers still connecting with no
    /// last-known listing ([`DEFAULT_LIST_WAIT`]).
    pub list_wait: std::time::Duration,
}
