//! The fault suite's guests: what a hostile plugin, transport or sandboxed server can make the
//! host hold, compute, reach or leave behind, and the compiled cache it must not forge.

mod cache;
mod cpu;
mod holds;
mod links;
mod net;
mod plugins;
mod pools;
mod sse;
