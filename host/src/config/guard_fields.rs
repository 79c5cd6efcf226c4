//! A `guards` list read and written, the same for the workspace file's and a server
//! definition's: an array whose entries are a guard plugin's name (every default) or
//! `{ "plugin", "tools", "phase", "mode", "failOpen" }`. Read into [`GuardUse`]s, globs
//! compiled, so a wrong value is a configuration error (exit 2) naming the entry by its place
//! (`"guards[1].phase"`); the caller adds the file, and for a server the server's name.
//!
//! Whether the plugin exists, and is a guard, is not checked here: a missing guard is the
//! runtime's to refuse (fail-closed), and `resolve.rs` words the warning about it.

use serde_json::{Map, Value};

use super::guards::{GuardMode, GuardPhase, GuardScope, GuardUse};
use super::store_keys::GUARDS;
use super::store_keys::guard::{FAIL_OPEN, MODE, PHASE, PLUGIN, TOOLS};
use crate::config::ConfigError;

/// The `tools` of an entry that says none: every name.
const EVERY_NAME: &str = "*";

/// `guards` (absent or `null`: none), in the order written; `owner` goes before every
/// message (`server "s": `, or nothing for the workspace).
pub(super) fn read(
    value: Option<&Value>,
    owner: &str,
    scope: &GuardScope,
) -> Result<Vec<GuardUse>, ConfigError> {
    let Some(value) = value.filter(|v| !v.is_null()) else { return Ok(Vec::new()) };
    let Value::Array(items) = value else {
        return Err(ConfigError(format!(
            "{owner}\"{GUARDS}\" must be an array of guard plugin names or {{\"{PLUGIN}\": …}} objects, not {value}"
        )));
    };
    items.iter().enumerate().map(|(index, item)| entry(item, &Place { owner, index }, scope)).collect()
}

/// Where an entry is, for its messages: `server "s": "guards[2]`.
struct Place<'a> {
    owner: &'a str,
    index: usize,
}

impl Place<'_> {
    /// `<owner>"guards[<i>]" <text>`.
    fn entry(&self, text: &str) -> ConfigError {
        ConfigError(format!("{}\"{GUARDS}[{}]\" {text}", self.owner, self.index))
    }

    /// `<owner>"guards[<i>].<key>" <text>`.
    fn key(&self, key: &str, text: &str) -> ConfigError {
        ConfigError(format!("{}\"{GUARDS}[{}].{key}\" {text}", self.owner, self.index))
    }
}

fn entry(item: &Value, at: &Place<'_>, scope: &GuardScope) -> Result<GuardUse, ConfigError> {
    let (plugin, given) = match item {
        Value::String(name) => match name.trim() {
            "" => return Err(at.entry(&format!("must be a guard plugin's name, not {item}"))),
            name => (name.to_string(), None),
        },
        Value::Object(obj) => (plugin(obj, at)?, Some(obj)),
        other => {
            return Err(at.entry(&format!(
                "must be a guard plugin's name or an object like {{\"{PLUGIN}\": \"pii\"}}, not {other}"
            )));
        }
    };
    let get = |key: &str| given.and_then(|obj| obj.get(key)).filter(|v| !v.is_null());
    let tools = tools(get(TOOLS), at)?;
    let phase = match get(PHASE) {
        None => GuardPhase::Both,
        Some(v) => v.as_str().and_then(|s| GuardPhase::parse(s.trim())).ok_or_else(|| {
            at.key(PHASE, &format!("must be \"request\", \"response\" or \"both\", not {v}"))
        })?,
    };
    let mode = match get(MODE) {
        None => GuardMode::Enforce,
        Some(v) => v
            .as_str()
            .and_then(|s| GuardMode::parse(s.trim()))
            .ok_or_else(|| at.key(MODE, &format!("must be \"enforce\" or \"audit\", not {v}")))?,
    };
    let fail_open = match get(FAIL_OPEN) {
        None => false,
        Some(v) => {
            v.as_bool().ok_or_else(|| at.key(FAIL_OPEN, &format!("must be true or false, not {v}")))?
        }
    };
    GuardUse::new(plugin, tools, phase, mode, fail_open, scope.clone())
        .map_err(|(glob, reason)| at.key(TOOLS, &format!("has a bad glob {}: {reason}", Value::String(glob))))
}

/// An object entry's `plugin`: required, a non-blank string (trimmed).
fn plugin(obj: &Map<String, Value>, at: &Place<'_>) -> Result<String, ConfigError> {
    match obj.get(PLUGIN).filter(|v| !v.is_null()) {
        None => Err(at.entry(&format!("has no \"{PLUGIN}\": every entry names its guard plugin"))),
        Some(Value::String(name)) if !name.trim().is_empty() => Ok(name.trim().to_string()),
        Some(other) => Err(at.key(PLUGIN, &format!("must be a guard plugin's name, not {other}"))),
    }
}

/// `tools`: an array of globs, trimmed, blanks dropped; absent or empty is every name.
fn tools(value: Option<&Value>, at: &Place<'_>) -> Result<Vec<String>, ConfigError> {
    let Some(value) = value else { return Ok(vec![EVERY_NAME.to_string()]) };
    let bad = || at.key(TOOLS, &format!("must be an array of globs, not {value}"));
    let items = value.as_array().ok_or_else(bad)?;
    let globs = items
        .iter()
        .map(|glob| glob.as_str().map(|g| g.trim().to_string()).ok_or_else(bad))
        .collect::<Result<Vec<String>, _>>()?;
    let globs: Vec<String> = globs.into_iter().filter(|g| !g.is_empty()).collect();
    Ok(if globs.is_empty() { vec![EVERY_NAME.to_string()] } else { globs })
}

/// `guards` as the file holds it (`None` when there are none): an entry that keeps every
/// default is its plugin's name; otherwise an object with `plugin` and what differs.
pub(super) fn guards_json(guards: &[GuardUse]) -> Option<Value> {
    (!guards.is_empty()).then(|| guards.iter().map(entry_json).collect())
}

fn entry_json(guard: &GuardUse) -> Value {
    let every_name = guard.tools.len() == 1 && guard.tools[0] == EVERY_NAME;
    let mut m = Map::new();
    if !every_name {
        m.insert(TOOLS.into(), guard.tools.iter().cloned().map(Value::String).collect());
    }
    if guard.phase != GuardPhase::Both {
        m.insert(PHASE.into(), guard.phase.as_str().into());
    }
    if guard.mode != GuardMode::Enforce {
        m.insert(MODE.into(), guard.mode.as_str().into());
    }
    if guard.fail_open {
        m.insert(FAIL_OPEN.into(), true.into());
    }
    if m.is_empty() {
        return Value::String(guard.plugin.clone());
    }
    let mut out = Map::new();
    out.insert(PLUGIN.into(), Value::String(guard.plugin.clone()));
    out.extend(m);
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn server() -> GuardScope {
        GuardScope::Server("s".into())
    }

    fn read_ok(v: Value) -> Vec<GuardUse> {
        read(Some(&v), "server \"s\": ", &server()).unwrap_or_else(|e| panic!("{e}"))
    }

    fn err(v: Value) -> String {
        read(Some(&json!([v])), "server \"s\": ", &server()).err().map(|e| e.0).unwrap_or_default()
    }

    fn guard(plugin: &str, tools: &[&str], phase: GuardPhase, mode: GuardMode, fail_open: bool) -> GuardUse {
        let tools = tools.iter().map(|t| t.to_string()).collect();
        GuardUse::new(plugin.into(), tools, phase, mode, fail_open, server())
            .unwrap_or_else(|e| panic!("{e:?}"))
    }

    #[test]
    fn absent_or_null_is_none() {
        assert_eq!(read(None, "", &GuardScope::Workspace), Ok(Vec::new()));
        assert_eq!(read(Some(&Value::Null), "", &GuardScope::Workspace), Ok(Vec::new()));
        assert_eq!(read_ok(json!([])), Vec::new());
    }

    #[test]
    fn a_name_is_every_default_and_order_is_kept() {
        let read = read_ok(json!([
            " pii ",
            {"plugin": "sql", "tools": [" db_* ", "", "query"], "phase": "request", "mode": "audit", "failOpen": true},
            {"plugin": "pii", "tools": [], "phase": null, "mode": " enforce ", "failOpen": false},
            {"plugin": "last", "phase": "response"}
        ]));
        let every = |p: &str| guard(p, &["*"], GuardPhase::Both, GuardMode::Enforce, false);
        assert_eq!(
            read,
            [
                every("pii"),
                guard("sql", &["db_*", "query"], GuardPhase::Request, GuardMode::Audit, true),
                every("pii"),
                guard("last", &["*"], GuardPhase::Response, GuardMode::Enforce, false),
            ]
        );
        assert_eq!(read[0].scope, server());
        assert!(read[1].applies(&["db_query"]) && !read[1].applies(&["files_read"]));
        let workspace = super::read(Some(&json!(["pii"])), "", &GuardScope::Workspace);
        assert_eq!(workspace.map(|g| g[0].scope.clone()), Ok(GuardScope::Workspace));
    }

    #[test]
    fn written_back_as_short_as_it_reads_the_same() {
        let given = json!([
            "pii",
            {"plugin": "pii", "tools": ["*"]},
            {"plugin": "sql", "tools": ["db_*"], "phase": "request", "mode": "audit", "failOpen": true},
            {"plugin": "r", "phase": "response"}
        ]);
        assert_eq!(
            guards_json(&read_ok(given)),
            Some(json!([
                "pii",
                "pii",
                {"plugin": "sql", "tools": ["db_*"], "phase": "request", "mode": "audit", "failOpen": true},
                {"plugin": "r", "phase": "response"}
            ]))
        );
        assert_eq!(guards_json(&[]), None);
    }

    #[test]
    fn every_mistake_names_the_entry_and_the_key() {
        assert_eq!(
            read(Some(&json!("pii")), "", &GuardScope::Workspace).err().map(|e| e.0).unwrap_or_default(),
            r#""guards" must be an array of guard plugin names or {"plugin": …} objects, not "pii""#
        );
        let cases = [
            (
                json!(7),
                r#""guards[0]" must be a guard plugin's name or an object like {"plugin": "pii"}, not 7"#,
            ),
            (json!("  "), r#""guards[0]" must be a guard plugin's name, not "  ""#),
            (json!({"tools": ["*"]}), r#""guards[0]" has no "plugin": every entry names its guard plugin"#),
            (json!({"plugin": " "}), r#""guards[0].plugin" must be a guard plugin's name, not " ""#),
            (json!({"plugin": 1}), r#""guards[0].plugin" must be a guard plugin's name, not 1"#),
            (
                json!({"plugin": "p", "tools": "db_*"}),
                r#""guards[0].tools" must be an array of globs, not "db_*""#,
            ),
            (
                json!({"plugin": "p", "tools": ["a", 2]}),
                r#""guards[0].tools" must be an array of globs, not ["a",2]"#,
            ),
            (
                json!({"plugin": "p", "tools": ["ok", "[a"]}),
                r#""guards[0].tools" has a bad glob "[a": unclosed character class; missing ']'"#,
            ),
            (
                json!({"plugin": "p", "phase": "req"}),
                r#""guards[0].phase" must be "request", "response" or "both", not "req""#,
            ),
            (
                json!({"plugin": "p", "phase": 1}),
                r#""guards[0].phase" must be "request", "response" or "both", not 1"#,
            ),
            (
                json!({"plugin": "p", "mode": "block"}),
                r#""guards[0].mode" must be "enforce" or "audit", not "block""#,
            ),
            (
                json!({"plugin": "p", "failOpen": "yes"}),
                r#""guards[0].failOpen" must be true or false, not "yes""#,
            ),
        ];
        for (given, message) in cases {
            assert_eq!(err(given.clone()), format!("server \"s\": {message}"), "{given}");
        }
        // The place is the entry's index in the list.
        let second = read(Some(&json!(["ok", {"plugin": "p", "mode": "Audit"}])), "", &GuardScope::Workspace);
        assert_eq!(
            second.err().map(|e| e.0).unwrap_or_default(),
            r#""guards[1].mode" must be "enforce" or "audit", not "Audit""#
        );
    }
}
