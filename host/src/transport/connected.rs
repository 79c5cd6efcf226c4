//! What a transport hands the runtime: the running MCP session and its [`End`], what says how the
//! connection ends and what else the transport keeps while it runs. A new transport adds a
//! variant of [`End`] and its arms here; the runtime reads it only through these methods.

use std::time::Duration;

use rmcp::service::RunningService;
use rmcp::{ClientHandler, RoleClient};

use super::egress::EgressRefusals;
use super::http_audit::HeaderAudit;
use super::plugin::Pump;
use super::stdio::StdioChild;
use crate::plugin::Refusals;

/// An initialized MCP session and its transport's end.
pub struct Connected<H: ClientHandler> {
    /// rmcp's running client; its peer sends requests.
    pub service: RunningService<RoleClient, H>,
    /// What is behind the session, one variant per transport.
    pub end: End,
}

/// What is behind a session, per transport.
pub enum End {
    /// `stdio`: the child process.
    Child(StdioChild),
    /// `wasm`: the sandboxed server's run, ended as a child's, and what the sandbox refused it,
    /// recorded by the host.
    Wasm {
        /// The run.
        run: StdioChild,
        /// The refusals so far, read while the server runs.
        refusals: Refusals,
    },
    /// A transport plugin (`sse` and every plugin `type`): its pump says why the connection
    /// ended.
    Pump(Pump),
    /// `streamable_http`: the tools whose `x-mcp-header` annotations break SEP-2243 (rmcp leaves
    /// them out).
    Http(HeaderAudit),
}

impl End {
    /// The process (or sandboxed run) whose end is the connection's, if there is one.
    fn child(&self) -> Option<&StdioChild> {
        match self {
            Self::Child(child) | Self::Wasm { run: child, .. } => Some(child),
            Self::Pump(_) | Self::Http(_) => None,
        }
    }

    /// The header audit of a streamable HTTP connection.
    pub fn audit(&self) -> Option<HeaderAudit> {
        match self {
            Self::Http(audit) => Some(audit.clone()),
            _ => None,
        }
    }

    /// What the sandbox refused the server: a `wasm` server's, or a sandboxed stdio server's
    /// egress proxy's.
    pub fn refusals(&self) -> Option<Refused> {
        match self {
            Self::Wasm { refusals, .. } => Some(Refused::Wasm(refusals.clone())),
            Self::Child(child) => child.refusals().map(Refused::Egress),
            _ => None,
        }
    }

    /// Resolves when the process exits, with how it ended; never for a transport without one.
    pub async fn exited(&self) -> String {
        match self.child() {
            Some(c) => c.exited().await,
            None => std::future::pending().await,
        }
    }

    /// Why the connection ended, once the session has: the process's exit or the plugin's own
    /// words when the server ended it (`ended_by_peer`, each waited for at most `wait`), else
    /// `closed`.
    pub async fn reason(&self, ended_by_peer: bool, wait: Duration) -> String {
        match self.child() {
            Some(c) if ended_by_peer => tokio::time::timeout(wait, c.exited())
                .await
                .unwrap_or_else(|_| "connection closed by the server (process still running)".to_string()),
            Some(_) => "closed".to_string(),
            // A transport plugin that returned, trapped or hit a limit says so itself.
            None if ended_by_peer => match self {
                Self::Pump(pump) => tokio::time::timeout(wait, pump.ended())
                    .await
                    .unwrap_or_else(|_| "connection closed".to_string()),
                _ => "connection closed".to_string(),
            },
            None => "closed".to_string(),
        }
    }

    /// Stops the process, if there is one.
    pub async fn stop(self) {
        if let Self::Child(child) | Self::Wasm { run: child, .. } = self {
            child.stop().await;
        }
    }
}

/// What a sandbox refused a server, recorded by the host, which the server cannot hide or
/// misstate: the wasm sandbox's record, or the egress proxy's of a sandboxed process.
#[derive(Debug, Clone)]
pub enum Refused {
    /// A `wasm` server's.
    Wasm(Refusals),
    /// A sandboxed stdio server's.
    Egress(EgressRefusals),
}

impl Refused {
    /// Each refusal in the status view's words (`not granted: …`), oldest first.
    pub fn all(&self) -> Vec<String> {
        match self {
            Self::Wasm(r) => r.all(),
            Self::Egress(r) => r.all(),
        }
    }
}
