//! One live server: connect under the connect timeout, list every page under the list timeout,
//! and watch the session so a dead process or a dropped connection is reported at once. The
//! session's handler is `client_handler.rs`; the `list_changed` subscription of a 2026-07-28
//! server, `list_changes.rs`; what the transport keeps behind the session, its `End`.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

// Logging: deprecated in 2026-07-28, still what 2025-11-25 servers use.
use rmcp::RoleClient;
#[allow(deprecated)]
use rmcp::model::LoggingLevel;
use rmcp::model::{PaginatedRequestParams, Tool};
use rmcp::service::Peer;
use tokio::sync::{mpsc, oneshot, watch};

use super::client_handler::Handler;
use super::event::Event;
use super::failed_request::{is_transport_failure, service_cause};
use super::list_changes::listen_for_list_changes;
use super::questions::related::InFlight;
use super::questions::server_requests::Answers;
use super::tool_call::{self, ProgressRoutes};
use crate::cause::{AUTHORIZATION_REQUIRED, Deepest};
use crate::config::{ServerDef, TransportKind};
use crate::transport::{self, ConnectError};

/// Pages one `tools/list` walk (and each list of `catalog_list.rs`) may take: far beyond any
/// real server, but finite even when a server keeps inventing new cursors.
pub const MAX_LIST_PAGES: usize = 10_000;
/// How long closing waits for the session and the child to wind down.
const CLOSE_WAIT: Duration = Duration::from_secs(3);
/// How long closing waits for the list_changed subscription's cancellation to be written.
const SUBSCRIPTION_CLOSE_WAIT: Duration = Duration::from_millis(500);
/// How long a failed call waits for the watcher to say why the server went away.
const DEATH_REPORT_WAIT: Duration = Duration::from_millis(1_000);

/// A connected server. Dropping it closes the session and stops the process.
pub struct Connection {
    /// Sends requests.
    pub peer: Peer<RoleClient>,
    /// Which connection of this server this is.
    pub generation: u64,
    /// Where the calls made on this connection get their progress reports.
    pub progress: ProgressRoutes,
    /// The calls in flight and whose they are, for the server's questions.
    pub(crate) calls: InFlight,
    /// The MCP revision the lifecycle settled on (`2026-07-28`, `2025-11-25`, …), as the
    /// server confirmed it; `None` only if rmcp kept no server info.
    pub protocol_version: Option<String>,
    /// The OpenTelemetry `network.transport` of the connection: `pipe` for a child's or a
    /// sandboxed server's stdio, `tcp` for HTTP; `None` for a transport plugin's, whose
    /// carrier toolport does not know.
    pub network_transport: Option<&'static str>,
    /// What the server listed that rmcp left out for breaking the `x-mcp-header` rules.
    audit: Option<transport::HeaderAudit>,
    /// What the sandbox refused a `wasm` server.
    refusals: Option<crate::transport::Refused>,
    /// The log level a client set (`logging/setLevel`) for a server on the stateless revision,
    /// which has no such request: it rides each call's `_meta` instead (SEP-2575).
    #[allow(deprecated)]
    log_level: Mutex<Option<LoggingLevel>>,
    dead: watch::Receiver<Option<String>>,
    close: Mutex<Option<oneshot::Sender<()>>>,
}

/// `network.transport` for a server of `kind` ([`Connection::network_transport`]).
fn network_transport(kind: &TransportKind) -> Option<&'static str> {
    match kind {
        TransportKind::Stdio | TransportKind::Wasm => Some("pipe"),
        TransportKind::StreamableHttp | TransportKind::Sse => Some("tcp"),
        TransportKind::Plugin(_) => None,
    }
}

impl Connection {
    /// Connects and lists tools, each step under its own timeout from `def`. A failure says
    /// what a stdio server printed on stdout that is not JSON-RPC, if anything (`noise`); a
    /// package runner's connect timeout then ends with its fix, so the command is last.
    pub async fn open(
        def: &ServerDef,
        kind: &TransportKind,
        plugins: &crate::plugin::PluginHost,
        generation: u64,
        events: mpsc::UnboundedSender<Event>,
        answers: Arc<Answers>,
    ) -> Result<(Arc<Connection>, Vec<Tool>), ConnectError> {
        let noise = transport::StdoutNoise::default();
        let opened = Self::open_noting(def, kind, plugins, generation, events, answers, &noise).await;
        opened.map_err(|e| {
            let e = e.noted(noise.explain());
            let fix = super::slow_start::fix(def, &e);
            e.noted(fix)
        })
    }

    /// [`Connection::open`], what the server printed that is not JSON-RPC noted in `noise`.
    async fn open_noting(
        def: &ServerDef,
        kind: &TransportKind,
        plugins: &crate::plugin::PluginHost,
        generation: u64,
        events: mpsc::UnboundedSender<Event>,
        answers: Arc<Answers>,
        noise: &transport::StdoutNoise,
    ) -> Result<(Arc<Connection>, Vec<Tool>), ConnectError> {
        let progress = ProgressRoutes::default();
        let calls = InFlight::default();
        let credentials = answers.credentials.clone();
        let observer = answers.observer.clone();
        let handler = Handler {
            server: def.name.clone(),
            generation,
            events: events.clone(),
            answers,
            roots: def.roots.clone(),
            calls: calls.clone(),
            offered: transport::offered_version(def),
        };
        // Reports are routed as the transport reads them, ahead of the answer they precede.
        let routes = progress.clone();
        let tap = transport::ProgressTap::new(move |params| routes.deliver(params));
        let connect = def.timeouts.connect;
        let connected = tokio::time::timeout(
            connect,
            transport::connect(
                def,
                kind,
                plugins,
                transport::Signing { credentials: credentials.as_ref(), observer: &observer },
                handler,
                tap,
                noise,
            ),
        )
        .await
        .map_err(|_| ConnectError::TimedOut { after: connect })??;
        // Raised when the connection closes, so the list_changed subscription ends first.
        let (closing_tx, closing_rx) = watch::channel(false);
        let connection = Self::watch(
            def.name.clone(),
            generation,
            (connected, network_transport(kind)),
            events.clone(),
            (progress, calls),
            closing_tx,
        );
        let list = def.timeouts.list;
        let listed = tokio::time::timeout(list, list_all(&connection.peer)).await;
        match listed {
            Ok(Ok(tools)) => {
                let tools = connection.header_checked(tools);
                // Only once the first listing is in: rmcp keeps the listed tools' schemas for
                // the SEP-2243 headers, and a subscription opened while `tools/list` was in
                // flight is the suspected cause of calls seen under load without them. The cost:
                // a change between the listing and the subscription goes unseen until the next.
                listen_for_list_changes(&connection.peer, def.name.clone(), generation, events, closing_rx);
                Ok((connection, tools))
            }
            Ok(Err(ListError { cause, transport })) => {
                // A dropped connection explains itself (exit status, stderr) once the watcher
                // has seen it; a server that answered with an error needs no wait.
                let error = match cause {
                    Deepest::AuthorizationRequired => ConnectError::authorization_required(def),
                    Deepest::Message(message) if transport => connection
                        .death_reason()
                        .await
                        .map_or(ConnectError::Failed(message), ConnectError::Exited),
                    Deepest::Message(message) => ConnectError::Failed(message),
                };
                connection.close().await;
                Err(error)
            }
            Err(_) => {
                connection.close().await;
                Err(ConnectError::ListTimedOut { after: list })
            }
        }
    }

    /// Hands the running session to a watcher task that reports how it ends.
    fn watch(
        server: String,
        generation: u64,
        (connected, network_transport): (transport::Connected<Handler>, Option<&'static str>),
        events: mpsc::UnboundedSender<Event>,
        (progress, calls): (ProgressRoutes, InFlight),
        closing: watch::Sender<bool>,
    ) -> Arc<Connection> {
        let transport::Connected { service, end } = connected;
        let (audit, refusals) = (end.audit(), end.refusals());
        let peer = service.peer().clone();
        let protocol_version = peer.peer_info().map(|info| info.protocol_version.to_string());
        tracing::debug!(server = %server, "MCP protocol version {}", protocol_version.as_deref().unwrap_or("unknown"));
        let (dead_tx, dead_rx) = watch::channel(None);
        let (close_tx, close_rx) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let cancel = service.cancellation_token();
            let mut waiting = Box::pin(service.waiting());
            // A dropped `Connection` drops `close_tx`, which also ends up here: no leaks.
            let ended_by_peer = tokio::select! {
                _ = &mut waiting => true,
                _ = end.exited() => {
                    cancel.cancel();
                    let _ = waiting.await;
                    true
                }
                _ = close_rx => {
                    // A call abandoned on the way here has its cancellation to deliver first,
                    // and an open subscription is cancelled (a server may wait for it to end
                    // before it exits on the closed input).
                    tool_call::settle_cancellations().await;
                    let _ = closing.send(true);
                    let _ = tokio::time::timeout(SUBSCRIPTION_CLOSE_WAIT, closing.closed()).await;
                    cancel.cancel();
                    let _ = waiting.await;
                    false
                }
            };
            let reason = end.reason(ended_by_peer, CLOSE_WAIT).await;
            let _ = dead_tx.send(Some(reason.clone()));
            end.stop().await;
            if ended_by_peer {
                tracing::info!(server = %server, "MCP server went away: {reason}");
                let _ = events.send(Event::Died { server, generation, reason });
            }
        });
        Arc::new(Connection {
            peer,
            generation,
            progress,
            calls,
            protocol_version,
            network_transport,
            audit,
            refusals,
            log_level: Mutex::new(None),
            dead: dead_rx,
            close: Mutex::new(Some(close_tx)),
        })
    }

    /// Whether the server speaks a stateless revision ([`transport::is_stateless`]).
    pub fn stateless(&self) -> bool {
        transport::is_stateless(&self.peer)
    }

    /// Keeps `level` for this connection's calls ([`Connection::log_level`]).
    #[allow(deprecated)]
    pub fn set_log_level(&self, level: LoggingLevel) {
        if let Ok(mut kept) = self.log_level.lock() {
            *kept = Some(level);
        }
    }

    /// The level a client set for a stateless server, sent with each call.
    #[allow(deprecated)]
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.log_level.lock().ok().and_then(|kept| *kept)
    }

    /// The tools of the last listing that were left out for their `x-mcp-header` annotations
    /// (SEP-2243: such a tool must not be called), each with the rule it breaks.
    pub fn left_out(&self, listed: &[Tool]) -> Vec<transport::BadHeaderTool> {
        match &self.audit {
            Some(audit) => audit.left_out(listed.iter().map(|t| t.name.as_ref())),
            None => Vec::new(),
        }
    }

    /// `tools` without those whose `x-mcp-header` annotations break SEP-2243's rules, on a
    /// streamable HTTP connection at a revision with the standard headers. rmcp drops them
    /// itself, but by the negotiated version on one of its paths and by a per-request one on
    /// another, so a listing that came back another way kept one now and then: calling such a
    /// tool must never be possible, whichever way its listing came.
    fn header_checked(&self, mut tools: Vec<Tool>) -> Vec<Tool> {
        if self.audit.is_some() && self.stateless() {
            tools.retain(|tool| transport::header_rule_broken(&tool.input_schema).is_none());
        }
        tools
    }

    /// The first thing the sandbox refused a `wasm` server (`not granted: …`, or the socket
    /// limit reached): the host's own record, which the server cannot hide or misstate.
    pub fn refused(&self) -> Option<String> {
        self.refusals.as_ref().and_then(|r| r.all().into_iter().next())
    }

    /// How many refusals the host has recorded for this connection so far.
    pub fn refusal_count(&self) -> usize {
        self.refusals.as_ref().map_or(0, |r| r.all().len())
    }

    /// Refusals recorded after the first `seen`, oldest first.
    pub fn refusals_since(&self, seen: usize) -> Vec<String> {
        self.refusals.as_ref().map(|r| r.all().into_iter().skip(seen).collect()).unwrap_or_default()
    }

    /// Lists every page again (after `list_changed`).
    pub async fn list(&self, timeout: Duration) -> Result<Vec<Tool>, ConnectError> {
        match tokio::time::timeout(timeout, list_all(&self.peer)).await {
            Ok(listed) => listed.map(|tools| self.header_checked(tools)).map_err(|e| match e.cause {
                // Said bare, as a running server's re-listing always has.
                Deepest::AuthorizationRequired => ConnectError::Failed(AUTHORIZATION_REQUIRED.to_string()),
                Deepest::Message(message) => ConnectError::Failed(message),
            }),
            Err(_) => Err(ConnectError::ListTimedOut { after: timeout }),
        }
    }

    /// Why the connection ended, waiting briefly for the watcher when a request has just
    /// failed; `None` if it still looks alive.
    pub async fn death_reason(&self) -> Option<String> {
        let mut dead = self.dead.clone();
        let wait = dead.wait_for(Option::is_some);
        match tokio::time::timeout(DEATH_REPORT_WAIT, wait).await {
            Ok(Ok(reason)) => reason.clone(),
            _ => None,
        }
    }

    /// Closes the session and stops the process; waits (bounded) until both are done.
    pub async fn close(&self) {
        let sender = self.close.lock().ok().and_then(|mut slot| slot.take());
        if let Some(sender) = sender {
            let _ = sender.send(());
        }
        let mut dead = self.dead.clone();
        let _ = tokio::time::timeout(CLOSE_WAIT, dead.wait_for(Option::is_some)).await;
    }
}

/// Why a `tools/list` walk failed.
struct ListError {
    cause: Deepest,
    /// The connection is gone (rather than the server refusing).
    transport: bool,
}

impl ListError {
    fn protocol(message: String) -> Self {
        Self { cause: Deepest::Message(message), transport: false }
    }
}

/// Walks `tools/list` through every `nextCursor`, refusing a cursor seen before. A server that
/// does not declare the tools capability simply has no tools.
async fn list_all(peer: &Peer<RoleClient>) -> Result<Vec<Tool>, ListError> {
    if peer.peer_info().is_some_and(|info| info.capabilities.tools.is_none()) {
        return Ok(Vec::new());
    }
    let mut tools = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_LIST_PAGES {
        let params = cursor.take().map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let page = peer
            .list_tools(params)
            .await
            .map_err(|e| ListError { cause: service_cause(&e), transport: is_transport_failure(&e) })?;
        tools.extend(page.tools);
        match page.next_cursor {
            None => return Ok(tools),
            Some(next) if !seen.insert(next.clone()) => {
                return Err(ListError::protocol(format!("tools/list repeated cursor {next}")));
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(ListError::protocol(format!("tools/list returned more than {MAX_LIST_PAGES} pages")))
}
