//! One store entry's sandbox under the store's lock (a `type: wasm` server's, a sandboxed
//! `stdio` server's or a plugin's): found by its trimmed name, read as the store reads it, and
//! edited as JSON and as typed config together, so the grant, revoke and pin edits check what
//! they change against what the store will read. The file is written only when the whole edit
//! succeeds.

use std::path::Path;

use serde_json::{Map, Value};

use super::write::{Doc, edit_store};
use crate::config::error::{ConfigError, EditError};
use crate::config::model::{Grants, PluginDef};
use crate::config::server_def::{ServerDef, TransportKind};
use crate::config::store::plugin_from_json;
use crate::config::store_keys::{GRANTS, PLUGINS_SECTION, SERVERS_SECTION};
use crate::fix_command::sandbox_fix;

/// The store entry an edit is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxEntry<'a> {
    /// `mcpServers.<name>`, which must be a `type: wasm` server or a sandboxed `stdio` one
    /// (grants only: a `stdio` server has no component to pin).
    Server(&'a str),
    /// `plugins.<name>`; its folders are read-only.
    Plugin(&'a str),
}

/// The entry as typed config, read once when the edit starts (reading warns about unknown
/// sandbox keys: once per command is enough) and kept in step with the JSON by every change.
pub(super) enum Parsed {
    Server(Box<ServerDef>),
    Plugin(PluginDef),
}

/// One entry under the lock: its JSON object and its typed reading, changed together.
pub(super) struct EntryEdit<'a> {
    pub(super) obj: &'a mut Map<String, Value>,
    pub(super) parsed: Parsed,
    /// `server "x"` / `plugin "p"`, what every message about the entry starts with.
    pub(super) owner: String,
}

/// Finds the entry under the store's lock, reads it as the store would (a malformed entry is
/// refused, naming the file) and runs `edit` on it; the file is written only if `edit`
/// succeeds and changed something.
pub(super) fn edit_entry<T>(
    store_path: &Path,
    entry: SandboxEntry<'_>,
    edit: impl FnOnce(&mut EntryEdit<'_>) -> Result<T, EditError>,
) -> Result<T, EditError> {
    // Relative paths in the entry mean the store's folder, as when the store is loaded.
    let base = store_path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let (name, section, kind) = match entry {
        SandboxEntry::Server(name) => (name.trim(), SERVERS_SECTION, "server"),
        SandboxEntry::Plugin(name) => (name.trim(), PLUGINS_SECTION, "plugin"),
    };
    edit_store(store_path, |doc| {
        let owner = format!("{kind} \"{name}\"");
        let obj = entry_mut(doc, store_path, section, name, &owner)?.ok_or_else(|| match entry {
            SandboxEntry::Server(_) => ConfigError(format!("Unknown MCP server: {name}")),
            SandboxEntry::Plugin(_) => ConfigError(format!("Unknown plugin: {name}")),
        })?;
        let at = |msg: ConfigError| ConfigError(format!("{}: {msg}", store_path.display()));
        let value = Value::Object(obj.clone());
        let parsed = match entry {
            SandboxEntry::Server(_) => {
                let mut def = ServerDef::from_json(name, &value).map_err(at)?;
                def.resolve_paths(base);
                Parsed::Server(Box::new(def))
            }
            SandboxEntry::Plugin(_) => Parsed::Plugin(plugin_from_json(name, &value, base).map_err(at)?),
        };
        edit(&mut EntryEdit { obj, parsed, owner })
    })
}

/// The entry's object in `section`, matched by trimmed name as the store reads it (the first of
/// two names that trim alike, as loading uses); `None` when there is none.
pub(super) fn entry_mut<'a>(
    doc: &'a mut Doc,
    store_path: &Path,
    section: &str,
    name: &str,
    owner: &str,
) -> Result<Option<&'a mut Map<String, Value>>, ConfigError> {
    let entries = match doc.get_mut(section) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(entries)) => entries,
        Some(_) => {
            return Err(ConfigError(format!("{}: \"{section}\" must be an object", store_path.display())));
        }
    };
    match entries.iter_mut().find(|(k, _)| k.trim() == name) {
        None => Ok(None),
        Some((_, Value::Object(obj))) => Ok(Some(obj)),
        Some(_) => {
            Err(ConfigError(format!("{}: {owner}: definition must be an object", store_path.display())))
        }
    }
}

impl EntryEdit<'_> {
    /// The entry's grants as they are now, folders resolved; a server must be `type: wasm` or a
    /// `stdio` server with `"sandbox": true`. A `stdio` server without is told the command that
    /// sandboxes it, as it runs when pasted.
    pub(super) fn grants(&mut self) -> Result<&mut Grants, ConfigError> {
        let def = match &mut self.parsed {
            Parsed::Plugin(def) => return Ok(&mut def.grants),
            Parsed::Server(def) => def,
        };
        if let Some(wasm) = &mut def.wasm {
            return Ok(&mut wasm.grants);
        }
        if let Some(sandbox) = &mut def.sandbox {
            return Ok(&mut sandbox.grants);
        }
        let owner = &self.owner;
        Err(ConfigError(if def.transport.as_deref() == Some(TransportKind::Stdio.as_str()) {
            format!("{owner} is not sandboxed: run `{}` first", sandbox_fix(&def.name))
        } else {
            format!(
                "{owner} is not sandboxed: only wasm servers and stdio servers with \"sandbox\": true \
                 take grants"
            )
        }))
    }

    /// `grants.<key>` as an array, created (with `grants`) when absent. Its items line up
    /// one to one with the typed list of the same name: the reader turns each into one entry.
    pub(super) fn list_mut(&mut self, key: &str) -> Result<&mut Vec<Value>, ConfigError> {
        let owner = &self.owner;
        let grants = self.obj.entry(GRANTS).or_insert_with(|| Value::Object(Map::new()));
        if grants.is_null() {
            *grants = Value::Object(Map::new());
        }
        let grants = grants
            .as_object_mut()
            .ok_or_else(|| ConfigError(format!("{owner}: \"{GRANTS}\" must be an object")))?;
        let list = grants.entry(key).or_insert_with(|| Value::Array(Vec::new()));
        if list.is_null() {
            *list = Value::Array(Vec::new());
        }
        list.as_array_mut()
            .ok_or_else(|| ConfigError(format!("{owner}: \"{GRANTS}.{key}\" must be an array")))
    }

    /// `server "x": host P is not granted (granted hosts: A, B)` / `(no hosts are granted)`.
    pub(super) fn not_granted(&self, word: &str, value: &str, plural: &str, granted: &[String]) -> EditError {
        let has = if granted.is_empty() {
            format!("no {plural} are granted")
        } else {
            format!("granted {plural}: {}", granted.join(", "))
        };
        EditError::NotGranted(format!("{}: {word} {value} is not granted ({has})", self.owner))
    }

    /// Removes item `index` of `grants.<key>`. A list this leaves empty goes, and `grants` too
    /// if nothing is left in it (keys of the user's own keep it); lists that were empty before
    /// stay as written.
    pub(super) fn remove_at(&mut self, key: &str, index: usize) -> Result<(), ConfigError> {
        let list = self.list_mut(key)?;
        if index < list.len() {
            list.remove(index);
        }
        if !list.is_empty() {
            return Ok(());
        }
        if let Some(Value::Object(grants)) = self.obj.get_mut(GRANTS) {
            grants.shift_remove(key);
            if grants.is_empty() {
                self.obj.shift_remove(GRANTS);
            }
        }
        Ok(())
    }
}

/// A store file in a temporary home, for the edits' tests.
#[cfg(test)]
pub(super) mod test_store {
    use std::path::PathBuf;

    use serde_json::Value;

    pub(in crate::config::edit) struct Store {
        pub(in crate::config::edit) home: tempfile::TempDir,
    }

    impl Store {
        pub(in crate::config::edit) fn new(doc: Value) -> Self {
            let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(home.path().join("mcp.json"), doc.to_string()).unwrap_or_else(|e| panic!("{e}"));
            Self { home }
        }
        pub(in crate::config::edit) fn path(&self) -> PathBuf {
            self.home.path().join("mcp.json")
        }
        pub(in crate::config::edit) fn doc(&self) -> Value {
            let text = std::fs::read_to_string(self.path()).unwrap_or_default();
            serde_json::from_str(&text).unwrap_or_default()
        }
        pub(in crate::config::edit) fn folder(&self, name: &str) -> String {
            let dir = self.home.path().join(name);
            std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
            dir.display().to_string()
        }
    }
}
