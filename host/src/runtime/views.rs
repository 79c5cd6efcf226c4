//! What the runtime shows, read from one snapshot of its state: the status rows and
//! warnings, the tool surface (in the workspace's shape or another, with its token costs), the
//! workspace's settings as they stand now, and what each connected server said at its start.
//! Nothing here connects or changes anything; `mod.rs` holds what does.

use std::sync::Arc;

use serde_json::Value;

use super::handle::Runtime;
use super::registry;
use super::registry::record::ToolRecord;
use super::registry::token_costs::TokenCosts;
use super::state::{CONNECTING, Link, Slot};
use crate::config::{PluginKind, ServerDef, Surface, missing_rows};
use crate::status::{ServerState, ServerStatus, summarize_error};
use crate::text::escape_line;

impl Runtime {
    /// One row per defined server in definition order, then the `missing` rows.
    pub fn status(&self) -> Vec<ServerStatus> {
        let state = self.supervisor.lock();
        let mut rows: Vec<ServerStatus> = state.slots.iter().map(Slot::status).collect();
        rows.extend(missing_rows(&state.resolved));
        rows
    }

    /// `Warning: MCP unavailable: <name> (<error>)` for every server in `error` or `missing`,
    /// the error clipped to the status view's 120 columns.
    /// Then per connected server `Warning: MCP tool held: <tool> from <server> (<reason>; …)`
    /// for each tool the pins hold, `Warning: MCP instructions changed since pinned: <server>`,
    /// and `Warning: MCP tool left out: <tool> from <server> (<rule>)` for every tool it listed
    /// whose `x-mcp-header` annotations break SEP-2243 (the rest of that server stays).
    pub fn warnings(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .status()
            .into_iter()
            .filter(|s| matches!(s.state, ServerState::Error | ServerState::Missing))
            // Still connecting is not unavailable (a call that did not need to wait for it).
            .filter(|s| s.error.as_deref() != Some(CONNECTING))
            .map(|s| {
                // Clipped and escaped like the status view: the error is a server's or a
                // plugin's text, printed to a terminal.
                let error = summarize_error(&s.error.unwrap_or_default());
                format!("Warning: MCP unavailable: {} ({error})", escape_line(&s.name))
            })
            .collect();
        let state = self.supervisor.lock();
        for slot in &state.slots {
            for held in slot.trust.iter().flat_map(|t| t.held.iter()) {
                out.push(format!(
                    "Warning: MCP tool held: {} from {} ({}; `toolport mcp diff {}` shows why)",
                    escape_line(&held.tool),
                    escape_line(slot.name()),
                    held.reason.phrase(),
                    escape_line(slot.name())
                ));
            }
            if slot
                .trust
                .as_ref()
                .is_some_and(|t| t.instructions == crate::trust::InstructionsVerdict::Changed)
            {
                out.push(format!(
                    "Warning: MCP instructions changed since pinned: {0} (`toolport mcp diff {0}` shows how)",
                    escape_line(slot.name())
                ));
            }
            if let Link::Live { conn, tools } = &slot.link {
                for bad in conn.left_out(tools) {
                    out.push(format!(
                        "Warning: MCP tool left out: {} from {} ({})",
                        escape_line(&bad.tool),
                        escape_line(slot.name()),
                        summarize_error(&bad.rule)
                    ));
                }
            }
        }
        // A guard that names no guard plugin refuses (or lets through) every call it applies to.
        let host = self.supervisor.plugins.host();
        let misfits =
            crate::config::guard_misfits(&state.resolved, |name| host.misfit(name, PluginKind::Guard));
        out.extend(misfits.into_iter().map(|line| format!("Warning: {}", escape_line(&line))));
        out
    }

    /// Every tool on the surface, in surface order.
    pub fn records(&self) -> Vec<Arc<ToolRecord>> {
        self.supervisor.lock().registry.records().to_vec()
    }

    /// The record named `name` on the surface, if any (one lookup, no copy of the others).
    pub fn record(&self, name: &str) -> Option<Arc<ToolRecord>> {
        self.supervisor.lock().registry.route(name).map(|(record, _)| Arc::clone(record))
    }

    /// The final tool names, in surface order (completion, listings).
    pub fn tool_names(&self) -> Vec<String> {
        self.supervisor.lock().registry.records().iter().map(|r| r.name.clone()).collect()
    }

    /// The tool surface in the workspace's shape (default OpenAI function tools).
    pub fn tools(&self) -> Vec<Value> {
        self.supervisor.lock().registry.records().iter().map(|r| r.shaped.clone()).collect()
    }

    /// The tool surface in `shape` (a tool-shape plugin, e.g. `anthropic`), or in the
    /// workspace's shape when `None`: what `tools --shape`, `/tools [shape]` and ACP's
    /// `_toolport/tools/list` show.
    pub async fn tools_in(&self, shape: Option<&str>) -> anyhow::Result<Vec<Value>> {
        let Some(shape) = shape else { return Ok(self.tools()) };
        Ok(self.converted(shape).await?.into_iter().map(|(_, shaped)| shaped).collect())
    }

    /// Every record with its definition in `shape`, converted server by server (a tool-shape
    /// plugin sees one server's tools at a time, as when the surface was built).
    async fn converted(&self, shape: &str) -> anyhow::Result<Vec<(Arc<ToolRecord>, Value)>> {
        let registry = self.supervisor.lock().registry.clone();
        let mut out = Vec::new();
        for (def, records) in registry.by_server() {
            let infos: Vec<_> = records.iter().map(|r| r.info()).collect();
            let converted =
                self.supervisor.plugins.convert(shape, def, &infos).await.map_err(anyhow::Error::msg)?;
            out.extend(records.iter().cloned().zip(converted));
        }
        Ok(out)
    }

    /// What each tool's definition costs in tokens, in `shape` (or the workspace's): what
    /// `tools --tokens` and `/tools tokens` print.
    pub async fn token_costs(&self, shape: Option<&str>) -> anyhow::Result<TokenCosts> {
        let Some(shape) = shape else {
            let (records, workspace_shape) = {
                let state = self.supervisor.lock();
                (state.registry.records().to_vec(), state.resolved.settings.tool_shape.clone())
            };
            let tools = records.iter().map(|r| (r.server.as_str(), r.name.as_str(), &r.shaped));
            return Ok(TokenCosts::count(&workspace_shape, tools));
        };
        let shaped = self.converted(shape).await?;
        Ok(TokenCosts::count(shape, shaped.iter().map(|(r, v)| (r.server.as_str(), r.name.as_str(), v))))
    }

    /// [`Runtime::token_costs`] as a person reads it in the session and in an ACP reply.
    pub async fn token_costs_text(&self, shape: Option<&str>) -> String {
        match self.token_costs(shape).await {
            Ok(costs) => costs.render_text(),
            Err(e) => format!("{e:#}"),
        }
    }

    /// The workspace's tool shape now (`toolShape`, default `openai`).
    pub fn tool_shape(&self) -> String {
        self.supervisor.lock().resolved.settings.tool_shape.clone()
    }

    /// The workspace's `reservedToolNames` now: names no server may take (the collision rules
    /// add the host's own tools to them), and what `toolport scan` looks for in definitions.
    pub fn reserved_tool_names(&self) -> Vec<String> {
        self.supervisor.lock().resolved.settings.reserved_tool_names.clone()
    }

    /// The workspace's `surface` now: what `serve` asks on every listing and call, without
    /// copying the rest of the settings.
    pub fn surface(&self) -> Surface {
        self.supervisor.lock().resolved.settings.surface
    }

    /// The workspace's `audit` setting now (what a host's own audit lines follow).
    pub fn audit_choice(&self) -> crate::config::AuditChoice {
        self.supervisor.lock().resolved.settings.audit
    }

    /// The workspace's bundle `name` now (`bundles`; `serve --http` at `/mcp/<name>`), read
    /// on every request so an edited file takes effect.
    pub fn bundle(&self, name: &str) -> Option<crate::config::Bundle> {
        self.supervisor.lock().resolved.settings.bundles.get(name).cloned()
    }

    /// Tools of the host's own (the lazy surface's three) in `shape`, or in the workspace's
    /// shape when `None`, converted by the same tool-shape plugin as every server's tools, as
    /// if a server named `server` listed them.
    pub async fn shape_own(
        &self,
        server: &str,
        tools: &[rmcp::model::Tool],
        shape: Option<&str>,
    ) -> anyhow::Result<Vec<Value>> {
        let shape = shape.map_or_else(|| self.tool_shape(), str::to_string);
        let def = ServerDef { name: server.to_string(), ..ServerDef::default() };
        let infos: Vec<_> = tools.iter().map(registry::record::tool_info).collect();
        self.supervisor.plugins.convert(&shape, &def, &infos).await.map_err(anyhow::Error::msg)
    }

    /// [`Runtime::tools_in`] as a person reads it in the session and in an ACP reply: pretty
    /// JSON, or why the shape could not be produced.
    pub async fn tools_text(&self, shape: Option<&str>) -> String {
        match self.tools_in(shape).await {
            Ok(tools) => serde_json::to_string_pretty(&tools).unwrap_or_default(),
            Err(e) => format!("{e:#}"),
        }
    }

    /// The active servers whose connection failed or died (not those the host's rules put in
    /// `error`: reconnecting cannot change a name conflict). What `serve` retries.
    pub(crate) fn failed(&self) -> Vec<String> {
        let state = self.supervisor.lock();
        state
            .slots
            .iter()
            .filter(|s| s.resolved.active() && matches!(s.link, Link::Failed(_)))
            .map(|s| s.name().to_string())
            .collect()
    }

    /// Each connected server's `instructions` (its `initialize` or `server/discover` answer),
    /// in definition order, leaving out servers that gave none: text a client may put before its
    /// model, which `toolport scan` checks like a tool's description.
    pub fn instructions(&self) -> Vec<(String, String)> {
        self.each_start_answer(|info| info.instructions.clone())
    }

    /// The connected servers and what each said it can do, in definition order.
    pub(crate) fn connected(&self) -> Vec<(String, rmcp::model::ServerCapabilities)> {
        self.each_start_answer(|info| Some(info.capabilities.clone()))
    }

    /// What `pick` takes from each connected server's answer to the start of its session, in
    /// definition order; servers for which it takes nothing are left out.
    fn each_start_answer<T>(
        &self,
        pick: impl Fn(&rmcp::model::ServerPeerInfo) -> Option<T>,
    ) -> Vec<(String, T)> {
        let state = self.supervisor.lock();
        let connected = state.slots.iter().filter(|s| matches!(s.checked, Some(Ok(_))));
        let picked = connected.filter_map(|s| {
            let info = s.conn()?.peer.peer_info()?;
            Some((s.name().to_string(), pick(&info)?))
        });
        picked.collect()
    }
}
