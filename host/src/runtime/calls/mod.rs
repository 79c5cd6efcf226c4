//! Calls through the surface: a tool call (`executor`, its secrets kept out by `secret_guard`,
//! asked about first by `confirm`, a refusal while servers are not up explained by `not_up`, with its input-required rounds in `request_state`) and
//! reading a resource or getting a prompt (`catalog_calls`, their secrets kept out by
//! `reply_guard`), each passing its guard plugins (`guards`), each sent
//! and its failure sorted by `send`. The top of the runtime: these use the supervisor, nothing
//! below uses them.

pub(super) mod catalog_calls;
pub(super) mod catalog_error;
pub(super) mod client_span;
mod confirm;
pub(super) mod executor;
mod guards;
mod not_up;
mod observed;
mod reply_guard;
pub(super) mod request_state;
mod secret_guard;
mod send;
