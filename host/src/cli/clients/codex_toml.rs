//! Codex's `config.toml`, edited with `toml_edit` so the user's comments, blank lines, key
//! order and every other table survive an install. Servers are `[mcp_servers.<name>]` tables
//! (or, written by hand, an inline `mcp_servers = { … }`); imports read them as JSON.

use std::path::Path;

use serde_json::{Map, Value};
use toml_edit::{DocumentMut, InlineTable, Item, Table};

use super::client::{EntryEdit, InstallOutcome};
use toolport::ConfigError;

/// The table that holds Codex's servers.
const KEY: &str = "mcp_servers";

/// Parses `text` (`None`: a missing file, an empty document). A syntax error reads
/// `<path>:<line>:<col>: <what>`.
pub(crate) fn parse(path: &Path, text: Option<&str>) -> Result<DocumentMut, ConfigError> {
    let text = text.unwrap_or_default();
    text.parse::<DocumentMut>().map_err(|e| {
        let (line, col) = e.span().map_or((1, 1), |span| line_col(text, span.start));
        // The message ends with a newline and may run over several lines; the first says it.
        let what = e.message().lines().next().unwrap_or("invalid TOML").trim();
        ConfigError(format!("{}:{line}:{col}: {what}", path.display()))
    })
}

/// The servers as JSON objects, in file order.
pub(crate) fn servers(path: &Path, doc: &DocumentMut) -> Result<Map<String, Value>, ConfigError> {
    let Some(item) = doc.get(KEY) else { return Ok(Map::new()) };
    let table = item.as_table_like().ok_or_else(|| must_be_table(path))?;
    Ok(table.iter().map(|(name, item)| (name.to_string(), item_json(item))).collect())
}

/// Puts `entry` at `mcp_servers.<name>`: a new `[mcp_servers.<name>]` table when absent, left
/// alone when it already starts toolport as wanted, changed only with `force` — and then only
/// in the keys toolport writes ([`EntryEdit`]): the user's `startup_timeout_sec`,
/// `tool_timeout_sec`, `env` and the rest stay, in place, with their comments.
pub(crate) fn put_server(
    path: &Path,
    doc: &mut DocumentMut,
    name: &str,
    entry: &Map<String, Value>,
    force: bool,
) -> Result<InstallOutcome, ConfigError> {
    let nonempty = !doc.as_table().is_empty();
    let servers = doc.entry(KEY).or_insert_with(|| {
        // `[mcp_servers.toolport]` alone reads better than an empty `[mcp_servers]` above it.
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let inline_servers = matches!(servers, Item::Value(toml_edit::Value::InlineTable(_)));
    let servers = servers.as_table_like_mut().ok_or_else(|| must_be_table(path))?;
    if !servers.contains_key(name) {
        let item = if inline_servers {
            Item::Value(toml_edit::Value::InlineTable(inline(entry)))
        } else {
            let mut table = Table::new();
            for (k, v) in entry {
                if let Some(v) = toml_value(v) {
                    table.insert(k, Item::Value(v));
                }
            }
            if nonempty {
                table.decor_mut().set_prefix("\n");
            }
            Item::Table(table)
        };
        servers.insert(name, item);
        return Ok(InstallOutcome::Added);
    }
    let Some(existing) = servers.get_mut(name) else { return Ok(InstallOutcome::Added) };
    let old = match item_json(existing) {
        Value::Object(m) => Some(m),
        _ => None,
    };
    let edit = old.as_ref().map(|old| EntryEdit::plan(old, entry));
    if edit.as_ref().is_some_and(EntryEdit::is_empty) {
        return Ok(InstallOutcome::Unchanged);
    }
    if !force {
        return Ok(InstallOutcome::Conflict);
    }
    match (existing.as_table_like_mut(), edit) {
        (Some(table), Some(edit)) => {
            for key in &edit.remove {
                table.remove(key);
            }
            for (key, value) in &edit.set {
                let Some(mut v) = toml_value(value) else { continue };
                // An existing key keeps its place and its comments (the value is replaced under
                // the key: `insert` would reformat the key and lose the comment above it); a
                // new one goes last.
                match table.get_mut(key) {
                    Some(item) => {
                        if let Some(old) = item.as_value() {
                            *v.decor_mut() = old.decor().clone();
                        }
                        *item = Item::Value(v);
                    }
                    None => {
                        table.insert(key, Item::Value(v));
                    }
                }
            }
        }
        // Not a table: nothing of the user's to keep.
        _ => *existing = Item::Value(toml_edit::Value::InlineTable(inline(entry))),
    }
    Ok(InstallOutcome::Replaced)
}

fn inline(entry: &Map<String, Value>) -> InlineTable {
    let mut table = InlineTable::new();
    for (k, v) in entry {
        if let Some(v) = toml_value(v) {
            table.insert(k, v);
        }
    }
    table
}

fn must_be_table(path: &Path) -> ConfigError {
    ConfigError(format!("{}: \"{KEY}\" must be a table", path.display()))
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// A TOML item as JSON: tables and inline tables become objects, dates become their text.
fn item_json(item: &Item) -> Value {
    match item {
        Item::None => Value::Null,
        Item::Value(v) => value_json(v),
        Item::Table(t) => Value::Object(t.iter().map(|(k, v)| (k.to_string(), item_json(v))).collect()),
        Item::ArrayOfTables(a) => {
            Value::Array(a.iter().map(|t| item_json(&Item::Table(t.clone()))).collect())
        }
    }
}

fn value_json(v: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match v {
        T::String(s) => Value::String(s.value().clone()),
        T::Integer(i) => Value::from(*i.value()),
        T::Float(f) => serde_json::Number::from_f64(*f.value()).map_or(Value::Null, Value::Number),
        T::Boolean(b) => Value::Bool(*b.value()),
        T::Datetime(d) => Value::String(d.value().to_string()),
        T::Array(a) => Value::Array(a.iter().map(value_json).collect()),
        T::InlineTable(t) => Value::Object(t.iter().map(|(k, v)| (k.to_string(), value_json(v))).collect()),
    }
}

/// A JSON value as TOML; `null` has no TOML form and is left out.
fn toml_value(v: &Value) -> Option<toml_edit::Value> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64().unwrap_or_default().into(),
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(a) => toml_edit::Value::Array(a.iter().filter_map(toml_value).collect()),
        Value::Object(m) => {
            let mut t = InlineTable::new();
            for (k, v) in m {
                if let Some(v) = toml_value(v) {
                    t.insert(k, v);
                }
            }
            toml_edit::Value::InlineTable(t)
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn entry() -> Map<String, Value> {
        json!({"command": "/bin/toolport", "args": ["serve"]}).as_object().cloned().unwrap_or_default()
    }

    fn install(text: &str, force: bool) -> Result<(InstallOutcome, String), ConfigError> {
        let path = Path::new("/c/config.toml");
        let mut doc = parse(path, Some(text))?;
        let outcome = put_server(path, &mut doc, "toolport", &entry(), force)?;
        Ok((outcome, doc.to_string()))
    }

    #[test]
    fn comments_and_other_tables_survive_and_a_second_install_is_a_no_op() -> anyhow::Result<()> {
        let before = "# my settings\nmodel = \"o3\" # inline\n\n[mcp_servers.docs]\n# the docs server\ncommand = \"npx\"\nargs = [\"-y\", \"docs\"]\nenv = { TOKEN = \"${DOCS_TOKEN}\" }\n\n[profiles.fast]\nmodel = \"mini\"\n";
        let (outcome, text) = install(before, false)?;
        assert_eq!(outcome, InstallOutcome::Added);
        assert_eq!(
            text,
            "# my settings\nmodel = \"o3\" # inline\n\n[mcp_servers.docs]\n# the docs server\ncommand = \"npx\"\nargs = [\"-y\", \"docs\"]\nenv = { TOKEN = \"${DOCS_TOKEN}\" }\n\n[mcp_servers.toolport]\ncommand = \"/bin/toolport\"\nargs = [\"serve\"]\n\n[profiles.fast]\nmodel = \"mini\"\n"
        );
        assert_eq!(install(&text, false)?, (InstallOutcome::Unchanged, text.clone()));
        let docs = servers(Path::new("c"), &parse(Path::new("c"), Some(&text))?)?;
        assert_eq!(docs["docs"]["env"], json!({"TOKEN": "${DOCS_TOKEN}"}));
        Ok(())
    }

    #[test]
    fn an_empty_file_gets_one_table_and_a_different_entry_needs_force() -> anyhow::Result<()> {
        let (_, text) = install("", false)?;
        assert_eq!(text, "[mcp_servers.toolport]\ncommand = \"/bin/toolport\"\nargs = [\"serve\"]\n");
        let old = "[mcp_servers.toolport] # ours\ncommand = \"old\"\n";
        assert_eq!(install(old, false)?.0, InstallOutcome::Conflict);
        let (outcome, text) = install(old, true)?;
        assert_eq!(outcome, InstallOutcome::Replaced);
        assert!(text.contains("command = \"/bin/toolport\""), "{text}");
        Ok(())
    }

    #[test]
    fn force_keeps_the_users_own_keys_and_comments() -> anyhow::Result<()> {
        let old = "[mcp_servers.toolport]\ncommand = \"/old/toolport\" # was here\nstartup_timeout_sec = 30\nurl = \"http://x\"\ntool_timeout_sec = 120\n";
        assert_eq!(install(old, false)?.0, InstallOutcome::Conflict);
        let (outcome, text) = install(old, true)?;
        assert_eq!(outcome, InstallOutcome::Replaced);
        assert_eq!(
            text,
            "[mcp_servers.toolport]\ncommand = \"/bin/toolport\" # was here\nstartup_timeout_sec = 30\ntool_timeout_sec = 120\nargs = [\"serve\"]\n"
        );
        assert_eq!(install(&text, false)?, (InstallOutcome::Unchanged, text.clone()));
        Ok(())
    }

    #[test]
    fn an_inline_servers_table_takes_an_inline_entry() -> anyhow::Result<()> {
        let (_, text) = install("mcp_servers = { a = { command = \"x\" } }\n", false)?;
        let doc = parse(Path::new("c"), Some(&text))?;
        assert_eq!(servers(Path::new("c"), &doc)?["toolport"], Value::Object(entry()));
        Ok(())
    }

    #[test]
    fn a_syntax_error_names_line_and_column() {
        let err = install("a = 1\nb = = 2\n", false).err().map(|e| e.0);
        assert!(err.as_deref().is_some_and(|e| e.starts_with("/c/config.toml:2:")), "{err:?}");
        let err = install("mcp_servers = 3\n", false).err().map(|e| e.0);
        assert_eq!(err.as_deref(), Some("/c/config.toml: \"mcp_servers\" must be a table"));
    }
}
