//! Locked edits of one store entry's grants (`toolport mcp|plugin grant|revoke`): the
//! `grants` of a `type: wasm` server or a sandboxed `stdio` server (`mcpServers.<name>`) or of
//! a plugin (`plugins.<name>`).
//! The entry's `sha256` pin is `pin.rs`'s.
//!
//! Each call is one edit through [`super::sandbox_entry`]: the entry is read from the file as it is
//! under the lock, every item is checked and applied in the order asked, and a single refusal
//! leaves the file untouched. Only the one array or key an item names changes, so unknown keys
//! inside `grants`, inside a folder's object and anywhere else in the entry survive.

use std::path::Path;

use serde_json::{Map, Value};

use super::grant_input::{DirSpec, check_env_name, check_host_pattern, dir_spec, same_path};
use super::grant_items::{GrantChange, GrantItem, GrantOutcome, GrantRequest};
use super::sandbox_entry::{EntryEdit, SandboxEntry, edit_entry};
use crate::config::error::{ConfigError, EditError};
use crate::config::model::{DirGrant, Grants};
use crate::config::store_keys::grants::{self as grant_key, dir as dir_key};

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
            check_host_pattern(pattern)?;
            changes.push(e.grant_listed(grant_key::HOSTS, pattern)?);
        }
        for name in &request.env {
            let name = name.trim();
            check_env_name(name)?;
            changes.push(e.grant_listed(grant_key::ENV, name)?);
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
            changes.push(e.revoke_listed(grant_key::HOSTS, pattern.trim())?);
        }
        for name in &request.env {
            changes.push(e.revoke_listed(grant_key::ENV, name.trim())?);
        }
        Ok(changes)
    })
}

impl EntryEdit<'_> {
    fn grant_dir(&mut self, spec: &DirSpec) -> Result<GrantChange, ConfigError> {
        let found = self.grants()?.dirs.iter().position(|d| same_path(&d.host, &spec.host));
        let Some(index) = found else {
            let list = self.list_mut(grant_key::DIRS)?;
            list.push(if spec.writable {
                let mut m = Map::new();
                m.insert(dir_key::HOST.into(), Value::String(spec.written.clone()));
                m.insert(dir_key::MODE.into(), Value::String("rw".into()));
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
        if let Some(slot) = self.list_mut(grant_key::DIRS)?.get_mut(index) {
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
        self.remove_at(grant_key::DIRS, index)?;
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
            let (word, plural) =
                if key == grant_key::HOSTS { ("host", "hosts") } else { ("env", "env names") };
            let granted = granted.clone();
            return Err(self.not_granted(word, value, plural, &granted));
        };
        let old = granted.remove(index);
        self.remove_at(key, index)?;
        Ok(GrantChange { item: listed_item(key, &old), outcome: GrantOutcome::Revoked })
    }
}

/// The typed list behind `grants.<key>` (`hosts` or `env`).
fn listed<'a>(grants: &'a mut Grants, key: &str) -> &'a mut Vec<String> {
    if key == grant_key::HOSTS { &mut grants.hosts } else { &mut grants.env }
}

fn listed_item(key: &str, value: &str) -> GrantItem {
    if key == grant_key::HOSTS {
        GrantItem::Host(value.to_string())
    } else {
        GrantItem::Env(value.to_string())
    }
}

fn find_listed(granted: &[String], key: &str, value: &str) -> Option<usize> {
    granted
        .iter()
        .position(|g| if key == grant_key::HOSTS { g.eq_ignore_ascii_case(value) } else { g == value })
}

/// A folder entry given the other mode in place: the short form becomes an object for `rw`;
/// an object keeps its `guest` and own keys, and shrinks back to the short form when `ro`
/// leaves it saying no more than a path.
fn set_mode(slot: &mut Value, writable: bool) {
    match slot {
        Value::String(path) if writable => {
            let mut m = Map::new();
            m.insert(dir_key::HOST.into(), Value::String(std::mem::take(path)));
            m.insert(dir_key::MODE.into(), Value::String("rw".into()));
            *slot = Value::Object(m);
        }
        Value::Object(m) => {
            m.insert(dir_key::MODE.into(), Value::String(if writable { "rw" } else { "ro" }.into()));
            if !writable
                && m.keys().all(|k| k == dir_key::HOST || k == dir_key::MODE)
                && let Some(Value::String(host)) = m.get(dir_key::HOST)
            {
                *slot = Value::String(host.clone());
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;
    use crate::config::edit::sandbox_entry::test_store::Store;

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
            "server \"web\" is not sandboxed: run `toolport mcp set web sandbox true` first"
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
    fn a_sandboxed_stdio_server_takes_grants_and_keeps_its_own_keys() -> anyhow::Result<()> {
        let s = Store::new(json!({"mcpServers": {
            "fs": {"command": "npx", "x-own": 1, "sandbox": {"required": false, "x-why": "untrusted"},
                   "grants": {"x-note": "keep"}, "limits": {"processes": 64, "x-limit": 2}},
            "remote": {"type": "http", "url": "https://h/mcp"}
        }}));
        let docs = s.folder("docs");
        let cwd = s.home.path();
        let changes = grant_sandbox(
            &s.path(),
            SandboxEntry::Server("fs"),
            &req(&["docs:rw"], &["https://api.github.com"], &["GITHUB_TOKEN"]),
            cwd,
        )?;
        assert_eq!(
            outcomes(&changes),
            [
                format!("Granted dir {docs} (rw)"),
                "Granted host https://api.github.com".to_string(),
                "Granted env GITHUB_TOKEN".to_string(),
            ]
        );
        assert_eq!(
            s.doc()["mcpServers"]["fs"],
            json!({"command": "npx", "x-own": 1, "sandbox": {"required": false, "x-why": "untrusted"},
                   "grants": {"x-note": "keep", "dirs": [{"host": docs, "mode": "rw"}],
                              "hosts": ["https://api.github.com"], "env": ["GITHUB_TOKEN"]},
                   "limits": {"processes": 64, "x-limit": 2}})
        );
        revoke_sandbox(&s.path(), SandboxEntry::Server("fs"), &req(&["docs"], &[], &["GITHUB_TOKEN"]), cwd)?;
        assert_eq!(
            s.doc()["mcpServers"]["fs"]["grants"],
            json!({"x-note": "keep", "hosts": ["https://api.github.com"]})
        );
        let err = grant_sandbox(&s.path(), SandboxEntry::Server("remote"), &req(&[], &[], &["A"]), cwd)
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some(
                "server \"remote\" is not sandboxed: only wasm servers and stdio servers with \"sandbox\": \
                 true take grants"
            )
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
}
