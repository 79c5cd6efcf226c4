//! The JSON clients' files (Claude Code, Claude Desktop, Gemini CLI, Cursor, VS Code), edited
//! through `jsonc-parser`'s concrete syntax tree rather than re-serialised: an install changes
//! the one entry it adds, and every other byte (other keys, their order, indentation, and in
//! VS Code's JSONC the comments and trailing commas, in Gemini's the comments) stays as the user
//! wrote it. The tree adds a trailing comma only where the object already uses them, so a file
//! that has none (every file but VS Code's, which toolport refuses otherwise) never gets one.

use std::path::Path;

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstRootNode};
use serde_json::{Map, Value};

use super::client::{EntryEdit, InstallOutcome};
use toolport::ConfigError;

/// A client's file parsed for editing.
pub(crate) struct JsonFile {
    root: CstRootNode,
    /// The file did not exist or was blank: it gets a final newline the tree does not add.
    fresh: bool,
}

/// Which of JSON's relaxations a client's file may use: the ones the client itself reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dialect {
    pub comments: bool,
    pub trailing_commas: bool,
}

/// Parses `text` (`None`: a missing file, which starts as `{}`). `dialect` allows comments
/// and trailing commas, nothing looser: a client that reads strict JSON would refuse the rest.
/// A syntax error reads `<path>:<line>:<col>: <what>`; the top level must be an object.
pub(crate) fn parse(path: &Path, text: Option<&str>, dialect: Dialect) -> Result<JsonFile, ConfigError> {
    let text = text.unwrap_or_default();
    if !dialect.comments {
        // The syntax tree keeps comments whatever the options say: strict files are checked
        // by serde_json first, with the same message toolport's own store gets.
        toolport::edit::parse_json(path, text)?;
    }
    let options = ParseOptions {
        allow_comments: dialect.comments,
        allow_trailing_commas: dialect.trailing_commas,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    };
    let root = CstRootNode::parse(text, &options).map_err(|e| {
        ConfigError(format!("{}:{}:{}: {}", path.display(), e.line_display(), e.column_display(), e.kind()))
    })?;
    if root.value().is_some_and(|v| v.as_object().is_none()) {
        return Err(ConfigError(format!("{}: the top level must be a JSON object", path.display())));
    }
    Ok(JsonFile { root, fresh: text.trim().is_empty() })
}

impl JsonFile {
    /// The servers' object at `keys` (`["mcpServers"]`, or `["projects", root, "mcpServers"]`),
    /// as plain JSON (comments dropped): what an import reads. A missing key on the way is no
    /// servers.
    pub(crate) fn servers(&self, path: &Path, keys: &[String]) -> Result<Map<String, Value>, ConfigError> {
        let mut value = self.root.value().and_then(|v| v.to_serde_value()).unwrap_or(Value::Null);
        for (i, key) in keys.iter().enumerate() {
            value = match value {
                Value::Object(mut m) => m.remove(key).unwrap_or(Value::Null),
                Value::Null => Value::Null,
                _ => return Err(must_be_object(path, &keys[..i])),
            };
        }
        match value {
            Value::Null => Ok(Map::new()),
            Value::Object(m) => Ok(m),
            _ => Err(must_be_object(path, keys)),
        }
    }

    /// Puts `entry` at `keys`.`name`: appended when absent, left alone when it already starts
    /// toolport as wanted, changed only with `force` — and then only in the keys toolport
    /// writes ([`EntryEdit`]): the user's own keys in that entry stay, in place.
    pub(crate) fn put_server(
        &mut self,
        path: &Path,
        keys: &[String],
        name: &str,
        entry: &Map<String, Value>,
        force: bool,
    ) -> Result<InstallOutcome, ConfigError> {
        let mut servers = self.root.object_value_or_set();
        for (i, key) in keys.iter().enumerate() {
            servers = servers.object_value_or_create(key).ok_or_else(|| must_be_object(path, &keys[..=i]))?;
        }
        let Some(prop) = servers.get(name) else {
            servers.append(name, input(&Value::Object(entry.clone())));
            return Ok(InstallOutcome::Added);
        };
        let Some(old) = prop.value().and_then(|v| v.as_object()) else {
            // Not an object: nothing of the user's to keep.
            if !force {
                return Ok(InstallOutcome::Conflict);
            }
            prop.set_value(input(&Value::Object(entry.clone())));
            return Ok(InstallOutcome::Replaced);
        };
        let existing = match old.to_serde_value() {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        // `Value`'s equality ignores key order: a hand-reordered entry is still ours.
        let edit = EntryEdit::plan(&existing, entry);
        if edit.is_empty() {
            return Ok(InstallOutcome::Unchanged);
        }
        if !force {
            return Ok(InstallOutcome::Conflict);
        }
        for key in &edit.remove {
            if let Some(p) = old.get(key) {
                p.remove();
            }
        }
        for (key, value) in &edit.set {
            match old.get(key) {
                Some(p) => p.set_value(input(value)),
                None => {
                    old.append(key, input(value));
                }
            }
        }
        Ok(InstallOutcome::Replaced)
    }

    /// The file's new text.
    pub(crate) fn render(&self) -> Vec<u8> {
        let mut text = self.root.to_string();
        if self.fresh && !text.ends_with('\n') {
            text.push('\n');
        }
        text.into_bytes()
    }
}

/// `keys` joined with dots (`projects./w.mcpServers`), the way a reader finds the value.
fn must_be_object(path: &Path, keys: &[String]) -> ConfigError {
    ConfigError(format!("{}: \"{}\" must be an object", path.display(), keys.join(".")))
}

/// A JSON value as the syntax tree's input type.
fn input(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(input).collect()),
        Value::Object(m) => CstInputValue::Object(m.iter().map(|(k, v)| (k.clone(), input(v))).collect()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn entry() -> Map<String, Value> {
        json!({"command": "/bin/toolport", "args": ["serve"]}).as_object().cloned().unwrap_or_default()
    }

    fn install(
        text: Option<&str>,
        jsonc: bool,
        force: bool,
    ) -> Result<(InstallOutcome, String), ConfigError> {
        let path = Path::new("/x/mcp.json");
        let mut file = parse(path, text, Dialect { comments: jsonc, trailing_commas: jsonc })?;
        let outcome = file.put_server(path, &["mcpServers".into()], "toolport", &entry(), force)?;
        Ok((outcome, String::from_utf8_lossy(&file.render()).into_owned()))
    }

    #[test]
    fn a_missing_file_gets_a_pretty_object_with_a_final_newline() -> anyhow::Result<()> {
        let (outcome, text) = install(None, false, false)?;
        assert_eq!(outcome, InstallOutcome::Added);
        assert_eq!(
            text,
            "{\n  \"mcpServers\": {\n    \"toolport\": {\n      \"command\": \"/bin/toolport\",\n      \"args\": [\"serve\"]\n    }\n  }\n}\n"
        );
        Ok(())
    }

    #[test]
    fn comments_other_keys_and_indentation_survive() -> anyhow::Result<()> {
        let before = "{\n    // keep me\n    \"z\": 1,\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"}, // and me\n    },\n}\n";
        let (_, text) = install(Some(before), true, false)?;
        assert!(text.starts_with("{\n    // keep me\n    \"z\": 1,\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"}, // and me\n"), "{text}");
        assert!(
            text.contains("        \"toolport\": {\n            \"command\": \"/bin/toolport\""),
            "{text}"
        );
        let (outcome, again) = install(Some(&text), true, false)?;
        assert_eq!((outcome, again.as_str()), (InstallOutcome::Unchanged, text.as_str()));
        Ok(())
    }

    #[test]
    fn a_different_entry_is_a_conflict_unless_forced() -> anyhow::Result<()> {
        let before = r#"{"mcpServers": {"toolport": {"command": "old"}}}"#;
        assert_eq!(install(Some(before), false, false)?.0, InstallOutcome::Conflict);
        let (outcome, text) = install(Some(before), false, true)?;
        assert_eq!(outcome, InstallOutcome::Replaced);
        let v: Value = serde_json::from_str(&text)?;
        assert_eq!(v["mcpServers"]["toolport"], Value::Object(entry()));
        Ok(())
    }

    #[test]
    fn force_changes_only_toolports_keys_in_place() -> anyhow::Result<()> {
        let before = "{\"mcpServers\": {\"toolport\": {\"timeout\": 9000, \"url\": \"http://x\", \"command\": \"old\", \"trust\": true}}}";
        assert_eq!(install(Some(before), false, false)?.0, InstallOutcome::Conflict);
        let (outcome, text) = install(Some(before), false, true)?;
        assert_eq!(outcome, InstallOutcome::Replaced);
        assert_eq!(
            text,
            // Appending a key makes the tree lay the object out on lines; the user's keys keep
            // their places.
            "{\"mcpServers\": {\"toolport\": {\n      \"timeout\": 9000,\n      \"command\": \"/bin/toolport\",\n      \"trust\": true,\n      \"args\": [\"serve\"]\n    }}}"
        );
        // The user's keys beside toolport's are no difference.
        assert_eq!(install(Some(&text), false, false)?, (InstallOutcome::Unchanged, text.clone()));
        Ok(())
    }

    #[test]
    fn comments_without_trailing_commas_never_get_one() -> anyhow::Result<()> {
        let gemini = Dialect { comments: true, trailing_commas: false };
        let path = Path::new("/g/settings.json");
        let err = parse(path, Some("{\"a\": 1,}"), gemini).err().map(|e| e.0);
        assert!(err.as_deref().is_some_and(|e| e.starts_with("/g/settings.json:1:")), "{err:?}");
        let before = "{\n  // mine\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n  }\n}\n";
        let mut file = parse(path, Some(before), gemini)?;
        file.put_server(path, &["mcpServers".into()], "toolport", &entry(), false)?;
        let text = String::from_utf8_lossy(&file.render()).into_owned();
        let stripped: String = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
        let v: Value = serde_json::from_str(&stripped)?;
        assert_eq!(v["mcpServers"]["toolport"], Value::Object(entry()));
        Ok(())
    }

    #[test]
    fn strict_files_refuse_comments_and_errors_name_the_position() {
        let err = install(Some("{\n  // no\n}"), false, false).err().map(|e| e.0);
        assert_eq!(err.as_deref(), Some("/x/mcp.json:2:3: key must be a string"));
        let err = install(Some("{\"mcpServers\": {\n"), true, false).err().map(|e| e.0);
        assert!(err.as_deref().is_some_and(|e| e.starts_with("/x/mcp.json:")), "{err:?}");
        let err = install(Some("[]"), false, false).err().map(|e| e.0);
        assert_eq!(err.as_deref(), Some("/x/mcp.json: the top level must be a JSON object"));
        let err = install(Some(r#"{"mcpServers": []}"#), false, false).err().map(|e| e.0);
        assert_eq!(err.as_deref(), Some("/x/mcp.json: \"mcpServers\" must be an object"));
    }
}
