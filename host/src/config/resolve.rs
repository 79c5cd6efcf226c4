//! Resolving the three layers (global store, workspace enablement, session pauses) into what a
//! runtime starts from ([`Resolved`], one [`ResolvedServer`] per definition), and the `missing`
//! rows every status view ends with.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

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

/// A line for a person about every guard entry whose plugin cannot run as a guard: the
/// workspace file's entries (named by the file), then those of each active server (named by
/// the server), in order, each once. `misfit` says why a name is not a guard plugin, or `None`
/// when it is one (the plugin host's `misfit(name, PluginKind::Guard)`: config knows no
/// built-ins). Not a configuration error: the runtime refuses each call such an entry
/// applies to, or with `failOpen` lets it through, and the line says which.
pub fn guard_misfits(resolved: &Resolved, misfit: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let file = resolved.workspace_file.as_deref().unwrap_or(Path::new("workspace"));
    let workspace = resolved.settings.guards.iter().map(|g| (file.display().to_string(), g));
    let servers = resolved
        .servers
        .iter()
        .filter(|s| s.active())
        .flat_map(|s| s.def.guards.iter().map(|g| (format!("server \"{}\"", s.def.name), g)));
    let mut out: Vec<String> = Vec::new();
    for (place, guard) in workspace.chain(servers) {
        if let Some(problem) = misfit(&guard.plugin) {
            let line = format!("{place}: {}", guard.misfit_line(&problem));
            if !out.contains(&line) {
                out.push(line);
            }
        }
    }
    out
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
    fn guards_naming_no_guard_plugin_are_warned_about_where_written() {
        use crate::config::{GuardMode, GuardPhase, GuardScope, GuardUse};
        let guard = |plugin: &str, fail_open: bool, scope: GuardScope| {
            GuardUse::new(plugin.into(), vec![], GuardPhase::Both, GuardMode::Enforce, fail_open, scope)
                .unwrap_or_else(|e| panic!("{e:?}"))
        };
        let mut r = fixture();
        r.workspace_file = Some(PathBuf::from("/w/.toolport/workspace.json"));
        r.settings.guards =
            vec![guard("pii", false, GuardScope::Workspace), guard("nope", false, GuardScope::Workspace)];
        // `a` is active, `b` is not enabled: only `a`'s own guards matter.
        r.servers[0].def.guards = vec![
            guard("nope", true, GuardScope::Server("a".into())),
            guard("nope", true, GuardScope::Server("a".into())),
        ];
        r.servers[1].def.guards = vec![guard("nope", false, GuardScope::Server("b".into()))];
        let misfit = |name: &str| {
            (name != "pii").then(|| "unknown plugin (built-in: none; configured: pii)".to_string())
        };
        assert_eq!(
            guard_misfits(&r, misfit),
            [
                "/w/.toolport/workspace.json: guard \"nope\": unknown plugin (built-in: none; configured: pii), so \
                 every call it applies to is refused (failOpen is false)",
                "server \"a\": guard \"nope\": unknown plugin (built-in: none; configured: pii), so every call it \
                 applies to is let through (failOpen is true)",
            ]
        );
        assert!(guard_misfits(&r, |_| None).is_empty());
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
