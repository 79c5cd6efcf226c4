//! Resolving the three layers (global store, workspace enablement, session pauses) into what a
//! runtime starts from, and the offline status view built from it alone.

use super::ConfigError;
use super::model::{GlobalStore, Resolved, ResolvedServer, WorkspaceSettings};
use super::validate::validate;
use crate::paths::Paths;
use crate::status::{ServerState, ServerStatus};
use std::collections::BTreeSet;

/// The error a `missing` server shows (reference-behaviour A).
pub const MISSING_SERVER_ERROR: &str = "workspace references undefined MCP server";

/// Combines the layers. Names match exactly (case-sensitive, reference-behaviour B.16).
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
    }
}

/// Loads the store and the workspace file for `paths` and resolves them with `paused`.
pub fn load_resolved(paths: &Paths, paused: &BTreeSet<String>) -> Result<Resolved, ConfigError> {
    let store = GlobalStore::load(&paths.store_file())?;
    let settings = WorkspaceSettings::load(&paths.workspace_root)?;
    Ok(resolve(&store, &settings, paused))
}

/// The status rows without connecting anything: steps 1-3 of the runtime decision order, and
/// `configured` where the runtime would connect. `missing` rows follow the defined ones.
pub fn offline_status(resolved: &Resolved) -> Vec<ServerStatus> {
    let mut rows: Vec<ServerStatus> = resolved
        .servers
        .iter()
        .map(|s| {
            let (state, error) = if !s.enabled {
                (ServerState::Disabled, None)
            } else if s.paused {
                (ServerState::Paused, None)
            } else {
                match &s.transport {
                    Err(msg) => (ServerState::Error, Some(msg.clone())),
                    Ok(_) => (ServerState::Configured, None),
                }
            };
            ServerStatus {
                name: s.def.name.clone(),
                transport: s.def.transport.clone(),
                state,
                workspace_enabled: s.enabled,
                paused: s.paused,
                tools: 0,
                error,
            }
        })
        .collect();
    rows.extend(missing_rows(resolved));
    rows
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
            error: Some(MISSING_SERVER_ERROR.to_string()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::model::ServerDef;

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
    fn offline_rows_in_decision_order_with_missing_last() {
        let rows = offline_status(&fixture());
        let got: Vec<_> = rows
            .iter()
            .map(|r| (r.name.as_str(), r.state, r.error.as_deref(), r.transport.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("a", ServerState::Configured, None, Some("stdio")),
                ("b", ServerState::Disabled, None, Some("stdio")),
                ("c", ServerState::Error, Some("stdio transport requires command"), Some("stdio")),
                ("d", ServerState::Paused, None, Some("stdio")),
                ("e", ServerState::Disabled, None, Some("stdio")),
                ("ghost", ServerState::Missing, Some(MISSING_SERVER_ERROR), None),
                ("E", ServerState::Missing, Some(MISSING_SERVER_ERROR), None),
            ]
        );
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
