//! What the runtime knows about each server, and the status rows derived from it.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::Tool;

use super::catalog::merged::{Catalog, ServerCatalog};
use super::connection::Connection;
use super::listing_store::KnownListing;
use super::registry::surface::Registry;
use super::registry::trust_gate::ServerTrust;
use crate::config::ResolvedServer;
use crate::redact::redact_urls;
use crate::status::{HeldTool, ServerState, ServerStatus};
use crate::text::clip_foreign;

/// The merged catalog of the `slots` that are connected, in definition order. A server in
/// `error` (say, rejected by the tool-name rules) offers nothing, as it offers no tools.
pub fn live_catalog(slots: &[Slot]) -> Catalog {
    let live = slots.iter().filter(|s| s.conn().is_some() && matches!(s.checked, Some(Ok(_))));
    Catalog::merge(live.map(|s| (s.name(), &s.catalog)))
}

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
    /// What the last pipeline run's trust step decided for its live connection (held tools,
    /// its instructions against the pin); `None` when it did not get that far.
    pub trust: Option<ServerTrust>,
    /// Its last-known listing (`listing_store.rs`), loaded when `serve` starts: while the
    /// server is still connecting its tools are these. Dropped once the first connect ends.
    pub known: Option<KnownListing>,
}

impl Slot {
    /// A slot with nothing connected.
    pub fn new(resolved: ResolvedServer) -> Self {
        Self {
            resolved,
            link: Link::Idle,
            checked: None,
            catalog: ServerCatalog::default(),
            trust: None,
            known: None,
        }
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

    /// Whether a call of one of its tools should wait for it: active, and its connect (or the
    /// rebuild after it) not done yet.
    pub fn still_connecting(&self) -> bool {
        self.resolved.active()
            && match &self.link {
                Link::Idle => true,
                Link::Live { .. } => self.checked.is_none(),
                Link::Failed(_) => false,
            }
    }

    /// Whether connection `generation` is still this server's live one (events and pipeline
    /// results about an older connection are stale and dropped).
    pub fn holds(&self, generation: u64) -> bool {
        self.conn().is_some_and(|c| c.generation == generation)
    }

    /// The status row, in the original tool's decision order: disabled, paused, invalid
    /// definition, then what connecting and checking gave.
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
            held: match (state, &self.trust) {
                (ServerState::Connected, Some(trust)) => trust
                    .held
                    .iter()
                    .map(|h| HeldTool { tool: clip_foreign(&h.tool).into_owned(), reason: h.reason.phrase() })
                    .collect(),
                _ => Vec::new(),
            },
        }
    }
}

/// The tools listed from servers' last-known listings, by final name: a call of one that the
/// live server no longer lists says so, naming the server, instead of "unknown tool".
#[derive(Default)]
pub struct FromHistory {
    by_tool: HashMap<String, String>,
}

impl FromHistory {
    /// Remembers the tools `registry` lists from a last-known listing.
    pub fn record(&mut self, registry: &Registry) {
        for (record, served) in
            registry.records().iter().filter_map(|r| Some((r, registry.route(&r.name)?.1)))
        {
            if served.conn.is_none() {
                self.by_tool.insert(record.name.clone(), record.server.clone());
            }
        }
    }

    /// The server whose last-known listing listed `tool`, if one did.
    pub fn lookup(&self, tool: &str) -> Option<&str> {
        self.by_tool.get(tool).map(String::as_str)
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
    use crate::config::{ServerDef, TransportKind};

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
