//! One field of one server definition set or unset under the store's lock (`mcp set NAME KEY
//! VALUE…`, `mcp unset NAME KEY`): the fix that a message prints, runnable as printed, without
//! rewriting the rest of the definition. The key and its values are checked before the lock is
//! taken; under it, the edited definition is read and validated as the store will read it, and
//! everything else in the entry (unknown keys included) stays exactly as it was.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use super::sandbox_entry::entry_mut;
use super::write::edit_store;
use crate::config::error::{ConfigError, EditError};
use crate::config::model::MASK;
use crate::config::server_def::{ServerDef, Timeouts, validate};
use crate::config::store::GlobalStore;
use crate::config::store_keys::{self as key, SERVERS_SECTION, timeouts as timeout_key, tools as tools_key};
use crate::config::tool_filter::ToolFilter;

/// The keys `mcp set` and `mcp unset` take, as their error lists them.
pub const SERVER_FIELD_KEYS: &str = "timeouts.connectMs, timeouts.listMs, timeouts.callMs, tools.include, \
     tools.exclude, args, env.VAR, headers.NAME, cwd, url, sandbox";

/// One editable field of a server definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerField {
    /// `timeouts.<connectMs|listMs|callMs>`: a positive number of milliseconds.
    Timeout(&'static str),
    /// `tools.include` or `tools.exclude`: a list of globs, replaced whole.
    ToolGlobs(&'static str),
    /// `args`: the command's arguments, replaced whole, verbatim.
    Args,
    /// `env.VAR`: one variable of the child's environment (a secret).
    Env(String),
    /// `headers.NAME`: one HTTP header (a secret).
    Header(String),
    /// `cwd`: the child's working folder.
    Cwd,
    /// `url`: a network server's endpoint.
    Url,
    /// `sandbox`: `true` or `false`, a `stdio` server under the OS sandbox or not. `true`
    /// replaces an options object (`{"required": false}`) too: the value is what it says.
    Sandbox,
}

impl ServerField {
    /// The field a key names, or the error that lists the keys.
    pub fn parse(key: &str) -> Result<Self, ConfigError> {
        let named = |prefix: &str| key.strip_prefix(prefix).filter(|rest| !rest.trim().is_empty());
        Ok(match key {
            "timeouts.connectMs" => Self::Timeout(timeout_key::CONNECT_MS),
            "timeouts.listMs" => Self::Timeout(timeout_key::LIST_MS),
            "timeouts.callMs" => Self::Timeout(timeout_key::CALL_MS),
            "tools.include" => Self::ToolGlobs(tools_key::INCLUDE),
            "tools.exclude" => Self::ToolGlobs(tools_key::EXCLUDE),
            "args" => Self::Args,
            "cwd" => Self::Cwd,
            "url" => Self::Url,
            "sandbox" => Self::Sandbox,
            _ => match (named("env."), named("headers.")) {
                (Some(var), _) => Self::Env(var.trim().to_string()),
                (_, Some(name)) => Self::Header(name.trim().to_string()),
                _ => {
                    return Err(ConfigError(format!(
                        "unknown key \"{key}\"; the keys are: {SERVER_FIELD_KEYS}"
                    )));
                }
            },
        })
    }

    /// The key as the store spells it (`timeouts.connectMs`, `env.TOKEN`).
    pub fn key(&self) -> String {
        match self {
            Self::Timeout(k) => format!("{}.{k}", key::TIMEOUTS),
            Self::ToolGlobs(k) => format!("{}.{k}", key::TOOLS),
            Self::Args => key::ARGS.to_string(),
            Self::Env(var) => format!("{}.{var}", key::ENV),
            Self::Header(name) => format!("{}.{name}", key::HEADERS),
            Self::Cwd => key::CWD.to_string(),
            Self::Url => key::URL.to_string(),
            Self::Sandbox => key::SANDBOX.to_string(),
        }
    }

    /// Whether its value is a secret, shown only as `***`.
    pub fn is_secret(&self) -> bool {
        matches!(self, Self::Env(_) | Self::Header(_))
    }

    /// The JSON `values` make for this field, checked as the store will check it. A message
    /// never quotes a secret value.
    pub fn value(&self, values: &[String]) -> Result<Value, ConfigError> {
        let key = self.key();
        let one = || match values {
            [one] => Ok(one.clone()),
            [] => Err(ConfigError(format!("{key} needs a value"))),
            more => Err(ConfigError(format!("{key} takes one value, not {}", more.len()))),
        };
        match self {
            Self::Timeout(_) => {
                Ok(Value::from(u64::try_from(millis(&key, &one()?)?.as_millis()).unwrap_or(u64::MAX)))
            }
            Self::ToolGlobs(which) => {
                if values.is_empty() {
                    return Err(ConfigError(format!(
                        "{key} needs at least one glob (unset removes the list)"
                    )));
                }
                let globs: Vec<String> = values.iter().map(|g| g.trim().to_string()).collect();
                if globs.iter().any(String::is_empty) {
                    return Err(ConfigError(format!("{key} needs a glob, not a blank")));
                }
                let (include, exclude) = if *which == tools_key::INCLUDE {
                    (globs.clone(), Vec::new())
                } else {
                    (Vec::new(), globs.clone())
                };
                ToolFilter::new(include, exclude)
                    .map_err(|bad| format!("{key} has a bad glob \"{}\": {}", bad.glob, bad.reason))?;
                Ok(globs.into_iter().map(Value::String).collect())
            }
            Self::Args => {
                if values.is_empty() {
                    return Err(ConfigError(format!("{key} needs at least one value (unset removes them)")));
                }
                Ok(values.iter().cloned().map(Value::String).collect())
            }
            Self::Env(_) | Self::Header(_) => Ok(Value::String(one()?)),
            Self::Cwd | Self::Url => {
                let v = one()?.trim().to_string();
                if v.is_empty() {
                    return Err(ConfigError(format!("{key} needs a value, not a blank")));
                }
                Ok(Value::String(v))
            }
            Self::Sandbox => match one()?.trim() {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                other => Err(ConfigError(format!("{key} must be true or false, not \"{other}\""))),
            },
        }
    }

    /// A value of this field as a message shows it: secrets as `***`, strings as they are,
    /// lists and numbers as JSON; `unset` when there is none (a timeout: its default).
    pub fn shown(&self, value: Option<&Value>) -> String {
        match value {
            None => match self {
                Self::Timeout(k) => {
                    let d = Timeouts::default();
                    let ms = match *k {
                        timeout_key::CONNECT_MS => d.connect,
                        timeout_key::LIST_MS => d.list,
                        _ => d.call,
                    };
                    format!("the default {}", ms.as_millis())
                }
                _ => "unset".to_string(),
            },
            Some(_) if self.is_secret() => MASK.to_string(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        }
    }
}

/// A number of milliseconds as `mcp set` and `mcp add`'s timeout flags take it: a positive
/// whole number (`what` names the key or the flag in the error).
pub fn millis(what: &str, value: &str) -> Result<Duration, ConfigError> {
    value.trim().parse::<u64>().ok().filter(|ms| *ms > 0).map(Duration::from_millis).ok_or_else(|| {
        ConfigError(format!("{what} must be a positive whole number of milliseconds, not \"{value}\""))
    })
}

/// Sets (`Some`) or removes (`None`) `field` of the server `name` in the store, under the lock,
/// and returns the value it had. The edited definition must read and validate as `mcp add`'s
/// would; the rest of the entry is untouched. Removing a field that is not there writes nothing.
pub fn set_server_field(
    store_path: &Path,
    name: &str,
    field: &ServerField,
    value: Option<Value>,
) -> Result<Option<Value>, EditError> {
    let name = name.trim();
    edit_store(store_path, |doc| {
        let store = GlobalStore::from_value(store_path, &Value::Object(doc.clone()))?;
        let owner = format!("server \"{name}\"");
        let entry = entry_mut(doc, store_path, SERVERS_SECTION, name, &owner)?
            .ok_or_else(|| EditError::Unknown(name.to_string()))?;
        let mut edited = entry.clone();
        let old = put(&mut edited, field, value);
        let def = ServerDef::from_json(name, &Value::Object(edited.clone()))?;
        validate(&def, &store.plugins)
            .map_err(|msg| ConfigError(format!("invalid MCP server \"{name}\": {msg}")))?;
        *entry = edited;
        Ok(old)
    })
}

/// Puts `value` at `field` in `entry` (or removes it), returning the old value. A nested
/// object left empty by a removal goes too, so an unset leaves no `"timeouts": {}` behind.
fn put(entry: &mut Map<String, Value>, field: &ServerField, value: Option<Value>) -> Option<Value> {
    let (outer, inner): (&str, Option<String>) = match field {
        ServerField::Timeout(k) => (key::TIMEOUTS, Some((*k).to_string())),
        ServerField::ToolGlobs(k) => (key::TOOLS, Some((*k).to_string())),
        ServerField::Env(var) => (key::ENV, Some(var.clone())),
        ServerField::Header(name) => (key::HEADERS, Some(name.clone())),
        ServerField::Args => (key::ARGS, None),
        ServerField::Cwd => (key::CWD, None),
        ServerField::Url => (key::URL, None),
        ServerField::Sandbox => (key::SANDBOX, None),
    };
    let Some(inner) = inner else {
        return match value {
            Some(v) => entry.insert(outer.to_string(), v),
            None => entry.remove(outer),
        };
    };
    if value.is_none() && !entry.get(outer).is_some_and(Value::is_object) {
        return None;
    }
    let object = match entry.entry(outer).or_insert_with(|| Value::Object(Map::new())) {
        Value::Object(o) => o,
        // Not an object: the value replaces it, and the validation names a wrong type anyway.
        other => {
            *other = Value::Object(Map::new());
            match other {
                Value::Object(o) => o,
                _ => return None,
            }
        }
    };
    // A header is the same header in any case; an environment variable is not.
    let existing = object
        .keys()
        .find(|k| {
            let k = k.trim();
            if outer == key::HEADERS { k.eq_ignore_ascii_case(&inner) } else { k == inner }
        })
        .cloned();
    let old = match (value, existing) {
        (Some(v), Some(k)) => object.insert(k, v),
        (Some(v), None) => object.insert(inner, v),
        (None, Some(k)) => object.remove(&k),
        (None, None) => None,
    };
    if object.is_empty() {
        entry.remove(outer);
    }
    old
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn keys_parse_and_unknown_ones_are_listed() {
        assert_eq!(ServerField::parse("env.TOKEN"), Ok(ServerField::Env("TOKEN".into())));
        assert_eq!(ServerField::parse("timeouts.callMs").map(|f| f.key()), Ok("timeouts.callMs".into()));
        assert_eq!(
            ServerField::parse("timeout.connectMs"),
            Err("unknown key \"timeout.connectMs\"; the keys are: timeouts.connectMs, timeouts.listMs, \
                 timeouts.callMs, tools.include, tools.exclude, args, env.VAR, headers.NAME, cwd, url, sandbox"
                .into())
        );
        assert!(ServerField::parse("env.").is_err());
    }

    #[test]
    fn values_are_checked_and_secrets_never_quoted() {
        let connect = ServerField::Timeout(timeout_key::CONNECT_MS);
        assert_eq!(connect.value(&strings(&["120000"])), Ok(json!(120000)));
        assert_eq!(
            connect.value(&strings(&["2m"])),
            Err("timeouts.connectMs must be a positive whole number of milliseconds, not \"2m\"".into())
        );
        let env = ServerField::Env("TOKEN".into());
        assert_eq!(env.value(&strings(&["s3cret", "more"])), Err("env.TOKEN takes one value, not 2".into()));
        assert_eq!(env.shown(Some(&json!("s3cret"))), "***");
        assert_eq!(ServerField::Sandbox.value(&strings(&[" true "])), Ok(json!(true)));
        assert_eq!(ServerField::Sandbox.value(&strings(&["false"])), Ok(json!(false)));
        assert_eq!(
            ServerField::Sandbox.value(&strings(&["on"])),
            Err("sandbox must be true or false, not \"on\"".into())
        );
        assert_eq!(ServerField::Sandbox.shown(Some(&json!({"required": false}))), "{\"required\":false}");
        let exclude = ServerField::ToolGlobs(tools_key::EXCLUDE);
        assert_eq!(
            exclude.value(&strings(&["ok", "[a"])),
            Err("tools.exclude has a bad glob \"[a\": unclosed character class; missing ']'".into())
        );
    }

    #[test]
    fn put_and_remove_keep_the_rest_and_drop_emptied_objects() {
        let mut entry =
            json!({"x-note": 1, "headers": {"Authorization": "a"}}).as_object().cloned().unwrap_or_default();
        let header = ServerField::Header("authorization".into());
        assert_eq!(put(&mut entry, &header, Some(json!("b"))), Some(json!("a")));
        assert_eq!(Value::Object(entry.clone()), json!({"x-note": 1, "headers": {"Authorization": "b"}}));
        assert_eq!(put(&mut entry, &header, None), Some(json!("b")));
        assert_eq!(Value::Object(entry.clone()), json!({"x-note": 1}));
        assert_eq!(put(&mut entry, &ServerField::Timeout(timeout_key::CALL_MS), None), None);
        assert_eq!(Value::Object(entry), json!({"x-note": 1}));
    }
}
