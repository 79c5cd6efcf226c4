//! `toolport serve`'s gateway: what makes the MCP front (`serve/`) a service a team can run.
//! [`Gateway`] starts the runtime behind the front and serves it over stdio, or over
//! streamable HTTP at `/mcp` with the checks a port needs (`http.rs`, `listener.rs`): callers
//! known by a shared token or by JWTs from an issuer (`bearer.rs`, `oidc/`), each request's
//! scope under the policy and the bundle its URL names (`access.rs`, followed as edited by
//! `policy_watch.rs`), rate limits per caller and per tool (`rate_limit.rs`), sessions bound
//! to their caller, capped and, with a shared key, sealed so any replica restores them
//! (`bound_sessions.rs`, `sealed_sessions.rs`, `ended_sessions.rs`, `session_key.rs`,
//! `question_ids.rs`), and the operator's endpoints (`operator.rs`). The config files are
//! followed as edited (`config_watch.rs`), and a server that fails or dies is reconnected with
//! a backoff (`revive.rs`).
//!
//! The front knows nothing of this: it reads the caller the gateway put in a request
//! (`serve::Caller`) and asks each request's scope through its `Scopes` seam, which
//! `access::Access` answers. Arrows go from here to `serve`, never back.

mod access;
mod bearer;
mod bound_sessions;
mod config_watch;
mod ended_sessions;
mod http;
mod listener;
mod oidc;
mod operator;
mod policy_watch;
mod question_ids;
mod rate_limit;
mod revive;
mod sealed_sessions;
mod session_key;

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;
use rmcp::ServiceExt as _;
use tokio_util::sync::CancellationToken;

pub use bearer::HttpAuth;
pub use config_watch::ConfigWatch;
pub use http::HttpOptions;
pub use oidc::OidcOptions;
pub use rate_limit::{Per, RateLimit};
pub use session_key::{Purpose, SessionKey, SessionKeyError};

use crate::config::{Resolved, Surface};
use crate::paths::Paths;
use crate::runtime::{Runtime, RuntimeOptions};
use crate::serve::{DEFAULT_LIST_WAIT, Front, Lazy, Relay, Shared, report_changes};
use access::Access;

/// toolport as an MCP server: a runtime whose servers' questions go to the serving side's
/// clients.
pub struct Gateway {
    shared: Arc<Shared>,
    /// The policy the front's scopes are decided by, which the gateway sets and follows.
    access: Arc<Access>,
    /// The gateway's own tasks (the operator's change lines, reconnecting): ended with it.
    tasks: Vec<tokio::task::AbortHandle>,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Gateway {
    /// Starts the runtime like [`Runtime::start_in_background`]: it returns before any server
    /// is up, so a client's `initialize` is answered at once however slow or hung a server
    /// is, and each server's tools join as it connects. `options.elicitor` and `options.sampler`
    /// are replaced: a server's question goes to the client whose call asked it (declined
    /// when that client cannot answer).
    pub async fn start(resolved: Resolved, options: RuntimeOptions) -> anyhow::Result<Gateway> {
        Self::start_with_surface(resolved, options, None, DEFAULT_LIST_WAIT).await
    }

    /// [`Gateway::start`] showing `surface` whatever the workspace's `surface` says (`None`:
    /// follow it, as it is edited too). [`Surface::Lazy`] lists `search_tools`, `describe_tool`
    /// and `call_tool` instead of every tool (`serve --lazy`). A listing waits at most
    /// `list_wait` after the start for a server still connecting that has no last-known
    /// listing (`serve --list-wait`).
    pub async fn start_with_surface(
        resolved: Resolved,
        mut options: RuntimeOptions,
        surface: Option<Surface>,
        list_wait: std::time::Duration,
    ) -> anyhow::Result<Gateway> {
        let relay = Arc::new(Relay::default());
        options.elicitor = Some(relay.elicitor());
        options.sampler = Some(relay.sampler());
        let runtime = Runtime::start_in_background(resolved, options)?;
        // The servers' last-known listings on the surface before any client is answered.
        runtime.primed().await;
        runtime.set_clients(relay.clients());
        let tasks = vec![
            tokio::spawn(report_changes(runtime.clone())).abort_handle(),
            tokio::spawn(revive::run(runtime.clone())).abort_handle(),
        ];
        let lazy = Lazy::new(surface);
        let board = Default::default();
        let access = Arc::new(Access::default());
        let rounds = Default::default();
        let scopes = access.clone();
        let shared = Arc::new(Shared { runtime, relay, rounds, lazy, board, access: scopes, list_wait });
        operator::watch(&shared);
        Ok(Gateway { shared, access, tasks })
    }

    /// Decides every request by `policy` from now on (`None`: everything allowed, the
    /// default): lists are filtered per caller, calls, reads and prompts checked (`access.rs`).
    pub fn set_policy(&self, policy: Option<crate::policy::Policy>) {
        self.access.set_policy(policy);
    }

    /// The runtime behind it.
    pub fn runtime(&self) -> &Runtime {
        &self.shared.runtime
    }

    /// Follows edits of `paths`' store and workspace file while the returned handle is held.
    pub fn watch(&self, paths: Paths) -> anyhow::Result<ConfigWatch> {
        config_watch::watch(self.shared.runtime.clone(), paths)
    }

    /// Follows edits of the policy file (`--policy FILE`, else `<home>/policy.cedar`) while the
    /// returned handle is held (`policy_watch.rs`).
    pub fn watch_policy(&self, file: std::path::PathBuf) -> anyhow::Result<ConfigWatch> {
        policy_watch::watch(self.shared.runtime.clone(), self.access.clone(), file)
    }

    /// Serves one client over the stdio framing (a JSON message a line) on `input` and
    /// `output` until it closes them: the process's stdin and stdout, which the binary passes
    /// as `rmcp::transport::stdio_pipes()`. Over pipes (how clients start a server) those are
    /// read and written on the runtime's reactor, not by Tokio's blocking threads: that
    /// hand-off cost two thread wake-ups per message each way, the largest part of what the
    /// hop added to a call (BENCHMARKS.md "## Serve"). Anything else (a terminal, a file, a
    /// socket) falls back to the blocking handles.
    pub async fn serve_stdio<R, W>(&self, input: R, output: W) -> anyhow::Result<()>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let running = Front::new(self.shared.clone())
            .serve((input, output))
            .await
            .context("cannot start serving on stdio")?;
        running.waiting().await.context("serving on stdio failed")?;
        Ok(())
    }

    /// Serves streamable HTTP at `http://<addr>/mcp` until `stop` is cancelled; `ready` gets
    /// the bound address once the port is open.
    pub async fn serve_http(
        &self,
        options: HttpOptions,
        stop: CancellationToken,
        ready: impl FnOnce(SocketAddr),
    ) -> anyhow::Result<()> {
        self.shared.rounds.set_limit(options.max_sessions);
        http::serve(self.shared.clone(), self.access.clone(), options, stop, ready).await
    }
}
