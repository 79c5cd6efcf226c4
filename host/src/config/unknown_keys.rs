//! Keys nothing reads, in the places where a typo changes what a guest may do: a plugin entry,
//! the `grants` and `limits` of a plugin, a `type: wasm` server or a sandboxed `stdio` server,
//! the options in a `stdio` server's `sandbox`, the store's `defaults`, and an entry of a
//! `guards` list (a server's or the workspace's), where `"failopen"` would leave a guard
//! failing closed and `"phases"` would run it on both halves. `"grant"` for
//! `"grants"` would run the plugin with nothing granted, `"memoryMB"` for `"memoryMb"` with the
//! default cap, and neither says so. Such keys stay in the file (every write keeps unknown
//! keys); each is warned about once per process, naming the file, the entry and the nearest
//! known key. So are `grants` and `limits` on a `stdio` server that is not sandboxed: its
//! owner may well believe they confine it.
//!
//! Elsewhere unknown keys are silent on purpose: a server entry is shared with other tools'
//! fields (`disabled`, `autoApprove`, …), and warning about them would be noise.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Mutex;

use serde_json::{Map, Value};

use super::server_def::{ServerDef, TransportKind};
use super::store_keys::grants::{self as grant_key, KEYS as GRANT_KEYS, dir::KEYS as DIR_KEYS};
use super::store_keys::guard::KEYS as GUARD_KEYS;
use super::store_keys::limits::{KEYS as LIMIT_KEYS, NATIVE_KEYS as NATIVE_LIMIT_KEYS};
use super::store_keys::plugin::KEYS as PLUGIN_KEYS;
use super::store_keys::{DEFAULTS_SECTION, GRANTS, GUARDS, LIMITS, SANDBOX, defaults, sandbox};

/// Warns about the unknown keys of plugin `name`'s entry in `file`.
pub(super) fn check_plugin(file: &Path, name: &str, entry: &Map<String, Value>) {
    let owner = format!("plugin \"{name}\"");
    for key in unknown(entry, &PLUGIN_KEYS) {
        warn(file, &owner, key, nearest(key, &PLUGIN_KEYS), "");
    }
    check_sandbox(file, &owner, entry, &LIMIT_KEYS);
}

/// Warns about the unknown keys inside a server's sandbox: a `type: wasm` server's `grants`
/// and `limits`, a sandboxed `stdio` server's and its `sandbox` options; and about `grants` or
/// `limits` on a `stdio` server that is not sandboxed, which do nothing.
pub(super) fn check_server(file: &Path, def: &ServerDef, entry: &Map<String, Value>) {
    let owner = format!("server \"{}\"", def.name);
    check_guards(file, Some(&owner), entry.get(GUARDS));
    if def.wasm.is_some() {
        check_sandbox(file, &owner, entry, &LIMIT_KEYS);
    } else if def.sandbox.is_some() {
        check_sandbox(file, &owner, entry, &NATIVE_LIMIT_KEYS);
        if let Some(Value::Object(options)) = entry.get(SANDBOX) {
            for key in unknown(options, &sandbox::KEYS) {
                warn(file, &owner, key, nearest(key, &sandbox::KEYS), &format!("{SANDBOX}."));
            }
        }
    } else if def.transport.as_deref() == Some(TransportKind::Stdio.as_str()) {
        for key in [GRANTS, LIMITS].into_iter().filter(|k| entry.contains_key(*k)) {
            warn_once(format!(
                "{}: {owner}: \"{key}\" is ignored: it takes effect only with \"{SANDBOX}\": true",
                file.display()
            ));
        }
    }
}

/// Warns about the unknown keys of the store's `defaults`.
pub(super) fn check_defaults(file: &Path, given: &Map<String, Value>) {
    for key in unknown(given, &defaults::KEYS) {
        let line_key = format!("{DEFAULTS_SECTION}.{key}");
        let advice = match nearest(key, &defaults::KEYS) {
            Some(k) => format!("did you mean \"{DEFAULTS_SECTION}.{k}\"?"),
            None => "it is kept in the file but nothing reads it".to_string(),
        };
        warn_once(format!("{}: unknown key \"{line_key}\" is ignored; {advice}", file.display()));
    }
}

/// Warns about the unknown keys of the entries of a `guards` list: a server's (`owner`) or the
/// workspace file's (`None`).
pub(super) fn check_guards(file: &Path, owner: Option<&str>, guards: Option<&Value>) {
    for line in guard_key_lines(owner, guards) {
        warn_once(format!("{}: {line}", file.display()));
    }
}

/// What [`check_guards`] warns, after the file's name.
fn guard_key_lines(owner: Option<&str>, guards: Option<&Value>) -> Vec<String> {
    let Some(Value::Array(entries)) = guards else { return Vec::new() };
    let owner = owner.map(|o| format!("{o}: ")).unwrap_or_default();
    let mut out = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let Value::Object(entry) = entry else { continue };
        let prefix = format!("{GUARDS}[{index}].");
        for key in unknown(entry, &GUARD_KEYS) {
            out.push(format!("{owner}{}", unknown_key(key, nearest(key, &GUARD_KEYS), &prefix)));
        }
    }
    out
}

fn check_sandbox(file: &Path, owner: &str, entry: &Map<String, Value>, limit_keys: &[&str]) {
    if let Some(Value::Object(grants)) = entry.get(GRANTS) {
        for key in unknown(grants, &GRANT_KEYS) {
            warn(file, owner, key, nearest(key, &GRANT_KEYS), &format!("{GRANTS}."));
        }
        if let Some(Value::Array(dirs)) = grants.get(grant_key::DIRS) {
            for dir in dirs.iter().filter_map(Value::as_object) {
                for key in unknown(dir, &DIR_KEYS) {
                    let prefix = format!("{GRANTS}.{}[].", grant_key::DIRS);
                    warn(file, owner, key, nearest(key, &DIR_KEYS), &prefix);
                }
            }
        }
    }
    if let Some(Value::Object(limits)) = entry.get(LIMITS) {
        for key in unknown(limits, limit_keys) {
            warn(file, owner, key, nearest(key, limit_keys), &format!("{LIMITS}."));
        }
    }
}

fn unknown<'a>(obj: &'a Map<String, Value>, known: &'a [&str]) -> impl Iterator<Item = &'a str> {
    obj.keys().map(String::as_str).filter(|k| !known.contains(k))
}

/// The known key `key` most likely meant: the same but for case, `-` or `_`, or within two
/// edits (and fewer than half its letters, so `env` is not offered for `x`).
pub(crate) fn nearest<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
    let fold = |s: &str| s.to_ascii_lowercase().replace(['-', '_'], "");
    let folded = fold(key);
    known
        .iter()
        .map(|k| (strsim::levenshtein(&folded, &fold(k)), *k))
        .filter(|(d, k)| *d <= 2 && *d * 2 < k.len().max(key.len()))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn warn(file: &Path, owner: &str, key: &str, near: Option<&str>, prefix: &str) {
    warn_once(format!("{}: {owner}: {}", file.display(), unknown_key(key, near, prefix)));
}

/// `unknown key "<prefix><key>" is ignored; did you mean "<prefix><near>"?`
fn unknown_key(key: &str, near: Option<&str>, prefix: &str) -> String {
    let advice = match near {
        Some(k) => format!("did you mean \"{prefix}{k}\"?"),
        None => "it is kept in the file but nothing reads it".to_string(),
    };
    format!("unknown key \"{prefix}{key}\" is ignored; {advice}")
}

/// `line` as a warning, the first time this process has it.
fn warn_once(line: String) {
    static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    // A poisoned lock only means another thread panicked mid-insert: warn again, harmlessly.
    let first = SEEN.lock().map(|mut seen| seen.get_or_insert_default().insert(line.clone())).unwrap_or(true);
    if first {
        tracing::warn!("{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_finds_typos_and_case_but_not_strangers() {
        assert_eq!(nearest("grant", &PLUGIN_KEYS), Some("grants"));
        assert_eq!(nearest("Grants", &PLUGIN_KEYS), Some("grants"));
        assert_eq!(nearest("sha-256", &PLUGIN_KEYS), Some("sha256"));
        assert_eq!(nearest("memoryMB", &LIMIT_KEYS), Some("memoryMb"));
        assert_eq!(nearest("call_ms", &LIMIT_KEYS), Some("callMs"));
        assert_eq!(nearest("dir", &GRANT_KEYS), Some("dirs"));
        assert_eq!(nearest("host", &GRANT_KEYS), Some("hosts"));
        assert_eq!(nearest("description", &PLUGIN_KEYS), None);
        assert_eq!(nearest("x", &GRANT_KEYS), None);
        assert_eq!(nearest("openfiles", &NATIVE_LIMIT_KEYS), Some("openFiles"));
        assert_eq!(nearest("process", &NATIVE_LIMIT_KEYS), Some("processes"));
        assert_eq!(nearest("requried", &sandbox::KEYS), Some("required"));
        assert_eq!(nearest("sandbx", &defaults::KEYS), Some("sandbox"));
        assert_eq!(nearest("fail_open", &GUARD_KEYS), Some("failOpen"));
        assert_eq!(nearest("phases", &GUARD_KEYS), Some("phase"));
    }

    #[test]
    fn a_guard_entrys_unknown_keys_are_named_by_place_with_the_nearest() {
        let guards = serde_json::json!([
            "pii",
            {"plugin": "a", "failopen": true, "x-note": "mine"},
            {"plugin": "b", "Mode": "audit"},
        ]);
        assert_eq!(
            guard_key_lines(Some("server \"s\""), Some(&guards)),
            [
                r#"server "s": unknown key "guards[1].failopen" is ignored; did you mean "guards[1].failOpen"?"#,
                r#"server "s": unknown key "guards[1].x-note" is ignored; it is kept in the file but nothing reads it"#,
                r#"server "s": unknown key "guards[2].Mode" is ignored; did you mean "guards[2].mode"?"#,
            ]
        );
        let workspace = serde_json::json!([{"plugin": "a", "tool": ["x"]}]);
        assert_eq!(
            guard_key_lines(None, Some(&workspace)),
            [r#"unknown key "guards[0].tool" is ignored; did you mean "guards[0].tools"?"#]
        );
        assert!(guard_key_lines(None, Some(&serde_json::json!("pii"))).is_empty());
    }
}
