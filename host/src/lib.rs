//! toolport: turns MCP servers into a live, checked tool surface for coding agents.
//!
//! The pipeline every tool takes (DESIGN §1): [`config`] resolves the three layers of state
//! (global store, workspace enablement, session pauses), [`runtime`] connects each server
//! through a [`transport`], lists its tools, applies the name policy and the host's collision
//! rules, converts the tools with a tool-shape [`plugin`], and exposes a registry and executor.
//! The CLI, the interactive [`session`] and the [`acp`] server are clients of this library.
#![deny(missing_docs)]

pub mod acp;
pub mod cli;
pub mod config;
pub mod demo;
pub mod demo_server;
pub mod paths;
pub mod plugin;
pub mod runtime;
pub mod session;
pub mod status;
pub mod transport;
