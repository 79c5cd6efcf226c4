//! The live runtime: connects every active server concurrently, checks and shapes their tools
//! in definition order, routes calls, and keeps the view honest while it runs (crashes,
//! `list_changed`, retry, config changes).
//!
//! This file is the front door and nothing else: [`Runtime::start`] is the one way to get a
//! runtime, and every entry point (CLI, session, ACP, an embedding host) calls it; calls and
//! changes go through here, and what the runtime shows (status, warnings, the tool surface and
//! its costs, the settings now) is `views.rs`'s, both on the handle in `handle.rs`. The state
//! and what changes it live in `supervisor/`, the routing of calls in `executor.rs` (a
//! result over `maxResultTokens` stored whole by `large_results.rs`), the deterministic checks
//! in `pipeline.rs` and `names.rs`; resources and prompts in `catalog.rs`
//! (the merged view), `catalog_list.rs` (listing) and `catalog_calls.rs` (read, `prompts/get`);
//! the answers to servers' own questions (elicitation, sampling, roots) in `server_requests.rs`,
//! with the host-facing forms in `elicitation.rs` and `sampling.rs`, the input-required rounds
//! of SEP-2322 in `request_state.rs` and the call clock that pauses for a person in
//! `person_clock.rs`.

mod calls;
mod catalog;
mod client_handler;
mod connection;
mod event;
mod failed_request;
mod handle;
mod list_changes;
mod listing_store;
mod options;
mod progress;
mod questions;
mod registry;
mod results;
mod slow_start;
mod state;
mod supervisor;
mod tool_call;
mod views;

pub use crate::observe::CallContext;
pub use calls::catalog_calls::{PromptOutcome, ResourceRead};
pub use calls::catalog_error::CatalogError;
pub(crate) use calls::client_span::traced;
pub use calls::request_state::MAX_INPUT_ROUNDS;
pub use catalog::merged::{Catalog, Offered, ServerCatalog};
pub use handle::Runtime;
pub use options::{RuntimeOptions, ToolOwners};
pub use progress::{ConnectEvent, ProgressSink};
pub use questions::confirmation::{ConfirmAnswer, Confirmation};
pub use questions::elicitation::{
    Choice, Elicitation, ElicitationAnswer, ElicitationKind, ElicitationModes, Elicitor, Field, FieldKind,
    Form, confirm_form,
};
pub use questions::related::{Caller, Related};
pub use questions::sampling::{NO_MODEL, Sampler};
pub(crate) use questions::server_requests::HostClients;
pub use registry::record::ToolRecord;
pub use registry::token_costs::{ServerCost, TokenCosts, ToolCost};
pub use registry::tool_search::{ToolHit, ToolIndex};
pub(crate) use results::large_results::StoredText;
pub use results::outcome::{CallError, CallOutcome, NotUp, NotUpState, render_call};
pub use state::CONNECTING;
pub use supervisor::{Approved, Revision, check_pins_kept};
pub use tool_call::{CallProgress, settle_cancellations};

use std::sync::Arc;

use anyhow::Context as _;
use serde_json::Value;

use crate::config::{ConfigError, Resolved};
use crate::observe::Observer;
use crate::plugin::PluginHost;
use supervisor::Supervisor;

impl Runtime {
    /// Loads the plugins `resolved` names, connects every active server concurrently and builds
    /// the registry. A server that cannot connect, list or pass the checks ends in `error`
    /// while the others carry on; only a mistake of the workspace as a whole (a `toolShape` or
    /// `namePolicy` that names no such plugin, a [`ConfigError`]) or a plugin engine that
    /// cannot start fails the call.
    pub async fn start(resolved: Resolved, options: RuntimeOptions) -> anyhow::Result<Runtime> {
        let plugins = plugin_host(&resolved, &options)?;
        registry::plugin_choice::check(&resolved, &plugins)?;
        supervisor::check_lock(&resolved)?;
        Ok(Runtime { supervisor: Supervisor::start(resolved, plugins, options).await })
    }

    /// [`Runtime::start`] that returns as soon as the plugins are loaded and checked, with no
    /// server connected yet: every active server connects in the background and its tools,
    /// resources and prompts join the surface as it comes up (each a new [`Revision`]), in
    /// definition order as ever. Until then its status row says `connecting`. What `serve` uses,
    /// so one hung server cannot hold up a client's `initialize`.
    pub fn start_in_background(resolved: Resolved, options: RuntimeOptions) -> anyhow::Result<Runtime> {
        let plugins = plugin_host(&resolved, &options)?;
        registry::plugin_choice::check(&resolved, &plugins)?;
        supervisor::check_lock(&resolved)?;
        Ok(Runtime { supervisor: Supervisor::start_in_background(resolved, plugins, options) })
    }

    /// The runtime for one call of `tool` (`toolport call`): starts like
    /// [`Runtime::start_in_background`] and returns as soon as which server owns `tool` can no
    /// longer change — every server defined before it connected or failed — or every server is
    /// done. A hung server defined after the owner then costs the call nothing; the surface it
    /// calls is the one connecting every server would give for that name.
    pub async fn start_for_call(
        resolved: Resolved,
        options: RuntimeOptions,
        tool: &str,
    ) -> anyhow::Result<Runtime> {
        let runtime = Self::start_in_background(resolved, options)?;
        runtime.supervisor.decided(tool).await;
        Ok(runtime)
    }

    /// Waits until every server the start connects has connected or failed, or until `wait`
    /// after the start began, whichever is first: at once after [`Runtime::start`], and at once
    /// for every request once that time has passed (a hung server costs only the early ones).
    pub async fn settle(&self, wait: std::time::Duration) {
        let _ = tokio::time::timeout_at(self.supervisor.started + wait, self.settled()).await;
    }

    /// [`Runtime::settle`] that also ends once every server still connecting has its
    /// last-known listing on the surface (`RuntimeOptions::from_known_listings`): what a
    /// tool listing waits for, so a slow server with history costs it nothing.
    pub async fn listable(&self, wait: std::time::Duration) {
        let _ = tokio::time::timeout_at(self.supervisor.started + wait, self.supervisor.listable()).await;
    }

    /// Waits until the last-known listings of a start from them are on the surface
    /// ([`RuntimeOptions::from_known_listings`]; at once otherwise).
    pub async fn primed(&self) {
        self.supervisor.primed().await;
    }

    /// Waits until every server the start connects has connected or failed.
    pub async fn settled(&self) {
        let mut settled = self.supervisor.settled();
        let _ = settled.wait_for(|done| *done).await;
    }

    /// Calls a tool by its final name. `arguments` is JSON text; blank means `{}`.
    pub async fn call(&self, name: &str, arguments: &str) -> Result<CallOutcome, CallError> {
        self.call_with(name, arguments, &CallContext::default()).await
    }

    /// [`Runtime::call`] for the caller `context` names: the audit log records its client and
    /// the policies that let it through, and the server's questions during the call are its.
    pub async fn call_with(
        &self,
        name: &str,
        arguments: &str,
        context: &CallContext,
    ) -> Result<CallOutcome, CallError> {
        calls::executor::call(&self.supervisor, name, arguments, None, context).await
    }

    /// [`Runtime::call`], with the server's progress reports for this call sent to `progress`
    /// while it runs (what `toolport call` draws its progress bar from).
    pub async fn call_with_progress(
        &self,
        name: &str,
        arguments: &str,
        progress: tokio::sync::mpsc::UnboundedSender<CallProgress>,
    ) -> Result<CallOutcome, CallError> {
        let context = CallContext::default();
        calls::executor::call(&self.supervisor, name, arguments, Some(progress), &context).await
    }

    /// Every connected server's resources, resource templates and prompts, in definition
    /// order, after the rules for shared prompt names and URIs (the first-defined server keeps
    /// one; the catalog's warnings name what was left out). One snapshot, read without I/O.
    pub fn catalog(&self) -> Catalog {
        calls::catalog_calls::catalog(&self.supervisor)
    }

    /// Reads the resource `uri` from `server` under its call timeout.
    pub async fn read(&self, server: &str, uri: &str) -> Result<ResourceRead, CatalogError> {
        calls::catalog_calls::read(&self.supervisor, server, uri, &CallContext::default()).await
    }

    /// Gets the prompt `name` (as [`Runtime::catalog`] lists it) from the server that offers
    /// it. `arguments` is a JSON object of strings as text; blank means none.
    pub async fn prompt(&self, name: &str, arguments: &str) -> Result<PromptOutcome, CatalogError> {
        calls::catalog_calls::prompt(&self.supervisor, name, arguments, &CallContext::default()).await
    }

    /// Reconnects only `name` (closing its old session first), then re-checks every server in
    /// definition order. The others keep their sessions.
    pub async fn retry(&self, name: &str) -> anyhow::Result<()> {
        self.supervisor.retry(name).await
    }

    /// Applies a new resolution (after enable/disable/pause/resume/add/remove or an edited
    /// file): closes servers no longer active, connects only the newly active or changed ones,
    /// leaves the rest untouched, and rebuilds the registry in the new definition order. A
    /// workspace that now names no such `toolShape`/`namePolicy` is refused, and the runtime
    /// keeps what it had.
    pub async fn reconcile(&self, resolved: Resolved) -> Result<(), ConfigError> {
        registry::plugin_choice::check(&resolved, self.supervisor.plugins.host())?;
        supervisor::check_lock(&resolved)?;
        self.supervisor.reconcile(resolved).await;
        Ok(())
    }

    /// Makes `path` the workspace root that `roots/list` answers and, if it changed, tells
    /// every connected server (`notifications/roots/list_changed`); a server that cannot be
    /// told is only logged.
    pub async fn set_workspace_root(&self, path: std::path::PathBuf) {
        if self.supervisor.answers.set_root(path) {
            // Every setting but `"none"` may derive from it (a client server without a
            // client's roots, the relative folders of a list).
            self.announce_roots(|roots| *roots != crate::config::Roots::None).await;
        }
    }

    /// Pins `server`'s held tools named in `tools` (none named: every held one, and its
    /// instructions if they changed) in `.toolport/tools.lock` as listed now, accepting their
    /// current `high` findings, and puts them back on the surface: `toolport mcp approve`.
    pub async fn approve(&self, server: &str, tools: &[String]) -> anyhow::Result<Approved> {
        self.supervisor.approve(server, tools).await
    }

    /// What changed in `server`'s definitions since they were pinned, word by word, and why
    /// each held tool is held: `toolport mcp diff`.
    pub fn pin_diff(&self, server: &str) -> anyhow::Result<String> {
        self.supervisor.pin_diff(server)
    }

    /// Every change of the surface from now on: the receiver sees a new [`Revision`] whenever
    /// the tools, the resources or the prompts differ from before (a server connected, died,
    /// sent `list_changed`, was retried or reconciled away).
    pub fn revisions(&self) -> tokio::sync::watch::Receiver<Revision> {
        self.supervisor.revisions()
    }

    /// Tells every client that each list may have changed, though no server's did: what a
    /// caller may see was decided anew (serve's policy was reloaded).
    pub fn lists_may_differ(&self) {
        self.supervisor.bump_all();
    }

    /// The result stored whole at `uri` (`toolport://results/<id>`, named in the note of a
    /// result over `maxResultTokens`), or why not; `None` when `uri` is not such a URI.
    pub(crate) async fn stored_result(&self, uri: &str) -> Option<Result<StoredText, String>> {
        results::large_results::read(self.supervisor.options.results_dir.clone(), uri).await
    }

    /// Runs exactly `record` (the tool serve authorised for the caller `context` names) with the
    /// arguments already a JSON object, and the log level the caller asked for on its request
    /// (passed on to a server on the stateless revision). Refused as an unknown tool when the
    /// surface no longer holds the record as it was.
    #[allow(deprecated)] // LoggingLevel
    pub(crate) async fn call_record(
        &self,
        record: &ToolRecord,
        arguments: serde_json::Map<String, Value>,
        progress: Option<tokio::sync::mpsc::UnboundedSender<CallProgress>>,
        level: Option<rmcp::model::LoggingLevel>,
        context: &CallContext,
    ) -> Result<CallOutcome, CallError> {
        calls::executor::call_record(&self.supervisor, record, arguments, progress, level, context).await
    }

    /// Why no tool on the surface is named `name`, the refusal observed as the executor
    /// observes one (the audit log, the metrics): blank, held, its server not connected, or
    /// unknown; with `explain` false only "unknown" (for a caller who may not learn more).
    pub(crate) fn refuse_call(&self, name: &str, explain: bool) -> CallError {
        calls::executor::refused(&self.supervisor, name, explain)
    }

    /// Keeps `level` for `server`'s calls when it speaks the stateless revision, which has no
    /// `logging/setLevel` (each call carries it): true when kept, false when the server takes
    /// the request itself (or is not connected).
    #[allow(deprecated)] // LoggingLevel
    pub(crate) fn keep_log_level(&self, server: &str, level: rmcp::model::LoggingLevel) -> bool {
        let state = self.supervisor.lock();
        let conn = state.slots.iter().find(|s| s.name() == server).and_then(|s| s.conn());
        match conn {
            Some(conn) if conn.stateless() => {
                conn.set_log_level(level);
                true
            }
            _ => false,
        }
    }

    /// Sends a request the runtime has no method for to `server`'s live session, under its
    /// call timeout (`serve` forwards completions, subscriptions and log levels this way).
    pub(crate) async fn forward<T, F, Fut>(
        &self,
        server: &str,
        subject: String,
        request: F,
    ) -> Result<T, CatalogError>
    where
        F: FnOnce(rmcp::Peer<rmcp::RoleClient>) -> Fut,
        Fut: Future<Output = Result<T, rmcp::service::ServiceError>>,
    {
        calls::catalog_calls::forward(&self.supervisor, server, subject, request).await
    }

    /// [`Runtime::forward`] of a `resources/read` or `prompts/get` (`kind`) of `name` that
    /// `serve` passes through, observed as [`Runtime::read`] and [`Runtime::prompt`] are (the
    /// audit log, the metrics) as asked by the caller `context` names; a server's JSON-RPC
    /// error is the inner `Err`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn forward_observed<P, R, E, F, Fut>(
        &self,
        kind: crate::observe::Kind,
        server: &str,
        name: &str,
        arguments: Option<&serde_json::Map<String, Value>>,
        context: &CallContext,
        params: P,
        request: F,
    ) -> Result<Result<R, E>, CatalogError>
    where
        P: serde::Serialize + serde::de::DeserializeOwned,
        R: serde::Serialize + serde::de::DeserializeOwned,
        E: serde::Serialize + serde::de::DeserializeOwned,
        F: FnOnce(rmcp::Peer<rmcp::RoleClient>, P) -> Fut,
        Fut: Future<Output = Result<Result<R, E>, rmcp::service::ServiceError>>,
    {
        let subject = match kind {
            crate::observe::Kind::Read => format!("resource {}", crate::text::escape_line(name)),
            _ => format!("prompt {}", crate::text::escape_line(name)),
        };
        let supervisor = &self.supervisor;
        calls::catalog_calls::forward_observed(
            supervisor, kind, server, name, arguments, context, subject, params, request,
        )
        .await
    }

    /// Passes what servers say on their own (log messages, resource updates) to `clients` as
    /// well as to the log, and answers the servers set to `roots: "client"` with their roots.
    /// Once per runtime; a second call is ignored.
    pub(crate) fn set_clients(&self, clients: Arc<dyn HostClients>) {
        let _ = self.supervisor.answers.clients.set(clients);
    }

    /// Tells the servers set to `roots: "client"` that the roots changed (a client gave new
    /// ones, or one that gave some left); the others keep what their setting says.
    pub(crate) async fn client_roots_changed(&self) {
        self.announce_roots(|roots| *roots == crate::config::Roots::Client).await;
    }

    /// `notifications/roots/list_changed` to every connected server whose `roots` setting
    /// `affected` picks; one that cannot be told is only logged.
    async fn announce_roots(&self, affected: impl Fn(&crate::config::Roots) -> bool) {
        let conns: Vec<(String, Arc<connection::Connection>)> = {
            let state = self.supervisor.lock();
            state
                .slots
                .iter()
                .filter(|s| affected(&s.resolved.def.roots))
                .filter_map(|s| Some((s.name().to_string(), s.conn()?.clone())))
                .collect()
        };
        for (server, conn) in conns {
            if let Err(e) = conn.peer.notify_roots_list_changed().await {
                tracing::warn!(server = %server, "cannot announce the new root: {}", failed_request::service_error(&e));
            }
        }
    }

    /// Closes every session and stops every child process; returns once every audit line
    /// and trust decision recorded until then is in its file.
    pub async fn shutdown(&self) {
        self.supervisor.shutdown().await;
        let observer = self.supervisor.options.observer.clone();
        if let Err(e) = tokio::task::spawn_blocking(move || observer.flush()).await {
            tracing::warn!("cannot flush the audit files: {e}");
        }
    }

    /// Where this runtime records what passes through it (`RuntimeOptions::observer`): a host
    /// records its own exchanges and tells its notices through the same one.
    pub fn observer(&self) -> &Observer {
        &self.supervisor.options.observer
    }
}

/// The plugins `resolved` names, cached where `options` says and counted in its observer.
fn plugin_host(resolved: &Resolved, options: &RuntimeOptions) -> anyhow::Result<PluginHost> {
    let plugins = PluginHost::new(options.cache_dir.clone(), &resolved.plugins)
        .context("cannot start the plugin host")?;
    Ok(plugins.with_observer(options.observer.clone()))
}
