//! `"inheritEnv": false`: the stdio server starts with only PATH, HOME, LANG, TERM and its
//! configured `env`, not toolport's whole environment; the field is kept on write and shown by
//! `mcp get`. A server next to it without the field still inherits everything.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::common::Env;
use crate::support::faults::{fault_script, healthy, write};

/// The real interpreter, not a version manager's shim: a shim adds variables of its own.
fn python() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap_or_else(|e| panic!("python3: {e}"));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The fault server (`well`), writing its variable names to `env_file`.
fn reporting(env_file: &Path, inherit: Option<bool>) -> Value {
    let mut def = json!({
        "type": "stdio",
        "command": python(),
        "args": [fault_script(), "--mode", "well", "--env-file", env_file],
        "env": { "TP_CONFIGURED": "yes" },
    });
    if let Some(inherit) = inherit {
        def["inheritEnv"] = json!(inherit);
    }
    def
}

fn names(env_file: &Path) -> Vec<String> {
    let text = fs::read_to_string(env_file).unwrap_or_else(|e| panic!("read {}: {e}", env_file.display()));
    text.lines().map(str::to_string).collect()
}

#[test]
fn a_server_without_inherit_env_sees_only_the_kept_names_and_its_env() {
    let env = Env::new();
    let (closed, open) = (env.home().join("closed.env"), env.home().join("open.env"));
    write(
        &env,
        &[("closed", reporting(&closed, Some(false))), ("open", reporting(&open, None)), ("ok", healthy())],
        json!({}),
        json!({}),
    );
    let out = env
        .cmd(["mcp", "list"])
        .env("TP_SECRET_TOKEN", "hunter2")
        .env("TERM", "xterm")
        .output()
        .unwrap_or_else(|e| panic!("mcp list: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    // `open` lists the same tool as `closed` (a collision); it only has to start.
    for name in ["closed", "ok"] {
        assert!(text.contains(&format!("- {name} | type=stdio | state=connected")), "{text}");
    }
    let seen = names(&closed);
    for name in &seen {
        let allowed = ["PATH", "HOME", "LANG", "TERM", "TP_CONFIGURED"].contains(&name.as_str())
            // Set by the interpreter itself, not inherited.
            || name.starts_with("LC_CTYPE");
        assert!(allowed, "{name} reached the server: {seen:?}");
    }
    assert!(seen.iter().any(|n| n == "TP_CONFIGURED") && seen.iter().any(|n| n == "TERM"), "{seen:?}");
    let inherited = names(&open);
    assert!(inherited.iter().any(|n| n == "TP_SECRET_TOKEN"), "the default still inherits: {inherited:?}");
}

#[test]
fn inherit_env_is_kept_on_write_and_shown_by_mcp_get() {
    let env = Env::new();
    let def = json!({"command": "srv", "inheritEnv": false, "x-note": "kept"});
    let out = env.cmd(["mcp", "add-json", "s", &def.to_string()]).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store: Value =
        serde_json::from_str(&fs::read_to_string(env.store()).unwrap_or_default()).unwrap_or_default();
    assert_eq!(
        store["mcpServers"]["s"],
        json!({"command": "srv", "inheritEnv": false, "x-note": "kept", "type": "stdio"})
    );
    let out = env.cmd(["mcp", "get", "s"]).output().unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("  inheritEnv: no (only PATH, HOME, LANG, TERM and env)\n"), "{text}");
    let bad = env.cmd(["mcp", "add-json", "t", r#"{"command":"srv","inheritEnv":"no"}"#]).output();
    let bad = bad.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("server \"t\": \"inheritEnv\" must be true or false")
    );
}
