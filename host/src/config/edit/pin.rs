//! The `sha256` pin of a store entry's component (`toolport mcp|plugin pin`): the file hashed
//! and its digest written in place, through the same locked entry edit as the grants.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use super::sandbox_entry::{Parsed, SandboxEntry, edit_entry};
use crate::config::error::{ConfigError, EditError};
use crate::config::store_keys::SHA256;

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
                        "{} is not a wasm server: only a wasm server has a component to pin",
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
        e.obj.insert(SHA256.into(), Value::String(sha256.clone()));
        Ok(Pinned { file, sha256, previous })
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::config::edit::sandbox_entry::test_store::Store;

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
            "server \"web\" is not a wasm server: only a wasm server has a component to pin"
        );
        assert!(matches!(pin_component(&s.path(), SandboxEntry::Plugin("shape")), Err(EditError::Io(_))));
        assert!(err(SandboxEntry::Plugin("shape")).starts_with("cannot read /nonexistent/shape.wasm: "));
        Ok(())
    }
}
