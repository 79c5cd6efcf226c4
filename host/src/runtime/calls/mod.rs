//! Calls through the surface: a tool call (`executor`, with its input-required rounds in
//! `request_state` and the secrets kept out of it by `secret_guard`) and reading a resource or getting a prompt (`catalog_calls`), each sent
//! and its failure sorted by `send`. The top of the runtime: these use the supervisor, nothing
//! below uses them.

pub(super) mod catalog_calls;
pub(super) mod executor;
pub(super) mod request_state;
mod secret_guard;
mod send;
