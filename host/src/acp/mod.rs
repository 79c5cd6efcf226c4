//! `toolport acp`: an Agent Client Protocol (version 1) agent over newline-delimited JSON-RPC
//! 2.0, so editors that speak ACP can hand toolport their own MCP servers per session.
//!
//! - `initialize` advertises `loadSession` and `mcpCapabilities {http, sse}`.
//! - `session/new` / `session/load` take an absolute `cwd` and `mcpServers`; a non-empty list
//!   replaces the local stores for that session (every entry enabled, none paused), an empty
//!   one uses the local stores with `cwd` as the workspace (mcp-integration §10).
//! - `session/prompt` runs `/mcp` (read-only view), `/tools` and `/call`, answering with
//!   `agent_message_chunk` updates; `session/cancel` stops a running call.
//! - `_toolport/tools/list` and `_toolport/tools/call` let an embedding host use the tool
//!   surface directly.
//!
//! Each request is read once, as it arrives, into a typed request (`request.rs`); the wire
//! types come from `agent-client-protocol-schema` where they fit, and the session params are
//! read by hand (`params.rs`) because clients send `env`/`headers` in two forms.
//! Only protocol lines go to the output; logs go to stderr.

mod agent;
mod params;
mod request;
mod rpc;
mod session;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, BufReader};
use tokio::task::JoinSet;

use crate::runtime::RuntimeOptions;
use agent::Agent;
use request::{Notice, Request};
use rpc::{Incoming, parse_line, response, spawn_writer};

/// What the agent needs besides its streams.
#[derive(Debug, Clone)]
pub struct AcpOptions {
    /// The home folder: the local global store for sessions that bring no servers, and the
    /// compiled-plugin cache.
    pub home: PathBuf,
    /// Options for every session's runtime.
    pub runtime: RuntimeOptions,
}

/// Serves ACP on `input`/`output` until `input` ends; then answers what is still in flight,
/// closes every session's connections and returns.
pub async fn serve<R, W>(input: R, output: W, options: AcpOptions) -> Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (outbox, writer) = spawn_writer(output);
    let agent = Arc::new(Agent::new(options.home, options.runtime, outbox.clone()));
    let mut in_flight = JoinSet::new();
    let mut input = BufReader::new(input);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf).await.context("cannot read the ACP input")? == 0 {
            break;
        }
        // Bad UTF-8 is replaced, not fatal: outside a string it makes the line a parse error,
        // and the agent keeps serving either way.
        let line = String::from_utf8_lossy(&buf);
        if line.trim().is_empty() {
            continue;
        }
        // Reap finished handlers so the set does not grow with the session's length.
        while in_flight.try_join_next().is_some() {}
        match parse_line(&line) {
            Ok(Incoming::Request { id, method, params }) => match Request::parse(&method, params) {
                Ok(request) => {
                    let admission = agent.admit(&request);
                    let agent = Arc::clone(&agent);
                    let outbox = outbox.clone();
                    in_flight.spawn(async move {
                        let (result, then) = agent.request(request, admission).await;
                        outbox.send(response(id, result));
                        if let Some(notification) = then {
                            outbox.send(notification);
                        }
                    });
                }
                // Nothing to wait for: answered at once, like a line that is not JSON-RPC.
                Err(error) => outbox.send(response(id, Err(error))),
            },
            Ok(Incoming::Notification { method, params }) => match Notice::parse(&method, &params) {
                Ok(notice) => agent.notice(notice),
                Err(why) => tracing::debug!("ignoring a notification: {why}"),
            },
            Ok(Incoming::Response) => tracing::debug!("ignoring a response: this agent sends no requests"),
            Err(rejected) => {
                let rpc::Rejected { id, error } = *rejected;
                tracing::warn!("rejected ACP line: {}", error.message);
                outbox.send(response(id, Err(error)));
            }
        }
    }
    // Closing stdin is not a cancel: a client may half-close and still read its last answers.
    while in_flight.join_next().await.is_some() {}
    agent.shutdown().await;
    drop(agent);
    drop(outbox);
    writer.await.context("the ACP writer task failed")?.context("cannot write to the ACP output")
}
