//! Which MCP revision a connection speaks. Every transport asks rmcp for the same lifecycle:
//! the stateless 2026-07-28 revision first (`server/discover`, then protocol version, client
//! info and capabilities in each request's `_meta` and the `MCP-Protocol-Version` header), and
//! the `initialize` handshake for servers that answer the probe with a JSON-RPC error or not at
//! all. rmcp does the negotiating (including the retry a `-32022` UnsupportedProtocolVersion
//! answer asks for); this file only says what we prefer. A server whose definition names its
//! `protocolVersion` gets that revision's lifecycle alone ([`pinned`]).

use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::Transport;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, Peer, RoleClient};

use super::connect_error::ConnectError;
use super::in_order::{InOrder, ProgressTap};
use crate::config::ServerDef;

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

/// The lifecycle of a definition's `protocolVersion`, `None` when it names none: a handshake
/// revision is `initialize` offering it ([`offered`]); a stateless one is `server/discover`
/// with only it. No fallback either way: the person who named it asked for nothing else.
pub fn pinned(def: &ServerDef) -> Option<ClientLifecycleMode> {
    let version = pinned_version(def)?;
    Some(if version.has_initialize() {
        ClientLifecycleMode::Initialize
    } else {
        ClientLifecycleMode::Discover { preferred_versions: vec![version] }
    })
}

/// The revision `initialize` offers `def`'s server: its `protocolVersion` when that is a
/// handshake revision, else [`LEGACY_VERSION`].
pub fn offered(def: &ServerDef) -> ProtocolVersion {
    pinned_version(def).filter(ProtocolVersion::has_initialize).unwrap_or(LEGACY_VERSION)
}

fn pinned_version(def: &ServerDef) -> Option<ProtocolVersion> {
    let written = def.protocol_version.as_deref()?;
    ProtocolVersion::KNOWN_VERSIONS.iter().find(|v| v.as_str() == written).cloned()
}

/// Whether the server behind `peer` speaks a stateless revision (2026-07-28 on): no session, so
/// no `logging/setLevel` or `resources/subscribe`, and list changes come over
/// `subscriptions/listen`. `false` when rmcp kept no server info.
pub fn is_stateless(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info().is_some_and(|info| !info.protocol_version.has_initialize())
}

/// Whether a failed start may succeed on a fresh connection with another lifecycle, and which:
/// - `initialize` alone for a server that does not understand `server/discover` but did not say
///   so with a JSON-RPC error (rmcp falls back by itself on an error): it answered the probe with
///   another result (often `{}`), or offered only handshake revisions; and for one whose error
///   answer to the probe came after rmcp's 10 s wait had already sent `initialize` (a server
///   still starting, `npx -y` fetching its package);
/// - `server/discover` without that wait for one whose discovery *result* came that late: it
///   speaks the stateless revision, only slowly.
pub fn retry_lifecycle(error: &ClientInitializeError) -> Option<ClientLifecycleMode> {
    match error {
        ClientInitializeError::ExpectedInitResult(Some(_))
        | ClientInitializeError::UncorrelatedErrorResponse { .. } => Some(ClientLifecycleMode::Initialize),
        ClientInitializeError::NoCompatibleProtocolVersion { server_supported, .. }
            if server_supported.iter().any(ProtocolVersion::has_initialize) =>
        {
            Some(ClientLifecycleMode::Initialize)
        }
        ClientInitializeError::ConflictInitResponseId(..) => {
            let ClientLifecycleMode::Auto { preferred_versions, .. } = lifecycle() else { return None };
            Some(ClientLifecycleMode::Discover { preferred_versions })
        }
        _ => None,
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

/// Why one connection attempt failed, and the lifecycle another attempt may succeed with.
#[derive(Debug)]
pub struct StartError {
    /// What went wrong.
    pub error: ConnectError,
    /// See [`retry_lifecycle`].
    pub retry: Option<ClientLifecycleMode>,
}

impl StartError {
    /// A failure another handshake cannot fix (spawn, URL, transport, refusal).
    pub fn other(message: impl Into<String>) -> Self {
        Self::from(ConnectError::Failed(message.into()))
    }

    /// rmcp's start error for `def`, classified.
    pub fn from_init(error: &ClientInitializeError, def: &ServerDef) -> Self {
        Self { error: ConnectError::from_cause(error, def), retry: retry_lifecycle(error) }
    }
}

impl From<ConnectError> for StartError {
    fn from(error: ConnectError) -> Self {
        Self { error, retry: None }
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
        assert_eq!(retry_lifecycle(&empty), Some(ClientLifecycleMode::Initialize));
        let old_only = ClientInitializeError::NoCompatibleProtocolVersion {
            client_supported: vec![ProtocolVersion::LATEST],
            server_supported: vec![ProtocolVersion::V_2025_06_18],
        };
        assert_eq!(retry_lifecycle(&old_only), Some(ClientLifecycleMode::Initialize));
        let newer_only = ClientInitializeError::NoCompatibleProtocolVersion {
            client_supported: vec![ProtocolVersion::LATEST],
            server_supported: vec![
                serde_json::from_value(serde_json::json!("2099-01-01")).unwrap_or_else(|e| panic!("{e}")),
            ],
        };
        assert_eq!(retry_lifecycle(&newer_only), None);
        assert_eq!(retry_lifecycle(&ClientInitializeError::ConnectionClosed("gone".into())), None);
    }

    #[test]
    fn a_named_revision_is_its_own_lifecycle_alone() {
        let def =
            |v: Option<&str>| ServerDef { protocol_version: v.map(String::from), ..ServerDef::default() };
        assert_eq!(pinned(&def(None)), None);
        assert_eq!(offered(&def(None)), LEGACY_VERSION);
        assert_eq!(pinned(&def(Some("2025-11-25"))), Some(ClientLifecycleMode::Initialize));
        assert_eq!(offered(&def(Some("2025-06-18"))), ProtocolVersion::V_2025_06_18);
        let stateless = pinned(&def(Some("2026-07-28")));
        assert_eq!(
            stateless,
            Some(ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] })
        );
        assert_eq!(offered(&def(Some("2026-07-28"))), LEGACY_VERSION);
    }

    /// rmcp's probe waits 10 s, then sends `initialize` on the same connection; the probe's own
    /// answer arriving after that is the `initialize` wait's error.
    #[test]
    fn a_probe_answered_after_the_wait_retries_by_what_the_answer_was() {
        let (probe, init) = (rmcp::model::RequestId::Number(0), rmcp::model::RequestId::Number(1));
        let late_result = ClientInitializeError::ConflictInitResponseId(init.clone(), probe.clone());
        assert!(matches!(retry_lifecycle(&late_result), Some(ClientLifecycleMode::Discover { .. })));
        let late_error = ClientInitializeError::UncorrelatedErrorResponse { expected: init, received: probe };
        assert_eq!(retry_lifecycle(&late_error), Some(ClientLifecycleMode::Initialize));
    }
}
