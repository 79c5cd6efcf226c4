//! The workspace file (`<root>/.toolport/workspace.json`). It is read and written only through
//! a `cap_std::fs::Dir` opened on the workspace root: a cloned repository whose `.toolport` (or
//! `workspace.json`) is a symlink to somewhere else cannot make toolport read or write outside
//! the root.

use std::io;
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use serde_json::Value;

use super::confirm_setting::{CONFIRM_KEY, ConfirmSetting};
use super::error::ConfigError;
use super::fields::{Fields, Trim};
use super::guard_fields;
use super::guards::GuardScope;
use super::model::{AuditChoice, Secrets, SecretsMode, Surface, TrustMode, WorkspaceSettings};
use super::store::parse_json;
use super::store_keys::GUARDS;
use super::unknown_keys;
use crate::paths::{WORKSPACE_DIR, WORKSPACE_FILE};
use crate::text::escape_line;

impl WorkspaceSettings {
    /// Reads `<root>/.toolport/workspace.json`; missing file (or folder) = defaults.
    pub fn load(root: &Path) -> Result<WorkspaceSettings, ConfigError> {
        let path = root.join(WORKSPACE_DIR).join(WORKSPACE_FILE);
        let Some(dir) = open_workspace_dir(root, false)? else {
            return Ok(WorkspaceSettings::default());
        };
        match read_in(&dir, root)? {
            Some(text) => Self::from_value(&path, &parse_json(&path, &text)?),
            None => Ok(WorkspaceSettings::default()),
        }
    }

    /// Reads an already parsed workspace document; `path` is for messages.
    pub fn from_value(path: &Path, doc: &Value) -> Result<WorkspaceSettings, ConfigError> {
        let at = |msg: ConfigError| ConfigError(format!("{}: {msg}", path.display()));
        let top = doc.as_object().ok_or_else(|| at("the top level must be a JSON object".into()))?;
        let fields = Fields::new(top, "");
        let defaults = WorkspaceSettings::default();
        let settings = WorkspaceSettings {
            enabled: dedup_names(
                fields.strings("enabledMcpServers", Trim::Yes).map_err(at)?.unwrap_or_default(),
            ),
            name_policy: fields.string("namePolicy").map_err(at)?,
            tool_shape: fields.string("toolShape").map_err(at)?.unwrap_or(defaults.tool_shape),
            reserved_tool_names: match fields.strings("reservedToolNames", Trim::Yes).map_err(at)? {
                Some(names) => names.into_iter().filter(|n| !n.is_empty()).collect(),
                None => defaults.reserved_tool_names,
            },
            max_result_tokens: match fields.positive("maxResultTokens", " (tokens)").map_err(at)? {
                Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
                None => defaults.max_result_tokens,
            },
            max_results_folder_bytes: fields
                .positive("maxResultsFolderBytes", " (bytes)")
                .map_err(at)?
                .unwrap_or(defaults.max_results_folder_bytes),
            surface: match fields.string("surface").map_err(at)? {
                None => defaults.surface,
                Some(text) => Surface::parse(&text).ok_or_else(|| {
                    at(ConfigError(format!(
                        "\"surface\" must be \"full\" or \"lazy\", not {}",
                        Value::String(text)
                    )))
                })?,
            },
            secrets: read_secrets(top.get("secrets")).map_err(at)?,
            confirm: ConfirmSetting::read(fields.raw(CONFIRM_KEY)).map_err(at)?,
            audit: read_audit(top.get("audit")).map_err(at)?,
            bundles: super::bundles::read(top.get(super::bundles::BUNDLES_KEY)).map_err(at)?,
            guards: guard_fields::read(fields.raw(GUARDS), "", &GuardScope::Workspace).map_err(at)?,
            trust: match fields.string("trust").map_err(at)? {
                None => defaults.trust,
                Some(text) => TrustMode::parse(&text).ok_or_else(|| {
                    at(ConfigError(format!(
                        "\"trust\" must be \"pin\", \"off\" or \"strict\", not {}",
                        Value::String(text)
                    )))
                })?,
            },
        };
        unknown_keys::check_guards(path, None, fields.raw(GUARDS));
        Ok(settings)
    }
}

/// `secrets`: a mode for both directions, or an object with a mode for each.
fn read_secrets(value: Option<&Value>) -> Result<Secrets, ConfigError> {
    let defaults = Secrets::default();
    let mode = |key: &str, value: &Value| match value.as_str().and_then(SecretsMode::parse) {
        Some(mode) => Ok(mode),
        None => Err(ConfigError(format!("\"{key}\" must be \"redact\", \"block\" or \"off\", not {value}"))),
    };
    match value {
        None => Ok(defaults),
        Some(Value::Object(each)) => {
            if let Some(unknown) = each.keys().find(|k| *k != "arguments" && *k != "results") {
                return Err(ConfigError(format!(
                    "\"secrets\" has no key \"{unknown}\" (it takes \"arguments\" and \"results\")"
                )));
            }
            let arguments = each.get("arguments").map(|v| mode("secrets.arguments", v)).transpose()?;
            let results = each.get("results").map(|v| mode("secrets.results", v)).transpose()?;
            Ok(Secrets {
                arguments: arguments.unwrap_or(defaults.arguments),
                results: results.unwrap_or(defaults.results),
            })
        }
        Some(value) => {
            let both = mode("secrets", value)?;
            Ok(Secrets { arguments: both, results: both })
        }
    }
}

/// `audit`: an object of booleans, `enabled`, `values` and `stderr`, each optional.
fn read_audit(value: Option<&Value>) -> Result<AuditChoice, ConfigError> {
    const KEYS: [&str; 3] = ["enabled", "values", "stderr"];
    let mut choice = AuditChoice::default();
    let Some(value) = value else { return Ok(choice) };
    let Value::Object(each) = value else {
        return Err(ConfigError(format!(
            "\"audit\" must be an object like {{\"values\": false, \"stderr\": false}}, not {value}"
        )));
    };
    if let Some(unknown) = each.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(ConfigError(format!(
            "\"audit\" has no key \"{unknown}\" (it takes \"enabled\", \"values\" and \"stderr\")"
        )));
    }
    for (key, value) in each {
        let Some(on) = value.as_bool() else {
            return Err(ConfigError(format!("\"audit.{key}\" must be true or false, not {value}")));
        };
        match key.as_str() {
            "enabled" => choice.enabled = on,
            "values" => choice.values = on,
            _ => choice.stderr = on,
        }
    }
    Ok(choice)
}

/// Trimmed names with blanks and duplicates removed, first occurrence's position kept.
pub fn dedup_names(names: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        let n = n.trim().to_string();
        if !n.is_empty() && !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// Opens `<root>/.toolport` through a capability on the root; `create` makes it first.
/// `Ok(None)`: it does not exist (and `create` was false).
pub(crate) fn open_workspace_dir(root: &Path, create: bool) -> Result<Option<Dir>, ConfigError> {
    let root_dir = match Dir::open_ambient_dir(root, ambient_authority()) {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound && !create => return Ok(None),
        Err(e) => {
            return Err(ConfigError(format!("cannot open the workspace root {}: {e}", root.display())));
        }
    };
    let sub = root.join(WORKSPACE_DIR);
    if create {
        root_dir.create_dir_all(WORKSPACE_DIR).map_err(|e| io_error(root, &sub, e))?;
    }
    match root_dir.open_dir(WORKSPACE_DIR) {
        Ok(d) => Ok(Some(d)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(root, &sub, e)),
    }
}

/// The workspace file's text, or `None` when it does not exist.
pub(crate) fn read_in(dir: &Dir, root: &Path) -> Result<Option<String>, ConfigError> {
    let path = root.join(WORKSPACE_DIR).join(WORKSPACE_FILE);
    match dir.read_to_string(WORKSPACE_FILE) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(root, &path, e)),
    }
}

/// Refuses `path`, a file under the workspace `root` that toolport is about to write for
/// another program (`install --scope project`: `<root>/.mcp.json`, `<root>/.codex/config.toml`),
/// when it or a folder on its way is a symlink that leads outside the root. A cloned
/// repository's `.mcp.json -> ../outside/x.json` would otherwise have toolport write wherever
/// the repository's author chose. The same capability on the root decides as for the
/// workspace file, and the refusal reads the same ([`io_error`]). A link that stays inside is
/// followed by the write; a missing file (or root) is created by it.
pub fn refuse_links_out(root: &Path, path: &Path) -> Result<(), ConfigError> {
    let Ok(inside) = path.strip_prefix(root) else {
        return Err(ConfigError(format!(
            "refusing to write {}: it is not inside the workspace root {}",
            path.display(),
            root.display()
        )));
    };
    let root_dir = match Dir::open_ambient_dir(root, ambient_authority()) {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(ConfigError(format!("cannot open the workspace root {}: {e}", root.display())));
        }
    };
    // Follows every link the way the write would, but only as far as the root allows: a step
    // out is cap-std's refusal, whether or not the place outside exists. Other failures (a
    // missing file, a loop) are the write's to report, in its own words.
    match root_dir.metadata(inside) {
        Err(e) if is_escape(&e) => Err(io_error(root, path, e)),
        _ => Ok(()),
    }
}

/// Maps cap-std's sandbox refusal to a message that says what happened and why, and names
/// the symlink that leads out and what it holds, so the person sees which link to fix.
pub(crate) fn io_error(root: &Path, path: &Path, e: io::Error) -> ConfigError {
    if is_escape(&e) {
        // The target is the repository's text: escaped, so it prints as one plain line.
        let link = match first_link(root, path) {
            Some((link, to)) if link == path => format!(" (a symlink to {})", escaped(&to)),
            Some((link, to)) => format!(" ({} is a symlink to {})", link.display(), escaped(&to)),
            None => String::new(),
        };
        ConfigError(format!(
            "refusing to follow {}: it leads outside the workspace root {}{link}",
            path.display(),
            root.display()
        ))
    } else {
        ConfigError(format!("{}: {e}", path.display()))
    }
}

/// The first symlink on the way from `root` down to `path` (`path` itself included), and
/// its target as written.
fn first_link(root: &Path, path: &Path) -> Option<(PathBuf, PathBuf)> {
    let mut at = root.to_path_buf();
    for part in path.strip_prefix(root).ok()?.components() {
        at.push(part);
        if let Ok(to) = std::fs::read_link(&at) {
            return Some((at, to));
        }
    }
    None
}

fn escaped(path: &Path) -> String {
    escape_line(&path.to_string_lossy()).into_owned()
}

fn is_escape(e: &io::Error) -> bool {
    // cap-primitives reports an escape as PermissionDenied "a path led outside of the filesystem".
    e.kind() == io::ErrorKind::PermissionDenied && e.to_string().contains("outside")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn from(v: Value) -> Result<WorkspaceSettings, ConfigError> {
        WorkspaceSettings::from_value(Path::new("/w/.toolport/workspace.json"), &v)
    }

    #[test]
    fn enabled_names_trimmed_deduplicated_order_kept() -> anyhow::Result<()> {
        let s = from(json!({"enabledMcpServers":[" b ","a","","b","  ","A"]}))?;
        assert_eq!(s.enabled, ["b", "a", "A"]);
        Ok(())
    }

    #[test]
    fn defaults_apply() -> anyhow::Result<()> {
        assert_eq!(from(json!({}))?, WorkspaceSettings::default());
        let s = from(json!({"namePolicy":"namespace","toolShape":"anthropic","reservedToolNames":["x"]}))?;
        assert_eq!(s.name_policy.as_deref(), Some("namespace"));
        assert_eq!(s.tool_shape, "anthropic");
        assert_eq!(s.reserved_tool_names, ["x"]);
        Ok(())
    }

    #[test]
    fn trust_is_pin_off_or_strict() -> anyhow::Result<()> {
        assert_eq!(from(json!({}))?.trust, TrustMode::Pin);
        assert_eq!(from(json!({"trust": "strict"}))?.trust, TrustMode::Strict);
        assert_eq!(from(json!({"trust": "off"}))?.trust, TrustMode::Off);
        let e = from(json!({"trust": "maybe"})).err().map(|e| e.0);
        assert_eq!(
            e.as_deref(),
            Some(
                "/w/.toolport/workspace.json: \"trust\" must be \"pin\", \"off\" or \"strict\", not \"maybe\""
            )
        );
        Ok(())
    }

    #[test]
    fn the_surface_is_full_or_lazy() -> anyhow::Result<()> {
        assert_eq!(from(json!({}))?.surface, Surface::Full);
        assert_eq!(from(json!({"surface": "lazy"}))?.surface, Surface::Lazy);
        assert_eq!(from(json!({"surface": " full "}))?.surface, Surface::Full);
        let e = from(json!({"surface": "Lazy"})).err().map(|e| e.0);
        assert_eq!(
            e.as_deref(),
            Some("/w/.toolport/workspace.json: \"surface\" must be \"full\" or \"lazy\", not \"Lazy\"")
        );
        let e = from(json!({"surface": true})).err().map(|e| e.0);
        assert_eq!(e.as_deref(), Some("/w/.toolport/workspace.json: \"surface\" must be a string"));
        Ok(())
    }

    #[test]
    fn audit_takes_three_booleans_and_a_wrong_one_names_the_file_and_key() -> anyhow::Result<()> {
        assert_eq!(from(json!({}))?.audit, AuditChoice::default());
        let on = from(json!({"audit": {"values": true, "stderr": true}}))?.audit;
        assert_eq!(on, AuditChoice { enabled: true, values: true, stderr: true });
        assert!(!from(json!({"audit": {"enabled": false}}))?.audit.enabled);
        let e = |v: Value| from(json!({ "audit": v })).err().map(|e| e.0).unwrap_or_default();
        assert_eq!(
            e(json!({"values": "yes"})),
            "/w/.toolport/workspace.json: \"audit.values\" must be true or false, not \"yes\""
        );
        assert_eq!(
            e(json!({"value": true})),
            "/w/.toolport/workspace.json: \"audit\" has no key \"value\" (it takes \"enabled\", \"values\" and \"stderr\")"
        );
        assert_eq!(
            e(json!(true)),
            "/w/.toolport/workspace.json: \"audit\" must be an object like {\"values\": false, \"stderr\": false}, not true"
        );
        Ok(())
    }

    #[test]
    fn confirm_is_read_and_a_wrong_one_names_the_file_and_key() -> anyhow::Result<()> {
        assert_eq!(from(json!({}))?.confirm, ConfirmSetting::Destructive);
        assert_eq!(from(json!({"confirm": "writes"}))?.confirm, ConfirmSetting::Writes);
        let e = from(json!({"confirm": "all"})).err().map(|e| e.0);
        assert_eq!(
            e.as_deref(),
            Some(
                "/w/.toolport/workspace.json: \"confirm\" must be \"destructive\", \"writes\", \"never\" or an \
                 array of tool-name globs, not \"all\""
            )
        );
        Ok(())
    }

    #[test]
    fn secrets_take_one_mode_or_one_per_direction() -> anyhow::Result<()> {
        let both = |a, r| Secrets { arguments: a, results: r };
        assert_eq!(from(json!({}))?.secrets, both(SecretsMode::Block, SecretsMode::Redact));
        assert_eq!(from(json!({"secrets": "off"}))?.secrets, both(SecretsMode::Off, SecretsMode::Off));
        assert_eq!(
            from(json!({"secrets": {"results": "block"}}))?.secrets,
            both(SecretsMode::Block, SecretsMode::Block)
        );
        assert_eq!(
            from(json!({"secrets": {"arguments": "redact", "results": "off"}}))?.secrets,
            both(SecretsMode::Redact, SecretsMode::Off)
        );
        let e = |v: Value| from(json!({ "secrets": v })).err().map(|e| e.0).unwrap_or_default();
        assert_eq!(
            e(json!("hide")),
            "/w/.toolport/workspace.json: \"secrets\" must be \"redact\", \"block\" or \"off\", not \"hide\""
        );
        assert_eq!(
            e(json!({"results": 1})),
            "/w/.toolport/workspace.json: \"secrets.results\" must be \"redact\", \"block\" or \"off\", not 1"
        );
        assert_eq!(
            e(json!({"result": "off"})),
            "/w/.toolport/workspace.json: \"secrets\" has no key \"result\" (it takes \"arguments\" and \"results\")"
        );
        Ok(())
    }

    #[test]
    fn guards_are_read_in_order_and_a_wrong_one_names_the_file_and_entry() -> anyhow::Result<()> {
        assert!(from(json!({}))?.guards.is_empty());
        let guards = from(json!({"guards": ["pii", {"plugin": "sql", "mode": "audit"}]}))?.guards;
        let read: Vec<_> = guards.iter().map(|g| (g.plugin.as_str(), g.mode.as_str(), &g.scope)).collect();
        assert_eq!(
            read,
            [("pii", "enforce", &GuardScope::Workspace), ("sql", "audit", &GuardScope::Workspace)]
        );
        let e = from(json!({"guards": ["pii", {"plugin": "sql", "mode": "warn"}]})).err().map(|e| e.0);
        assert_eq!(
            e.as_deref(),
            Some(
                "/w/.toolport/workspace.json: \"guards[1].mode\" must be \"enforce\" or \"audit\", not \"warn\""
            )
        );
        Ok(())
    }

    #[test]
    fn wrong_types_name_file_and_field() {
        let e = from(json!({"enabledMcpServers":"a"})).err().map(|e| e.0);
        assert_eq!(
            e.as_deref(),
            Some("/w/.toolport/workspace.json: \"enabledMcpServers\" must be an array of strings")
        );
    }

    #[test]
    fn result_bounds_are_positive_integers() -> anyhow::Result<()> {
        let s = from(json!({"maxResultTokens": 10, "maxResultsFolderBytes": 2048}))?;
        assert_eq!((s.max_result_tokens, s.max_results_folder_bytes), (10, 2048));
        assert_eq!(from(json!({}))?.max_result_tokens, 25_000);
        for bad in [json!(0), json!(-5), json!(1.5), json!("100")] {
            let e = from(json!({ "maxResultTokens": bad })).err().map(|e| e.0);
            assert_eq!(
                e.as_deref(),
                Some("/w/.toolport/workspace.json: \"maxResultTokens\" must be a positive integer (tokens)")
            );
        }
        let e = from(json!({"maxResultsFolderBytes": 0})).err().map(|e| e.0);
        assert_eq!(
            e.as_deref(),
            Some("/w/.toolport/workspace.json: \"maxResultsFolderBytes\" must be a positive integer (bytes)")
        );
        Ok(())
    }

    #[test]
    fn missing_workspace_is_defaults() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        assert_eq!(WorkspaceSettings::load(tmp.path())?, WorkspaceSettings::default());
        assert!(!tmp.path().join(".toolport").exists());
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn symlink_outside_the_root_is_refused_on_read() -> anyhow::Result<()> {
        let root = tempfile::tempdir()?;
        let outside = tempfile::tempdir()?;
        std::fs::write(outside.path().join("workspace.json"), r#"{"enabledMcpServers":["x"]}"#)?;
        std::os::unix::fs::symlink(outside.path(), root.path().join(".toolport"))?;
        let err = WorkspaceSettings::load(root.path()).err().map(|e| e.0).unwrap_or_default();
        assert!(err.starts_with(&format!("refusing to follow {}/.toolport", root.path().display())), "{err}");
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn a_file_linked_out_names_the_link_in_one_line_and_a_link_inside_passes() -> anyhow::Result<()> {
        let top = tempfile::tempdir()?;
        let root = top.path().join("ws");
        std::fs::create_dir_all(root.join("shared"))?;
        std::os::unix::fs::symlink("../outside\n\u{1b}[2Jx.json", root.join(".mcp.json"))?;
        let err = refuse_links_out(&root, &root.join(".mcp.json")).err().map(|e| e.0);
        assert_eq!(
            err,
            Some(format!(
                "refusing to follow {}/.mcp.json: it leads outside the workspace root {} (a symlink to \
                 ../outside\\u{{a}}\\u{{1b}}[2Jx.json)",
                root.display(),
                root.display()
            ))
        );
        std::os::unix::fs::symlink("shared/mcp.json", root.join("inside.json"))?;
        assert!(refuse_links_out(&root, &root.join("inside.json")).is_ok(), "a dangling link inside");
        assert!(refuse_links_out(&root, &root.join(".vscode/mcp.json")).is_ok(), "a missing file");
        Ok(())
    }
}
