//! Resolving the three layers (global store, workspace enablement, session pauses) into what a
//! runtime starts from ([`Resolved`], one [`ResolvedServer`] per definition), and the `missing`
//! rows every status view ends with.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::error::ConfigError;
use super::model::{PluginDef, WorkspaceSettings};
use super::server_def::{ServerDef, TransportKind, validate};
use super::store::GlobalStore;
use crate::paths::Paths;
use crate::status::{ServerState, ServerStatus};

/// The error a `missing` server shows (the original tool's exact text).
pub const MISSING_SERVER_ERROR: &str = "workspace references undefined MCP server";

/// One server after resolving the three layers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedServer {
    /// The definition.
    pub def: ServerDef,
    /// Enabled by the workspace (or injected by an ACP client).
    pub enabled: bool,
    /// Paused in this session.
    pub paused: bool,
    /// The validated transport, or the validation message (the original tool's exact text).
    pub transport: Result<TransportKind, String>,
}

impl ResolvedServer {
    /// Enabled, not paused and valid: the runtime should connect it.
    pub fn active(&self) -> bool {
        self.enabled && !self.paused && self.transport.is_ok()
    }
}

/// Everything a runtime needs to start, whatever layers it came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Resolved {
    /// Defined servers, in definition order.
    pub servers: Vec<ResolvedServer>,
    /// Names the workspace enables, in its order.
    pub enabled: Vec<String>,
    /// Names paused in this session.
    pub paused: Vec<String>,
    /// Enabled names with no definition: they show as `missing`.
    pub unknown_enabled: Vec<String>,
    /// Workspace settings (policy, shape, reserved names).
    pub settings: WorkspaceSettings,
    /// The store's plugin entries.
    pub plugins: Vec<PluginDef>,
    /// The workspace file the settings came from, named in errors about them; `None` when
    /// there is none (an ACP client's own servers).
    pub workspace_file: Option<PathBuf>,
}

/// Combines the layers. Names match exactly (case-sensitive, the one rule for every command).
pub fn resolve(store: &GlobalStore, settings: &WorkspaceSettings, paused: &BTreeSet<String>) -> Resolved {
    let servers = store
        .servers
        .iter()
        .map(|def| ResolvedServer {
            def: def.clone(),
            enabled: settings.enabled.contains(&def.name),
            paused: paused.contains(&def.name),
            transport: validate(def, &store.plugins),
        })
        .collect();
    let unknown_enabled = settings.enabled.iter().filter(|n| store.server(n).is_none()).cloned().collect();
    Resolved {
        servers,
        enabled: settings.enabled.clone(),
        paused: paused.iter().cloned().collect(),
        unknown_enabled,
        settings: settings.clone(),
        plugins: store.plugins.clone(),
        workspace_file: None,
    }
}

/// Loads the store and the workspace file for `paths` and resolves them with `paused`.
pub fn load_resolved(paths: &Paths, paused: &BTreeSet<String>) -> Result<Resolved, ConfigError> {
    let store = GlobalStore::load(&paths.store_file())?;
    let settings = WorkspaceSettings::load(&paths.workspace_root)?;
    Ok(Resolved { workspace_file: Some(paths.workspace_file()), ..resolve(&store, &settings, paused) })
}

/// The `missing` rows: names the workspace enables that the store does not define. Every view
/// (offline or live) ends with them.
pub fn missing_rows(resolved: &Resolved) -> Vec<ServerStatus> {
    resolved
        .unknown_enabled
        .iter()
        .map(|name| ServerStatus {
            name: name.clone(),
            transport: None,
            state: ServerState::Missing,
            workspace_enabled: true,
            paused: resolved.paused.contains(name),
            tools: 0,
            listed: 0,
            exposed: 0,
            error: Some(MISSING_SERVER_ERROR.to_string()),
            protocol_version: None,
            denied: None,
            held: Vec::new(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(name: &str, t: Option<&str>, command: Option<&str>) -> ServerDef {
        ServerDef {
            name: name.into(),
            transport: t.map(Into::into),
            command: command.map(Into::into),
            ..ServerDef::default()
        }
    }

    fn fixture() -> Resolved {
        let store = GlobalStore {
            servers: vec![
                def("a", Some("stdio"), Some("x")),
                def("b", Some("stdio"), Some("x")),
                def("c", Some("stdio"), None),
                def("d", Some("stdio"), Some("x")),
                def("e", Some("stdio"), Some("x")),
            ],
            ..GlobalStore::default()
        };
        let settings = WorkspaceSettings {
            enabled: vec!["ghost".into(), "a".into(), "c".into(), "d".into(), "E".into()],
            ..WorkspaceSettings::default()
        };
        let paused: BTreeSet<String> = ["d".to_string()].into();
        resolve(&store, &settings, &paused)
    }

    #[test]
    fn three_lists() {
        let r = fixture();
        assert_eq!(r.enabled, ["ghost", "a", "c", "d", "E"]);
        assert_eq!(r.paused, ["d"]);
        assert_eq!(r.unknown_enabled, ["ghost", "E"]);
        let active: Vec<_> = r.servers.iter().filter(|s| s.active()).map(|s| s.def.name.as_str()).collect();
        assert_eq!(active, ["a"]);
        assert_eq!(r.servers[2].transport, Err("stdio transport requires command".into()));
    }

    #[test]
    fn missing_rows_carry_the_contract_message_and_the_pause_flag() {
        let resolved = Resolved {
            unknown_enabled: vec!["ghost".into()],
            paused: vec!["ghost".into()],
            ..Resolved::default()
        };
        let rows = missing_rows(&resolved);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].state, ServerState::Missing);
        assert!(rows[0].paused && rows[0].workspace_enabled && rows[0].transport.is_none());
        assert_eq!(rows[0].error.as_deref(), Some(MISSING_SERVER_ERROR));
    }
}
