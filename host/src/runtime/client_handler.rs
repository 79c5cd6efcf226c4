//! The client side of one connection's session: the server's notifications become the
//! runtime's [`Event`]s, its questions go to the runtime's [`Answers`].

use std::sync::Arc;

use rmcp::model::{ClientConfig, ElicitRequestParams, ElicitResult, Implementation};
// Sampling, roots and logging: deprecated in 2026-07-28, still what 2025-11-25 servers use.
#[allow(deprecated)]
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult, ListRootsResult};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, RoleClient};
use tokio::sync::mpsc;

use super::event::Event;
use super::questions::related::InFlight;
use super::questions::server_log;
use super::questions::server_requests::Answers;

/// Receives the server's notifications, and answers its questions through the runtime's
/// [`Answers`] (`server_requests.rs`); everything else keeps rmcp's defaults. Cloned when a
/// connection is made again with the `initialize` handshake.
#[derive(Clone)]
pub(super) struct Handler {
    pub(super) server: String,
    pub(super) generation: u64,
    pub(super) events: mpsc::UnboundedSender<Event>,
    /// How the runtime answers the server's questions.
    pub(super) answers: Arc<Answers>,
    /// The server's `roots` setting: what it is offered and told.
    pub(super) roots: crate::config::Roots,
    /// The calls in flight: whose call a question belongs to (`related`).
    pub(super) calls: InFlight,
    /// The revision `initialize` offers (`transport::offered_version`).
    pub(super) offered: rmcp::model::ProtocolVersion,
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
        // The version here is only what `initialize` offers; the stateless revisions are
        // chosen by the lifecycle (`transport::connect`).
        ClientConfig::new(
            self.answers.capabilities(&self.roots),
            Implementation::new("toolport", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(self.offered.clone())
    }
}
