//! Black-box tests: the built `toolport` binary on a temporary home and workspace, against
//! real MCP servers and real WebAssembly components. One module per behaviour.

mod acp;
mod acp_limits;
mod acp_support;
mod common;
mod config_cmds;
mod config_env;
mod config_files;
mod config_links;
mod everything;
mod faults;
mod faults_plugins;
mod faults_processes;
mod faults_support;
mod peers;
mod plugins;
mod plugins_cli;
mod policy;
mod runtime;
mod runtime_live;
mod runtime_support;
mod session;
mod smoke;
mod transport_support;
mod transports;
mod workspace_owner;
mod workspace_plugins;
