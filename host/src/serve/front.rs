//! The MCP server a client talks to: rmcp's `ServerHandler` over the runtime. Every list is
//! the runtime's after the host's rules; every request goes to the server that owns the tool,
//! resource or prompt, under that server's own names and timeouts. One `Front` per client
//! session (stdio: the one client; HTTP: one per session, or per request on 2026-07-28), all
//! sharing one runtime and one relay.
// Logging, roots and `resources/subscribe` are deprecated by SEP-2577 in 2026-07-28 but are
// what 2025-11-25 clients use.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, DiscoverResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, InitializeRequestParams, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, Reference,
    ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, ServiceError, SubscriptionContext};
use rmcp::{ErrorData as McpError, Peer, RoleClient, RoleServer, ServerHandler};
use tokio::sync::mpsc;

use super::answer::{catalog_error, respond, stored_contents, unknown_resource};
use super::caller::call_context;
use super::changes;
use super::input_rounds::{Call, Step};
use super::lazy::Route;
use super::progress;
use super::request_span::{self, Target};
use super::result_type::Complete;
use super::shared::Shared;
use super::surface;
use crate::observe::{CallContext, Kind};
use crate::runtime::{CatalogError, Runtime, traced};

/// One client session's handler.
#[derive(Clone)]
pub struct Front {
    pub(super) shared: Arc<Shared>,
    pub(super) session: u64,
}

impl Front {
    /// A handler for a new client session.
    pub fn new(shared: Arc<Shared>) -> Self {
        let session = shared.relay.session();
        Self { shared, session }
    }

    pub(super) fn runtime(&self) -> &Runtime {
        &self.shared.runtime
    }

    /// `find` on the runtime; when it finds nothing, again once the servers still connecting
    /// have settled (at most the list wait after the start): a client that reads, gets or
    /// calls what it knows without listing first must not miss a server that is coming up.
    async fn known<T>(&self, find: impl Fn(&Runtime) -> Option<T>) -> Option<T> {
        if let Some(found) = find(self.runtime()) {
            return Some(found);
        }
        self.runtime().settle(self.shared.list_wait).await;
        find(self.runtime())
    }

    /// The server that owns `uri`, or the protocol's "not found".
    pub(super) async fn resource_owner(&self, uri: &str) -> Result<String, McpError> {
        self.known(|runtime| surface::resource_owner(&runtime.catalog(), uri))
            .await
            .ok_or_else(|| unknown_resource(uri))
    }

    /// Sends `request` to `server`'s session: a JSON-RPC error of the server reaches the
    /// client with its own code and message; a timeout or a dead server is toolport's error.
    /// The server's result is passed on whole (its `_meta` too), marked complete where it
    /// does not say (`result_type.rs`).
    pub(super) async fn forward<T: Complete, Fut>(
        &self,
        server: &str,
        subject: String,
        request: impl FnOnce(Peer<RoleClient>) -> Fut,
    ) -> Result<T, McpError>
    where
        Fut: Future<Output = Result<T, ServiceError>>,
    {
        // Boxed: rmcp's request future is some 30 KB, and inline it made every request's future
        // (the largest handler's, whatever the request) that large, copied on each spawn.
        let kept = Box::pin(self.runtime().forward(server, subject, |peer| async move {
            match request(peer).await {
                Err(ServiceError::McpError(e)) => Ok(Err(e)),
                other => other.map(Ok),
            }
        }));
        kept.await.map_err(catalog_error)?.map(Complete::completed)
    }

    /// [`Front::forward`] of a read or a prompt (`kind` of `name`), observed (the audit log,
    /// the metrics) as asked by the caller `asker` names.
    #[allow(clippy::too_many_arguments)]
    async fn forward_observed<T, P, Fut>(
        &self,
        asker: &CallContext,
        kind: Kind,
        server: &str,
        name: &str,
        arguments: Option<&serde_json::Map<String, serde_json::Value>>,
        params: P,
        request: impl FnOnce(Peer<RoleClient>, P) -> Fut,
    ) -> Result<T, McpError>
    where
        T: Complete + serde::Serialize + serde::de::DeserializeOwned,
        P: serde::Serialize + serde::de::DeserializeOwned,
        Fut: Future<Output = Result<T, ServiceError>>,
    {
        // Boxed as in `forward`; and unboxed, the spans and the audit's watch beside it once
        // overflowed a debug build's worker stack.
        let kept = Box::pin(self.runtime().forward_observed(
            kind,
            server,
            name,
            arguments,
            asker,
            params,
            |peer, params| async move {
                match request(peer, params).await {
                    Err(ServiceError::McpError(e)) => Ok(Err(e)),
                    other => other.map(Ok),
                }
            },
        ));
        kept.await.map_err(catalog_error)?.map(Complete::completed)
    }

    /// Keeps the client's roots, when it has any, for the servers set to `roots: "client"`
    /// (during this client's calls; outside them, only what every client allows), and tells
    /// those servers when what they may be told changed.
    async fn pass_roots(&self, peer: &Peer<RoleServer>) {
        let offers = peer.peer_info().is_some_and(|info| info.capabilities.roots.is_some());
        if !offers {
            return;
        }
        match peer.list_roots().await {
            Ok(listed) => {
                if self.shared.relay.set_roots(self.session, peer.clone(), listed.roots) {
                    self.runtime().client_roots_changed().await;
                }
            }
            Err(e) => tracing::warn!("cannot list the client's roots: {e}"),
        }
    }
}

impl Front {
    /// The instructions naming the servers behind: only in `initialize` and `server/discover`,
    /// not in [`ServerHandler::get_info`], which rmcp asks again with every stateless request
    /// (they read every server's status).
    /// Only the servers the request's scope can use are named (`scope.rs`).
    fn instructions(&self, context: &RequestContext<RoleServer>) -> String {
        let scope = self.shared.access.scope(self.runtime(), context);
        let runtime = self.runtime();
        surface::instructions(&scope.servers(runtime.status(), &runtime.records(), &runtime.catalog()))
    }
}

impl ServerHandler for Front {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        capabilities.experimental = None;
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("toolport", env!("CARGO_PKG_VERSION")))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        self.shared.board.seen(self.session, &context.peer, None, None);
        let instructions = self.instructions(&context);
        Ok(self.negotiate_initialize(&request)?.with_instructions(instructions))
    }

    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, McpError> {
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info().with_instructions(self.instructions(&context)),
        ))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        tokio::spawn(changes::push(self.runtime().revisions(), context.peer.clone()));
        self.pass_roots(&context.peer).await;
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.pass_roots(&context.peer).await;
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        changes::listen(self.runtime().revisions(), context).await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let _span = request_span::start("tools/list", Target::None, &context);
        // A server still connecting with a last-known listing is listed from it at once.
        self.runtime().listable(self.shared.list_wait).await;
        if self.shared.lazy.active(self.runtime()) {
            return Ok(ListToolsResult::with_all_items(super::lazy::lazy_tools()));
        }
        let scope = self.shared.access.scope(self.runtime(), &context);
        Ok(ListToolsResult::with_all_items(scope.tools(self.runtime().records())))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let _in_flight = self.shared.board.start(self.session, &context, "tools/call", &request.name);
        let span = request_span::start("tools/call", Target::Tool(&request.name), &context);
        // A 2026-07-28 client is asked through input-required results, not requests.
        let by_rounds = context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        let rounds = &self.shared.rounds;
        // A waiting call is its caller's: another's retry is told none waits (`input_rounds.rs`).
        let owner = super::caller::Owner::of_context(&context);
        if let Some(token) = request.request_state.as_deref().filter(|_| by_rounds) {
            let (call, asks) = match rounds.resume(token, &owner, request.input_responses.as_ref()) {
                Ok(resumed) => resumed,
                Err(unresumed) => return Err(McpError::invalid_params(unresumed.message(), None)),
            };
            return respond(rounds.drive(call, asks, &context.ct, owner).await);
        }
        let (name, arguments) = (request.name.to_string(), request.arguments.unwrap_or_default());
        // The lazy surface answers its search and describe itself; `call_tool` names the real one.
        let (name, arguments) = match self.shared.lazy.active(self.runtime()) {
            true => {
                let scope = self.shared.access.scope(self.runtime(), &context);
                match self.shared.lazy.route(self.runtime(), &scope, &name, arguments) {
                    Route::Answered(answer) => return answer.map(CallToolResponse::Complete),
                    Route::Call { name, arguments } => (name, arguments),
                }
            }
            false => (name, arguments),
        };
        // Boxed, as the forwards are: inline, its state overflowed a debug build's worker stack.
        let (record, permitted) = match Box::pin(self.may_call(&context, &span, &name)).await {
            Ok(allowed) => allowed,
            Err(refused) => return refused,
        };
        let (asks_to, asks) = mpsc::unbounded_channel();
        let capabilities = context.client_capabilities().unwrap_or_default();
        let waiting = self.shared.relay.waiting(
            &record.server,
            self.session,
            context.peer.clone(),
            capabilities,
            by_rounds.then_some(asks_to),
        );
        let (progress, reports) = match context.meta.get_progress_token() {
            Some(token) => {
                let (tx, rx) = mpsc::unbounded_channel();
                (Some(tx), Some(progress::pass(rx, token, context.peer.clone())))
            }
            None => (None, None),
        };
        let level = context.meta.log_level();
        // The server's questions during the call go to this client (`relay.rs`).
        let asker = call_context(&context, permitted).with_caller(waiting.caller());
        let runtime = self.runtime().clone();
        // The reports are passed on inside the call, so it ends only once the last one is
        // written: a client drops a report that comes after the result.
        let call = async move {
            // The client is the caller of the server's questions until the call ends.
            let _waiting = waiting;
            let passed = async {
                if let Some(reports) = reports {
                    reports.await;
                }
            };
            // Boxed: inline, its state overflowed a debug build's worker stack.
            let call = Box::pin(runtime.call_record(&record, arguments, progress, level, &asker));
            let (outcome, ()) = tokio::join!(call, passed);
            outcome
        };
        let step = if by_rounds {
            // On 2026-07-28 the call outlives its request once its server asks something: it
            // runs here until then, and in a task of its own after (`input_rounds.rs`).
            rounds.drive(Call::here(span.within(call)), asks, &context.ct, owner).await
        } else {
            // Earlier revisions: the call ends with its request, so it runs here, in the
            // request's task (a task and a wake-up fewer per call). Dropped when the client
            // cancels, it is cancelled at the server as above.
            tokio::select! {
                outcome = span.within(Box::pin(call)) => Step::Done(outcome),
                () = context.ct.cancelled() => Step::Cancelled,
            }
        };
        span.ended(respond(step))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.runtime().settle(self.shared.list_wait).await;
        let scope = self.shared.access.scope(self.runtime(), &context);
        let listed =
            surface::resources(&self.runtime().catalog(), |server, uri| scope.lists_resource(server, uri));
        Ok(ListResourcesResult::with_all_items(listed))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.runtime().settle(self.shared.list_wait).await;
        let scope = self.shared.access.scope(self.runtime(), &context);
        let listed =
            surface::templates(&self.runtime().catalog(), |server, uri| scope.lists_resource(server, uri));
        Ok(ListResourceTemplatesResult::with_all_items(listed))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let _in_flight = self.shared.board.start(self.session, &context, "resources/read", &request.uri);
        let span = request_span::start("resources/read", Target::Resource(&request.uri), &context);
        if let Some(stored) = self.runtime().stored_result(&request.uri).await {
            return stored_contents(&request.uri, stored);
        }
        let server = self.resource_owner(&request.uri).await?;
        let verdict = self.shared.access.scope(self.runtime(), &context).read(&server, &request.uri);
        let permitted = match self.guard(&context, &span, &server, &request.uri, verdict) {
            Ok(by) => by,
            Err(refused) => return refused,
        };
        let uri = request.uri.clone();
        let read = |peer: Peer<RoleClient>, request| traced(&server, peer, request);
        let asker = call_context(&context, permitted);
        let result = self.forward_observed(&asker, Kind::Read, &server, &uri, None, request, read);
        let result = span.within(result);
        span.ended(result.await.map(ReadResourceResponse::Complete))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        self.runtime().settle(self.shared.list_wait).await;
        let scope = self.shared.access.scope(self.runtime(), &context);
        let listed =
            surface::prompts(&self.runtime().catalog(), |server, name| scope.lists_prompt(server, name));
        Ok(ListPromptsResult::with_all_items(listed))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let _in_flight = self.shared.board.start(self.session, &context, "prompts/get", &request.name);
        let span = request_span::start("prompts/get", Target::Prompt(&request.name), &context);
        let owner = self.known(|runtime| runtime.catalog().prompt(&request.name).map(|p| p.server.clone()));
        let Some(server) = owner.await else {
            return Err(catalog_error(CatalogError::UnknownPrompt(request.name)));
        };
        let verdict = self.shared.access.scope(self.runtime(), &context).prompt(&server, &request.name);
        let permitted = match self.guard(&context, &span, &server, &request.name, verdict) {
            Ok(by) => by,
            Err(refused) => return refused,
        };
        let (name, arguments) = (request.name.clone(), request.arguments.clone());
        let get = |peer: Peer<RoleClient>, request| traced(&server, peer, request);
        let asker = call_context(&context, permitted);
        let result =
            self.forward_observed(&asker, Kind::Prompt, &server, &name, arguments.as_ref(), request, get);
        let result = span.within(result);
        span.ended(result.await.map(GetPromptResponse::Complete))
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let scope = self.shared.access.scope(self.runtime(), &context);
        let owner = self.known(|runtime| {
            let catalog = runtime.catalog();
            match &request.r#ref {
                Reference::Prompt(prompt) => catalog
                    .prompt(&prompt.name)
                    .map(|p| p.server.clone())
                    .filter(|server| scope.lists_prompt(server, &prompt.name)),
                Reference::Resource(resource) => surface::template_owner(&catalog, &resource.uri)
                    .filter(|server| scope.lists_resource(server, &resource.uri)),
                _ => None,
            }
        });
        // Nothing to complete from is an empty completion, not an error (MCP's own default).
        let Some(server) = owner.await else { return Ok(CompleteResult::default()) };
        let subject = "completion".to_string();
        self.forward(&server, subject, |peer| async move { peer.complete(request).await }).await
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.shared.relay.hear_logs(self.session, context.peer.clone());
        // A client sets the level right after `initialize`: let the servers coming up now
        // hear it too (one that connects later logs at its own default).
        self.runtime().settle(self.shared.list_wait).await;
        for (server, capabilities) in self.runtime().connected() {
            // A stateless server keeps it for its calls; an older one is told, if it logs.
            if self.runtime().keep_log_level(&server, request.level) || capabilities.logging.is_none() {
                continue;
            }
            let request = request.clone();
            let sent = self
                .forward(&server, "log level".into(), |peer| async move { peer.set_level(request).await });
            if let Err(e) = sent.await {
                tracing::warn!(server = %server, "cannot pass the log level on: {e}");
            }
        }
        Ok(())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscribe_client(request, &context).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.unsubscribe_client(request).await
    }
}
