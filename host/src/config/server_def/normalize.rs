//! Turns one JSON server definition into a normalised [`ServerDef`] (trimmed like the original
//! tool's). Type errors name the server and the field; the caller adds the file.
//! `to_json.rs` writes a definition back.

use serde_json::Value;

use super::model::{Roots, ServerDef, Timeouts, WasmDef};
use super::native_sandbox;
use super::oauth_fields::oauth;
use super::transport_kind::{TransportKind, normalize_type};
use crate::config::ConfigError;
use crate::config::fields::{Fields, Trim};
use crate::config::guard_fields;
use crate::config::guards::GuardScope;
use crate::config::model::Limits;
use crate::config::sandbox_fields::{self, Guest};
use crate::config::store_keys::{self as key, timeouts as timeout_key, tools as tools_key};
use crate::config::tool_filter::ToolFilter;

impl ServerDef {
    /// Reads one `mcpServers` entry. `name` is trimmed by the caller's rules here too; errors
    /// read `server "<name>": "<field>" must be …` so the user can find the line to fix.
    pub fn from_json(name: &str, value: &Value) -> Result<ServerDef, ConfigError> {
        let name = name.trim();
        let obj =
            value.as_object().ok_or_else(|| format!("server \"{name}\": definition must be an object"))?;
        let owner = format!("server \"{name}\": ");
        let fields = Fields::new(obj, &owner);
        let command = fields.string(key::COMMAND)?;
        let component = fields.string(key::COMPONENT)?;
        let builtin = fields.string(key::BUILTIN)?;
        let transport = match fields.string(key::TYPE)?.as_deref().and_then(normalize_type) {
            Some(t) => Some(t),
            // The keys it names were read above: a wrong type has been reported already.
            None => TransportKind::inferred(|k| fields.string(k).is_ok_and(|v| v.is_some()))
                .map(|kind| kind.as_str().to_string()),
        };
        let wasm = if transport.as_deref() == Some(TransportKind::Wasm.as_str()) {
            Some(WasmDef {
                component_path: component.as_deref().map(sandbox_fields::expand_home),
                component,
                builtin,
                grants: sandbox_fields::grants(&fields, Guest::Server)?,
                limits: sandbox_fields::limits(&fields, Limits::for_server())?,
                sha256: sandbox_fields::sha256(&fields)?,
            })
        } else {
            None
        };
        let sandbox = native_sandbox::read(&fields, transport.as_deref())?;
        Ok(ServerDef {
            name: name.to_string(),
            transport,
            url: fields.string(key::URL)?,
            command,
            // Kept exactly: no trimming, no de-duplication (the original tool merged `-p a -p b`).
            args: fields.strings(key::ARGS, Trim::No)?.unwrap_or_default(),
            env: fields.string_map(key::ENV)?,
            headers: fields.string_map(key::HEADERS)?,
            cwd: fields.string(key::CWD)?,
            inherit_env: fields.boolean(key::INHERIT_ENV)?,
            timeouts: timeouts(&fields)?,
            oauth: oauth(&fields)?,
            wasm,
            sandbox,
            tools: tool_filter(&fields)?,
            roots: roots(&fields)?,
            protocol_version: protocol_version(&fields)?,
            guards: guard_fields::read(
                fields.raw(key::GUARDS),
                &owner,
                &GuardScope::Server(name.to_string()),
            )?,
        })
    }

    /// Resolves the paths a definition names against `base`, the folder of the file it came
    /// from: a `wasm` server's component and granted folders, a sandboxed `stdio` server's
    /// granted folders.
    pub fn resolve_paths(&mut self, base: &std::path::Path) {
        if let Some(wasm) = &mut self.wasm {
            if let Some(written) = &wasm.component {
                wasm.component_path = Some(sandbox_fields::resolve_against(base, written));
            }
            for dir in &mut wasm.grants.dirs {
                sandbox_fields::resolve_dir(dir, base);
            }
        }
        for dir in self.sandbox.iter_mut().flat_map(|s| &mut s.grants.dirs) {
            sandbox_fields::resolve_dir(dir, base);
        }
    }
}

/// What a bad `roots` is told.
const ROOTS_MUST_BE: &str = "\"workspace\", \"none\", \"client\" or an array of paths";

/// `roots`: one of the keywords, or an array of non-blank paths (trimmed; `~` and relative
/// paths are resolved when a server asks). Absent is `"workspace"`.
fn roots(fields: &Fields<'_>) -> Result<Roots, ConfigError> {
    let bad = || fields.err(key::ROOTS, ROOTS_MUST_BE);
    match fields.raw(key::ROOTS) {
        None => Ok(Roots::Workspace),
        Some(Value::String(word)) => Roots::from_keyword(word.trim()).ok_or_else(bad),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str().map(str::trim).filter(|p| !p.is_empty()).map(String::from).ok_or_else(bad)
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Roots::Paths),
        Some(_) => Err(bad()),
    }
}

/// `protocolVersion`: one of the revisions rmcp knows, as written (trimmed).
fn protocol_version(fields: &Fields<'_>) -> Result<Option<String>, ConfigError> {
    let Some(written) = fields.string(key::PROTOCOL_VERSION)? else { return Ok(None) };
    match known_revision(&written) {
        Ok(()) => Ok(Some(written)),
        Err(known) => Err(fields.err(key::PROTOCOL_VERSION, &format!("one of {known}"))),
    }
}

/// Whether `written` is an MCP revision rmcp speaks; `Err` lists those it does, for the
/// message of the file's key and of `mcp add --protocol-version` alike.
pub fn known_revision(written: &str) -> Result<(), ConfigError> {
    let known = rmcp::model::ProtocolVersion::KNOWN_VERSIONS;
    if known.iter().any(|v| v.as_str() == written) {
        return Ok(());
    }
    Err(known.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", ").into())
}

/// `tools: { include, exclude }`: arrays of globs, trimmed, blanks dropped; an empty or absent
/// `include` keeps every tool. A glob that does not compile names the field, the glob and why.
fn tool_filter(fields: &Fields<'_>) -> Result<ToolFilter, ConfigError> {
    let Some(t) = fields.object(key::TOOLS)? else { return Ok(ToolFilter::default()) };
    let globs = |key: &str| -> Result<Vec<String>, String> {
        let list = t.strings(key, Trim::Yes)?.unwrap_or_default();
        Ok(list.into_iter().filter(|g| !g.is_empty()).collect())
    };
    ToolFilter::new(globs(tools_key::INCLUDE)?, globs(tools_key::EXCLUDE)?)
        .map_err(|bad| t.says(bad.field, &format!("has a bad glob \"{}\": {}", bad.glob, bad.reason)))
}

/// `timeouts: { connectMs, listMs, callMs }`, each defaulted when absent.
fn timeouts(fields: &Fields<'_>) -> Result<Timeouts, ConfigError> {
    let mut t = Timeouts::default();
    let Some(given) = fields.object(key::TIMEOUTS)? else { return Ok(t) };
    for (key, slot) in [
        (timeout_key::CONNECT_MS, &mut t.connect),
        (timeout_key::LIST_MS, &mut t.list),
        (timeout_key::CALL_MS, &mut t.call),
    ] {
        if let Some(ms) = given.positive(key, " (milliseconds)")? {
            *slot = std::time::Duration::from_millis(ms);
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::{Map, json};

    use super::*;

    fn def(v: Value) -> ServerDef {
        ServerDef::from_json("s", &v).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn names_and_strings_are_trimmed_and_blanks_become_absent() {
        let d = ServerDef::from_json(
            "  files ",
            &json!({"type":" stdio ","command":"  npx ","url":"  ","cwd":" /srv ","env":{" A ":" 1 ","  ":"x"}}),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.name, "files");
        assert_eq!(d.transport.as_deref(), Some("stdio"));
        assert_eq!(d.command.as_deref(), Some("npx"));
        assert_eq!(d.url, None);
        assert_eq!(d.cwd.as_deref(), Some("/srv"));
        assert_eq!(d.env, vec![("A".to_string(), "1".to_string())]);
    }

    #[test]
    fn header_keys_trimmed_and_blank_keys_dropped() {
        let d = def(json!({"type":"sse","url":"u","headers":{" Authorization ":" Bearer x ","":"y"}}));
        assert_eq!(d.headers, vec![("Authorization".to_string(), "Bearer x".to_string())]);
    }

    #[test]
    fn blank_type_with_command_is_stdio() {
        assert_eq!(def(json!({"command":"x"})).transport.as_deref(), Some("stdio"));
        assert_eq!(def(json!({"type":"  ","command":"x"})).transport.as_deref(), Some("stdio"));
    }

    #[test]
    fn url_without_type_is_not_guessed() {
        assert_eq!(def(json!({"url":"http://h/mcp"})).transport, None);
    }

    #[test]
    fn type_is_lowercased_and_http_aliases_map_to_streamable_http() {
        for t in ["http", "HTTP", "streamable-http", "Streamable_HTTP"] {
            assert_eq!(def(json!({"type":t,"url":"u"})).transport.as_deref(), Some("streamable_http"), "{t}");
        }
        assert_eq!(def(json!({"type":"SSE","url":"u"})).transport.as_deref(), Some("sse"));
        assert_eq!(def(json!({"type":"TCP","url":"u"})).transport.as_deref(), Some("tcp"));
    }

    #[test]
    fn args_are_kept_exactly_with_duplicates() {
        let d = def(json!({"command":"x","args":["-p","a","-p","b"," spaced "]}));
        assert_eq!(d.args, ["-p", "a", "-p", "b", " spaced "]);
    }

    #[test]
    fn wrong_types_name_server_and_field() {
        let cases = [
            (json!({"command":"x","args":"a b"}), "server \"s\": \"args\" must be an array of strings"),
            (json!({"command":"x","args":[1]}), "server \"s\": \"args\" must be an array of strings"),
            (json!({"command":"x","env":{"A":1}}), "server \"s\": \"env\" must be an object of strings"),
            (json!({"command":"x","env":["A=1"]}), "server \"s\": \"env\" must be an object of strings"),
            (json!({"command":"x","headers":"h"}), "server \"s\": \"headers\" must be an object of strings"),
            (json!({"command":7}), "server \"s\": \"command\" must be a string"),
            (json!({"command":"x","cwd":false}), "server \"s\": \"cwd\" must be a string"),
            (
                json!({"command":"x","timeouts":{"callMs":-1}}),
                "server \"s\": \"timeouts.callMs\" must be a positive integer (milliseconds)",
            ),
            (json!("npx"), "server \"s\": definition must be an object"),
        ];
        for (v, msg) in cases {
            assert_eq!(ServerDef::from_json("s", &v).map_err(String::from), Err(msg.to_string()));
        }
    }

    #[test]
    fn inherit_env_is_read_kept_as_written_and_checked() {
        assert_eq!(def(json!({"command":"x"})).inherit_env, None);
        let d = def(json!({"command":"x","inheritEnv":false}));
        assert_eq!(d.inherit_env, Some(false));
        assert_eq!(d.to_json().get("inheritEnv"), Some(&json!(false)));
        assert_eq!(
            def(json!({"command":"x","inheritEnv":true})).to_json().get("inheritEnv"),
            Some(&json!(true))
        );
        let err = ServerDef::from_json("s", &json!({"command":"x","inheritEnv":"no"})).err();
        assert_eq!(err.as_deref(), Some("server \"s\": \"inheritEnv\" must be true or false"));
    }

    #[test]
    fn protocol_version_is_a_known_revision_kept_as_written() {
        assert_eq!(def(json!({"url":"http://h/mcp"})).protocol_version, None);
        let d = def(json!({"url":"http://h/mcp","protocolVersion":" 2025-11-25 "}));
        assert_eq!(d.protocol_version.as_deref(), Some("2025-11-25"));
        assert_eq!(d.to_json().get("protocolVersion"), Some(&json!("2025-11-25")));
        let err =
            ServerDef::from_json("s", &json!({"url":"http://h/mcp","protocolVersion":"2025-12-01"})).err();
        assert_eq!(
            err.as_deref(),
            Some(
                "server \"s\": \"protocolVersion\" must be one of 2024-11-05, 2025-03-26, 2025-06-18, \
                 2025-11-25, 2026-07-28"
            )
        );
    }

    #[test]
    fn tool_filters_read_write_merge_and_name_bad_fields() {
        let d =
            def(json!({"command":"x","tools":{"include":[" read_* ","","search"],"exclude":["*_delete"]}}));
        assert_eq!(d.tools.include(), ["read_*", "search"]);
        assert_eq!(d.tools.exclude(), ["*_delete"]);
        assert!(d.tools.allows("read_file") && !d.tools.allows("read_delete") && !d.tools.allows("write"));
        assert_eq!(
            Value::Object(d.to_json())["tools"],
            json!({"include":["read_*","search"],"exclude":["*_delete"]})
        );
        assert!(def(json!({"command":"x"})).tools.is_empty());
        assert!(def(json!({"command":"x","tools":{"include":[]}})).tools.is_empty());
        assert_eq!(def(json!({"command":"x","tools":{"include":[]}})).to_json().get("tools"), None);
        // The user's own keys inside `tools` survive, with or without globs beside them.
        for given in [
            json!({"command":"x","tools":{"x-why":"audit","exclude":[" rm "]}}),
            json!({"command":"x","tools":{"x-why":"audit","include":[]}}),
        ] {
            let merged = def(given.clone()).merge_into(given.as_object().unwrap_or(&Map::new()));
            let tools = Value::Object(merged)["tools"].clone();
            assert_eq!(tools["x-why"], "audit", "{tools}");
            assert_eq!(tools.get("include"), None, "{tools}");
        }
        for (bad, message) in [
            (json!("read_*"), "\"tools\" must be an object"),
            (json!({"include":"read_*"}), "\"tools.include\" must be an array of strings"),
            (json!({"exclude":[1]}), "\"tools.exclude\" must be an array of strings"),
            (
                json!({"include":["ok"],"exclude":["[a"]}),
                "\"tools.exclude\" has a bad glob \"[a\": unclosed character class; missing ']'",
            ),
        ] {
            let err =
                ServerDef::from_json("s", &json!({"command":"x","tools":bad})).err().unwrap_or_default();
            assert_eq!(err, format!("server \"s\": {message}"));
        }
    }

    #[test]
    fn timeouts_read_and_default() {
        let d = def(json!({"command":"x","timeouts":{"callMs":1500}}));
        assert_eq!(d.timeouts.call, Duration::from_millis(1500));
        assert_eq!(d.timeouts.connect, Timeouts::default().connect);
    }
}
