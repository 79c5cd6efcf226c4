//! The workspace's `bundles`: named slices of the surface that `serve --http` also serves at
//! `/mcp/<bundle>`, so one gateway appears to a client as several servers.
//!
//! ```json
//! "bundles": {"docs": {"servers": ["docs"], "tools": {"include": ["read_*"], "exclude": ["*_draft"]}}}
//! ```
//!
//! A bundle holds its `servers`' tools, resources and prompts; its `tools` filter (the
//! per-server filter's globs and rule, on the servers' own tool names) narrows the tools
//! further. A bundle name is a URL path segment: letters, digits, `-` and `_`.

use std::collections::BTreeMap;

use serde_json::Value;

use super::fields::{Fields, Trim};
use super::store_keys::tools::{EXCLUDE, INCLUDE};
use super::tool_filter::ToolFilter;
use crate::config::ConfigError;

/// The workspace key.
pub const BUNDLES_KEY: &str = "bundles";

/// One bundle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bundle {
    /// The servers (configured names) whose offerings it holds.
    pub servers: Vec<String>,
    /// Which of their tools (by the server's own name) it keeps.
    pub tools: ToolFilter,
}

impl Bundle {
    /// Whether `server`'s tool called `tool` (the server's own name) is in the bundle.
    pub fn holds_tool(&self, server: &str, tool: &str) -> bool {
        self.holds_server(server) && self.tools.allows(tool)
    }

    /// Whether `server`'s resources and prompts are in the bundle.
    pub fn holds_server(&self, server: &str) -> bool {
        self.servers.iter().any(|s| s == server)
    }
}

/// `bundles`, by name; an error names the bundle and its key.
pub(super) fn read(value: Option<&Value>) -> Result<BTreeMap<String, Bundle>, ConfigError> {
    let mut out = BTreeMap::new();
    let Some(value) = value.filter(|v| !v.is_null()) else { return Ok(out) };
    let Value::Object(each) = value else {
        return Err(ConfigError(format!(
            "\"{BUNDLES_KEY}\" must be an object like {{\"docs\": {{\"servers\": [\"docs\"]}}}}, not {value}"
        )));
    };
    for (name, bundle) in each {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(ConfigError(format!(
                "\"{BUNDLES_KEY}\": the bundle name {} must be letters, digits, '-' and '_' (it is a URL path segment)",
                Value::String(name.clone())
            )));
        }
        let owner = format!("bundle \"{name}\": ");
        let Value::Object(obj) = bundle else {
            return Err(ConfigError(format!(
                "{owner}must be an object like {{\"servers\": [\"docs\"]}}, not {bundle}"
            )));
        };
        let fields = Fields::new(obj, &owner);
        if let Some(unknown) = obj.keys().find(|k| *k != "servers" && *k != "tools") {
            return Err(ConfigError(format!(
                "{owner}has no key \"{unknown}\" (it takes \"servers\" and \"tools\")"
            )));
        }
        let mut servers: Vec<String> = Vec::new();
        for server in fields.strings("servers", Trim::Yes)?.unwrap_or_default() {
            if !server.is_empty() && !servers.contains(&server) {
                servers.push(server);
            }
        }
        if servers.is_empty() {
            return Err(fields.err("servers", "a non-empty array of server names"));
        }
        out.insert(name.clone(), Bundle { servers, tools: tool_filter(&fields)? });
    }
    Ok(out)
}

/// `tools: { include, exclude }` as a server's filter reads it (`server_def/normalize.rs`),
/// its messages naming the bundle: read here again, since `server_def` stands above `model`.
fn tool_filter(fields: &Fields<'_>) -> Result<ToolFilter, ConfigError> {
    let Some(t) = fields.object("tools")? else { return Ok(ToolFilter::default()) };
    let globs = |key: &str| -> Result<Vec<String>, String> {
        let list = t.strings(key, Trim::Yes)?.unwrap_or_default();
        Ok(list.into_iter().filter(|g| !g.is_empty()).collect())
    };
    ToolFilter::new(globs(INCLUDE)?, globs(EXCLUDE)?)
        .map_err(|bad| t.says(bad.field, &format!("has a bad glob \"{}\": {}", bad.glob, bad.reason)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_bundle_holds_its_servers_and_the_tools_its_filter_keeps() {
        let read =
            read(Some(&json!({"docs": {"servers": ["docs", " docs"], "tools": {"include": ["read_*"]}}})));
        let bundles = read.unwrap_or_else(|e| panic!("{e}"));
        let docs = &bundles["docs"];
        assert_eq!(docs.servers, ["docs"]);
        assert!(docs.holds_tool("docs", "read_page") && !docs.holds_tool("docs", "write_page"));
        assert!(!docs.holds_tool("demo", "read_page") && !docs.holds_server("demo"));
    }

    #[test]
    fn bad_bundles_name_the_bundle_and_key() {
        let err = |v: Value| read(Some(&v)).err().unwrap_or_default();
        assert_eq!(
            err(json!([])),
            r#""bundles" must be an object like {"docs": {"servers": ["docs"]}}, not []"#
        );
        assert_eq!(
            err(json!({"a b": {"servers": ["x"]}})),
            r#""bundles": the bundle name "a b" must be letters, digits, '-' and '_' (it is a URL path segment)"#
        );
        assert_eq!(
            err(json!({"d": {"servers": []}})),
            r#"bundle "d": "servers" must be a non-empty array of server names"#
        );
        assert_eq!(
            err(json!({"d": {"servers": "x"}})),
            r#"bundle "d": "servers" must be an array of strings"#
        );
        assert_eq!(
            err(json!({"d": {"servers": ["x"], "tool": {}}})),
            r#"bundle "d": has no key "tool" (it takes "servers" and "tools")"#
        );
        assert_eq!(
            err(json!({"d": {"servers": ["x"], "tools": {"include": ["[a"]}}})),
            r#"bundle "d": "tools.include" has a bad glob "[a": unclosed character class; missing ']'"#
        );
    }
}
