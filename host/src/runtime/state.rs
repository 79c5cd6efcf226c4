//! What the runtime knows about each server, and the status rows derived from it.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::Tool;

use super::catalog::ServerCatalog;
use super::connection::Connection;
use super::record::ToolRecord;
use crate::config::{ResolvedServer, ServerDef};
use crate::redact::redact_urls;
use crate::status::{ServerState, ServerStatus};
use crate::text::clip_foreign;

/// The `error` of a server whose connect is still under way: of the status view's five states
/// it is `error` (not usable yet), and this says why.
pub const CONNECTING: &str = "connecting";

/// Where a server's connection stands.
pub enum Link {
    /// Not connected: not active, or not connected yet.
    Idle,
    /// Connected; `tools` as last listed.
    Live {
        /// The session (dropping the last handle closes it).
        conn: Arc<Connection>,
        /// The raw `tools/list` result.
        tools: Vec<Tool>,
    },
    /// Connecting, listing, or the session itself failed.
    Failed(String),
}

/// One defined server.
pub struct Slot {
    /// Resolution result (definition, enabled, paused, validated transport).
    pub resolved: ResolvedServer,
    /// Where its connection stands.
    pub link: Link,
    /// Outcome of the last pipeline run for a live server: tool count, or why it is rejected.
    pub checked: Option<Result<usize, String>>,
    /// Its resources, templates and prompts as last listed from the live connection (empty
    /// while it is not live, or when it offers none).
    pub catalog: ServerCatalog,
}

impl Slot {
    /// A slot with nothing connected.
    pub fn new(resolved: ResolvedServer) -> Self {
        Self { resolved, link: Link::Idle, checked: None, catalog: ServerCatalog::default() }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.resolved.def.name
    }

    /// The live connection, if any.
    pub fn conn(&self) -> Option<&Arc<Connection>> {
        match &self.link {
            Link::Live { conn, .. } => Some(conn),
            _ => None,
        }
    }

    /// Whether connection `generation` is still this server's live one (events and pipeline
    /// results about an older connection are stale and dropped).
    pub fn holds(&self, generation: u64) -> bool {
        self.conn().is_some_and(|c| c.generation == generation)
    }

    /// The status row, following the decision order of reference-behaviour A.
    pub fn status(&self) -> ServerStatus {
        let r = &self.resolved;
        let (state, tools, error) = if !r.enabled {
            (ServerState::Disabled, 0, None)
        } else if r.paused {
            (ServerState::Paused, 0, None)
        } else if let Err(msg) = &r.transport {
            (ServerState::Error, 0, Some(msg.clone()))
        } else {
            match (&self.link, &self.checked) {
                (Link::Failed(reason), _) => (ServerState::Error, 0, Some(reason.clone())),
                (Link::Live { .. }, Some(Ok(n))) => (ServerState::Connected, *n, None),
                (Link::Live { .. }, Some(Err(reason))) => (ServerState::Error, 0, Some(reason.clone())),
                // A connect still under way: at the start of `serve` (which connects in the
                // background), or a status read mid-reconcile.
                _ => (ServerState::Error, 0, Some(CONNECTING.to_string())),
            }
        };
        // Every error reached here clipped where it was built; this keeps a row bounded, and
        // free of URL secrets, even for a path that forgot to.
        let error = error.map(|e| redact_urls(&clip_foreign(&e)).into_owned());
        let protocol_version = match state {
            ServerState::Connected => self.conn().and_then(|c| c.protocol_version.clone()),
            _ => None,
        };
        let denied = self.conn().and_then(|c| c.refused()).map(|d| clip_foreign(&d).into_owned());
        let listed = match &self.link {
            Link::Live { tools, .. } if r.active() => tools.len(),
            _ => 0,
        };
        ServerStatus {
            name: r.def.name.clone(),
            transport: r.def.transport.clone(),
            state,
            workspace_enabled: r.enabled,
            paused: r.paused,
            tools,
            listed,
            exposed: tools,
            error,
            protocol_version,
            denied,
        }
    }
}

/// A connected server whose tools are on the surface: what a call to one of them needs.
#[derive(Clone)]
pub struct Served {
    /// Its definition (the wire record for other shapes, the call timeout).
    pub def: ServerDef,
    /// The session calls go out on.
    pub conn: Arc<Connection>,
}

/// The checked, shaped tool surface: the records in definition order (each server's tools
/// together) and, per server, the session their calls go to.
#[derive(Default, Clone)]
pub struct Registry {
    records: Vec<ToolRecord>,
    by_name: HashMap<String, usize>,
    servers: HashMap<String, Served>,
}

impl Registry {
    /// Appends one server's records (already shaped); the pipeline calls it in definition order.
    pub fn add_server(&mut self, def: ServerDef, conn: Arc<Connection>, records: Vec<ToolRecord>) {
        for record in records {
            self.by_name.insert(record.name.clone(), self.records.len());
            self.records.push(record);
        }
        self.servers.insert(def.name.clone(), Served { def, conn });
    }

    /// Every record, in surface order.
    pub fn records(&self) -> &[ToolRecord] {
        &self.records
    }

    /// The record named `name` on the surface and the server that serves it.
    pub fn route(&self, name: &str) -> Option<(&ToolRecord, &Served)> {
        let record = self.records.get(*self.by_name.get(name)?)?;
        Some((record, self.servers.get(&record.server)?))
    }

    /// Each server's records with its definition, in surface order (for converting to another
    /// shape, which runs per server).
    pub fn by_server(&self) -> Vec<(&ServerDef, &[ToolRecord])> {
        let mut out: Vec<(&ServerDef, &[ToolRecord])> = Vec::new();
        let mut start = 0;
        while let Some(first) = self.records.get(start) {
            let len = self.records[start..].iter().take_while(|r| r.server == first.server).count();
            if let Some(served) = self.servers.get(&first.server) {
                out.push((&served.def, &self.records[start..start + len]));
            }
            start += len;
        }
        out
    }
}

/// Tools of servers that went away: a call to one says why instead of "unknown tool".
#[derive(Default)]
pub struct Gone {
    by_tool: HashMap<String, (String, String)>,
}

impl Gone {
    /// Remembers `server`'s tools with the reason it went away.
    pub fn record(&mut self, registry: &Registry, server: &str, reason: &str) {
        for record in registry.records().iter().filter(|r| r.server == server) {
            self.by_tool.insert(record.name.clone(), (server.to_string(), reason.to_string()));
        }
    }

    /// Forgets `server` (it reconnected, or was removed).
    pub fn forget(&mut self, server: &str) {
        self.by_tool.retain(|_, (owner, _)| owner != server);
    }

    /// `(server, reason)` for a tool of a server that went away.
    pub fn lookup(&self, tool: &str) -> Option<&(String, String)> {
        self.by_tool.get(tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TransportKind;

    fn slot(enabled: bool, paused: bool, transport: Result<TransportKind, String>) -> Slot {
        let def = ServerDef { name: "s".into(), transport: Some("stdio".into()), ..ServerDef::default() };
        Slot::new(ResolvedServer { def, enabled, paused, transport })
    }

    fn state_of(slot: &Slot) -> (ServerState, Option<String>) {
        let row = slot.status();
        (row.state, row.error)
    }

    #[test]
    fn decision_order_disabled_paused_invalid_then_connection() {
        // Disabled wins over paused and over an invalid definition, paused over invalid.
        assert_eq!(state_of(&slot(false, true, Err("bad".into()))), (ServerState::Disabled, None));
        assert_eq!(state_of(&slot(true, true, Err("bad".into()))), (ServerState::Paused, None));
        assert_eq!(state_of(&slot(true, false, Err("bad".into()))), (ServerState::Error, Some("bad".into())));
        let mut failed = slot(true, false, Ok(TransportKind::Stdio));
        failed.link = Link::Failed("process exited with status 3".into());
        assert_eq!(state_of(&failed), (ServerState::Error, Some("process exited with status 3".into())));
    }
}
