//! Black-box tests: the built `toolport` binary on a temporary home and workspace, against
//! real MCP servers and real WebAssembly components. One module per behaviour.

mod common;
mod smoke;
