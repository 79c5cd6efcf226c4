//! The sandbox part of a config entry — `grants`, `limits`, `sha256` — read the same way for a
//! plugin and for a `type: wasm` server, and written back the same way. A server's folders may
//! be read-write; a plugin's never are.
//!
//! An unknown key inside `grants` or `limits` is kept in the file (every write keeps unknown
//! keys) but warned about by `unknown_keys`, which knows the file: `grants.dir` instead of
//! `grants.dirs` would silently leave the guest without the folder its author meant to give it.

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

use super::fields::{Fields, Trim};
use super::model::{DirGrant, Grants, Limits};
use super::store_keys::grants::{self as grant_key, dir as dir_key};
use super::store_keys::{GRANTS, LIMITS, SHA256, limits as limit_key};
use crate::config::ConfigError;

/// Whose sandbox an entry describes: only servers may have read-write folders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Guest {
    Plugin,
    Server,
}

/// `grants: { hosts, env, dirs }`; relative folders stay relative until [`resolve_dir`].
pub(super) fn grants(fields: &Fields<'_>, guest: Guest) -> Result<Grants, ConfigError> {
    let Some(g) = fields.object(GRANTS)? else { return Ok(Grants::default()) };
    let mut dirs = Vec::new();
    for item in g.array(grant_key::DIRS)?.map(Vec::as_slice).unwrap_or_default() {
        dirs.push(dir(&g, item, guest)?);
    }
    Ok(Grants {
        hosts: g.strings(grant_key::HOSTS, Trim::Yes)?.unwrap_or_default(),
        env: g.strings(grant_key::ENV, Trim::Yes)?.unwrap_or_default(),
        dirs,
    })
}

/// One `grants.dirs` entry: a path, or `{ host, guest, mode }`.
fn dir(g: &Fields<'_>, item: &Value, guest: Guest) -> Result<DirGrant, ConfigError> {
    const WHAT: &str = "an array of paths or { \"host\", \"guest\", \"mode\" } objects";
    let (written, guest_path, mode) = match item {
        Value::String(path) => (path.trim().to_string(), None, None),
        Value::Object(obj) => {
            let entry = Fields::new(obj, g.owner());
            let host = entry.string(dir_key::HOST).map_err(|_| g.err(grant_key::DIRS, WHAT))?;
            let guest = entry.string(dir_key::GUEST).map_err(|_| g.err(grant_key::DIRS, WHAT))?;
            let mode = entry.string(dir_key::MODE).map_err(|_| g.err(grant_key::DIRS, WHAT))?;
            (host.unwrap_or_default(), guest, mode)
        }
        _ => return Err(g.err(grant_key::DIRS, WHAT)),
    };
    if written.is_empty() {
        return Err(g.err(grant_key::DIRS, WHAT));
    }
    let writable = match mode.as_deref() {
        None | Some("ro") => false,
        Some("rw") if guest == Guest::Server => true,
        Some("rw") => {
            return Err(ConfigError(format!(
                "{}grants.dirs: {written} cannot be \"rw\": a plugin's folders are read-only",
                g.owner()
            )));
        }
        Some(_) => return Err(g.err(grant_key::DIRS, "entries whose \"mode\" is \"ro\" or \"rw\"")),
    };
    if let Some(path) = &guest_path
        && !path.starts_with('/')
    {
        return Err(ConfigError(format!("{}grants.dirs: guest path {path:?} must be absolute", g.owner())));
    }
    Ok(DirGrant { host: expand_home(&written), written, guest: guest_path, writable })
}

/// `limits: { memoryMb, callMs, cpuPercent }` over `defaults`.
pub(super) fn limits(fields: &Fields<'_>, defaults: Limits) -> Result<Limits, ConfigError> {
    let mut limits = defaults;
    if let Some(l) = fields.object(LIMITS)? {
        for (key, slot) in
            [(limit_key::MEMORY_MB, &mut limits.memory_mb), (limit_key::CALL_MS, &mut limits.call_ms)]
        {
            if let Some(n) = l.positive(key, "")? {
                *slot = n;
            }
        }
        if let Some(n) = l.raw(limit_key::CPU_PERCENT) {
            // 0 would stop every guest at once and over 100 can never be reached by one guest
            // (it runs on one thread at a time): both are mistakes, not settings.
            limits.cpu_percent =
                n.as_u64().and_then(|n| u8::try_from(n).ok()).filter(|n| (1..=100).contains(n)).ok_or_else(
                    || l.err(limit_key::CPU_PERCENT, "an integer from 1 to 100 (percent of one core)"),
                )?;
        }
    }
    Ok(limits)
}

/// `sha256`: 64 hex digits, kept lower-case.
pub(super) fn sha256(fields: &Fields<'_>) -> Result<Option<String>, ConfigError> {
    let Some(digest) = fields.string(SHA256)? else { return Ok(None) };
    if digest.len() != 64 || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(fields.err(SHA256, "64 hexadecimal digits (a SHA-256)"));
    }
    Ok(Some(digest.to_ascii_lowercase()))
}

/// `grants` as the file holds it (empty lists omitted; `None` when nothing is granted).
pub(super) fn grants_json(g: &Grants) -> Option<Value> {
    let mut m = Map::new();
    if !g.hosts.is_empty() {
        m.insert(grant_key::HOSTS.into(), g.hosts.iter().cloned().map(Value::String).collect());
    }
    if !g.env.is_empty() {
        m.insert(grant_key::ENV.into(), g.env.iter().cloned().map(Value::String).collect());
    }
    if !g.dirs.is_empty() {
        m.insert(grant_key::DIRS.into(), g.dirs.iter().map(dir_json).collect());
    }
    (!m.is_empty()).then_some(Value::Object(m))
}

/// A folder as the file holds it: the short form when it says no more than a path.
pub(crate) fn dir_json(d: &DirGrant) -> Value {
    if d.guest.is_none() && !d.writable {
        return Value::String(d.written.clone());
    }
    let mut m = Map::new();
    m.insert(dir_key::HOST.into(), Value::String(d.written.clone()));
    if let Some(guest) = &d.guest {
        m.insert(dir_key::GUEST.into(), Value::String(guest.clone()));
    }
    m.insert(dir_key::MODE.into(), Value::String(d.mode().into()));
    Value::Object(m)
}

/// `limits` as the file holds it: only what differs from `defaults`.
pub(super) fn limits_json(l: &Limits, defaults: Limits) -> Option<Value> {
    let mut m = Map::new();
    if l.memory_mb != defaults.memory_mb {
        m.insert(limit_key::MEMORY_MB.into(), Value::from(l.memory_mb));
    }
    if l.call_ms != defaults.call_ms {
        m.insert(limit_key::CALL_MS.into(), Value::from(l.call_ms));
    }
    if l.cpu_percent != defaults.cpu_percent {
        m.insert(limit_key::CPU_PERCENT.into(), Value::from(l.cpu_percent));
    }
    (!m.is_empty()).then_some(Value::Object(m))
}

/// A folder's host path against `base` (the folder of the file naming it); `~` is already
/// expanded. A path with `..` in it is made plain: the guest sees the folder at this path
/// (unless the grant names a `guest` path), and a guest's libc resolves `..` lexically, so
/// `/h/.toolport/../cfg` would never match what it opens. The real path when the folder exists
/// (through a symlink `..` is not the lexical parent), else the lexical one.
pub(super) fn resolve_dir(d: &mut DirGrant, base: &Path) {
    let joined: PathBuf = base.join(&d.host).components().collect();
    d.host = if joined.components().any(|c| c == Component::ParentDir) {
        joined.canonicalize().unwrap_or_else(|_| lexically_plain(&joined))
    } else {
        joined
    };
}

/// `path` with every `..` taking off the segment before it (none above the root).
fn lexically_plain(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `~` and `~/…` as the person's home folder (`$HOME`); anything else as written.
pub(crate) fn expand_home(path: &str) -> PathBuf {
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    match path.strip_prefix('~') {
        Some("") => home().unwrap_or_else(|| PathBuf::from(path)),
        Some(rest) if rest.starts_with('/') => match home() {
            Some(h) => h.join(rest.trim_start_matches('/')),
            None => PathBuf::from(path),
        },
        _ => PathBuf::from(path),
    }
}

/// A component path against `base`, the folder of the file naming it (`~` expanded first).
pub(super) fn resolve_against(base: &Path, p: &str) -> PathBuf {
    let p = expand_home(p);
    if p.is_absolute() { p } else { base.join(p) }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(v: Value, guest: Guest) -> Result<Grants, String> {
        let obj = v.as_object().cloned().unwrap_or_default();
        grants(&Fields::new(&obj, "server \"s\": "), guest).map_err(String::from)
    }

    #[test]
    fn cpu_percent_is_a_share_of_one_core_and_round_trips() {
        let read = |v: Value| {
            let obj = v.as_object().cloned().unwrap_or_default();
            limits(&Fields::new(&obj, "server \"s\": "), Limits::for_server())
        };
        let half = read(json!({"limits": {"cpuPercent": 50}})).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(half, Limits { cpu_percent: 50, ..Limits::for_server() });
        assert_eq!(limits_json(&half, Limits::for_server()), Some(json!({"cpuPercent": 50})));
        assert_eq!(read(json!({"limits": {"cpuPercent": 100}})).map(|l| l.cpu_percent), Ok(100));
        for bad in [json!(0), json!(101), json!(50.5), json!("50"), json!(-1), json!(300)] {
            assert_eq!(
                read(json!({"limits": {"cpuPercent": bad}})).err().as_deref(),
                Some(
                    "server \"s\": \"limits.cpuPercent\" must be an integer from 1 to 100 (percent of one core)"
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn dirs_take_paths_and_objects_and_round_trip() {
        let v = json!({"grants": {"dirs": ["data", {"host": "/srv/n", "guest": "/notes", "mode": "rw"}]}});
        let g = read(v.clone(), Guest::Server).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(g.dirs[0].guest_path(), "data");
        assert_eq!((g.dirs[1].guest_path().as_str(), g.dirs[1].writable), ("/notes", true));
        assert_eq!(grants_json(&g), Some(v["grants"].clone()));
    }

    #[test]
    fn a_plugin_cannot_write_and_bad_entries_say_why() {
        let rw = json!({"grants": {"dirs": [{"host": "/x", "mode": "rw"}]}});
        assert_eq!(
            read(rw, Guest::Plugin).err().as_deref(),
            Some("server \"s\": grants.dirs: /x cannot be \"rw\": a plugin's folders are read-only")
        );
        let bad = json!({"grants": {"dirs": [{"host": "/x", "mode": "write"}]}});
        assert_eq!(
            read(bad, Guest::Server).err().as_deref(),
            Some("server \"s\": \"grants.dirs\" must be entries whose \"mode\" is \"ro\" or \"rw\"")
        );
        let relative_guest = json!({"grants": {"dirs": [{"host": "/x", "guest": "x"}]}});
        assert!(read(relative_guest, Guest::Server).is_err());
        assert!(read(json!({"grants": {"dirs": [7]}}), Guest::Server).is_err());
    }

    #[test]
    fn home_is_expanded_and_relative_paths_resolve_against_the_file() {
        let home = std::env::var("HOME").unwrap_or_default();
        assert_eq!(expand_home("~/notes"), PathBuf::from(&home).join("notes"));
        assert_eq!(expand_home("~other/x"), PathBuf::from("~other/x"));
        let mut d = DirGrant { written: "d".into(), host: "d".into(), guest: None, writable: false };
        resolve_dir(&mut d, Path::new("/etc/tp"));
        assert_eq!(d.host, PathBuf::from("/etc/tp/d"));
    }

    #[test]
    fn dot_dot_is_made_plain_through_links_when_the_folder_exists() -> anyhow::Result<()> {
        let grant =
            |host: &str| DirGrant { written: host.into(), host: host.into(), guest: None, writable: false };
        let mut missing = grant("../cfg/./x/");
        resolve_dir(&mut missing, Path::new("/no/such/.toolport"));
        assert_eq!(missing.host, PathBuf::from("/no/such/cfg/x"), "lexical when absent");
        let tmp = tempfile::tempdir()?;
        let real = tmp.path().canonicalize()?;
        std::fs::create_dir_all(real.join("deep/home"))?;
        std::fs::create_dir(real.join("cfg"))?;
        std::fs::create_dir(real.join("deep/cfg"))?;
        std::os::unix::fs::symlink(real.join("deep/home"), real.join("link"))?;
        let mut existing = grant("../cfg");
        resolve_dir(&mut existing, &real.join("deep/home"));
        assert_eq!(existing.host, real.join("deep/cfg"));
        let mut linked = grant("../../cfg");
        resolve_dir(&mut linked, &real.join("link"));
        assert_eq!(linked.host, real.join("cfg"), "through the link, the real parent of deep/home");
        Ok(())
    }

    #[test]
    fn digests_are_checked_and_lowercased() {
        let ok = json!({"sha256": "AB".repeat(32)});
        let obj = ok.as_object().cloned().unwrap_or_default();
        assert_eq!(sha256(&Fields::new(&obj, "")), Ok(Some("ab".repeat(32))));
        let bad = json!({"sha256": "abc"});
        let obj = bad.as_object().cloned().unwrap_or_default();
        assert!(sha256(&Fields::new(&obj, "")).is_err());
    }
}
