//! Config mistakes that would quietly change a sandbox are named, and a failing guest is told
//! what it lacked (issue 16 steps 4 and 5), as a user meets them: the built binary on a
//! temporary home.

use std::path::{Path, PathBuf};

use serde_json::json;
use toolport::test_support::PLUGIN_BUILD_DIR;

use crate::support::common::Env;
use crate::support::runtime::demo;

fn wasm(stem: &str) -> PathBuf {
    Path::new(PLUGIN_BUILD_DIR).join(format!("{stem}.wasm"))
}

fn stderr_of(env: &Env, args: &[&str]) -> String {
    let out = env.cmd(args).output().unwrap_or_else(|e| panic!("{args:?}: {e}"));
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_typo_in_a_sandbox_is_named_with_the_key_it_meant_and_kept_in_the_file() {
    let env = Env::new();
    let store = json!({
        "mcpServers": {"notes": {"type": "wasm", "builtin": "files", "grants": {"host": ["https://x.example"]}}},
        "plugins": {"acme": {
            "kind": "name-policy", "path": wasm("policy_namespace"),
            "grant": {"env": ["TOKEN"]},
            "grants": {"dirs": [{"host": "/tmp", "mod": "ro"}]},
            "limits": {"memoryMB": 16},
            "description": "ours"
        }}
    });
    let text = serde_json::to_string_pretty(&store).unwrap_or_default();
    std::fs::write(env.store(), &text).unwrap_or_else(|e| panic!("{e}"));
    let stderr = stderr_of(&env, &["plugin", "list"]);
    let file = env.store().display().to_string();
    for line in [
        format!("{file}: plugin \"acme\": unknown key \"grant\" is ignored; did you mean \"grants\"?"),
        format!(
            "{file}: plugin \"acme\": unknown key \"grants.dirs[].mod\" is ignored; did you mean \"grants.dirs[].mode\"?"
        ),
        format!(
            "{file}: plugin \"acme\": unknown key \"limits.memoryMB\" is ignored; did you mean \"limits.memoryMb\"?"
        ),
        format!(
            "{file}: plugin \"acme\": unknown key \"description\" is ignored; it is kept in the file but nothing reads it"
        ),
        format!(
            "{file}: server \"notes\": unknown key \"grants.host\" is ignored; did you mean \"grants.hosts\"?"
        ),
    ] {
        assert_eq!(stderr.matches(&line).count(), 1, "once each: {line}\n{stderr}");
    }
    assert_eq!(std::fs::read_to_string(env.store()).unwrap_or_default(), text, "reading never writes");
    // A write keeps the mistyped key where it was: it is the user's to fix.
    stderr_of(&env, &["plugin", "grant", "acme", "--env", "TOKEN"]);
    let after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.store()).unwrap_or_default()).unwrap_or_default();
    assert_eq!(after["plugins"]["acme"]["grant"], json!({"env": ["TOKEN"]}));
    assert_eq!(after["plugins"]["acme"]["grants"]["env"], json!(["TOKEN"]));
    assert_eq!(after["plugins"]["acme"]["limits"], json!({"memoryMB": 16}));
}

/// A panicking guest's message is the panic's own; the wasm backtrace is for `-v` only.
#[test]
fn a_guest_panic_shows_its_message_and_the_backtrace_only_when_verbose() {
    let env = Env::new();
    let store = json!({
        "mcpServers": {"trap": demo(&[])},
        "plugins": {"fault": {"kind": "name-policy", "path": wasm("fixture_fault_policy")}}
    });
    std::fs::write(env.store(), store.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let ws = env.workspace_file();
    std::fs::create_dir_all(ws.parent().unwrap_or(Path::new("."))).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&ws, json!({"enabledMcpServers": ["trap"], "namePolicy": "fault"}).to_string())
        .unwrap_or_else(|e| panic!("{e}"));
    let out = env.cmd(["mcp", "list"]).output().unwrap_or_else(|e| panic!("{e}"));
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(
        stdout.contains("error=name policy fault: crashed: panicked at fixtures/fault-policy/src/lib.rs:"),
        "{stdout}"
    );
    assert!(!stderr.contains("wasm backtrace") && !stderr.contains("wasm function"), "{stderr}");
    let out = env.cmd(["-v", "mcp", "list"]).output().unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("plugin trapped") && stderr.contains("wasm backtrace"), "{stderr}");
}

/// A plugin that fails reading a variable it was not granted is told so; granted one, the hint
/// goes (`plugin run`, the author's loop, says the same as `mcp list` would).
#[test]
fn a_plugin_failing_for_want_of_an_env_grant_is_told_which_grant() {
    let env = Env::new();
    let tools = env.root().join("tools.json");
    std::fs::write(&tools, json!([{"name": "target", "inputSchema": {"type": "object"}}]).to_string())
        .unwrap_or_else(|e| panic!("{e}"));
    let file = wasm("fixture_hostile");
    let run = |extra: &[&str]| {
        let mut cmd = env.cmd(["plugin", "run"]);
        cmd.arg(&file).arg("--tools").arg(&tools).args(["--server-name", "env"]).args(extra);
        let out = cmd.output().unwrap_or_else(|e| panic!("{e}"));
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, stderr) = run(&[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.trim_end().ends_with(
            ": environment variable not found; it has no grants.env (variables it reads look unset)"
        ),
        "{stderr}"
    );
    let (code, stderr) = run(&["--grant-env", "TOOLPORT_IT_NOT_SET"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.trim_end().ends_with(": environment variable not found"), "{stderr}");
}
