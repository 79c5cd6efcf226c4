//! Toolport as an MCP client over each transport: the real server-everything over stdio and
//! streamable HTTP, transport plugins end to end, and the official conformance suite's client
//! scenarios.

pub(crate) mod conformance;
mod everything;
mod plugins;
