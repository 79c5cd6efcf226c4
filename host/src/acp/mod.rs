//! `toolport acp`: an Agent Client Protocol (version 1) agent over newline-delimited JSON-RPC
//! 2.0, so editors that speak ACP can hand toolport their own MCP servers per session.
//!
//! - `initialize` advertises `loadSession` and `mcpCapabilities {http, sse}`.
//! - `session/new` / `session/load` take an absolute `cwd` and `mcpServers`; a non-empty list
//!   replaces the local stores for that session (every entry enabled, none paused), an empty
//!   one uses the local stores with `cwd` as the workspace.
//! - `session/prompt` runs `/mcp` (read-only view), `/tools` and `/call`, answering with
//!   `agent_message_chunk` updates; `session/cancel` stops a running call.
//! - `_toolport/tools/list` and `_toolport/tools/call` let an embedding host use the tool
//!   surface directly.
//! - A call the workspace's `confirm` names is first put to the client as
//!   `session/request_permission` (allow once, reject once): the one request the agent sends.
//!
//! Each request is read once, as it arrives, into a typed request (`request.rs`); the wire
//! types come from `agent-client-protocol-schema` where they fit, and the session params are
//! read by hand (`params.rs`) because clients send `env`/`headers` in two forms.
//! Only protocol lines go to the output; logs go to stderr.

mod agent;
mod elicit;
mod limits;
mod params;
mod permission;
mod request;
mod rpc;
mod session;
mod updates;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_client_protocol_schema::v1::RequestId;
use anyhow::{Context as _, Result};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::task::JoinSet;

use crate::runtime::RuntimeOptions;
use agent::Agent;
pub use limits::AcpLimits;
use request::{Notice, Request};
use rpc::{Incoming, Read, busy, parse_line, read_line, response, spawn_writer, too_long};

/// What the agent needs besides its streams.
#[derive(Debug, Clone)]
pub struct AcpOptions {
    /// The home folder: the local global store for sessions that bring no servers, and the
    /// compiled-plugin cache.
    pub home: PathBuf,
    /// Options for every session's runtime.
    pub runtime: RuntimeOptions,
    /// Line size, concurrent requests, idle sessions.
    pub limits: AcpLimits,
}

/// Serves ACP on `input`/`output` until `input` ends; then answers what is still in flight,
/// closes every session's connections and returns. A line over `limits.max_line_bytes` and a
/// request over `limits.max_requests` are answered with an error and the agent keeps serving;
/// sessions idle for `limits.idle_timeout` are closed.
pub async fn serve<R, W>(input: R, output: W, options: AcpOptions) -> Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let limits = options.limits;
    let (outbox, writer) = spawn_writer(output);
    let agent = Arc::new(Agent::new(options.home, options.runtime, limits, outbox.clone()));
    let sweeper = spawn_sweeper(&agent, limits);
    let mut in_flight = JoinSet::new();
    // Requests being served: the cap counts these, not tasks (a task lingers briefly after
    // its answer is queued).
    let running = Arc::new(AtomicUsize::new(0));
    let mut input = BufReader::new(input);
    let mut buf = Vec::new();
    loop {
        match read_line(&mut input, &mut buf, limits.max_line_bytes)
            .await
            .context("cannot read the ACP input")?
        {
            Read::End => break,
            Read::TooLong => {
                tracing::warn!("rejected an ACP line over {} bytes", limits.max_line_bytes);
                outbox.send(response(RequestId::Null, Err(too_long(limits.max_line_bytes))));
                continue;
            }
            Read::Line => {}
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
            Ok(Incoming::Request { id, .. }) if running.load(Ordering::SeqCst) >= limits.max_requests => {
                outbox.send(response(id, Err(busy(limits.max_requests))));
            }
            Ok(Incoming::Request { id, method, params }) => match Request::parse(&method, params) {
                Ok(request) => {
                    let admission = agent.admit(&request);
                    let agent = Arc::clone(&agent);
                    let outbox = outbox.clone();
                    let slot = Slot::take(&running);
                    in_flight.spawn(async move {
                        let (result, then) = agent.request(request, admission).await;
                        // Free before answering: a client that has its answer may send the next.
                        drop(slot);
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
            Ok(Incoming::Response { id, outcome }) => agent.answered(id, outcome),
            Err(rejected) => {
                let rpc::Rejected { id, error } = *rejected;
                tracing::warn!("rejected ACP line: {}", error.message);
                outbox.send(response(id, Err(error)));
            }
        }
    }
    // Closing stdin is not a cancel: a client may half-close and still read its last answers.
    while in_flight.join_next().await.is_some() {}
    if let Some(sweeper) = sweeper {
        sweeper.abort();
    }
    agent.shutdown().await;
    drop(agent);
    drop(outbox);
    writer.await.context("the ACP writer task failed")?.context("cannot write to the ACP output")
}

/// The task that closes idle sessions, if they expire at all.
fn spawn_sweeper(agent: &Arc<Agent>, limits: AcpLimits) -> Option<tokio::task::JoinHandle<()>> {
    let (idle, every) = (limits.idle_timeout?, limits.sweep_every()?);
    let agent = Arc::clone(agent);
    Some(tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            agent.evict_idle(idle).await;
        }
    }))
}

/// One request's place under the concurrency cap, given back when dropped (also when its task
/// panics or is aborted).
struct Slot(Arc<AtomicUsize>);

impl Slot {
    fn take(running: &Arc<AtomicUsize>) -> Self {
        running.fetch_add(1, Ordering::SeqCst);
        Self(Arc::clone(running))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
