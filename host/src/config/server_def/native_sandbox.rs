//! A `stdio` server's OS sandbox (`"sandbox": true`): what its definition asks the launcher for,
//! read and written back. The launcher confines the process to `grants` (the same vocabulary as
//! a `wasm` server's, read by `config/sandbox_fields.rs`) within `limits`; this file only says
//! what the definition means, and refuses what it cannot mean, so a mistake is the store's
//! `file: server "x": …` error (exit 2) and not a server that starts with less or more than its
//! owner thinks.
//!
//! Two things differ from a `wasm` server's sandbox. The server is a real process that sees the
//! real file system through Landlock, so a folder cannot appear at another path: a `guest` is
//! refused. And its limits are the kernel's (memory, processes, open files), not a guest's
//! computing time.

use serde_json::{Map, Value};

use super::transport_kind::TransportKind;
use crate::config::ConfigError;
use crate::config::fields::Fields;
use crate::config::model::Grants;
use crate::config::sandbox_fields::{self, Guest};
use crate::config::store_keys::sandbox as option_key;
use crate::config::store_keys::{GRANTS, LIMITS, SANDBOX, grants as grant_key, limits as limit_key};

/// Default address-space cap: a Node or Python server with its runtime, its package manager
/// (`npx`, `uvx`) and its caches stays well under it; a leak stops here, not at the machine's.
pub const DEFAULT_NATIVE_MEMORY_MB: u64 = 2048;
/// Default number of processes and threads (the kernel counts both): Node alone starts about a
/// dozen threads and `npx` a few processes, so a server that runs helpers fits, a fork bomb
/// does not.
pub const DEFAULT_NATIVE_PROCESSES: u64 = 512;
/// Default open files: the soft limit a login shell usually gives, which servers are written for.
pub const DEFAULT_NATIVE_OPEN_FILES: u64 = 1024;

/// `limits: { memoryMb, processes, openFiles }` of a sandboxed `stdio` server. A separate type
/// from a guest's [`Limits`](crate::config::model::Limits): none of those three means the same
/// for a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NativeLimits {
    /// `memoryMb`: the address space the server may map, MiB.
    pub memory_mb: u64,
    /// `processes`: how many processes and threads it may have at once.
    pub processes: u64,
    /// `openFiles`: how many files, sockets and pipes it may hold open at once.
    pub open_files: u64,
}

impl Default for NativeLimits {
    fn default() -> Self {
        Self {
            memory_mb: DEFAULT_NATIVE_MEMORY_MB,
            processes: DEFAULT_NATIVE_PROCESSES,
            open_files: DEFAULT_NATIVE_OPEN_FILES,
        }
    }
}

/// A `stdio` server started under the OS sandbox (`"sandbox": true` or `{ … }`): nothing of the
/// file system, the network or toolport's environment but its grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeSandbox {
    /// `grants`: folders (at their real paths, `~` expanded and resolved against the store's
    /// folder), host patterns its network goes to through toolport's proxy, env names.
    pub grants: Grants,
    /// `limits`.
    pub limits: NativeLimits,
    /// `sandbox.required` (default `true`): on a machine that cannot sandbox, the server fails
    /// to start. `false` starts it unconfined there instead.
    pub required: bool,
}

impl Default for NativeSandbox {
    /// On, nothing granted, the default limits, and required: `"sandbox": true`.
    fn default() -> Self {
        Self { grants: Grants::default(), limits: NativeLimits::default(), required: true }
    }
}

/// What a `sandbox` that is neither a boolean nor an object is told.
const SANDBOX_MUST_BE: &str = "true, false or an object such as {\"required\": false}";

/// `sandbox`, with `grants` and `limits` when it is on; `None` when it is absent, `null` or
/// `false`. `transport` is the definition's normalised `type`: only `stdio` takes it.
pub(super) fn read(
    fields: &Fields<'_>,
    transport: Option<&str>,
) -> Result<Option<NativeSandbox>, ConfigError> {
    let required = match fields.raw(SANDBOX) {
        None | Some(Value::Bool(false)) => return Ok(None),
        Some(Value::Bool(true)) => true,
        Some(Value::Object(_)) => {
            let options = fields.object(SANDBOX)?;
            options.map(|o| o.boolean(option_key::REQUIRED)).transpose()?.flatten().unwrap_or(true)
        }
        Some(_) => return Err(fields.err(SANDBOX, SANDBOX_MUST_BE)),
    };
    if let Some(other) = transport.filter(|t| *t != TransportKind::Stdio.as_str()) {
        let why = if other == TransportKind::Wasm.as_str() {
            format!("a server of type {other} is always sandboxed (by its own \"{GRANTS}\" and \"{LIMITS}\")")
        } else {
            format!("a server of type {other} runs elsewhere, not as a process toolport starts")
        };
        return Err(fields.says(SANDBOX, &format!("is for stdio servers only: {why}; remove it")));
    }
    let grants = sandbox_fields::grants(fields, Guest::Server)?;
    if let Some(dir) = grants.dirs.iter().find(|d| d.guest.is_some()) {
        return Err(ConfigError(format!(
            "{}{GRANTS}.{} \"{}\" has a \"guest\" path, but a sandboxed stdio server sees real paths: \
             remove \"guest\"",
            fields.owner(),
            grant_key::DIRS,
            dir.written
        )));
    }
    Ok(Some(NativeSandbox { grants, limits: limits(fields)?, required }))
}

/// `limits: { memoryMb, processes, openFiles }`, each a positive integer over its default.
fn limits(fields: &Fields<'_>) -> Result<NativeLimits, ConfigError> {
    let mut limits = NativeLimits::default();
    let Some(given) = fields.object(LIMITS)? else { return Ok(limits) };
    for (key, slot) in [
        (limit_key::MEMORY_MB, &mut limits.memory_mb),
        (limit_key::PROCESSES, &mut limits.processes),
        (limit_key::OPEN_FILES, &mut limits.open_files),
    ] {
        if let Some(n) = given.positive(key, "")? {
            *slot = n;
        }
    }
    Ok(limits)
}

/// `sandbox` as the file holds it: `true`, or `{"required": false}` when it is not required.
pub(super) fn sandbox_json(sandbox: &NativeSandbox) -> Value {
    if sandbox.required {
        return Value::Bool(true);
    }
    let mut options = Map::new();
    options.insert(option_key::REQUIRED.into(), Value::Bool(false));
    Value::Object(options)
}

/// `limits` as the file holds it: only what differs from the defaults.
pub(super) fn limits_json(l: &NativeLimits) -> Option<Value> {
    let d = NativeLimits::default();
    let mut m = Map::new();
    for (key, value, default) in [
        (limit_key::MEMORY_MB, l.memory_mb, d.memory_mb),
        (limit_key::PROCESSES, l.processes, d.processes),
        (limit_key::OPEN_FILES, l.open_files, d.open_files),
    ] {
        if value != default {
            m.insert(key.into(), Value::from(value));
        }
    }
    (!m.is_empty()).then_some(Value::Object(m))
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use serde_json::json;

    use super::*;
    use crate::config::server_def::ServerDef;

    fn read(v: Value) -> Result<Option<NativeSandbox>, String> {
        ServerDef::from_json("fs", &v).map(|d| d.sandbox).map_err(String::from)
    }

    fn on(v: Value) -> NativeSandbox {
        read(v).unwrap_or_else(|e| panic!("{e}")).unwrap_or_else(|| panic!("not sandboxed"))
    }

    #[test]
    fn true_or_an_object_is_on_and_required_unless_it_says_not() {
        assert_eq!(on(json!({"command": "x", "sandbox": true})), NativeSandbox::default());
        assert_eq!(on(json!({"command": "x", "sandbox": {}})), NativeSandbox::default());
        assert!(!on(json!({"command": "x", "sandbox": {"required": false}})).required);
        assert!(on(json!({"command": "x", "sandbox": {"required": true, "x-why": 1}})).required);
        for off in [json!({"command": "x"}), json!({"command": "x", "sandbox": false})] {
            assert_eq!(read(off.clone()), Ok(None), "{off}");
        }
        assert_eq!(read(json!({"command": "x", "sandbox": null})), Ok(None));
    }

    #[test]
    fn wrong_types_name_the_server_and_the_key() {
        let cases = [
            (json!("yes"), "\"sandbox\" must be true, false or an object such as {\"required\": false}"),
            (json!({"required": "no"}), "\"sandbox.required\" must be true or false"),
        ];
        for (sandbox, message) in cases {
            let err = read(json!({"command": "x", "sandbox": sandbox})).err();
            assert_eq!(err, Some(format!("server \"fs\": {message}")), "{sandbox}");
        }
        let err = read(json!({"command": "x", "sandbox": true, "limits": {"processes": 0}})).err();
        assert_eq!(err.as_deref(), Some("server \"fs\": \"limits.processes\" must be a positive integer"));
    }

    #[test]
    fn only_a_stdio_server_takes_it() {
        let err = |v: Value| read(v).err().unwrap_or_default();
        assert_eq!(
            err(json!({"type": "wasm", "builtin": "files", "sandbox": true})),
            "server \"fs\": \"sandbox\" is for stdio servers only: a server of type wasm is always \
             sandboxed (by its own \"grants\" and \"limits\"); remove it"
        );
        assert_eq!(
            err(json!({"type": "http", "url": "https://h/mcp", "sandbox": {"required": false}})),
            "server \"fs\": \"sandbox\" is for stdio servers only: a server of type streamable_http \
             runs elsewhere, not as a process toolport starts; remove it"
        );
        // Off says nothing wrong, whatever the type.
        assert_eq!(read(json!({"type": "http", "url": "https://h/mcp", "sandbox": false})), Ok(None));
        // No `type` and a `command` is stdio.
        assert!(read(json!({"command": "npx", "sandbox": true})).is_ok_and(|s| s.is_some()));
    }

    #[test]
    fn a_guest_path_is_refused_naming_the_folder() {
        let v = json!({"command": "x", "sandbox": true,
                       "grants": {"dirs": ["/srv/a", {"host": "/srv/docs", "guest": "/docs"}]}});
        assert_eq!(
            read(v).err().as_deref(),
            Some(
                "server \"fs\": grants.dirs \"/srv/docs\" has a \"guest\" path, but a sandboxed stdio server \
                 sees real paths: remove \"guest\""
            )
        );
        // Not sandboxed, the grants are not read at all (the store warns that they do nothing).
        let off = json!({"command": "x", "grants": {"dirs": [{"host": "/srv/docs", "guest": "/docs"}]}});
        assert_eq!(read(off), Ok(None));
    }

    #[test]
    fn grants_are_a_wasm_servers_and_their_folders_resolve_the_same_way() {
        let mut def = ServerDef::from_json(
            "fs",
            &json!({"command": "npx", "sandbox": true,
                    "grants": {"dirs": ["docs", {"host": "~/mem", "mode": "rw"}],
                               "hosts": ["https://api.github.com"], "env": ["GITHUB_TOKEN"]}}),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        def.resolve_paths(Path::new("/etc/tp"));
        let grants = def.sandbox.map(|s| s.grants).unwrap_or_default();
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("~"));
        let dirs: Vec<_> =
            grants.dirs.iter().map(|d| (d.written.as_str(), d.host.clone(), d.writable)).collect();
        assert_eq!(dirs, [("docs", PathBuf::from("/etc/tp/docs"), false), ("~/mem", home.join("mem"), true)]);
        assert_eq!(grants.hosts, ["https://api.github.com"]);
        assert_eq!(grants.env, ["GITHUB_TOKEN"]);
    }

    #[test]
    fn limits_default_and_only_changed_ones_are_written() {
        let s = on(json!({"command": "x", "sandbox": true, "limits": {"memoryMb": 512}}));
        assert_eq!(s.limits, NativeLimits { memory_mb: 512, processes: 512, open_files: 1024 });
        assert_eq!(limits_json(&s.limits), Some(json!({"memoryMb": 512})));
        assert_eq!(limits_json(&NativeLimits::default()), None);
        assert_eq!(
            NativeLimits::default(),
            NativeLimits { memory_mb: 2048, processes: 512, open_files: 1024 }
        );
    }

    #[test]
    fn written_back_as_read_and_a_persons_own_keys_survive() {
        let given = json!({"x-top": 1, "command": "npx", "sandbox": {"x-why": "untrusted", "required": false},
                           "grants": {"x-note": "keep", "dirs": ["/srv/docs"]},
                           "limits": {"openFiles": 64, "callMs": 5}});
        let obj = given.as_object().cloned().unwrap_or_default();
        let def = ServerDef::from_json("fs", &given).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            Value::Object(def.to_json()),
            json!({"type": "stdio", "command": "npx", "sandbox": {"required": false},
                   "grants": {"dirs": ["/srv/docs"]}, "limits": {"openFiles": 64}})
        );
        // `callMs` is a guest's limit, not a process's: kept as the person's own key.
        assert_eq!(
            Value::Object(def.merge_into(&obj)),
            json!({"x-top": 1, "command": "npx", "sandbox": {"x-why": "untrusted", "required": false},
                   "grants": {"x-note": "keep", "dirs": ["/srv/docs"]},
                   "limits": {"openFiles": 64, "callMs": 5}, "type": "stdio"})
        );
        // `true` stays `true`, and an object saying no more than `true` stays an object.
        for sandbox in [json!(true), json!({}), json!({"x-why": 1})] {
            let given = json!({"command": "npx", "sandbox": sandbox});
            let obj = given.as_object().cloned().unwrap_or_default();
            let def = ServerDef::from_json("fs", &given).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(Value::Object(def.merge_into(&obj))["sandbox"], sandbox);
        }
    }

    #[test]
    fn off_grants_and_limits_are_the_servers_own_keys() {
        let given = json!({"command": "npx", "grants": {"dirs": ["/srv"]}, "limits": {"memoryMb": 1}});
        let obj = given.as_object().cloned().unwrap_or_default();
        let def = ServerDef::from_json("fs", &given).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(Value::Object(def.to_json()), json!({"type": "stdio", "command": "npx"}));
        let merged = Value::Object(def.merge_into(&obj));
        assert_eq!((&merged["grants"], &merged["limits"]), (&given["grants"], &given["limits"]));
    }
}
