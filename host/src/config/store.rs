//! The global store (`<home>/mcp.json`): its typed form, [`GlobalStore`], and reading it.
//! Loading never writes: the file is the user's, and the original tool's rewrite-on-load is
//! what lost their unknown keys.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::error::ConfigError;
use super::fields::Fields;
use super::model::{Limits, PluginDef, PluginKind, StoreDefaults};
use super::sandbox_fields::{self, Guest, resolve_against, resolve_dir};
use super::server_def::{ServerDef, TransportKind};
use super::store_keys::plugin as key;
use super::store_keys::{DEFAULTS_SECTION, PLUGINS_SECTION, SERVERS_SECTION, defaults as default_key};
use super::unknown_keys;

/// The global store as read from `<home>/mcp.json`: server definitions and plugin entries in
/// file order. Loading never writes; edits go through `config/edit/write.rs`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GlobalStore {
    /// The file it was read from (named in every error about it).
    pub path: PathBuf,
    /// `mcpServers`, normalised, in file order (blank names dropped; first of a duplicate wins).
    pub servers: Vec<ServerDef>,
    /// `plugins`, in file order, paths resolved against the store's folder.
    pub plugins: Vec<PluginDef>,
    /// `defaults`: what servers added from now on are written with.
    pub defaults: StoreDefaults,
}

impl GlobalStore {
    /// The definition named exactly `name` (names are case-sensitive).
    pub fn server(&self, name: &str) -> Option<&ServerDef> {
        self.servers.iter().find(|s| s.name == name)
    }
}

impl GlobalStore {
    /// Reads and normalises the store. A missing file is an empty store; a malformed one is an
    /// error naming `<path>:<line>:<col>`.
    pub fn load(path: &Path) -> Result<GlobalStore, ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(path, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(GlobalStore { path: path.to_path_buf(), ..GlobalStore::default() })
            }
            Err(e) => Err(ConfigError(format!("{}: cannot read: {e}", path.display()))),
        }
    }

    /// Parses store text; `path` is only used for messages and to resolve plugin paths.
    pub fn parse(path: &Path, text: &str) -> Result<GlobalStore, ConfigError> {
        Self::from_value(path, &parse_json(path, text)?)
    }

    /// Reads an already parsed store document.
    pub fn from_value(path: &Path, doc: &Value) -> Result<GlobalStore, ConfigError> {
        let at = |msg: ConfigError| ConfigError(format!("{}: {msg}", path.display()));
        let top = doc.as_object().ok_or_else(|| at("the top level must be a JSON object".into()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let mut servers: Vec<ServerDef> = Vec::new();
        for (name, value) in section(top, SERVERS_SECTION).map_err(at)? {
            let mut def = ServerDef::from_json(name, value).map_err(at)?;
            if let Some(entry) = value.as_object() {
                unknown_keys::check_server(path, &def, entry);
            }
            def.resolve_paths(base);
            if def.name.is_empty() {
                continue;
            }
            if servers.iter().any(|s| s.name == def.name) {
                tracing::warn!(store = %path.display(), server = %def.name, "duplicate server name after trimming; the first one is used");
                continue;
            }
            servers.push(def);
        }
        let mut plugins = Vec::new();
        for (name, value) in section(top, PLUGINS_SECTION).map_err(at)? {
            let name = name.trim();
            if !name.is_empty() {
                plugins.push(plugin_from_json(name, value, base).map_err(at)?);
                if let Some(entry) = value.as_object() {
                    unknown_keys::check_plugin(path, name, entry);
                }
            }
        }
        let defaults = defaults(top).map_err(at)?;
        if let Some(Value::Object(given)) = top.get(DEFAULTS_SECTION) {
            unknown_keys::check_defaults(path, given);
        }
        Ok(GlobalStore { path: path.to_path_buf(), servers, plugins, defaults })
    }
}

/// The top level's `defaults: { sandbox }`; absent or `null` is every default off.
fn defaults(top: &Map<String, Value>) -> Result<StoreDefaults, ConfigError> {
    let Some(given) = Fields::new(top, "").object(DEFAULTS_SECTION)? else {
        return Ok(StoreDefaults::default());
    };
    Ok(StoreDefaults { sandbox: given.boolean(default_key::SANDBOX)?.unwrap_or(false) })
}

/// Parses JSON text; a syntax error reads `<path>:<line>:<col>: <what>`. An empty (or
/// whitespace-only) file counts as `{}`: an editor's fresh file should not break toolport.
pub fn parse_json(path: &Path, text: &str) -> Result<Value, ConfigError> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_str(text).map_err(|e| {
        let full = e.to_string();
        // serde_json appends " at line L column C"; we put the position first, compiler-style.
        let what = full.rsplit_once(" at line ").map_or(full.as_str(), |(w, _)| w);
        ConfigError(format!("{}:{}:{}: {what}", path.display(), e.line(), e.column()))
    })
}

/// A top-level object section (`mcpServers`, `plugins`); absent or null is empty.
fn section<'a>(
    top: &'a Map<String, Value>,
    key: &str,
) -> Result<Box<dyn Iterator<Item = (&'a String, &'a Value)> + 'a>, ConfigError> {
    match top.get(key) {
        None | Some(Value::Null) => Ok(Box::new(std::iter::empty())),
        Some(Value::Object(m)) => Ok(Box::new(m.iter())),
        Some(_) => Err(ConfigError(format!("\"{key}\" must be an object"))),
    }
}

/// One `plugins` entry, its paths resolved against `base` (the store's folder).
pub(super) fn plugin_from_json(name: &str, value: &Value, base: &Path) -> Result<PluginDef, ConfigError> {
    let obj = value.as_object().ok_or_else(|| format!("plugin \"{name}\": definition must be an object"))?;
    let owner = format!("plugin \"{name}\": ");
    let fields = Fields::new(obj, &owner);
    let kind =
        fields.string(key::KIND).ok().flatten().and_then(|k| PluginKind::parse(&k)).ok_or_else(|| {
            fields.err(key::KIND, "one of \"transport\", \"name-policy\", \"tool-shape\", \"guard\"")
        })?;
    if kind == PluginKind::Transport && TransportKind::is_builtin_name(name) {
        return Err(ConfigError(format!(
            "plugin \"{name}\": a transport plugin cannot take a built-in transport name"
        )));
    }
    let path =
        fields.string(key::PATH).ok().flatten().ok_or_else(|| fields.err(key::PATH, "a non-empty string"))?;
    let mut grants = sandbox_fields::grants(&fields, Guest::Plugin)?;
    for dir in &mut grants.dirs {
        resolve_dir(dir, base);
    }
    let limits = sandbox_fields::limits(&fields, Limits::default())?;
    let sha256 = sandbox_fields::sha256(&fields)?;
    Ok(PluginDef { name: name.to_string(), kind, path: resolve_against(base, &path), grants, limits, sha256 })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn parse(text: &str) -> Result<GlobalStore, ConfigError> {
        GlobalStore::parse(Path::new("/h/mcp.json"), text)
    }

    #[test]
    fn missing_file_is_an_empty_store_and_nothing_is_written() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let path = tmp.path().join("mcp.json");
        let s = GlobalStore::load(&path)?;
        assert!(s.servers.is_empty() && s.plugins.is_empty());
        assert!(!path.exists());
        Ok(())
    }

    #[test]
    fn servers_in_file_order_blank_names_dropped_first_duplicate_wins() -> anyhow::Result<()> {
        let s = parse(
            r#"{"mcpServers":{"b":{"command":"1"},"  ":{"command":"x"},"a":{"command":"2"}," b ":{"command":"3"}}}"#,
        )?;
        let names: Vec<_> = s.servers.iter().map(|d| (d.name.as_str(), d.command.as_deref())).collect();
        assert_eq!(names, [("b", Some("1")), ("a", Some("2"))]);
        Ok(())
    }

    #[test]
    fn malformed_json_names_file_line_and_column() {
        let err = parse("{\n  \"mcpServers\": {,}\n}").err().map(|e| e.0);
        assert_eq!(err.as_deref(), Some("/h/mcp.json:2:18: key must be a string"));
    }

    #[test]
    fn wrong_types_name_the_file_server_and_field() {
        let err = parse(r#"{"mcpServers":{"x":{"command":"c","args":"a"}}}"#).err().map(|e| e.0);
        assert_eq!(err.as_deref(), Some("/h/mcp.json: server \"x\": \"args\" must be an array of strings"));
        let err = parse(r#"{"mcpServers":[]}"#).err().map(|e| e.0);
        assert_eq!(err.as_deref(), Some("/h/mcp.json: \"mcpServers\" must be an object"));
        let err = parse("[]").err().map(|e| e.0);
        assert_eq!(err.as_deref(), Some("/h/mcp.json: the top level must be a JSON object"));
    }

    #[test]
    fn empty_file_is_empty_store() -> anyhow::Result<()> {
        assert!(parse("  \n")?.servers.is_empty());
        Ok(())
    }

    #[test]
    fn plugins_resolve_paths_and_take_defaults() -> anyhow::Result<()> {
        let s = parse(
            r#"{"plugins":{
                "tcp":{"kind":"transport","path":"plugins/t.wasm","grants":{"hosts":["tcp://127.0.0.1:*"],"dirs":["data"]},"limits":{"memoryMb":32}},
                "ns":{"kind":"name-policy","path":"/abs/ns.wasm"}}}"#,
        )?;
        assert_eq!(s.plugins[0].kind, PluginKind::Transport);
        assert_eq!(s.plugins[0].path, PathBuf::from("/h/plugins/t.wasm"));
        assert_eq!(s.plugins[0].grants.hosts, ["tcp://127.0.0.1:*"]);
        assert_eq!(s.plugins[0].grants.dirs[0].host, PathBuf::from("/h/data"));
        assert_eq!(s.plugins[0].limits, Limits { memory_mb: 32, ..Limits::default() });
        assert_eq!(s.plugins[1].kind, PluginKind::NamePolicy);
        assert_eq!(s.plugins[1].path, PathBuf::from("/abs/ns.wasm"));
        assert_eq!(s.plugins[1].limits, Limits::default());
        Ok(())
    }

    #[test]
    fn a_wasm_servers_component_and_folders_resolve_against_the_store() -> anyhow::Result<()> {
        let s = parse(
            r#"{"mcpServers":{"notes":{"component":"servers/notes.wasm","args":["-v"],
                "grants":{"dirs":["data",{"host":"/abs","guest":"/g","mode":"rw"}],"x-note":1},
                "limits":{"callMs":500}}}}"#,
        )?;
        let def = &s.servers[0];
        assert_eq!(def.transport.as_deref(), Some("wasm"));
        let wasm = def.wasm.clone().unwrap_or_default();
        assert_eq!(wasm.component_path, Some(PathBuf::from("/h/servers/notes.wasm")));
        assert_eq!(wasm.grants.dirs[0].host, PathBuf::from("/h/data"));
        assert_eq!((wasm.grants.dirs[1].guest_path().as_str(), wasm.grants.dirs[1].writable), ("/g", true));
        assert_eq!(wasm.limits, Limits { call_ms: 500, ..Limits::for_server() });
        // Written back as the file had it: relative paths stay relative.
        let back = serde_json::Value::Object(def.to_json());
        assert_eq!(back["component"], "servers/notes.wasm");
        assert_eq!(back["grants"]["dirs"][0], "data");
        Ok(())
    }

    #[test]
    fn defaults_are_read_and_checked() -> anyhow::Result<()> {
        assert_eq!(parse("{}")?.defaults, StoreDefaults::default());
        assert!(!parse(r#"{"defaults":null}"#)?.defaults.sandbox);
        assert!(parse(r#"{"defaults":{"sandbox":true,"x-note":1}}"#)?.defaults.sandbox);
        for (bad, message) in [
            (r#"{"defaults":{"sandbox":"on"}}"#, "\"defaults.sandbox\" must be true or false"),
            (r#"{"defaults":[]}"#, "\"defaults\" must be an object"),
        ] {
            assert_eq!(parse(bad).err().map(|e| e.0), Some(format!("/h/mcp.json: {message}")), "{bad}");
        }
        Ok(())
    }

    #[test]
    fn a_sandboxed_stdio_servers_folders_resolve_against_the_store() -> anyhow::Result<()> {
        let s =
            parse(r#"{"mcpServers":{"fs":{"command":"npx","sandbox":true,"grants":{"dirs":["docs"]}}}}"#)?;
        let grants = s.servers[0].sandbox.clone().map(|s| s.grants).unwrap_or_default();
        assert_eq!(grants.dirs[0].host, PathBuf::from("/h/docs"));
        let err = parse(r#"{"mcpServers":{"fs":{"command":"npx","sandbox":true,"grants":{"dirs":[{"host":"/a","guest":"/b"}]}}}}"#)
            .err()
            .map(|e| e.0);
        assert_eq!(
            err.as_deref(),
            Some(
                "/h/mcp.json: server \"fs\": grants.dirs \"/a\" has a \"guest\" path, but a sandboxed stdio \
                 server sees real paths: remove \"guest\""
            )
        );
        Ok(())
    }

    #[test]
    fn a_servers_guards_are_read_and_a_wrong_one_names_the_file_server_and_entry() -> anyhow::Result<()> {
        let s = parse(
            r#"{"plugins":{"pii":{"kind":"guard","path":"g/pii.wasm"}},
                "mcpServers":{"db":{"command":"x","guards":["pii",{"plugin":"sql","phase":"request"}]}}}"#,
        )?;
        assert_eq!(s.plugins[0].kind, PluginKind::Guard);
        let guards = &s.servers[0].guards;
        let read: Vec<_> = guards.iter().map(|g| (g.plugin.as_str(), g.phase.as_str(), &g.scope)).collect();
        let db = crate::config::GuardScope::Server("db".into());
        assert_eq!(read, [("pii", "both", &db), ("sql", "request", &db)]);
        let err =
            parse(r#"{"mcpServers":{"db":{"command":"x","guards":[{"plugin":"sql","phase":"before"}]}}}"#)
                .err()
                .map(|e| e.0);
        assert_eq!(
            err.as_deref(),
            Some(
                "/h/mcp.json: server \"db\": \"guards[0].phase\" must be \"request\", \"response\" or \"both\", \
                 not \"before\""
            )
        );
        Ok(())
    }

    #[test]
    fn bad_plugins_are_named() {
        let err = parse(r#"{"plugins":{"p":{"kind":"codec","path":"x"}}}"#).err().map(|e| e.0);
        assert_eq!(
            err.as_deref(),
            Some(
                "/h/mcp.json: plugin \"p\": \"kind\" must be one of \"transport\", \"name-policy\", \"tool-shape\", \"guard\""
            )
        );
        let err = parse(r#"{"plugins":{"sse":{"kind":"transport","path":"x"}}}"#).err().map(|e| e.0);
        assert_eq!(
            err.as_deref(),
            Some("/h/mcp.json: plugin \"sse\": a transport plugin cannot take a built-in transport name")
        );
    }
}
