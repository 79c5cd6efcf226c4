//! The config-changing operations shared by `toolport mcp …` and the interactive `/mcp` line:
//! add, remove, enable, disable. Each is one locked edit (see [`super::write`]); the messages
//! are the original tool's, word for word.

use std::path::Path;

use serde_json::{Map, Value};

use super::add_args::SandboxChoice;
use super::write::{Doc, edit_store, edit_workspace};
use crate::config::error::{ConfigError, EditError};
use crate::config::model::WorkspaceSettings;
use crate::config::server_def::{ServerDef, TransportKind, validate};
use crate::config::store::GlobalStore;
use crate::config::store_keys::{SANDBOX, SERVERS_SECTION};
use crate::paths::Paths;

/// Adds `name` with `definition` (a JSON object as a user wrote it) to the store. The
/// definition is normalised and validated first; unknown keys in it are kept; the store's
/// `defaults` apply (see [`put_server`]). Never enables.
pub fn add_server(store_path: &Path, name: &str, definition: &Map<String, Value>) -> Result<(), EditError> {
    put_server(store_path, name, definition, false, SandboxChoice::StoreDefault).map(|_| ())
}

/// [`add_server`], or with `replace` (`mcp add --force`) the definition replaces one of that
/// name wholesale: none of the old definition's keys survive, its own unknown keys included,
/// so the result is exactly what the command says. Enablement lives in the workspace file and
/// is not touched. Returns whether a definition was replaced.
///
/// `sandbox` is what the person said about the OS sandbox: [`SandboxChoice::On`] writes
/// `"sandbox": true`; [`SandboxChoice::StoreDefault`] writes it when the store's
/// `defaults.sandbox` is on, the server is `stdio` and the definition has no `sandbox` of its
/// own, so the file says what will happen without anyone reading the default again.
pub fn put_server(
    store_path: &Path,
    name: &str,
    definition: &Map<String, Value>,
    replace: bool,
    sandbox: SandboxChoice,
) -> Result<bool, EditError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(ConfigError("MCP server name must not be blank".into()).into());
    }
    let def = ServerDef::from_json(name, &Value::Object(definition.clone()))?;
    edit_store(store_path, |doc| {
        // Plugins and defaults come from the file as it is now, under the lock.
        let store = GlobalStore::from_value(store_path, &Value::Object(doc.clone()))?;
        let (def, definition) = match sandboxed(&def, definition, sandbox, store.defaults.sandbox) {
            Some(with) => (ServerDef::from_json(name, &Value::Object(with.clone()))?, with),
            None => (def.clone(), definition.clone()),
        };
        if let Err(msg) = validate(&def, &store.plugins) {
            return Err(ConfigError(format!("invalid MCP server \"{name}\": {msg}")).into());
        }
        let servers = servers_mut(store_path, doc)?;
        let exists = servers.keys().any(|k| k.trim() == name);
        if exists && !replace {
            return Err(EditError::AlreadyExists(name.to_string()));
        }
        // A key spelled with spaces around the name goes; the exact key keeps its place.
        servers.retain(|k, _| k == name || k.trim() != name);
        servers.insert(name.to_string(), Value::Object(def.merge_into(&definition)));
        Ok(exists)
    })
}

/// `definition` with `"sandbox": true` added when `choice` (or, for a `stdio` server with no
/// `sandbox` of its own, the store's default) puts it under the OS sandbox and it is not yet;
/// `None` when it stays as it is.
fn sandboxed(
    def: &ServerDef,
    definition: &Map<String, Value>,
    choice: SandboxChoice,
    store_default: bool,
) -> Option<Map<String, Value>> {
    let stdio = def.transport.as_deref() == Some(TransportKind::Stdio.as_str());
    let wanted = match choice {
        SandboxChoice::On => def.sandbox.is_none(),
        SandboxChoice::Off => false,
        SandboxChoice::StoreDefault => {
            store_default && stdio && definition.get(SANDBOX).is_none_or(Value::is_null)
        }
    };
    wanted.then(|| {
        let mut with = definition.clone();
        with.insert(SANDBOX.into(), Value::Bool(true));
        with
    })
}

/// Removes `name` from the store and from this workspace's `enabledMcpServers`.
pub fn remove_server(paths: &Paths, name: &str) -> Result<(), EditError> {
    // Check the workspace file is readable (and inside the root) before touching the store, so
    // a refusal there does not leave the two files half-edited.
    WorkspaceSettings::load(&paths.workspace_root)?;
    let store_path = paths.store_file();
    edit_store(&store_path, |doc| {
        let servers = servers_mut(&store_path, doc)?;
        let before = servers.len();
        servers.retain(|k, _| k.trim() != name);
        if servers.len() == before {
            return Err(EditError::Unknown(name.to_string()));
        }
        Ok(())
    })?;
    edit_workspace(&paths.workspace_root, |doc| {
        let ws = paths.workspace_file();
        if let Some(list) = enabled_mut(&ws, doc, false)? {
            list.retain(|v| v.as_str().map(str::trim) != Some(name));
        }
        Ok(())
    })
}

/// Adds `name` to this workspace's `enabledMcpServers`; it must be defined in the store.
/// Enabling an enabled server changes nothing.
pub fn enable_server(paths: &Paths, name: &str) -> Result<(), EditError> {
    if GlobalStore::load(&paths.store_file())?.server(name).is_none() {
        return Err(EditError::Unknown(name.to_string()));
    }
    edit_workspace(&paths.workspace_root, |doc| {
        let ws = paths.workspace_file();
        if let Some(list) = enabled_mut(&ws, doc, true)?
            && !list.iter().any(|v| v.as_str().map(str::trim) == Some(name))
        {
            list.push(Value::String(name.to_string()));
        }
        Ok(())
    })
}

/// Drops `name` from this workspace's `enabledMcpServers`.
pub fn disable_server(paths: &Paths, name: &str) -> Result<(), EditError> {
    edit_workspace(&paths.workspace_root, |doc| {
        let ws = paths.workspace_file();
        let list = enabled_mut(&ws, doc, false)?;
        let Some(list) = list.filter(|l| l.iter().any(|v| v.as_str().map(str::trim) == Some(name))) else {
            return Err(EditError::NotEnabled(name.to_string()));
        };
        list.retain(|v| v.as_str().map(str::trim) != Some(name));
        Ok(())
    })
}

fn servers_mut<'a>(path: &Path, doc: &'a mut Doc) -> Result<&'a mut Map<String, Value>, ConfigError> {
    doc.entry(SERVERS_SECTION)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| ConfigError(format!("{}: \"{SERVERS_SECTION}\" must be an object", path.display())))
}

fn enabled_mut<'a>(
    path: &Path,
    doc: &'a mut Doc,
    create: bool,
) -> Result<Option<&'a mut Vec<Value>>, ConfigError> {
    const KEY: &str = "enabledMcpServers";
    if create && !doc.contains_key(KEY) {
        doc.insert(KEY.into(), Value::Array(Vec::new()));
    }
    match doc.get_mut(KEY) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => Ok(Some(a)),
        Some(_) => Err(ConfigError(format!("{}: \"{KEY}\" must be an array of strings", path.display()))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn add_enable_disable_remove_round_trip() -> anyhow::Result<()> {
        let home = tempfile::tempdir()?;
        let root = tempfile::tempdir()?;
        let paths = Paths::new(home.path(), root.path());
        add_server(&paths.store_file(), "a", &obj(json!({"command":"x"})))?;
        assert!(matches!(
            add_server(&paths.store_file(), "a", &obj(json!({"command":"y"}))),
            Err(EditError::AlreadyExists(n)) if n == "a"
        ));
        assert!(matches!(enable_server(&paths, "zz"), Err(EditError::Unknown(_))));
        assert!(matches!(disable_server(&paths, "a"), Err(EditError::NotEnabled(_))));
        assert!(!root.path().join(".toolport").exists(), "a refused edit creates nothing");
        enable_server(&paths, "a")?;
        enable_server(&paths, "a")?;
        let ws: Value = serde_json::from_str(&std::fs::read_to_string(paths.workspace_file())?)?;
        assert_eq!(ws, json!({"enabledMcpServers":["a"]}));
        remove_server(&paths, "a")?;
        let ws: Value = serde_json::from_str(&std::fs::read_to_string(paths.workspace_file())?)?;
        assert_eq!(ws, json!({"enabledMcpServers":[]}));
        assert!(matches!(remove_server(&paths, "a"), Err(EditError::Unknown(_))));
        Ok(())
    }

    #[test]
    fn the_stores_sandbox_default_is_written_into_stdio_servers_added() -> anyhow::Result<()> {
        let home = tempfile::tempdir()?;
        let store = home.path().join("mcp.json");
        std::fs::write(&store, r#"{"defaults":{"sandbox":true,"x-note":1}}"#)?;
        let put = |name: &str, def: Value, choice| put_server(&store, name, &obj(def), false, choice);
        put("a", json!({"command":"x"}), SandboxChoice::StoreDefault)?;
        put("b", json!({"command":"x"}), SandboxChoice::Off)?;
        put("c", json!({"command":"x","sandbox":false}), SandboxChoice::StoreDefault)?;
        put("d", json!({"command":"x","sandbox":{"required":false}}), SandboxChoice::StoreDefault)?;
        put("e", json!({"type":"http","url":"https://h/mcp"}), SandboxChoice::StoreDefault)?;
        add_server(&store, "f", &obj(json!({"command":"x"})))?;
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&store)?)?;
        assert_eq!(
            doc,
            json!({"defaults":{"sandbox":true,"x-note":1},"mcpServers":{
                "a":{"command":"x","type":"stdio","sandbox":true},
                "b":{"command":"x","type":"stdio"},
                "c":{"command":"x","type":"stdio"},
                "d":{"command":"x","sandbox":{"required":false},"type":"stdio"},
                "e":{"type":"streamable_http","url":"https://h/mcp"},
                "f":{"command":"x","type":"stdio","sandbox":true}
            }})
        );
        // Off, only `--sandbox` writes it.
        std::fs::write(&store, "{}")?;
        put("a", json!({"command":"x"}), SandboxChoice::StoreDefault)?;
        put("b", json!({"command":"x"}), SandboxChoice::On)?;
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&store)?)?;
        assert_eq!(
            doc["mcpServers"],
            json!({"a":{"command":"x","type":"stdio"},"b":{"command":"x","type":"stdio","sandbox":true}})
        );
        Ok(())
    }

    #[test]
    fn invalid_definition_is_refused_with_the_validation_message() -> anyhow::Result<()> {
        let home = tempfile::tempdir()?;
        let store = home.path().join("mcp.json");
        let err = add_server(&store, "r", &obj(json!({"type":"sse"}))).err().map(|e| e.to_string());
        assert_eq!(err.as_deref(), Some("invalid MCP server \"r\": sse transport requires url"));
        assert!(!store.exists());
        Ok(())
    }
}
