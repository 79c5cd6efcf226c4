//! The store's `defaults` set under its lock (`toolport mcp default sandbox on|off`): one key of
//! the top-level `defaults` object, everything else in it and in the file kept. A default only
//! changes what `put_server` writes into servers added later; nothing already in the store moves.

use std::path::Path;

use serde_json::{Map, Value};

use super::write::edit_store;
use crate::config::error::{ConfigError, EditError};
use crate::config::store::GlobalStore;
use crate::config::store_keys::{DEFAULTS_SECTION, defaults as default_key};

/// Sets `defaults.sandbox` to `on` and returns what it was (absent is off). Setting what is
/// already there writes nothing.
pub fn set_default_sandbox(store_path: &Path, on: bool) -> Result<bool, EditError> {
    edit_store(store_path, |doc| {
        // Read as the store is read, so a malformed `defaults` is refused naming the file.
        let old = GlobalStore::from_value(store_path, &Value::Object(doc.clone()))?.defaults.sandbox;
        let defaults = doc.entry(DEFAULTS_SECTION).or_insert_with(|| Value::Object(Map::new()));
        if defaults.is_null() {
            *defaults = Value::Object(Map::new());
        }
        let defaults = defaults.as_object_mut().ok_or_else(|| {
            ConfigError(format!("{}: \"{DEFAULTS_SECTION}\" must be an object", store_path.display()))
        })?;
        if defaults.get(default_key::SANDBOX) != Some(&Value::Bool(on)) {
            defaults.insert(default_key::SANDBOX.into(), Value::Bool(on));
        }
        Ok(old)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::config::edit::sandbox_entry::test_store::Store;

    #[test]
    fn the_default_is_set_beside_the_rest_of_the_file() -> anyhow::Result<()> {
        let s = Store::new(
            json!({"x-top": 1, "defaults": {"x-note": "mine"}, "mcpServers": {"a": {"command": "x"}}}),
        );
        assert!(!set_default_sandbox(&s.path(), true)?);
        assert_eq!(
            s.doc(),
            json!({"x-top": 1, "defaults": {"x-note": "mine", "sandbox": true},
                   "mcpServers": {"a": {"command": "x"}}})
        );
        let inode = || std::fs::metadata(s.path()).map(|m| std::os::unix::fs::MetadataExt::ino(&m));
        let before = inode()?;
        assert!(set_default_sandbox(&s.path(), true)?);
        assert_eq!(inode()?, before, "the same again writes nothing (a write renames a new file in)");
        assert!(set_default_sandbox(&s.path(), false)?);
        assert_eq!(s.doc()["defaults"], json!({"x-note": "mine", "sandbox": false}));
        let fresh = Store::new(json!({}));
        assert!(!set_default_sandbox(&fresh.path(), true)?);
        assert_eq!(fresh.doc(), json!({"defaults": {"sandbox": true}}));
        Ok(())
    }

    #[test]
    fn a_malformed_default_is_refused_naming_the_file() -> anyhow::Result<()> {
        let s = Store::new(json!({"defaults": {"sandbox": "yes"}}));
        let err = set_default_sandbox(&s.path(), true).err().map(|e| e.to_string());
        assert_eq!(err, Some(format!("{}: \"defaults.sandbox\" must be true or false", s.path().display())));
        Ok(())
    }
}
