//! A normalised [`ServerDef`] back into the JSON the store holds: known fields in a fixed
//! order, empty ones omitted, and, for a definition a person wrote, merged into their object so
//! unknown keys (theirs, or another tool's) stay where they were.

use serde_json::{Map, Value};

use super::model::{Roots, ServerDef, Timeouts};
use super::native_sandbox;
use super::oauth_fields::oauth_json;
use crate::config::guard_fields;
use crate::config::guards::GuardScope;
use crate::config::model::Limits;
use crate::config::sandbox_fields;
use crate::config::store_keys::{self as key, timeouts as timeout_key, tools as tools_key};
use crate::config::tool_filter::ToolFilter;

impl ServerDef {
    /// The definition as the store holds it: known fields in a fixed order, null/empty omitted,
    /// timeouts only where they differ from the defaults.
    pub fn to_json(&self) -> Map<String, Value> {
        let mut m = Map::new();
        let put_str = |m: &mut Map<String, Value>, k: &str, v: &Option<String>| {
            if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
                m.insert(k.into(), Value::String(v.into()));
            }
        };
        put_str(&mut m, key::TYPE, &self.transport);
        put_str(&mut m, key::URL, &self.url);
        put_str(&mut m, key::COMMAND, &self.command);
        if !self.args.is_empty() {
            m.insert(key::ARGS.into(), self.args.iter().cloned().map(Value::String).collect());
        }
        for (key, pairs) in [(key::ENV, &self.env), (key::HEADERS, &self.headers)] {
            if !pairs.is_empty() {
                let obj: Map<String, Value> =
                    pairs.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
                m.insert(key.into(), Value::Object(obj));
            }
        }
        put_str(&mut m, key::CWD, &self.cwd);
        if let Some(inherit) = self.inherit_env {
            m.insert(key::INHERIT_ENV.into(), Value::Bool(inherit));
        }
        if let Some(t) = timeouts_json(&self.timeouts) {
            m.insert(key::TIMEOUTS.into(), t);
        }
        if let Some(o) = &self.oauth {
            m.insert(key::OAUTH.into(), Value::Object(oauth_json(o)));
        }
        if let Some(t) = tool_filter_json(&self.tools) {
            m.insert(key::TOOLS.into(), t);
        }
        if let Some(r) = roots_json(&self.roots) {
            m.insert(key::ROOTS.into(), r);
        }
        put_str(&mut m, key::PROTOCOL_VERSION, &self.protocol_version);
        if let Some(g) = guard_fields::guards_json(&self.guards) {
            m.insert(key::GUARDS.into(), g);
        }
        if let Some(s) = &self.sandbox {
            m.insert(key::SANDBOX.into(), native_sandbox::sandbox_json(s));
            if let Some(g) = sandbox_fields::grants_json(&s.grants) {
                m.insert(key::GRANTS.into(), g);
            }
            if let Some(l) = native_sandbox::limits_json(&s.limits) {
                m.insert(key::LIMITS.into(), l);
            }
        }
        if let Some(w) = &self.wasm {
            put_str(&mut m, key::COMPONENT, &w.component);
            put_str(&mut m, key::BUILTIN, &w.builtin);
            if let Some(g) = sandbox_fields::grants_json(&w.grants) {
                m.insert(key::GRANTS.into(), g);
            }
            if let Some(l) = sandbox_fields::limits_json(&w.limits, Limits::for_server()) {
                m.insert(key::LIMITS.into(), l);
            }
            put_str(&mut m, key::SHA256, &w.sha256);
        }
        m
    }

    /// `input` (a user's JSON definition) with every known field replaced by its normalised
    /// value or dropped when empty, unknown keys kept in place, and an inferred `type` added.
    pub fn merge_into(&self, input: &Map<String, Value>) -> Map<String, Value> {
        let known = self.to_json();
        let mut out = Map::new();
        // A server without a sandbox has no sandbox fields: keys of those names are its own.
        let known_here = |k: &str| {
            key::SERVER.contains(&k)
                || (self.wasm.is_some() && key::WASM.contains(&k))
                || (self.sandbox.is_some() && key::NATIVE.contains(&k))
        };
        let native = self.sandbox.is_some();
        let empty = Map::new();
        for (k, v) in input {
            if !known_here(k) || self.guards_as_written(k, v) {
                out.insert(k.clone(), v.clone());
                continue;
            }
            let ours = match known.get(k) {
                None => Some(&empty),
                Some(Value::Object(o)) => Some(o),
                // `"sandbox": true` says no more than `{}`: a person's object stays an object.
                Some(Value::Bool(true)) if k == key::SANDBOX => Some(&empty),
                Some(_) => None,
            };
            match (ours, v) {
                // `oauth`, `grants`, `limits`, `tools` and `sandbox` keep the user's own keys
                // inside them too, even when none of ours is left (`tools: {"x-note": …}`).
                (Some(nv), Value::Object(given)) if key::NESTED.contains(&k.as_str()) => {
                    let mut merged: Map<String, Value> = given
                        .iter()
                        .filter(|(key, _)| nv.contains_key(*key) || !nested_known(k, key, native))
                        .map(|(key, value)| (key.clone(), nv.get(key).unwrap_or(value).clone()))
                        .collect();
                    for (key, value) in nv {
                        merged.entry(key.clone()).or_insert_with(|| value.clone());
                    }
                    if known.contains_key(k) || !merged.is_empty() {
                        out.insert(k.clone(), Value::Object(merged));
                    }
                }
                _ => {
                    if let Some(nv) = known.get(k) {
                        out.insert(k.clone(), nv.clone());
                    }
                }
            }
        }
        for (k, v) in known {
            out.entry(k).or_insert(v);
        }
        out
    }

    /// Whether `value` is the `guards` this definition holds, as its person wrote them: kept
    /// so, with their own keys inside entries and the short or long form each chose.
    fn guards_as_written(&self, key: &str, value: &Value) -> bool {
        key == key::GUARDS
            && guard_fields::read(Some(value), "", &GuardScope::Server(self.name.clone()))
                .is_ok_and(|read| read == self.guards)
    }
}

/// Whether `inner` is one of ours inside the nested object `field`; `native`: the `limits` are
/// a sandboxed `stdio` server's, whose keys are not a guest's.
fn nested_known(field: &str, inner: &str, native: bool) -> bool {
    match field {
        key::OAUTH => key::oauth::KEYS.contains(&inner),
        key::GRANTS => key::grants::KEYS.contains(&inner),
        key::LIMITS if native => key::limits::NATIVE_KEYS.contains(&inner),
        key::LIMITS => key::limits::KEYS.contains(&inner),
        key::TOOLS => tools_key::KEYS.contains(&inner),
        key::SANDBOX => key::sandbox::KEYS.contains(&inner),
        _ => false,
    }
}

/// `roots` as the store holds it: omitted at the default.
fn roots_json(roots: &Roots) -> Option<Value> {
    match roots {
        Roots::Workspace => None,
        Roots::Paths(paths) => Some(paths.iter().cloned().map(Value::String).collect()),
        other => other.keyword().map(|word| Value::String(word.into())),
    }
}

fn tool_filter_json(f: &ToolFilter) -> Option<Value> {
    let mut m = Map::new();
    for (key, globs) in [(tools_key::INCLUDE, f.include()), (tools_key::EXCLUDE, f.exclude())] {
        if !globs.is_empty() {
            m.insert(key.into(), globs.iter().cloned().map(Value::String).collect());
        }
    }
    (!m.is_empty()).then_some(Value::Object(m))
}

fn timeouts_json(t: &Timeouts) -> Option<Value> {
    let d = Timeouts::default();
    let mut m = Map::new();
    for (key, v, dv) in [
        (timeout_key::CONNECT_MS, t.connect, d.connect),
        (timeout_key::LIST_MS, t.list, d.list),
        (timeout_key::CALL_MS, t.call, d.call),
    ] {
        if v != dv {
            m.insert(key.into(), Value::from(u64::try_from(v.as_millis()).unwrap_or(u64::MAX)));
        }
    }
    (!m.is_empty()).then_some(Value::Object(m))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn def(v: Value) -> ServerDef {
        ServerDef::from_json("s", &v).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn to_json_omits_empty_fields_and_default_timeouts() {
        let d = def(json!({"command":"x","args":[],"env":{},"cwd":"","url":null}));
        assert_eq!(Value::Object(d.to_json()), json!({"type":"stdio","command":"x"}));
        let d = def(json!({"type":"sse","url":"u","timeouts":{"listMs":5}}));
        assert_eq!(Value::Object(d.to_json()), json!({"type":"sse","url":"u","timeouts":{"listMs":5}}));
    }

    #[test]
    fn guards_are_written_back_and_kept_exactly_as_given() {
        let given = json!({"type":"stdio","command":"x","guards":[" pii ",{"plugin":"sql","tools":["db_*"],"mode":"audit","x-why":"team"}]});
        let input = given.as_object().cloned().unwrap_or_default();
        let d = def(given.clone());
        assert_eq!(
            Value::Object(d.to_json())["guards"],
            json!(["pii", {"plugin":"sql","tools":["db_*"],"mode":"audit"}])
        );
        assert_eq!(Value::Object(d.merge_into(&input)), given);
        // A definition whose guards are not the input's writes its own.
        let other = def(json!({"command":"x","guards":["audit-only"]}));
        assert_eq!(Value::Object(other.merge_into(&input))["guards"], json!(["audit-only"]));
        let none = def(json!({"command":"x"}));
        assert_eq!(Value::Object(none.merge_into(&input)).get("guards"), None);
        assert_eq!(none.to_json().get("guards"), None);
    }

    #[test]
    fn merge_keeps_unknown_keys_in_place_and_normalises_known_ones() {
        let input = json!({"x-note":"keep","command":" npx ","args":["a"],"cwd":"  ","z":1});
        let input = input.as_object().cloned().unwrap_or_default();
        let d = def(Value::Object(input.clone()));
        let out = serde_json::to_string(&d.merge_into(&input)).unwrap_or_default();
        assert_eq!(out, r#"{"x-note":"keep","command":"npx","args":["a"],"z":1,"type":"stdio"}"#);
    }
}
