//! Black-box tests: the built `toolport` binary on a temporary home and workspace, against
//! real MCP servers and real WebAssembly components. One module per behaviour, grouped in
//! folders named after the room of `host/src` they exercise; `support/` holds the fixtures
//! the groups share.

mod acp;
mod architecture;
mod auth;
mod clients;
mod config;
mod docs;
mod faults;
mod observe;
mod plugins;
mod runtime;
mod sandbox;
mod serve;
mod session;
mod smoke;
mod support;
mod team;
mod transport;
mod trust;
