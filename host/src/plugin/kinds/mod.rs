//! One file per kind of plugin, each a loaded component behind the call guard: the name
//! policy, the tool shape, the guard, the transport, the sandboxed server, and the one-off trial run of a
//! policy or a shape (`toolport plugin run`).

pub(super) mod guard;
pub(super) mod policy;
pub(super) mod server;
pub(super) mod shape;
pub(super) mod transport;
pub(super) mod trial;
