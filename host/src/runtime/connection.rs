//! One live server: connect under the connect timeout, list every page under the list timeout,
//! and watch the session so a dead process or a dropped connection is reported at once.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ClientConfig, ElicitRequestParams, ElicitResult, Implementation, PaginatedRequestParams, Tool,
};
// Sampling, roots and logging: deprecated in 2026-07-28, still what 2025-11-25 servers use.
#[allow(deprecated)]
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult, ListRootsResult, LoggingLevel};
use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::{NotificationContext, Peer, RequestContext, ServiceError};
use rmcp::{ClientHandler, RoleClient};
use tokio::sync::{mpsc, oneshot, watch};

use super::questions::related::InFlight;
use super::questions::server_log;
use super::questions::server_requests::Answers;
use super::tool_call::{self, ProgressRoutes};
use crate::cause::deepest_cause;
use crate::config::{ServerDef, TransportKind};
use crate::transport;

/// Pages one `tools/list` walk (and each list of `catalog_list.rs`) may take: far beyond any
/// real server, but finite even when a server keeps inventing new cursors.
pub const MAX_LIST_PAGES: usize = 10_000;
/// How long closing waits for the session and the child to wind down.
const CLOSE_WAIT: Duration = Duration::from_secs(3);
/// How long closing waits for the list_changed subscription's cancellation to be written.
const SUBSCRIPTION_CLOSE_WAIT: Duration = Duration::from_millis(500);
/// How long a failed call waits for the watcher to say why the server went away.
const DEATH_REPORT_WAIT: Duration = Duration::from_millis(1_000);

/// What a connection tells the runtime after it started.
#[derive(Debug)]
pub enum Event {
    /// The server sent `notifications/tools/list_changed`.
    ListChanged {
        /// Whose tools changed: only that server is re-listed.
        server: String,
        /// Which connection of that server (a retried server has a new one).
        generation: u64,
    },
    /// The server sent `notifications/resources/list_changed`: only its resources and
    /// resource templates are listed again (its tools and prompts stay as they are).
    ResourcesChanged {
        /// Whose resources changed.
        server: String,
        /// Which connection of that server.
        generation: u64,
    },
    /// The server sent `notifications/prompts/list_changed`: only its prompts are listed again.
    PromptsChanged {
        /// Whose prompts changed.
        server: String,
        /// Which connection of that server.
        generation: u64,
    },
    /// The process exited or the connection dropped.
    Died {
        /// Who went away: only that server goes to `error`.
        server: String,
        /// Which connection.
        generation: u64,
        /// Exit status and stderr, or what dropped.
        reason: String,
    },
}

/// Receives the server's notifications, and answers its questions through the runtime's
/// [`Answers`] (`server_requests.rs`); everything else keeps rmcp's defaults. Cloned when a
/// connection is made again with the `initialize` handshake.
#[derive(Clone)]
struct Handler {
    server: String,
    generation: u64,
    events: mpsc::UnboundedSender<Event>,
    /// How the runtime answers the server's questions.
    answers: Arc<Answers>,
    /// The server's `roots` setting: what it is offered and told.
    roots: crate::config::Roots,
    /// The calls in flight: whose call a question belongs to (`related`).
    calls: InFlight,
}

#[allow(deprecated)]
impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ =
            self.events.send(Event::ListChanged { server: self.server.clone(), generation: self.generation });
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self
            .events
            .send(Event::ResourcesChanged { server: self.server.clone(), generation: self.generation });
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self
            .events
            .send(Event::PromptsChanged { server: self.server.clone(), generation: self.generation });
    }

    // Logging is deprecated in 2026-07-28 (SEP-2577) but is how 2025-11-25 servers talk.
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(clients) = self.answers.clients.get() {
            clients.log(&self.server, self.calls.of_notification(), &params);
        }
        server_log::record(&self.server, params);
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(clients) = self.answers.clients.get() {
            clients.resource_updated(&self.server, &params);
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let caller = self.calls.of_request(&context.extensions).caller();
        Ok(self.answers.elicit(&self.server, caller, request).await)
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, rmcp::ErrorData> {
        let caller = self.calls.of_request(&context.extensions).caller();
        self.answers.sample(&self.server, caller, params).await
    }

    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, rmcp::ErrorData> {
        let caller = self.calls.of_request_marked(&context.extensions);
        Ok(self.answers.roots(&self.roots, caller))
    }

    fn get_info(&self) -> ClientConfig {
        // The version here is only what the `initialize` fallback offers; the stateless
        // revisions are chosen by the lifecycle (`transport::connect`).
        ClientConfig::new(
            self.answers.capabilities(&self.roots),
            Implementation::new("toolport", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(transport::LEGACY_VERSION)
    }
}

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
    /// What the server listed that rmcp left out for breaking the `x-mcp-header` rules.
    audit: Option<transport::HeaderAudit>,
    /// What the sandbox refused a `wasm` server.
    refusals: Option<crate::plugin::Refusals>,
    /// The log level a client set (`logging/setLevel`) for a server on the stateless revision,
    /// which has no such request: it rides each call's `_meta` instead (SEP-2575).
    #[allow(deprecated)]
    log_level: Mutex<Option<LoggingLevel>>,
    dead: watch::Receiver<Option<String>>,
    close: Mutex<Option<oneshot::Sender<()>>>,
}

impl Connection {
    /// Connects and lists tools, each step under its own timeout from `def`.
    pub async fn open(
        def: &ServerDef,
        kind: &TransportKind,
        plugins: &crate::plugin::PluginHost,
        generation: u64,
        events: mpsc::UnboundedSender<Event>,
        answers: Arc<Answers>,
    ) -> Result<(Arc<Connection>, Vec<Tool>), String> {
        let progress = ProgressRoutes::default();
        let calls = InFlight::default();
        let credentials = answers.credentials.clone();
        let handler = Handler {
            server: def.name.clone(),
            generation,
            events: events.clone(),
            answers,
            roots: def.roots.clone(),
            calls: calls.clone(),
        };
        // Reports are routed as the transport reads them, ahead of the answer they precede.
        let routes = progress.clone();
        let tap = transport::ProgressTap::new(move |params| routes.deliver(params));
        let connect = def.timeouts.connect;
        let connected = tokio::time::timeout(
            connect,
            transport::connect(def, kind, plugins, credentials.as_ref(), handler, tap),
        )
        .await
        .map_err(|_| format!("connect timed out after {} ms", connect.as_millis()))??;
        // Raised when the connection closes, so the list_changed subscription ends first.
        let (closing_tx, closing_rx) = watch::channel(false);
        let connection = Self::watch(
            def.name.clone(),
            generation,
            connected,
            events.clone(),
            (progress, calls),
            closing_tx,
        );
        let list = def.timeouts.list;
        let listed = tokio::time::timeout(list, list_all(&connection.peer)).await;
        match listed {
            Ok(Ok(tools)) => {
                // Only once the first listing is in: rmcp keeps the listed tools' schemas for
                // the SEP-2243 headers, and a subscription opened while `tools/list` was in
                // flight is the suspected cause of calls seen under load without them. The cost:
                // a change between the listing and the subscription goes unseen until the next.
                listen_for_list_changes(&connection.peer, def.name.clone(), generation, events, closing_rx);
                Ok((connection, tools))
            }
            Ok(Err(ListError { message, transport })) => {
                // A dropped connection explains itself (exit status, stderr) once the watcher
                // has seen it; a server that answered with an error needs no wait.
                let reason = if message == crate::auth::AUTHORIZATION_REQUIRED || !transport {
                    message
                } else {
                    connection.death_reason().await.unwrap_or(message)
                };
                connection.close().await;
                Err(crate::auth::name_the_fix(reason, def))
            }
            Err(_) => {
                connection.close().await;
                Err(format!("tools/list timed out after {} ms", list.as_millis()))
            }
        }
    }

    /// Hands the running session to a watcher task that reports how it ends.
    fn watch(
        server: String,
        generation: u64,
        connected: transport::Connected<Handler>,
        events: mpsc::UnboundedSender<Event>,
        (progress, calls): (ProgressRoutes, InFlight),
        closing: watch::Sender<bool>,
    ) -> Arc<Connection> {
        let transport::Connected { service, child, pump, audit, refusals } = connected;
        let peer = service.peer().clone();
        let protocol_version = peer.peer_info().map(|info| info.protocol_version.to_string());
        tracing::debug!(server = %server, "MCP protocol version {}", protocol_version.as_deref().unwrap_or("unknown"));
        let (dead_tx, dead_rx) = watch::channel(None);
        let (close_tx, close_rx) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let cancel = service.cancellation_token();
            let mut waiting = Box::pin(service.waiting());
            let child_exit = async {
                match &child {
                    Some(c) => c.exited().await,
                    None => std::future::pending().await,
                }
            };
            // A dropped `Connection` drops `close_tx`, which also ends up here: no leaks.
            let ended_by_peer = tokio::select! {
                _ = &mut waiting => true,
                _ = child_exit => {
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
            let reason = match &child {
                Some(c) if ended_by_peer => {
                    tokio::time::timeout(CLOSE_WAIT, c.exited()).await.unwrap_or_else(|_| {
                        "connection closed by the server (process still running)".to_string()
                    })
                }
                Some(_) => "closed".to_string(),
                // A transport plugin that returned, trapped or hit a limit says so itself.
                None if ended_by_peer => match &pump {
                    Some(pump) => tokio::time::timeout(CLOSE_WAIT, pump.ended())
                        .await
                        .unwrap_or_else(|_| "connection closed".to_string()),
                    None => "connection closed".to_string(),
                },
                None => "closed".to_string(),
            };
            let _ = dead_tx.send(Some(reason.clone()));
            if let Some(child) = child {
                child.stop().await;
            }
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
    pub async fn list(&self, timeout: Duration) -> Result<Vec<Tool>, String> {
        match tokio::time::timeout(timeout, list_all(&self.peer)).await {
            Ok(listed) => listed.map_err(|e| e.message),
            Err(_) => Err(format!("tools/list timed out after {} ms", timeout.as_millis())),
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

/// Under 2026-07-28 a server sends `list_changed` (tools, resources, prompts) only on a
/// `subscriptions/listen` stream the client opened (the 2025 revisions send it unasked, to the
/// handler). One subscription per connection for what the server announces, held by a task
/// that forwards each change as the same [`Event`] the handler would, ending with the
/// connection.
fn listen_for_list_changes(
    peer: &Peer<RoleClient>,
    server: String,
    generation: u64,
    events: mpsc::UnboundedSender<Event>,
    mut closing: watch::Receiver<bool>,
) {
    let Some(info) = peer.peer_info().filter(|_| transport::is_stateless(peer)) else { return };
    let caps = &info.capabilities;
    let tools = caps.tools.as_ref().and_then(|t| t.list_changed) == Some(true);
    let resources = caps.resources.as_ref().and_then(|r| r.list_changed) == Some(true);
    let prompts = caps.prompts.as_ref().and_then(|p| p.list_changed) == Some(true);
    if !(tools || resources || prompts) {
        return;
    }
    let mut filter = SubscriptionFilter::builder();
    if tools {
        filter = filter.tools_list_changed();
    }
    if resources {
        filter = filter.resources_list_changed();
    }
    if prompts {
        filter = filter.prompts_list_changed();
    }
    let filter = filter.build();
    let peer = peer.clone();
    tokio::spawn(async move {
        let mut subscription = match peer.listen(filter).await {
            Ok(subscription) => subscription,
            Err(e) => {
                tracing::info!(server = %server, "no list_changed subscription: {}", service_error(&e));
                return;
            }
        };
        loop {
            let notification = tokio::select! {
                next = subscription.next() => match next {
                    Ok(Some(notification)) => notification,
                    _ => return,
                },
                _ = closing.changed() => {
                    if let Err(e) = subscription.cancel().await {
                        tracing::debug!(server = %server, "cannot cancel the list_changed subscription: {}", service_error(&e));
                    }
                    return;
                }
            };
            let (server, generation) = (server.clone(), generation);
            let event = match notification {
                ServerNotification::ToolListChangedNotification(_) => {
                    Event::ListChanged { server, generation }
                }
                ServerNotification::ResourceListChangedNotification(_) => {
                    Event::ResourcesChanged { server, generation }
                }
                ServerNotification::PromptListChangedNotification(_) => {
                    Event::PromptsChanged { server, generation }
                }
                _ => continue,
            };
            if events.send(event).is_err() {
                return;
            }
        }
    });
}

/// Why a `tools/list` walk failed.
struct ListError {
    message: String,
    /// The connection is gone (rather than the server refusing).
    transport: bool,
}

impl ListError {
    fn protocol(message: String) -> Self {
        Self { message, transport: false }
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
            .map_err(|e| ListError { message: service_error(&e), transport: is_transport_failure(&e) })?;
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

/// One line for a failed request: the server's own message for JSON-RPC errors, otherwise the
/// deepest cause.
pub fn service_error(error: &ServiceError) -> String {
    match error {
        // The server's own words, clipped where the error is built.
        ServiceError::McpError(data) => crate::text::clip_foreign(&data.message).into_owned(),
        other => deepest_cause(other),
    }
}

/// Whether the request failed because the connection is gone (rather than the server saying no).
pub fn is_transport_failure(error: &ServiceError) -> bool {
    matches!(error, ServiceError::TransportClosed | ServiceError::TransportSend(_))
}
