//! What the config files look like around toolport: reads never write, `${VAR}` is stored as
//! typed, transport plugins make a `type` valid, and symlinked workspace files are refused.

use std::fs;

use serde_json::{Value, json};

use crate::support::common::Env;

fn ok(env: &Env, args: &[&str]) -> String {
    let o = env.cmd(args).output().unwrap_or_else(|e| panic!("{args:?}: {e}"));
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn reading_commands_leave_a_hand_written_store_byte_identical() {
    let env = Env::new();
    // Odd spacing, comments-free but hand-formatted, unknown keys: a rewrite would show.
    let text = "{ \"mcpServers\": { \"a\" : {\"command\":\"x\" , \"x\":1} },\n\n \"other\": [1,2] }";
    fs::write(env.store(), text).unwrap_or_default();
    fs::create_dir_all(env.root().join(".toolport")).unwrap_or_default();
    let ws = "{\"enabledMcpServers\":[\" a \",\"a\"]}";
    fs::write(env.workspace_file(), ws).unwrap_or_default();
    ok(&env, &["mcp", "list"]);
    ok(&env, &["mcp", "list", "--json"]);
    ok(&env, &["mcp", "get", "a"]);
    ok(&env, &["mcp"]);
    assert_eq!(fs::read_to_string(env.store()).unwrap_or_default(), text);
    assert_eq!(fs::read_to_string(env.workspace_file()).unwrap_or_default(), ws);
}

#[test]
fn bare_mcp_lists() {
    let env = Env::new();
    ok(&env, &["mcp", "add", "a", "--", "x"]);
    assert_eq!(ok(&env, &["mcp"]), ok(&env, &["mcp", "list"]));
}

#[test]
fn variables_are_stored_as_typed_not_expanded() {
    let env = Env::new();
    let o = env
        .cmd([
            "mcp",
            "add",
            "--transport",
            "http",
            "--header",
            "Authorization: Bearer ${API_TOKEN}",
            "r",
            "https://${HOST:-h}/mcp",
        ])
        .env("API_TOKEN", "real-secret")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(o.status.success());
    let text = fs::read_to_string(env.store()).unwrap_or_default();
    assert!(text.contains("Bearer ${API_TOKEN}") && text.contains("https://${HOST:-h}/mcp"), "{text}");
    assert!(!text.contains("real-secret"));
}

#[test]
fn a_transport_plugin_makes_its_type_valid() {
    let env = Env::new();
    fs::write(
        env.store(),
        r#"{"mcpServers":{"t":{"type":"tcp","url":"tcp://127.0.0.1:9"},"u":{"type":"udp","url":"x"},"n":{"type":"tcp"}},
            "plugins":{"tcp":{"kind":"transport","path":"plugins/t.wasm"}}}"#,
    )
    .unwrap_or_default();
    for name in ["t", "u", "n"] {
        ok(&env, &["mcp", "enable", name]);
    }
    let out = ok(&env, &["mcp", "list"]);
    // Valid, so it is connected: the missing plugin file is a run-time error, not a config one.
    assert!(out.contains("- t | type=tcp | state=error |") && out.contains("t.wasm"), "{out}");
    assert!(out.contains("- u | type=udp | state=error | workspace=enabled | paused=no | tools=0 | error=unsupported MCP transport: udp\n"), "{out}");
    assert!(out.contains("- n | type=tcp | state=error | workspace=enabled | paused=no | tools=0 | error=tcp transport requires url\n"), "{out}");
    // add-json validates against the store's plugins too.
    ok(&env, &["mcp", "add-json", "t2", r#"{"type":"TCP","url":"tcp://127.0.0.1:10"}"#]);
}

#[cfg(unix)]
#[test]
fn workspace_file_symlink_leading_outside_is_refused() {
    let env = Env::new();
    let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let target = outside.path().join("victim.json");
    fs::write(&target, "{}").unwrap_or_default();
    fs::create_dir_all(env.root().join(".toolport")).unwrap_or_default();
    std::os::unix::fs::symlink(&target, env.workspace_file()).unwrap_or_else(|e| panic!("{e}"));
    ok(&env, &["mcp", "add", "a", "--", "x"]);
    let o = env.cmd(["mcp", "enable", "a"]).output().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("refusing to follow {}: it leads outside", env.workspace_file().display())),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&target).unwrap_or_default(), "{}");
}

#[cfg(unix)]
#[test]
fn a_new_store_is_private_and_an_existing_one_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    ok(&env, &["mcp", "add", "a", "--", "x"]);
    let mode = |p: &std::path::Path| fs::metadata(p).map(|m| m.permissions().mode() & 0o777).unwrap_or(0);
    assert_eq!(mode(&env.store()), 0o600);
    fs::set_permissions(env.store(), fs::Permissions::from_mode(0o644)).unwrap_or_default();
    ok(&env, &["mcp", "add", "b", "--", "y"]);
    assert_eq!(mode(&env.store()), 0o644);
    let v: Value =
        serde_json::from_str(&fs::read_to_string(env.store()).unwrap_or_default()).unwrap_or_default();
    assert_eq!(v["mcpServers"]["b"], json!({"type":"stdio","command":"y"}));
}
