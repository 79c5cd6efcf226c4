//! Locked edits of the store's `plugins` section and of the workspace's plugin choices
//! (`toolport plugin add|remove`, `toolport workspace set|unset`). Each is one edit through
//! [`super::write`], so unknown keys elsewhere in either file survive. An entry is built
//! from what a person typed by [`plugin_entry`] and read back by the store's own reader,
//! so `plugin add` and `plugin run` accept exactly what the store would.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::grant_input::{check_env_name, check_host_pattern, dir_spec};
use super::grant_items::GrantRequest;
use super::write::{Doc, edit_store, edit_workspace};
use crate::config::error::{ConfigError, EditError};
use crate::config::model::{Limits, PluginDef, PluginKind, Surface, WorkspaceSettings};
use crate::config::store::{GlobalStore, plugin_from_json};
use crate::config::store_keys::grants::{self as grant_key, dir as dir_key};
use crate::config::store_keys::{
    GRANTS, LIMITS, PLUGINS_SECTION, SHA256, limits as limit_key, plugin as key,
};
use crate::paths::Paths;

/// A plugin as asked for on the command line; relative paths mean the caller's folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginRequest {
    /// What it is for.
    pub kind: PluginKind,
    /// The component file as typed.
    pub path: String,
    /// Folders (`PATH[:ro]`), host patterns and environment variable names to grant.
    pub grants: GrantRequest,
    /// `limits.memoryMb`, when not the default.
    pub memory_mb: Option<u64>,
    /// `limits.callMs`, when not the default.
    pub call_ms: Option<u64>,
    /// `limits.cpuPercent`, when not the default (checked by the store's own reader).
    pub cpu_percent: Option<u64>,
    /// `sha256`, to pin the file.
    pub sha256: Option<String>,
}

/// The store entry for `request` and its typed reading. The component path and folders are made
/// absolute against `cwd` (`~/…` is kept as typed, as the store reads it), each folder must
/// exist, host patterns and variable names are checked by the sandbox's rules, and the
/// entry is then read by the store's reader (a transport may not take a built-in transport's
/// name; a plugin's folders are read-only).
pub fn plugin_entry(
    name: &str,
    request: &PluginRequest,
    cwd: &Path,
) -> Result<(Map<String, Value>, PluginDef), ConfigError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(ConfigError("plugin name must not be blank".into()));
    }
    let mut entry = Map::new();
    entry.insert(key::KIND.into(), request.kind.as_str().into());
    entry.insert(key::PATH.into(), component_path(&request.path, cwd)?.into());
    let mut grants = Map::new();
    let g = &request.grants;
    if !g.dirs.is_empty() {
        let mut dirs = Vec::new();
        for text in &g.dirs {
            let spec = dir_spec(text, cwd)?;
            spec.check_exists()?;
            // A `:rw` folder is written as asked, so the store's reader refuses it in its words.
            dirs.push(if spec.writable {
                {
                    let mut dir = Map::new();
                    dir.insert(dir_key::HOST.into(), Value::String(spec.written));
                    dir.insert(dir_key::MODE.into(), Value::String("rw".into()));
                    Value::Object(dir)
                }
            } else {
                Value::String(spec.written)
            });
        }
        grants.insert(grant_key::DIRS.into(), Value::Array(dirs));
    }
    if !g.hosts.is_empty() {
        for host in &g.hosts {
            check_host_pattern(host)?;
        }
        grants.insert(grant_key::HOSTS.into(), g.hosts.iter().cloned().map(Value::String).collect());
    }
    if !g.env.is_empty() {
        for env in &g.env {
            check_env_name(env)?;
        }
        grants.insert(grant_key::ENV.into(), g.env.iter().cloned().map(Value::String).collect());
    }
    if !grants.is_empty() {
        entry.insert(GRANTS.into(), Value::Object(grants));
    }
    let mut limits = Map::new();
    let defaults = Limits::default();
    for (key, value, default) in [
        (limit_key::MEMORY_MB, request.memory_mb, defaults.memory_mb),
        (limit_key::CALL_MS, request.call_ms, defaults.call_ms),
    ] {
        match value {
            Some(0) => {
                return Err(ConfigError(format!("plugin \"{name}\": {LIMITS}.{key} must be positive")));
            }
            Some(n) if n != default => {
                limits.insert(key.into(), n.into());
            }
            _ => {}
        }
    }
    // Written as asked, so the store's reader refuses 0 or 101 in its words, with its range.
    if let Some(percent) = request.cpu_percent.filter(|p| *p != u64::from(defaults.cpu_percent)) {
        limits.insert(limit_key::CPU_PERCENT.into(), percent.into());
    }
    if !limits.is_empty() {
        entry.insert(LIMITS.into(), Value::Object(limits));
    }
    if let Some(sha256) = &request.sha256 {
        entry.insert(SHA256.into(), sha256.clone().into());
    }
    // Every path in it is absolute now (or `~/…`): the base is never used.
    let def = plugin_from_json(name, &Value::Object(entry.clone()), cwd)?;
    Ok((entry, def))
}

/// A component path as the store should hold it: absolute (against `cwd`) unless it starts
/// with `~`, which the store expands on every machine it is read on.
fn component_path(text: &str, cwd: &Path) -> Result<String, ConfigError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(ConfigError("a plugin needs a component file".into()));
    }
    if text == "~" || text.starts_with("~/") {
        return Ok(text.to_string());
    }
    let path: PathBuf = cwd.join(text).components().collect();
    path.to_str()
        .map(str::to_string)
        .ok_or_else(|| ConfigError(format!("{}: the path is not UTF-8", path.display())))
}

/// Adds `plugins.<name>`; with `replace`, an entry of that name is replaced whole, otherwise
/// refused. Returns whether one was replaced.
pub fn add_plugin(
    store_path: &Path,
    name: &str,
    entry: &Map<String, Value>,
    replace: bool,
) -> Result<bool, EditError> {
    let name = name.trim();
    edit_store(store_path, |doc| {
        let plugins = plugins_mut(store_path, doc)?;
        let existing = plugins.keys().find(|k| k.trim() == name).cloned();
        if existing.is_some() && !replace {
            return Err(refused(format!(
                "plugin already exists: {name} (use --force to replace it, or `toolport plugin remove {name}`)"
            )));
        }
        let replaced = existing.is_some();
        // An existing key keeps its place in the file.
        plugins.insert(existing.unwrap_or_else(|| name.to_string()), Value::Object(entry.clone()));
        Ok(replaced)
    })
}

/// What still names a plugin: store servers whose `type` it is, and this workspace's keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PluginUsers {
    /// Servers of the store that use it as their transport.
    pub servers: Vec<String>,
    /// `namePolicy` and/or `toolShape` of the current workspace.
    pub workspace_keys: Vec<&'static str>,
}

impl PluginUsers {
    /// Nothing names it.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.workspace_keys.is_empty()
    }

    /// `servers a, b; workspace namePolicy (/w/.toolport/workspace.json)`.
    pub fn describe(&self, workspace_file: &Path) -> String {
        let mut parts = Vec::new();
        if !self.servers.is_empty() {
            parts.push(format!(
                "server{} {}",
                crate::text::plural(self.servers.len()),
                self.servers.join(", ")
            ));
        }
        if !self.workspace_keys.is_empty() {
            parts.push(format!("{} of {}", self.workspace_keys.join(" and "), workspace_file.display()));
        }
        parts.join("; ")
    }
}

/// Removes `plugins.<name>`. Refused while a store server uses it as its `type` or this
/// workspace's `namePolicy`/`toolShape` names it, unless `force`; what named it is returned
/// either way (so a forced removal can say what it left dangling). An unknown name is an error.
pub fn remove_plugin(paths: &Paths, name: &str, force: bool) -> Result<PluginUsers, EditError> {
    let name = name.trim();
    let settings = WorkspaceSettings::load(&paths.workspace_root)?;
    let mut workspace_keys = Vec::new();
    if settings.name_policy.as_deref() == Some(name) {
        workspace_keys.push("namePolicy");
    }
    if settings.tool_shape == name {
        workspace_keys.push("toolShape");
    }
    let store_path = paths.store_file();
    edit_store(&store_path, |doc| {
        let store = GlobalStore::from_value(&store_path, &Value::Object(doc.clone()))?;
        let servers = store
            .servers
            .iter()
            .filter(|s| s.transport.as_deref() == Some(name))
            .map(|s| s.name.clone())
            .collect();
        let users = PluginUsers { servers, workspace_keys: workspace_keys.clone() };
        let plugins = plugins_mut(&store_path, doc)?;
        let Some(key) = plugins.keys().find(|k| k.trim() == name).cloned() else {
            return Err(ConfigError(format!("Unknown plugin: {name}")).into());
        };
        if !users.is_empty() && !force {
            return Err(refused(format!(
                "plugin {name} is in use by {} (change those first, or use --force)",
                users.describe(&paths.workspace_file())
            )));
        }
        plugins.remove(&key);
        Ok(users)
    })
}

/// A workspace key that names a plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkspacePluginKey {
    /// `namePolicy` (default: none).
    NamePolicy,
    /// `toolShape` (default: `openai`).
    ToolShape,
}

impl WorkspacePluginKey {
    /// The key in `workspace.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NamePolicy => "namePolicy",
            Self::ToolShape => "toolShape",
        }
    }

    /// The kind of plugin it names.
    pub fn kind(self) -> PluginKind {
        match self {
            Self::NamePolicy => PluginKind::NamePolicy,
            Self::ToolShape => PluginKind::ToolShape,
        }
    }
}

/// Sets (`Some`) or removes (`None`) the key in `<root>/.toolport/workspace.json`. Whether the
/// plugin exists is the caller's check (it needs the plugin host's list of built-ins). Returns
/// the value the key had.
pub fn set_workspace_plugin(
    root: &Path,
    key: WorkspacePluginKey,
    plugin: Option<&str>,
) -> Result<Option<String>, EditError> {
    set_workspace_value(root, key.as_str(), plugin.map(str::trim))
}

/// Sets (`Some`) or removes (`None`, back to the default `full`) the workspace's `surface`.
/// Returns the value the key had, as written.
pub fn set_workspace_surface(root: &Path, surface: Option<Surface>) -> Result<Option<String>, EditError> {
    set_workspace_value(root, SURFACE_KEY, surface.map(Surface::as_str))
}

/// The workspace key of [`set_workspace_surface`].
pub const SURFACE_KEY: &str = "surface";

/// One string key of the workspace file set or removed; its old value returned.
fn set_workspace_value(root: &Path, key: &str, value: Option<&str>) -> Result<Option<String>, EditError> {
    edit_workspace(root, |doc: &mut Doc| {
        let old = doc.get(key).and_then(Value::as_str).map(str::to_string);
        match value {
            Some(value) => {
                doc.insert(key.into(), Value::String(value.to_string()));
            }
            None => {
                doc.shift_remove(key);
            }
        }
        Ok(old)
    })
}

/// A refusal that is not a config mistake (exit 1).
fn refused(message: String) -> EditError {
    EditError::Io(anyhow::Error::msg(message))
}

fn plugins_mut<'a>(path: &Path, doc: &'a mut Doc) -> Result<&'a mut Map<String, Value>, ConfigError> {
    doc.entry(PLUGINS_SECTION)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| ConfigError(format!("{}: \"{PLUGINS_SECTION}\" must be an object", path.display())))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn request(kind: PluginKind, path: &str) -> PluginRequest {
        PluginRequest {
            kind,
            path: path.into(),
            grants: GrantRequest::default(),
            memory_mb: None,
            call_ms: None,
            cpu_percent: None,
            sha256: None,
        }
    }

    #[test]
    fn an_entry_holds_absolute_paths_and_only_what_differs_from_the_defaults() -> anyhow::Result<()> {
        let cwd = tempfile::tempdir()?;
        std::fs::create_dir(cwd.path().join("data"))?;
        let mut r = request(PluginKind::NamePolicy, "./p/ns.wasm");
        r.grants.dirs = vec!["data".into()];
        r.grants.hosts = vec!["https://api.example.com".into()];
        r.memory_mb = Some(Limits::default().memory_mb);
        r.call_ms = Some(250);
        let (entry, def) = plugin_entry(" ns ", &r, cwd.path())?;
        let dir = cwd.path().join("data").display().to_string();
        assert_eq!(
            Value::Object(entry),
            json!({"kind": "name-policy", "path": cwd.path().join("p/ns.wasm").display().to_string(),
                   "grants": {"dirs": [dir], "hosts": ["https://api.example.com"]}, "limits": {"callMs": 250}})
        );
        assert_eq!((def.name.as_str(), def.limits.call_ms), ("ns", 250));
        let home = plugin_entry("h", &request(PluginKind::ToolShape, "~/p.wasm"), cwd.path())?;
        assert_eq!(home.0["path"], "~/p.wasm");
        Ok(())
    }

    #[test]
    fn an_entry_is_refused_as_the_store_would_refuse_it() -> anyhow::Result<()> {
        let cwd = tempfile::tempdir()?;
        let why = |name: &str, r: &PluginRequest| plugin_entry(name, r, cwd.path()).err().map(|e| e.0);
        assert_eq!(
            why("sse", &request(PluginKind::Transport, "t.wasm")).as_deref(),
            Some("plugin \"sse\": a transport plugin cannot take a built-in transport name")
        );
        let mut rw = request(PluginKind::ToolShape, "s.wasm");
        rw.grants.dirs = vec![format!("{}:rw", cwd.path().display())];
        assert!(
            why("s", &rw).is_some_and(|m| m.ends_with("cannot be \"rw\": a plugin's folders are read-only"))
        );
        let mut zero = request(PluginKind::ToolShape, "s.wasm");
        zero.memory_mb = Some(0);
        assert_eq!(why("s", &zero).as_deref(), Some("plugin \"s\": limits.memoryMb must be positive"));
        assert_eq!(why(" ", &zero).as_deref(), Some("plugin name must not be blank"));
        let mut all_of_two = request(PluginKind::ToolShape, "s.wasm");
        all_of_two.cpu_percent = Some(200);
        assert_eq!(
            why("s", &all_of_two).as_deref(),
            Some(
                "plugin \"s\": \"limits.cpuPercent\" must be an integer from 1 to 100 (percent of one core)"
            )
        );
        Ok(())
    }

    #[test]
    fn add_replace_and_remove_keep_the_rest_of_the_store() -> anyhow::Result<()> {
        let home = tempfile::tempdir()?;
        let root = tempfile::tempdir()?;
        let paths = Paths::new(home.path(), root.path());
        let store = paths.store_file();
        std::fs::write(&store, r#"{"plugins":{"a":{"kind":"tool-shape","path":"/a.wasm"}},"x":1}"#)?;
        let entry =
            |path: &str| json!({"kind": "tool-shape", "path": path}).as_object().cloned().unwrap_or_default();
        assert!(!add_plugin(&store, "b", &entry("/b.wasm"), false)?);
        assert!(matches!(add_plugin(&store, "a", &entry("/c.wasm"), false), Err(EditError::Io(_))));
        assert!(add_plugin(&store, "a", &entry("/c.wasm"), true)?);
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&store)?)?;
        let keys: Vec<&String> = doc["plugins"].as_object().map(|m| m.keys().collect()).unwrap_or_default();
        assert_eq!(keys, ["a", "b"], "a replaced entry keeps its place");
        assert_eq!(doc["plugins"]["a"]["path"], "/c.wasm");
        assert_eq!(doc["x"], 1);
        assert!(remove_plugin(&paths, "a", false)?.is_empty());
        assert!(matches!(remove_plugin(&paths, "a", false), Err(EditError::Config(_))));
        Ok(())
    }

    #[test]
    fn the_surface_is_set_and_unset_beside_the_other_keys() -> anyhow::Result<()> {
        let root = tempfile::tempdir()?;
        std::fs::create_dir(root.path().join(".toolport"))?;
        let file = root.path().join(".toolport/workspace.json");
        std::fs::write(&file, r#"{"enabledMcpServers":["a"],"x":1}"#)?;
        assert_eq!(set_workspace_surface(root.path(), Some(Surface::Lazy))?, None);
        assert_eq!(WorkspaceSettings::load(root.path())?.surface, Surface::Lazy);
        assert_eq!(set_workspace_surface(root.path(), None)?.as_deref(), Some("lazy"));
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file)?)?;
        assert_eq!(doc, json!({"enabledMcpServers": ["a"], "x": 1}));
        Ok(())
    }
}
