//! Locked edits of one store entry's sandbox (`toolport mcp|plugin grant|revoke|pin`): the
//! `grants` of a `type: wasm` server (`mcpServers.<name>`) or of a plugin (`plugins.<name>`),
//! and the entry's `sha256` pin.
//!
//! Each call is one edit through [`super::write`]: the entry is read from the file as it is
//! under the lock, every item is checked and applied in the order asked, and a single refusal
//! leaves the file untouched. Only the one array or key an item names changes, so unknown keys
//! inside `grants`, inside a folder's object and anywhere else in the entry survive.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use super::grant_input::{DirSpec, check_env_name, check_host_pattern, dir_spec, same_path};
use super::write::{Doc, edit_store};
use crate::config::error::{ConfigError, EditError};
use crate::config::model::{DirGrant, Grants, PluginDef};
use crate::config::server_def::ServerDef;
use crate::config::store::plugin_from_json;

/// The store entry an edit is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxEntry<'a> {
    /// `mcpServers.<name>`, which must be a `type: wasm` server.
    Server(&'a str),
    /// `plugins.<name>`; its folders are read-only.
    Plugin(&'a str),
}

/// What to grant or revoke, as typed: folders as `PATH[:ro|:rw]` (relative ones against the
/// caller's folder), host patterns, environment variable names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrantRequest {
    /// `--dir`.
    pub dirs: Vec<String>,
    /// `--host`.
    pub hosts: Vec<String>,
    /// `--env`.
    pub env: Vec<String>,
}

impl GrantRequest {
    /// Nothing asked for.
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty() && self.hosts.is_empty() && self.env.is_empty()
    }
}

/// One granted thing, as the file holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantItem {
    /// A folder: its path as written, where the guest sees it if elsewhere, and its mode.
    Dir {
        /// `host` as the file has it (`~/notes`, `/srv/data`).
        path: String,
        /// `guest`, when the entry sets one.
        guest: Option<String>,
        /// `mode: "rw"`.
        writable: bool,
    },
    /// A `scheme://host:port` pattern.
    Host(String),
    /// An environment variable name (its value is never read here).
    Env(String),
}

impl fmt::Display for GrantItem {
    /// `dir /srv/data (rw)`, `dir ~/n -> /notes (ro)`, `host http://127.0.0.1:*`, `env TOKEN`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Dir { path, guest, writable } => {
                write!(f, "dir {path}")?;
                if let Some(guest) = guest {
                    write!(f, " -> {guest}")?;
                }
                write!(f, " ({})", if *writable { "rw" } else { "ro" })
            }
            Self::Host(pattern) => write!(f, "host {pattern}"),
            Self::Env(name) => write!(f, "env {name}"),
        }
    }
}

/// What happened to one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantOutcome {
    /// Added.
    Granted,
    /// It was there already (with this mode): nothing changed.
    AlreadyGranted,
    /// A folder already granted with the other mode now has the one asked for.
    ModeChanged,
    /// Removed.
    Revoked,
}

/// One item's outcome, in the order the request asked for them (folders, hosts, env).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantChange {
    /// The item as the file holds it after the edit (a revoked one: as it was).
    pub item: GrantItem,
    /// What happened to it.
    pub outcome: GrantOutcome,
}

/// A pin written by [`pin_component`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    /// The component file that was hashed.
    pub file: PathBuf,
    /// Its SHA-256, lower-case hex, now the entry's `sha256`.
    pub sha256: String,
    /// The pin it replaced, if there was one.
    pub previous: Option<String>,
}

/// Adds folders, host patterns and environment variable names to the entry's `grants`.
/// A folder must exist; `PATH` is made absolute against `cwd` unless it starts with `~`
/// (kept as typed). Something already granted is reported as such and left alone; a folder
/// granted with the other mode gets the new one, keeping its `guest` and any keys of its own.
pub fn grant_sandbox(
    store_path: &Path,
    entry: SandboxEntry<'_>,
    request: &GrantRequest,
    cwd: &Path,
) -> Result<Vec<GrantChange>, EditError> {
    edit_entry(store_path, entry, |e| {
        e.grants()?;
        let mut changes = Vec::new();
        for text in &request.dirs {
            let spec = dir_spec(text, cwd)?;
            if spec.writable && matches!(entry, SandboxEntry::Plugin(_)) {
                return Err(ConfigError(format!(
                    "{}: cannot grant {} read-write: plugins get read-only folders",
                    e.owner, spec.written
                ))
                .into());
            }
            spec.check_exists()?;
            changes.push(e.grant_dir(&spec)?);
        }
        for pattern in &request.hosts {
            let pattern = pattern.trim();
            check_host_pattern(pattern).map_err(ConfigError)?;
            changes.push(e.grant_listed("hosts", pattern)?);
        }
        for name in &request.env {
            let name = name.trim();
            check_env_name(name)?;
            changes.push(e.grant_listed("env", name)?);
        }
        Ok(changes)
    })
}

/// Removes folders, host patterns and environment variable names from the entry's `grants`.
/// A folder is matched by the folder it means (`PATH` read as for a grant; a `:ro`/`:rw` on
/// it is ignored), so it can be revoked after it is gone. Revoking anything not granted
/// refuses the whole edit, naming what is granted.
pub fn revoke_sandbox(
    store_path: &Path,
    entry: SandboxEntry<'_>,
    request: &GrantRequest,
    cwd: &Path,
) -> Result<Vec<GrantChange>, EditError> {
    edit_entry(store_path, entry, |e| {
        e.grants()?;
        let mut changes = Vec::new();
        for text in &request.dirs {
            changes.push(e.revoke_dir(&dir_spec(text, cwd)?)?);
        }
        for pattern in &request.hosts {
            changes.push(e.revoke_listed("hosts", pattern.trim())?);
        }
        for name in &request.env {
            changes.push(e.revoke_listed("env", name.trim())?);
        }
        Ok(changes)
    })
}

/// Writes the SHA-256 of the entry's component as its `sha256`: a server's `component`
/// (resolved against the store's folder) or a plugin's `path`. From then on a component that
/// differs is refused at load. A built-in server has nothing to pin: it is part of the binary.
pub fn pin_component(store_path: &Path, entry: SandboxEntry<'_>) -> Result<Pinned, EditError> {
    edit_entry(store_path, entry, |e| {
        let (file, previous) = match &e.parsed {
            Parsed::Plugin(def) => (def.path.clone(), def.sha256.clone()),
            Parsed::Server(def) => {
                let wasm = def.wasm.as_ref().ok_or_else(|| {
                    ConfigError(format!(
                        "{} is not a wasm server: only sandboxed servers can be pinned",
                        e.owner
                    ))
                })?;
                if wasm.builtin.is_some() {
                    return Err(ConfigError(format!(
                        "{} is built in: its component is part of the toolport binary",
                        e.owner
                    ))
                    .into());
                }
                let file = wasm.component_path.clone().ok_or_else(|| {
                    ConfigError(format!("{}: wasm server requires component or builtin", e.owner))
                })?;
                (file, wasm.sha256.clone())
            }
        };
        let bytes = std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
        let sha256 = hex::encode(Sha256::digest(&bytes));
        e.obj.insert("sha256".into(), Value::String(sha256.clone()));
        Ok(Pinned { file, sha256, previous })
    })
}

/// The entry as typed config, read once when the edit starts (reading warns about unknown
/// sandbox keys: once per command is enough) and kept in step with the JSON by every change.
enum Parsed {
    Server(Box<ServerDef>),
    Plugin(PluginDef),
}

/// One entry under the lock: its JSON object and its typed reading, changed together.
struct EntryEdit<'a> {
    obj: &'a mut Map<String, Value>,
    parsed: Parsed,
    /// `server "x"` / `plugin "p"`, what every message about the entry starts with.
    owner: String,
}

/// Finds the entry under the store's lock, reads it as the store would (a malformed entry is
/// refused, naming the file) and runs `edit` on it; the file is written only if `edit`
/// succeeds and changed something.
fn edit_entry<T>(
    store_path: &Path,
    entry: SandboxEntry<'_>,
    edit: impl FnOnce(&mut EntryEdit<'_>) -> Result<T, EditError>,
) -> Result<T, EditError> {
    // Relative paths in the entry mean the store's folder, as when the store is loaded.
    let base = store_path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let (name, section, kind) = match entry {
        SandboxEntry::Server(name) => (name.trim(), "mcpServers", "server"),
        SandboxEntry::Plugin(name) => (name.trim(), "plugins", "plugin"),
    };
    edit_store(store_path, |doc| {
        let owner = format!("{kind} \"{name}\"");
        let obj = entry_mut(doc, store_path, section, name, &owner)?.ok_or_else(|| match entry {
            SandboxEntry::Server(_) => ConfigError(format!("Unknown MCP server: {name}")),
            SandboxEntry::Plugin(_) => ConfigError(format!("Unknown plugin: {name}")),
        })?;
        let at = |msg: String| ConfigError(format!("{}: {msg}", store_path.display()));
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
fn entry_mut<'a>(
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
    /// The entry's grants as they are now, folders resolved; a server must be `type: wasm`.
    fn grants(&mut self) -> Result<&mut Grants, ConfigError> {
        match &mut self.parsed {
            Parsed::Plugin(def) => Ok(&mut def.grants),
            Parsed::Server(def) => def.wasm.as_mut().map(|w| &mut w.grants).ok_or_else(|| {
                ConfigError(format!(
                    "{} is not a wasm server: only sandboxed servers take grants",
                    self.owner
                ))
            }),
        }
    }

    /// `grants.<key>` as an array, created (with `grants`) when absent. Its items line up
    /// one to one with the typed list of the same name: the reader turns each into one entry.
    fn list_mut(&mut self, key: &str) -> Result<&mut Vec<Value>, ConfigError> {
        let owner = &self.owner;
        let grants = self.obj.entry("grants").or_insert_with(|| Value::Object(Map::new()));
        if grants.is_null() {
            *grants = Value::Object(Map::new());
        }
        let grants = grants
            .as_object_mut()
            .ok_or_else(|| ConfigError(format!("{owner}: \"grants\" must be an object")))?;
        let list = grants.entry(key).or_insert_with(|| Value::Array(Vec::new()));
        if list.is_null() {
            *list = Value::Array(Vec::new());
        }
        list.as_array_mut().ok_or_else(|| ConfigError(format!("{owner}: \"grants.{key}\" must be an array")))
    }

    fn grant_dir(&mut self, spec: &DirSpec) -> Result<GrantChange, ConfigError> {
        let found = self.grants()?.dirs.iter().position(|d| same_path(&d.host, &spec.host));
        let Some(index) = found else {
            let list = self.list_mut("dirs")?;
            list.push(if spec.writable {
                let mut m = Map::new();
                m.insert("host".into(), Value::String(spec.written.clone()));
                m.insert("mode".into(), Value::String("rw".into()));
                Value::Object(m)
            } else {
                Value::String(spec.written.clone())
            });
            self.grants()?.dirs.push(DirGrant {
                written: spec.written.clone(),
                host: spec.host.clone(),
                guest: None,
                writable: spec.writable,
            });
            let item = GrantItem::Dir { path: spec.written.clone(), guest: None, writable: spec.writable };
            return Ok(GrantChange { item, outcome: GrantOutcome::Granted });
        };
        let old = &mut self.grants()?.dirs[index];
        let already = old.writable == spec.writable;
        old.writable = spec.writable;
        let item =
            GrantItem::Dir { path: old.written.clone(), guest: old.guest.clone(), writable: spec.writable };
        if already {
            return Ok(GrantChange { item, outcome: GrantOutcome::AlreadyGranted });
        }
        if let Some(slot) = self.list_mut("dirs")?.get_mut(index) {
            set_mode(slot, spec.writable);
        }
        Ok(GrantChange { item, outcome: GrantOutcome::ModeChanged })
    }

    fn revoke_dir(&mut self, spec: &DirSpec) -> Result<GrantChange, EditError> {
        let dirs = &self.grants()?.dirs;
        let Some(index) = dirs.iter().position(|d| same_path(&d.host, &spec.host)) else {
            let granted: Vec<String> = dirs.iter().map(|d| format!("{} ({})", d.written, d.mode())).collect();
            return Err(self.not_granted("dir", &spec.written, "dirs", &granted));
        };
        let old = self.grants()?.dirs.remove(index);
        let item = GrantItem::Dir { path: old.written, guest: old.guest, writable: old.writable };
        self.remove_at("dirs", index)?;
        Ok(GrantChange { item, outcome: GrantOutcome::Revoked })
    }

    /// A host pattern (`key` = `hosts`, compared without case, as the sandbox matches them) or an
    /// env name (`env`, exact).
    fn grant_listed(&mut self, key: &str, value: &str) -> Result<GrantChange, ConfigError> {
        let item = listed_item(key, value);
        let granted = listed(self.grants()?, key);
        if find_listed(granted, key, value).is_some() {
            return Ok(GrantChange { item, outcome: GrantOutcome::AlreadyGranted });
        }
        granted.push(value.to_string());
        self.list_mut(key)?.push(Value::String(value.to_string()));
        Ok(GrantChange { item, outcome: GrantOutcome::Granted })
    }

    fn revoke_listed(&mut self, key: &str, value: &str) -> Result<GrantChange, EditError> {
        let granted = listed(self.grants()?, key);
        let Some(index) = find_listed(granted, key, value) else {
            let (word, plural) = if key == "hosts" { ("host", "hosts") } else { ("env", "env names") };
            let granted = granted.clone();
            return Err(self.not_granted(word, value, plural, &granted));
        };
        let old = granted.remove(index);
        self.remove_at(key, index)?;
        Ok(GrantChange { item: listed_item(key, &old), outcome: GrantOutcome::Revoked })
    }

    /// `server "x": host P is not granted (granted hosts: A, B)` / `(no hosts are granted)`.
    fn not_granted(&self, word: &str, value: &str, plural: &str, granted: &[String]) -> EditError {
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
    fn remove_at(&mut self, key: &str, index: usize) -> Result<(), ConfigError> {
        let list = self.list_mut(key)?;
        if index < list.len() {
            list.remove(index);
        }
        if !list.is_empty() {
            return Ok(());
        }
        if let Some(Value::Object(grants)) = self.obj.get_mut("grants") {
            grants.shift_remove(key);
            if grants.is_empty() {
                self.obj.shift_remove("grants");
            }
        }
        Ok(())
    }
}

/// The typed list behind `grants.<key>` (`hosts` or `env`).
fn listed<'a>(grants: &'a mut Grants, key: &str) -> &'a mut Vec<String> {
    if key == "hosts" { &mut grants.hosts } else { &mut grants.env }
}

fn listed_item(key: &str, value: &str) -> GrantItem {
    if key == "hosts" { GrantItem::Host(value.to_string()) } else { GrantItem::Env(value.to_string()) }
}

fn find_listed(granted: &[String], key: &str, value: &str) -> Option<usize> {
    granted.iter().position(|g| if key == "hosts" { g.eq_ignore_ascii_case(value) } else { g == value })
}

/// A folder entry given the other mode in place: the short form becomes an object for `rw`;
/// an object keeps its `guest` and own keys, and shrinks back to the short form when `ro`
/// leaves it saying no more than a path.
fn set_mode(slot: &mut Value, writable: bool) {
    match slot {
        Value::String(path) if writable => {
            let mut m = Map::new();
            m.insert("host".into(), Value::String(std::mem::take(path)));
            m.insert("mode".into(), Value::String("rw".into()));
            *slot = Value::Object(m);
        }
        Value::Object(m) => {
            m.insert("mode".into(), Value::String(if writable { "rw" } else { "ro" }.into()));
            if !writable
                && m.keys().all(|k| k == "host" || k == "mode")
                && let Some(Value::String(host)) = m.get("host")
            {
                *slot = Value::String(host.clone());
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    struct Store {
        home: tempfile::TempDir,
    }

    impl Store {
        fn new(doc: Value) -> Self {
            let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(home.path().join("mcp.json"), doc.to_string()).unwrap_or_else(|e| panic!("{e}"));
            Self { home }
        }
        fn path(&self) -> PathBuf {
            self.home.path().join("mcp.json")
        }
        fn doc(&self) -> Value {
            let text = std::fs::read_to_string(self.path()).unwrap_or_default();
            serde_json::from_str(&text).unwrap_or_default()
        }
        fn folder(&self, name: &str) -> String {
            let dir = self.home.path().join(name);
            std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
            dir.display().to_string()
        }
    }

    fn req(dirs: &[&str], hosts: &[&str], env: &[&str]) -> GrantRequest {
        let v = |s: &[&str]| s.iter().map(|s| s.to_string()).collect();
        GrantRequest { dirs: v(dirs), hosts: v(hosts), env: v(env) }
    }

    fn wasm_store() -> Store {
        Store::new(json!({"x-top": 1, "mcpServers": {
            "notes": {"type": "wasm", "component": "notes.wasm", "x-own": true,
                      "grants": {"x-note": "keep", "hosts": ["http://a:1"]}},
            "web": {"command": "npx"}
        }, "plugins": {"shape": {"kind": "tool-shape", "path": "shape.wasm"}}}))
    }

    fn outcomes(changes: &[GrantChange]) -> Vec<String> {
        changes.iter().map(|c| format!("{:?} {}", c.outcome, c.item)).collect()
    }

    #[test]
    fn grants_of_each_kind_are_added_once_and_unknown_keys_survive() -> anyhow::Result<()> {
        let s = wasm_store();
        let notes = s.folder("n");
        let cwd = s.home.path();
        let asked = req(&["n:rw", "n"], &["HTTP://A:1", "tcp://127.0.0.1:*"], &["TOKEN", "TOKEN"]);
        let changes = grant_sandbox(&s.path(), SandboxEntry::Server(" notes "), &asked, cwd)?;
        assert_eq!(
            outcomes(&changes),
            [
                format!("Granted dir {notes} (rw)"),
                format!("ModeChanged dir {notes} (ro)"),
                "AlreadyGranted host HTTP://A:1".to_string(),
                "Granted host tcp://127.0.0.1:*".to_string(),
                "Granted env TOKEN".to_string(),
                "AlreadyGranted env TOKEN".to_string(),
            ]
        );
        let doc = s.doc();
        assert_eq!(doc["x-top"], 1);
        assert_eq!(doc["mcpServers"]["notes"]["x-own"], true);
        assert_eq!(
            doc["mcpServers"]["notes"]["grants"],
            json!({"x-note": "keep", "hosts": ["http://a:1", "tcp://127.0.0.1:*"], "dirs": [notes], "env": ["TOKEN"]})
        );
        Ok(())
    }

    #[test]
    fn a_mode_change_keeps_the_folders_guest_and_own_keys() -> anyhow::Result<()> {
        let s = wasm_store();
        let notes = s.folder("n");
        let mut doc = s.doc();
        doc["mcpServers"]["notes"]["grants"]["dirs"] =
            json!([{"host": "n", "guest": "/notes", "x-why": "docs"}]);
        std::fs::write(s.path(), doc.to_string())?;
        let changes = grant_sandbox(
            &s.path(),
            SandboxEntry::Server("notes"),
            &req(&[&notes], &[], &[]),
            Path::new("/"),
        )?;
        assert_eq!(outcomes(&changes), ["AlreadyGranted dir n -> /notes (ro)"]);
        let changes = grant_sandbox(
            &s.path(),
            SandboxEntry::Server("notes"),
            &req(&[&format!("{notes}:rw")], &[], &[]),
            Path::new("/"),
        )?;
        assert_eq!(outcomes(&changes), ["ModeChanged dir n -> /notes (rw)"]);
        assert_eq!(
            s.doc()["mcpServers"]["notes"]["grants"]["dirs"],
            json!([{"host": "n", "guest": "/notes", "x-why": "docs", "mode": "rw"}])
        );
        Ok(())
    }

    #[test]
    fn revokes_remove_exactly_what_they_name_and_refuse_what_is_not_granted() -> anyhow::Result<()> {
        let s = wasm_store();
        let notes = s.folder("n");
        let cwd = s.home.path();
        grant_sandbox(&s.path(), SandboxEntry::Server("notes"), &req(&["n:rw"], &[], &["A", "B"]), cwd)?;
        let before = std::fs::read(s.path())?;
        let err =
            revoke_sandbox(&s.path(), SandboxEntry::Server("notes"), &req(&["n"], &["http://b:1"], &[]), cwd)
                .err()
                .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("server \"notes\": host http://b:1 is not granted (granted hosts: http://a:1)")
        );
        assert_eq!(std::fs::read(s.path())?, before, "a refused revoke writes nothing");
        let changes = revoke_sandbox(
            &s.path(),
            SandboxEntry::Server("notes"),
            &req(&["n:ro"], &["http://A:1"], &["A"]),
            cwd,
        )?;
        assert_eq!(
            outcomes(&changes),
            [format!("Revoked dir {notes} (rw)"), "Revoked host http://a:1".into(), "Revoked env A".into()]
        );
        assert_eq!(s.doc()["mcpServers"]["notes"]["grants"], json!({"x-note": "keep", "env": ["B"]}));
        let err = revoke_sandbox(&s.path(), SandboxEntry::Server("notes"), &req(&["gone"], &[], &[]), cwd)
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err,
            Some(format!(
                "server \"notes\": dir {} is not granted (no dirs are granted)",
                s.home.path().join("gone").display()
            ))
        );
        assert!(matches!(
            revoke_sandbox(&s.path(), SandboxEntry::Server("notes"), &req(&[], &[], &["Z"]), cwd),
            Err(EditError::NotGranted(m)) if m.ends_with("(granted env names: B)")
        ));
        Ok(())
    }

    #[test]
    fn a_revoke_keeps_key_order_and_lists_that_were_empty_before() -> anyhow::Result<()> {
        let s = Store::new(json!({"plugins": {"p": {"kind": "tool-shape", "path": "p.wasm",
            "grants": {"hosts": [], "env": ["A"], "x": 1}, "limits": {"callMs": 9}}}}));
        revoke_sandbox(&s.path(), SandboxEntry::Plugin("p"), &req(&[], &[], &["A"]), Path::new("/"))?;
        let text = std::fs::read_to_string(s.path())?;
        let entry = serde_json::to_string(&s.doc()["plugins"]["p"])?;
        assert_eq!(
            entry,
            r#"{"kind":"tool-shape","path":"p.wasm","grants":{"hosts":[],"x":1},"limits":{"callMs":9}}"#,
            "{text}"
        );
        Ok(())
    }

    #[test]
    fn refusals_name_the_entry_and_write_nothing() -> anyhow::Result<()> {
        let s = wasm_store();
        s.folder("n");
        let cwd = s.home.path();
        let before = std::fs::read(s.path())?;
        let refused = |entry: SandboxEntry<'_>, asked: GrantRequest| {
            grant_sandbox(&s.path(), entry, &asked, cwd).err().map(|e| e.to_string()).unwrap_or_default()
        };
        assert_eq!(
            refused(SandboxEntry::Server("web"), req(&[], &[], &["A"])),
            "server \"web\" is not a wasm server: only sandboxed servers take grants"
        );
        assert_eq!(refused(SandboxEntry::Server("nope"), req(&[], &[], &["A"])), "Unknown MCP server: nope");
        assert_eq!(refused(SandboxEntry::Plugin("nope"), req(&[], &[], &["A"])), "Unknown plugin: nope");
        assert_eq!(
            refused(SandboxEntry::Plugin("shape"), req(&["n:rw"], &[], &[])),
            format!(
                "plugin \"shape\": cannot grant {} read-write: plugins get read-only folders",
                s.home.path().join("n").display()
            )
        );
        assert_eq!(
            refused(SandboxEntry::Server("notes"), req(&["n", "missing"], &[], &[])),
            format!("cannot grant {}: no such folder", s.home.path().join("missing").display())
        );
        assert!(
            refused(SandboxEntry::Server("notes"), req(&[], &["tcp://x"], &[])).starts_with("bad host grant")
        );
        assert!(refused(SandboxEntry::Server("notes"), req(&[], &[], &["1X"])).starts_with("bad env grant"));
        assert_eq!(std::fs::read(s.path())?, before);
        // A plugin takes read-only folders, hosts and env like a server.
        let changes =
            grant_sandbox(&s.path(), SandboxEntry::Plugin("shape"), &req(&["n:ro"], &[], &["K"]), cwd)?;
        assert_eq!(changes.len(), 2);
        assert_eq!(
            s.doc()["plugins"]["shape"]["grants"],
            json!({"dirs": [s.home.path().join("n")], "env": ["K"]})
        );
        Ok(())
    }

    #[test]
    fn a_home_folder_is_kept_as_typed_and_matched_by_what_it_means() -> anyhow::Result<()> {
        let Some(home) = std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_dir()) else {
            return Ok(());
        };
        let s = wasm_store();
        let changes =
            grant_sandbox(&s.path(), SandboxEntry::Server("notes"), &req(&["~"], &[], &[]), Path::new("/"))?;
        assert_eq!(outcomes(&changes), ["Granted dir ~ (ro)"]);
        assert_eq!(s.doc()["mcpServers"]["notes"]["grants"]["dirs"], json!(["~"]));
        let home = home.display().to_string();
        let changes = revoke_sandbox(
            &s.path(),
            SandboxEntry::Server("notes"),
            &req(&[&home], &[], &[]),
            Path::new("/"),
        )?;
        assert_eq!(outcomes(&changes), ["Revoked dir ~ (ro)"]);
        Ok(())
    }

    #[test]
    fn pins_hash_the_component_and_refuse_builtins() -> anyhow::Result<()> {
        let s = Store::new(json!({"mcpServers": {
            "notes": {"component": "c/notes.wasm", "sha256": "AB".repeat(32), "x": 1},
            "files": {"type": "wasm", "builtin": "files"},
            "web": {"command": "npx"}
        }, "plugins": {"shape": {"kind": "tool-shape", "path": "/nonexistent/shape.wasm"}}}));
        std::fs::create_dir(s.home.path().join("c"))?;
        std::fs::write(s.home.path().join("c/notes.wasm"), b"component bytes")?;
        let pinned = pin_component(&s.path(), SandboxEntry::Server("notes"))?;
        let digest = hex::encode(Sha256::digest(b"component bytes"));
        assert_eq!(pinned.sha256, digest);
        assert_eq!(pinned.previous, Some("ab".repeat(32)));
        assert_eq!(pinned.file, s.home.path().join("c/notes.wasm"));
        assert_eq!(
            Value::Object(s.doc()["mcpServers"]["notes"].as_object().cloned().unwrap_or_default()),
            json!({"component": "c/notes.wasm", "sha256": digest, "x": 1})
        );
        let err = |entry| pin_component(&s.path(), entry).err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(
            err(SandboxEntry::Server("files")),
            "server \"files\" is built in: its component is part of the toolport binary"
        );
        assert_eq!(
            err(SandboxEntry::Server("web")),
            "server \"web\" is not a wasm server: only sandboxed servers can be pinned"
        );
        assert!(matches!(pin_component(&s.path(), SandboxEntry::Plugin("shape")), Err(EditError::Io(_))));
        assert!(err(SandboxEntry::Plugin("shape")).starts_with("cannot read /nonexistent/shape.wasm: "));
        Ok(())
    }
}
