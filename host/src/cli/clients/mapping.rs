//! One client's server entry in toolport's store format: what `mcp import` adds, the fields
//! toolport has no place for named in notes, and the clients' own variables recognised.

use serde_json::{Map, Value};

use super::client::Client;

/// One server in toolport's store format.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Mapped {
    pub def: Map<String, Value>,
    pub transport: &'static str,
    pub notes: Vec<String>,
    /// The client's entry turns the server off (Codex's `enabled = false`).
    pub off_in_client: bool,
}

/// Maps one of `client`'s entries to a store definition: stdio `{type, command, args, env,
/// cwd}`, remote `{type: http|sse, url, headers}`, timeouts where the client has them. Fields
/// toolport has no place for are named in a note; type errors are left to
/// [`add_server`](toolport::edit::add_server)'s validation, which names the field.
pub(super) fn to_store(client: Client, entry: &Value) -> Result<Mapped, String> {
    let obj = entry.as_object().ok_or("the definition is not an object")?;
    let has = |k: &str| obj.get(k).is_some_and(|v| !v.is_null());
    let declared = obj.get("type").and_then(Value::as_str).map(|t| t.trim().to_ascii_lowercase());
    let is_http = |t: &str| matches!(t, "http" | "streamable-http" | "streamable_http" | "streamablehttp");
    // (transport, the key holding the URL)
    let (transport, url_key) = match client {
        Client::Gemini if has("command") => ("stdio", None),
        // Gemini: `httpUrl` is streamable HTTP, `url` is SSE unless a `type` says otherwise.
        Client::Gemini if has("httpUrl") => ("http", Some("httpUrl")),
        Client::Gemini if has("url") => match declared.as_deref() {
            Some(t) if is_http(t) => ("http", Some("url")),
            _ => ("sse", Some("url")),
        },
        Client::Gemini => return Err("it has no command, url or httpUrl".into()),
        Client::Codex if has("command") => ("stdio", None),
        Client::Codex if has("url") => ("http", Some("url")),
        Client::Codex => return Err("it has no command or url".into()),
        _ => match declared.as_deref() {
            Some("stdio") => ("stdio", None),
            Some("sse") => ("sse", Some("url")),
            Some(t) if is_http(t) => ("http", Some("url")),
            Some(other) => return Err(format!("type \"{other}\" has no toolport equivalent")),
            None if has("command") => ("stdio", None),
            // A bare `url` (Cursor, Claude Desktop): today's servers speak streamable HTTP.
            None if has("url") => ("http", Some("url")),
            None => return Err("it has no command or url".into()),
        },
    };
    let mut used = vec!["type"];
    let mut def = Map::new();
    def.insert("type".into(), transport.into());
    let mut copy = |def: &mut Map<String, Value>, from: &'static str, to: &str| {
        if let Some(v) = obj.get(from).filter(|v| !v.is_null()) {
            def.insert(to.into(), v.clone());
        }
        used.push(from);
    };
    match url_key {
        None => {
            if !has("command") {
                return Err("a stdio server without a command".into());
            }
            for key in ["command", "args", "env", "cwd"] {
                copy(&mut def, key, key);
            }
        }
        Some(url_key) => {
            copy(&mut def, url_key, "url");
            if client == Client::Codex {
                copy(&mut def, "http_headers", "headers");
            } else {
                copy(&mut def, "headers", "headers");
            }
        }
    }
    let mut off_in_client = false;
    if client == Client::Codex {
        codex_extras(obj, &mut def, &mut used)?;
        // Codex's own switch: the server stays defined, and off.
        off_in_client = obj.get("enabled") == Some(&Value::Bool(false));
        used.push("enabled");
    }
    let mut timeouts = Map::new();
    match client {
        // Gemini's `timeout` is each request's, in milliseconds.
        Client::Gemini => {
            if let Some(ms) = obj.get("timeout").filter(|v| !v.is_null()) {
                timeouts.insert("callMs".into(), ms.clone());
            }
            used.push("timeout");
        }
        Client::Codex => {
            for (key, to) in [("startup_timeout_sec", "connectMs"), ("tool_timeout_sec", "callMs")] {
                if let Some(s) = obj.get(key).and_then(Value::as_f64) {
                    timeouts.insert(to.into(), ((s * 1000.0).round() as u64).into());
                }
                used.push(key);
            }
        }
        _ => {}
    }
    if !timeouts.is_empty() {
        def.insert("timeouts".into(), Value::Object(timeouts));
    }
    let filter_keys = match client {
        Client::Gemini => Some(("includeTools", "excludeTools")),
        Client::Codex => Some(("enabled_tools", "disabled_tools")),
        _ => None,
    };
    if let Some((include, exclude)) = filter_keys {
        let mut tools = Map::new();
        for (from, to) in [(include, "include"), (exclude, "exclude")] {
            if let Some(names) = obj.get(from).filter(|v| !v.is_null()) {
                tools.insert(to.into(), literal_globs(names));
            }
            used.push(from);
        }
        if !tools.is_empty() {
            def.insert("tools".into(), Value::Object(tools));
        }
    }
    let mut notes = Vec::new();
    let dropped: Vec<&str> = obj.keys().map(String::as_str).filter(|k| !used.contains(k)).collect();
    if !dropped.is_empty() {
        notes.push(format!("not carried over: {}", dropped.join(", ")));
    }
    if mentions_client_variables(&Value::Object(def.clone())) {
        notes.push(format!(
            "uses {client}'s own ${{…}} variables, kept as text: toolport expands only ${{VAR}} from the environment"
        ));
    }
    Ok(Mapped { def, transport, notes, off_in_client })
}

/// A client's list of exact tool names as globs that match only those names (a name with a
/// `*` or `[` in it means the character). Anything but strings is left for the store's
/// validation to name. Not `globset::escape`: it leaves `\` as it is, and our filters read `\`
/// as an escape (`config/tool_filter.rs`).
fn literal_globs(names: &Value) -> Value {
    let Some(list) = names.as_array() else { return names.clone() };
    let escape = |name: &str| {
        name.chars().fold(String::new(), |mut out, c| {
            if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
                out.push('\\');
            }
            out.push(c);
            out
        })
    };
    Value::Array(list.iter().map(|v| v.as_str().map_or_else(|| v.clone(), |n| escape(n).into())).collect())
}

/// Codex's header sources beside `http_headers`: `env_http_headers` (header → variable) and
/// `bearer_token_env_var`, both written as `${VAR}` text for toolport to expand.
fn codex_extras(
    obj: &Map<String, Value>,
    def: &mut Map<String, Value>,
    used: &mut Vec<&'static str>,
) -> Result<(), String> {
    used.extend(["env_http_headers", "bearer_token_env_var"]);
    let mut extra = Vec::new();
    if let Some(from_env) = obj.get("env_http_headers").and_then(Value::as_object) {
        for (header, var) in from_env {
            let var = var.as_str().ok_or_else(|| format!("\"env_http_headers.{header}\" is not a string"))?;
            extra.push((header.clone(), format!("${{{var}}}")));
        }
    }
    if let Some(var) = obj.get("bearer_token_env_var").and_then(Value::as_str) {
        extra.push(("Authorization".to_string(), format!("Bearer ${{{var}}}")));
    }
    if extra.is_empty() {
        return Ok(());
    }
    let headers = def.entry("headers").or_insert_with(|| Value::Object(Map::new()));
    let headers = headers.as_object_mut().ok_or("\"http_headers\" is not a table")?;
    for (k, v) in extra {
        headers.insert(k, v.into());
    }
    Ok(())
}

/// `${input:…}`, `${env:…}`, `${workspaceFolder}` and the like: VS Code's and Cursor's
/// variables, which toolport's `${VAR}` expansion refuses (its names are letters, digits, `_`).
fn mentions_client_variables(v: &Value) -> bool {
    match v {
        Value::String(s) => s.match_indices("${").any(|(i, _)| {
            let inner = s[i + 2..].split('}').next().unwrap_or_default();
            // `${VAR:-default}` is toolport's (and Claude Code's) own fallback, not a client's
            // `${input:…}`: only the part before `:-` is the name.
            let name = inner.split(":-").next().unwrap_or_default();
            name.contains(':') || matches!(name, "workspaceFolder" | "userHome" | "workspaceFolderBasename")
        }),
        Value::Array(a) => a.iter().any(mentions_client_variables),
        Value::Object(m) => m.values().any(mentions_client_variables),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map(client: Client, v: Value) -> Result<(Value, &'static str, Vec<String>), String> {
        to_store(client, &v).map(|m| (Value::Object(m.def), m.transport, m.notes))
    }

    #[test]
    fn stdio_entries_keep_their_values_as_text() -> Result<(), String> {
        let entry = json!({"type":"stdio","command":"npx","args":["-y","${PKG}"],"env":{"TOKEN":"${TOKEN}"},"cwd":"/srv"});
        let (def, transport, notes) = map(Client::ClaudeCode, entry)?;
        assert_eq!(
            def,
            json!({"type":"stdio","command":"npx","args":["-y","${PKG}"],"env":{"TOKEN":"${TOKEN}"},"cwd":"/srv"})
        );
        assert_eq!((transport, notes), ("stdio", vec![]));
        let (def, ..) = map(Client::Cursor, json!({"command":"x"}))?;
        assert_eq!(def, json!({"type":"stdio","command":"x"}));
        Ok(())
    }

    #[test]
    fn remote_entries_per_client() -> Result<(), String> {
        let vs = map(Client::VsCode, json!({"type":"http","url":"https://a/mcp","headers":{"K":"${V}"}}))?;
        assert_eq!(vs.0, json!({"type":"http","url":"https://a/mcp","headers":{"K":"${V}"}}));
        assert_eq!(map(Client::VsCode, json!({"type":"sse","url":"u"}))?.1, "sse");
        assert_eq!(map(Client::Gemini, json!({"httpUrl":"u"}))?.0, json!({"type":"http","url":"u"}));
        assert_eq!(map(Client::Gemini, json!({"url":"u"}))?.1, "sse");
        assert_eq!(map(Client::Gemini, json!({"url":"u","type":"http"}))?.1, "http");
        assert_eq!(map(Client::Cursor, json!({"url":"u"}))?.1, "http");
        Ok(())
    }

    #[test]
    fn codex_tables_map_headers_and_timeouts() -> Result<(), String> {
        let entry = json!({"url":"https://a/mcp","bearer_token_env_var":"TOK","http_headers":{"X":"1"},
            "env_http_headers":{"Y":"YV"},"startup_timeout_sec":10,"tool_timeout_sec":1.5,"enabled":true});
        let (def, transport, notes) = map(Client::Codex, entry)?;
        assert_eq!(
            def,
            json!({"type":"http","url":"https://a/mcp","headers":{"X":"1","Y":"${YV}","Authorization":"Bearer ${TOK}"},
                "timeouts":{"connectMs":10000,"callMs":1500}})
        );
        assert_eq!((transport, notes), ("http", vec![]));
        let off = |v| to_store(Client::Codex, &v).map(|m| m.off_in_client);
        assert_eq!(off(json!({"command":"x","enabled":true})), Ok(false));
        assert_eq!(off(json!({"command":"x","enabled":false})), Ok(true));
        assert_eq!(off(json!({"command":"x"})), Ok(false));
        Ok(())
    }

    #[test]
    fn gemini_and_codex_tool_lists_become_filters_on_the_exact_names() -> Result<(), String> {
        let gemini =
            map(Client::Gemini, json!({"command":"x","includeTools":["read","a*b"],"excludeTools":["rm"]}))?;
        assert_eq!(gemini.0["tools"], json!({"include": ["read", "a\\*b"], "exclude": ["rm"]}));
        assert!(gemini.2.is_empty(), "{:?}", gemini.2);
        let codex =
            map(Client::Codex, json!({"command":"x","enabled_tools":["read"],"disabled_tools":["rm"]}))?;
        assert_eq!(codex.0["tools"], json!({"include": ["read"], "exclude": ["rm"]}));
        let filter =
            toolport::store::ToolFilter::new(vec!["a\\*b".into()], vec![]).map_err(|e| format!("{e:?}"))?;
        assert!(filter.allows("a*b") && !filter.allows("axb"));
        Ok(())
    }

    #[test]
    fn unmappable_entries_say_why_and_notes_name_keys_only() {
        assert_eq!(
            map(Client::VsCode, json!({"type":"ws","url":"u"})).err().as_deref(),
            Some("type \"ws\" has no toolport equivalent")
        );
        assert_eq!(
            map(Client::ClaudeCode, json!({"args":[]})).err().as_deref(),
            Some("it has no command or url")
        );
        assert_eq!(
            map(Client::ClaudeCode, json!("x")).err().as_deref(),
            Some("the definition is not an object")
        );
        let notes = map(Client::Gemini, json!({"command":"x","trust":true,"env":{"K":"${input:key}"}}))
            .map(|m| m.2)
            .unwrap_or_default();
        assert_eq!(notes[0], "not carried over: trust");
        assert!(notes[1].starts_with("uses gemini's own ${…} variables"), "{notes:?}");
        let fallback = map(Client::ClaudeCode, json!({"command":"x","env":{"K":"${KEY:-none}"}}));
        assert_eq!(fallback.map(|m| m.2), Ok(vec![]), "a ${{VAR:-default}} is toolport's own");
    }
}
