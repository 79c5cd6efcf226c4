//! What a guest runs inside: its WASI context and the gates on files, sockets and links
//! (`context`, `files_gate`, `dir_listing`, `sockets_gate`), the store that holds one instance's state,
//! and its budgets — memory and instances (`admission`, `limits`), CPU (`cpu`), waits,
//! sockets — with the hints that name a missing grant. Below compiling and running.

pub(super) mod admission;
pub(super) mod asked;
pub(super) mod context;
pub(super) mod cpu;
pub(super) mod dir_listing;
pub(super) mod files_gate;
pub(super) mod grant_hint;
pub(super) mod limits;
pub(super) mod local_fs;
pub(super) mod log_sink;
pub(super) mod socket_budget;
pub(super) mod sockets_gate;
pub(super) mod stderr;
pub(super) mod store;
pub(super) mod waits;
