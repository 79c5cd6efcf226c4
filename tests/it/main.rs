//! Black-box tests: the built `toolport` binary on a temporary home and workspace, against
//! real MCP servers and real WebAssembly components. One module per behaviour.

mod acp;
mod acp_limits;
mod acp_support;
mod common;
mod component_support;
mod config_cmds;
mod config_env;
mod config_files;
mod config_links;
mod conformance;
mod everything;
mod faults;
mod faults_cache;
mod faults_holds;
mod faults_net;
mod faults_plugins;
mod faults_processes;
mod faults_sse;
mod faults_support;
mod foreign_text;
mod names_checked;
mod peers;
mod plugins;
mod plugins_cli;
mod policy;
mod runtime;
mod runtime_live;
mod runtime_support;
mod secrets_in_logs;
mod session;
mod smoke;
mod transport_support;
mod transports;
mod workspace_owner;
mod workspace_plugins;
