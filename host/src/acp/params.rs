//! The parameters of `session/new` and `session/load`, read by hand rather than through the
//! schema crate's request types: ACP clients send `env` and `headers` both in the spec's
//! `[{name, value}]` form and as plain objects (the original tool dropped the array form), and
//! a missing or relative `cwd` must give the original tool's exact messages, not a serde error.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::config::{Resolved, ResolvedServer, ServerDef, WorkspaceSettings, validate};

/// What a client asked for when it opened (or re-opened) a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionParams {
    /// The session's working folder: absolute, and the workspace root when the client sends
    /// no servers.
    pub cwd: PathBuf,
    /// The client's servers, normalised; empty means "use the local stores".
    pub servers: Vec<ServerDef>,
}

/// Reads `cwd` and `mcpServers` from `session/new` or `session/load` params.
pub fn session_params(params: &Value) -> Result<SessionParams, String> {
    let cwd = match params.get("cwd") {
        None | Some(Value::Null) => return Err("cwd is required".into()),
        Some(Value::String(s)) if s.trim().is_empty() => return Err("cwd is required".into()),
        Some(Value::String(s)) => PathBuf::from(s.trim()),
        Some(_) => return Err("cwd must be an absolute path".into()),
    };
    if !cwd.is_absolute() {
        return Err("cwd must be an absolute path".into());
    }
    let servers = mcp_servers(params.get("mcpServers"))?;
    Ok(SessionParams { cwd, servers })
}

/// The client's `mcpServers` as definitions, in order. Each entry is rewritten into the global
/// store's shape and read by the config layer's own normaliser, so a client's server obeys the
/// same rules as a stored one (trimming, `http` → `streamable_http`, `stdio` inferred from a
/// command). Unnamed entries become `mcp-<i>` (1-based).
pub fn mcp_servers(value: Option<&Value>) -> Result<Vec<ServerDef>, String> {
    let entries = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(_) => return Err("mcpServers must be an array".into()),
    };
    let mut defs: Vec<ServerDef> = Vec::with_capacity(entries.len());
    let mut seen = BTreeSet::new();
    for (i, entry) in entries.iter().enumerate() {
        let obj = entry.as_object().ok_or_else(|| format!("mcpServers[{i}] must be an object"))?;
        let name = match obj.get("name").and_then(Value::as_str).map(str::trim) {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => format!("mcp-{}", i + 1),
        };
        let stored = to_store_shape(obj).map_err(|e| format!("mcpServers[{i}] ({name}): {e}"))?;
        let def = ServerDef::from_json(&name, &Value::Object(stored))?;
        if !seen.insert(def.name.clone()) {
            return Err(format!("mcpServers: duplicate server name: {}", def.name));
        }
        defs.push(def);
    }
    Ok(defs)
}

/// A runtime's input for a session whose servers all came from the client: every server
/// enabled, nothing paused, default workspace settings, no plugins beyond the built-ins.
pub fn client_resolved(servers: Vec<ServerDef>) -> Resolved {
    let enabled = servers.iter().map(|d| d.name.clone()).collect();
    let servers = servers
        .into_iter()
        .map(|def| {
            let transport = validate(&def, &[]);
            ResolvedServer { def, enabled: true, paused: false, transport }
        })
        .collect();
    Resolved {
        servers,
        enabled,
        paused: Vec::new(),
        unknown_enabled: Vec::new(),
        settings: WorkspaceSettings::default(),
        plugins: Vec::new(),
        workspace_file: None,
    }
}

/// An ACP entry in the store's shape: `type`, `url`, `command`, `args`, `cwd` kept, `env` and
/// `headers` turned into objects. Other keys (`_meta`, …) are dropped: they mean nothing here.
fn to_store_shape(obj: &Map<String, Value>) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for key in ["type", "url", "command", "args", "cwd"] {
        if let Some(v) = obj.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    for key in ["env", "headers"] {
        if let Some(v) = obj.get(key) {
            out.insert(key.into(), pairs_to_object(key, v)?);
        }
    }
    Ok(out)
}

/// `[{name, value}]` or `{name: value}` → `{name: value}`; null → `{}`.
fn pairs_to_object(key: &str, value: &Value) -> Result<Value, String> {
    let bad = || format!("{key} must be an array of {{\"name\", \"value\"}} or an object of strings");
    match value {
        Value::Null => Ok(Value::Object(Map::new())),
        Value::Object(_) => Ok(value.clone()),
        Value::Array(items) => {
            let mut m = Map::new();
            for item in items {
                let name = item.get("name").and_then(Value::as_str).ok_or_else(bad)?;
                let val = item.get("value").and_then(Value::as_str).ok_or_else(bad)?;
                m.insert(name.to_string(), Value::String(val.to_string()));
            }
            Ok(Value::Object(m))
        }
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::config::TransportKind;

    #[test]
    fn cwd_is_required_and_absolute() {
        assert_eq!(session_params(&json!({})).unwrap_err(), "cwd is required");
        assert_eq!(session_params(&json!({"cwd": null})).unwrap_err(), "cwd is required");
        assert_eq!(session_params(&json!({"cwd": "  "})).unwrap_err(), "cwd is required");
        assert_eq!(session_params(&json!({"cwd": "rel/dir"})).unwrap_err(), "cwd must be an absolute path");
        assert_eq!(session_params(&json!({"cwd": 3})).unwrap_err(), "cwd must be an absolute path");
        let p = session_params(&json!({"cwd": "/w", "mcpServers": []})).unwrap();
        assert_eq!(p, SessionParams { cwd: PathBuf::from("/w"), servers: vec![] });
    }

    #[test]
    fn spec_array_form() {
        let defs = mcp_servers(Some(&json!([
            {"name": "files", "command": "npx", "args": ["-y", "x", "-p", "a", "-p", "b"],
             "env": [{"name": "TOKEN", "value": "s3cret"}]},
            {"type": "http", "name": "remote", "url": "http://127.0.0.1:1/mcp",
             "headers": [{"name": "Authorization", "value": "Bearer t"}]},
            {"type": "sse", "name": "legacy", "url": "http://127.0.0.1:2/sse", "headers": []},
        ])))
        .unwrap();
        assert_eq!(defs[0].name, "files");
        assert_eq!(defs[0].transport.as_deref(), Some("stdio"));
        assert_eq!(defs[0].args, ["-y", "x", "-p", "a", "-p", "b"]);
        assert_eq!(defs[0].env, [("TOKEN".to_string(), "s3cret".to_string())]);
        assert_eq!(defs[1].transport.as_deref(), Some("streamable_http"));
        assert_eq!(defs[1].headers, [("Authorization".to_string(), "Bearer t".to_string())]);
        assert_eq!(defs[2].transport.as_deref(), Some("sse"));
        assert!(defs[2].headers.is_empty());
    }

    #[test]
    fn object_form_and_default_names() {
        let defs = mcp_servers(Some(&json!([
            {"command": "a", "env": {"K": "v"}},
            {"type": "http", "url": "http://h/mcp", "headers": {"X-Key": "k"}},
        ])))
        .unwrap();
        assert_eq!(defs[0].name, "mcp-1");
        assert_eq!(defs[0].env, [("K".to_string(), "v".to_string())]);
        assert_eq!(defs[1].name, "mcp-2");
        assert_eq!(defs[1].headers, [("X-Key".to_string(), "k".to_string())]);
    }

    #[test]
    fn bad_entries_are_named() {
        assert_eq!(mcp_servers(Some(&json!({}))).unwrap_err(), "mcpServers must be an array");
        assert_eq!(mcp_servers(Some(&json!([1]))).unwrap_err(), "mcpServers[0] must be an object");
        assert!(
            mcp_servers(Some(&json!([{"name": "x", "command": "c", "env": [{"name": "K"}]}])))
                .unwrap_err()
                .starts_with("mcpServers[0] (x): env must be")
        );
        assert_eq!(
            mcp_servers(Some(&json!([{"name": "x", "command": "a"}, {"name": " x ", "command": "b"}])))
                .unwrap_err(),
            "mcpServers: duplicate server name: x"
        );
    }

    #[test]
    fn client_servers_are_all_enabled_and_validated() {
        let defs = mcp_servers(Some(&json!([
            {"name": "a", "command": "c"},
            {"name": "b", "type": "http"},
        ])))
        .unwrap();
        let r = client_resolved(defs);
        assert_eq!(r.enabled, ["a", "b"]);
        assert!(r.servers.iter().all(|s| s.enabled && !s.paused));
        assert_eq!(r.servers[0].transport, Ok(TransportKind::Stdio));
        assert_eq!(r.servers[1].transport, Err("streamable_http transport requires url".to_string()));
    }
}
