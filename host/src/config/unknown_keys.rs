//! Keys nothing reads, in the places where a typo changes what a guest may do: a plugin entry,
//! and the `grants` and `limits` of a plugin or a `type: wasm` server. `"grant"` for `"grants"`
//! would run the plugin with nothing granted, `"memoryMB"` for `"memoryMb"` with the default
//! cap, and neither says so. Such keys stay in the file (every write keeps unknown keys); each
//! is warned about once per process, naming the file, the entry and the nearest known key.
//!
//! Elsewhere unknown keys are silent on purpose: a server entry is shared with other tools'
//! fields (`disabled`, `autoApprove`, …), and warning about them would be noise.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Mutex;

use serde_json::{Map, Value};

use super::store_keys::grants::{self as grant_key, KEYS as GRANT_KEYS, dir::KEYS as DIR_KEYS};
use super::store_keys::limits::KEYS as LIMIT_KEYS;
use super::store_keys::plugin::KEYS as PLUGIN_KEYS;
use super::store_keys::{GRANTS, LIMITS};

/// Warns about the unknown keys of plugin `name`'s entry in `file`.
pub(super) fn check_plugin(file: &Path, name: &str, entry: &Map<String, Value>) {
    let owner = format!("plugin \"{name}\"");
    for key in unknown(entry, &PLUGIN_KEYS) {
        warn(file, &owner, key, nearest(key, &PLUGIN_KEYS), "");
    }
    check_sandbox(file, &owner, entry);
}

/// Warns about the unknown keys inside a `type: wasm` server's `grants` and `limits`.
pub(super) fn check_server(file: &Path, name: &str, entry: &Map<String, Value>) {
    check_sandbox(file, &format!("server \"{name}\""), entry);
}

fn check_sandbox(file: &Path, owner: &str, entry: &Map<String, Value>) {
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
        for key in unknown(limits, &LIMIT_KEYS) {
            warn(file, owner, key, nearest(key, &LIMIT_KEYS), &format!("{LIMITS}."));
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
    let advice = match near {
        Some(k) => format!("did you mean \"{prefix}{k}\"?"),
        None => "it is kept in the file but nothing reads it".to_string(),
    };
    let line = format!("{}: {owner}: unknown key \"{prefix}{key}\" is ignored; {advice}", file.display());
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
    }
}
