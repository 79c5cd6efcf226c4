//! Which MCP revision a connection speaks. Every transport asks rmcp for the same lifecycle:
//! the stateless 2026-07-28 revision first (`server/discover`, then protocol version, client
//! info and capabilities in each request's `_meta` and the `MCP-Protocol-Version` header), and
//! the `initialize` handshake for servers that answer the probe with a JSON-RPC error or not at
//! all. rmcp does the negotiating (including the retry a `-32022` UnsupportedProtocolVersion
//! answer asks for); this file only says what we prefer.

use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::Transport;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient};

use super::cause::deepest_cause;
use super::in_order::{InOrder, ProgressTap};

/// The handshake revision offered to servers without `server/discover`. A server that speaks
/// only an older one (2025-06-18, 2025-03-26, 2024-11-05) answers with its own version, which
/// rmcp accepts.
pub const LEGACY_VERSION: ProtocolVersion = ProtocolVersion::LATEST_WITH_INITIALIZE;

/// Discover first with every stateless revision rmcp knows, newest first; fall back to
/// `initialize` at [`LEGACY_VERSION`]. rmcp bounds the probe itself (10 s for a server that
/// never answers it), inside our connect timeout.
pub fn lifecycle() -> ClientLifecycleMode {
    let preferred: Vec<ProtocolVersion> =
        ProtocolVersion::KNOWN_VERSIONS.iter().rev().filter(|v| !v.has_initialize()).cloned().collect();
    ClientLifecycleMode::Auto { preferred_versions: preferred, legacy_version: Some(LEGACY_VERSION) }
}

/// Whether a failed start is a server that does not understand `server/discover` but did not
/// say so with a JSON-RPC error (rmcp falls back by itself on an error): it answered the probe
/// with another result (often `{}`), or offered only handshake revisions. The connection is then
/// made again with `initialize` alone.
pub fn wants_handshake_retry(error: &ClientInitializeError) -> bool {
    match error {
        ClientInitializeError::ExpectedInitResult(Some(_)) => true,
        ClientInitializeError::NoCompatibleProtocolVersion { server_supported, .. } => {
            server_supported.iter().any(ProtocolVersion::has_initialize)
        }
        _ => false,
    }
}

/// How one connection attempt starts its session: the client's handler, the lifecycle asked
/// for and where progress reports go.
pub struct Start<H> {
    pub handler: H,
    pub lifecycle: ClientLifecycleMode,
    pub tap: ProgressTap,
}

impl<H: ClientHandler> Start<H> {
    /// rmcp's session over `transport`, its progress reports tapped in order.
    pub async fn serve<T: Transport<RoleClient> + 'static>(
        self,
        transport: T,
    ) -> Result<RunningService<RoleClient, H>, ClientInitializeError> {
        self.handler.serve_with_lifecycle(InOrder::new(transport, self.tap), self.lifecycle).await
    }
}

/// Why one connection attempt failed: the one-line message, and whether another attempt with
/// the `initialize` handshake may succeed.
#[derive(Debug)]
pub struct StartError {
    /// The deepest cause, one line.
    pub message: String,
    /// See [`wants_handshake_retry`].
    pub handshake_retry: bool,
}

impl StartError {
    /// A failure another handshake cannot fix (spawn, URL, transport, refusal).
    pub fn other(message: impl Into<String>) -> Self {
        Self { message: message.into(), handshake_retry: false }
    }

    /// rmcp's start error, classified.
    pub fn from_init(error: &ClientInitializeError) -> Self {
        Self { message: deepest_cause(error), handshake_retry: wants_handshake_retry(error) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefers_the_stateless_revision_and_falls_back_to_the_newest_handshake() {
        let ClientLifecycleMode::Auto { preferred_versions, legacy_version } = lifecycle() else {
            panic!("expected the auto lifecycle");
        };
        assert_eq!(preferred_versions.first(), Some(&ProtocolVersion::LATEST));
        assert!(preferred_versions.iter().all(|v| !v.has_initialize()));
        assert_eq!(legacy_version, Some(ProtocolVersion::V_2025_11_25));
    }

    #[test]
    fn a_non_discovery_answer_or_handshake_only_versions_retry_with_initialize() {
        let empty = ClientInitializeError::ExpectedInitResult(Some(rmcp::model::ServerResult::empty(())));
        assert!(wants_handshake_retry(&empty));
        let old_only = ClientInitializeError::NoCompatibleProtocolVersion {
            client_supported: vec![ProtocolVersion::LATEST],
            server_supported: vec![ProtocolVersion::V_2025_06_18],
        };
        assert!(wants_handshake_retry(&old_only));
        let newer_only = ClientInitializeError::NoCompatibleProtocolVersion {
            client_supported: vec![ProtocolVersion::LATEST],
            server_supported: vec![
                serde_json::from_value(serde_json::json!("2099-01-01")).unwrap_or_else(|e| panic!("{e}")),
            ],
        };
        assert!(!wants_handshake_retry(&newer_only));
        assert!(!wants_handshake_retry(&ClientInitializeError::ConnectionClosed("gone".into())));
    }
}
