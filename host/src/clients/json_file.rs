//! The JSON clients' files (Claude Code, Claude Desktop, Gemini CLI, Cursor, VS Code), edited
//! through `jsonc-parser`'s concrete syntax tree rather than re-serialised: an install changes
//! the one entry it adds, and every other byte (other keys, their order, indentation, and in
//! VS Code's and Gemini's JSONC the comments and trailing commas) stays as the user wrote it.

use std::path::Path;

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstRootNode};
use serde_json::{Map, Value};

use super::client::InstallOutcome;
use crate::config::ConfigError;

/// A client's file parsed for editing.
pub(crate) struct JsonFile {
    root: CstRootNode,
    /// The file did not exist or was blank: it gets a final newline the tree does not add.
    fresh: bool,
}

/// Parses `text` (`None`: a missing file, which starts as `{}`). `jsonc` allows comments and
/// trailing commas, nothing looser: a client that reads strict JSON would refuse the rest. A
/// syntax error reads `<path>:<line>:<col>: <what>`; the top level must be an object.
pub(crate) fn parse(path: &Path, text: Option<&str>, jsonc: bool) -> Result<JsonFile, ConfigError> {
    let text = text.unwrap_or_default();
    if !jsonc {
        // The syntax tree keeps comments whatever the options say: strict files are checked
        // by serde_json first, with the same message toolport's own store gets.
        crate::config::parse_json(path, text)?;
    }
    let options = ParseOptions {
        allow_comments: jsonc,
        allow_trailing_commas: jsonc,
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
    /// The servers under `key`, as plain JSON (comments dropped): what an import reads.
    pub(crate) fn servers(&self, path: &Path, key: &str) -> Result<Map<String, Value>, ConfigError> {
        let Some(prop) = self.root.object_value().and_then(|o| o.get(key)) else {
            return Ok(Map::new());
        };
        match prop.value().and_then(|v| v.to_serde_value()) {
            None | Some(Value::Null) => Ok(Map::new()),
            Some(Value::Object(m)) => Ok(m),
            Some(_) => Err(must_be_object(path, key)),
        }
    }

    /// Puts `entry` under `key`.`name`: appended when absent, left alone when the same,
    /// replaced only with `force`.
    pub(crate) fn put_server(
        &mut self,
        path: &Path,
        key: &str,
        name: &str,
        entry: &Map<String, Value>,
        force: bool,
    ) -> Result<InstallOutcome, ConfigError> {
        let top = self.root.object_value_or_set();
        let servers = top.object_value_or_create(key).ok_or_else(|| must_be_object(path, key))?;
        let wanted = Value::Object(entry.clone());
        match servers.get(name) {
            None => {
                servers.append(name, input(&wanted));
                Ok(InstallOutcome::Added)
            }
            Some(prop) => {
                // `Value`'s equality ignores key order: a hand-reordered entry is still ours.
                if prop.value().and_then(|v| v.to_serde_value()).as_ref() == Some(&wanted) {
                    Ok(InstallOutcome::Unchanged)
                } else if force {
                    prop.set_value(input(&wanted));
                    Ok(InstallOutcome::Replaced)
                } else {
                    Ok(InstallOutcome::Conflict)
                }
            }
        }
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

fn must_be_object(path: &Path, key: &str) -> ConfigError {
    ConfigError(format!("{}: \"{key}\" must be an object", path.display()))
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
        let mut file = parse(path, text, jsonc)?;
        let outcome = file.put_server(path, "mcpServers", "toolport", &entry(), force)?;
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
