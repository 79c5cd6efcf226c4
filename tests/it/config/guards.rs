//! `guards` in the workspace file and in a server definition (issue 48): `mcp get` shows the
//! guards a server's requests pass, the workspace's then its own, as text and JSON, with a
//! warning on an entry whose plugin is not a guard plugin (no config error: the runtime refuses
//! those calls); a malformed list stops every command naming the file (exit 2); and `add-json`
//! and `mcp set` keep a definition's `guards` exactly as written.

use std::fs;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::common::Env;

const WITHIN: Duration = Duration::from_secs(60);

fn write(path: &std::path::Path, value: &Value) {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    }
    fs::write(path, value.to_string()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn read_json(path: &std::path::Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

/// Runs and asserts the exit status; stdout and stderr.
fn run(env: &Env, args: &[&str], code: i32) -> (String, String) {
    let (got, out, err) = env.run(args, WITHIN);
    assert_eq!(got, code, "{args:?}\n{out}\n{err}");
    (out, err)
}

/// A store with a guard plugin (never loaded: `mcp get` only looks it up) and a tool shape, a
/// server with guards of its own, and a workspace whose guards come first. The server is not
/// enabled, so `--json` does not connect it.
fn guarded(env: &Env) {
    write(
        &env.store(),
        &json!({
            "plugins": {
                "pii": {"kind": "guard", "path": "guards/pii.wasm"},
                "shape": {"kind": "tool-shape", "path": "shapes/shape.wasm"}
            },
            "mcpServers": {
                "db": {"command": "srv", "guards": [
                    {"plugin": "pii", "tools": ["db_*", "query"], "phase": "response", "mode": "audit"},
                    {"plugin": "gone", "failOpen": true}
                ]},
                "plain": {"command": "srv"}
            }
        }),
    );
    write(&env.workspace_file(), &json!({"guards": ["pii", {"plugin": "shape", "phase": "request"}]}));
}

#[test]
fn mcp_get_shows_the_workspaces_guards_then_the_servers_own_with_where_each_was_written() {
    let env = Env::new();
    guarded(&env);
    let (text, _) = run(&env, &["mcp", "get", "db"], 0);
    assert_eq!(
        text,
        "db\n  type: stdio\n  command: srv\n\
         \x20 guard: pii tools [\"*\"] phase both mode enforce failOpen false from workspace\n\
         \x20 guard: shape tools [\"*\"] phase request mode enforce failOpen false from workspace\n\
         \x20   warning: plugin shape is a tool-shape plugin, not a guard plugin (built-in: none; configured: pii), \
         so every call it applies to is refused (failOpen is false)\n\
         \x20 guard: pii tools [\"db_*\",\"query\"] phase response mode audit failOpen false from server\n\
         \x20 guard: gone tools [\"*\"] phase both mode enforce failOpen true from server\n\
         \x20   warning: unknown plugin (built-in: none; configured: pii), so every call it applies to is let \
         through (failOpen is true)\n\
         \x20 sandbox: off\n  roots: workspace (the workspace root)\n\
         \x20 timeouts: connectMs=30000 listMs=30000 callMs=60000\n  workspace: disabled\n  valid: yes\n"
    );

    let (out, _) = run(&env, &["mcp", "get", "db", "--json"], 0);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}\n{out}"));
    assert_eq!(
        v["guards"],
        json!([
            {"plugin": "pii", "tools": ["*"], "phase": "both", "mode": "enforce", "failOpen": false,
             "from": "workspace"},
            {"plugin": "shape", "tools": ["*"], "phase": "request", "mode": "enforce", "failOpen": false,
             "from": "workspace",
             "warning": "plugin shape is a tool-shape plugin, not a guard plugin (built-in: none; configured: pii), \
                         so every call it applies to is refused (failOpen is false)"},
            {"plugin": "pii", "tools": ["db_*", "query"], "phase": "response", "mode": "audit", "failOpen": false,
             "from": "server"},
            {"plugin": "gone", "tools": ["*"], "phase": "both", "mode": "enforce", "failOpen": true,
             "from": "server",
             "warning": "unknown plugin (built-in: none; configured: pii), so every call it applies to is let \
                         through (failOpen is true)"}
        ])
    );
    // The definition as stored holds the server's own, written as short as they read.
    assert_eq!(
        v["definition"]["guards"],
        json!([{"plugin": "pii", "tools": ["db_*", "query"], "phase": "response", "mode": "audit"},
               {"plugin": "gone", "failOpen": true}])
    );

    // A server with none of its own still passes the workspace's.
    let (out, _) = run(&env, &["mcp", "get", "plain", "--json"], 0);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}\n{out}"));
    let from: Vec<&Value> =
        v["guards"].as_array().map(|g| g.iter().map(|g| &g["from"]).collect()).unwrap_or_default();
    assert_eq!(from, [&json!("workspace"), &json!("workspace")]);

    // None at all: no line, and an empty list.
    write(&env.workspace_file(), &json!({}));
    let (text, _) = run(&env, &["mcp", "get", "plain"], 0);
    assert!(!text.contains("guard"), "{text}");
    let (out, _) = run(&env, &["mcp", "get", "plain", "--json"], 0);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}\n{out}"));
    assert_eq!(v["guards"], json!([]));
}

#[test]
fn a_malformed_guards_list_stops_every_command_naming_the_file() {
    let env = Env::new();
    guarded(&env);
    let workspace = env.workspace_file().display().to_string();
    write(&env.workspace_file(), &json!({"guards": ["pii", {"plugin": "pii", "phase": "later"}]}));
    let message = format!(
        "toolport: {workspace}: \"guards[1].phase\" must be \"request\", \"response\" or \"both\", not \"later\"\n"
    );
    for args in [&["mcp", "get", "db"][..], &["mcp", "list"], &["tools"]] {
        let (_, err) = run(&env, args, 2);
        assert_eq!(err, message, "{args:?}");
    }

    write(&env.workspace_file(), &json!({}));
    let store = env.store().display().to_string();
    write(
        &env.store(),
        &json!({"mcpServers": {"db": {"command": "srv", "guards": ["pii", {"tools": ["db_*"]}]}}}),
    );
    let (_, err) = run(&env, &["mcp", "get", "db"], 2);
    assert_eq!(
        err,
        format!(
            "toolport: {store}: server \"db\": \"guards[1]\" has no \"plugin\": every entry names its guard plugin\n"
        )
    );
    write(
        &env.store(),
        &json!({"mcpServers": {"db": {"command": "srv", "guards": [{"plugin": "pii", "tools": ["[a"]}]}}}),
    );
    let (_, err) = run(&env, &["mcp", "list"], 2);
    assert_eq!(
        err,
        format!(
            "toolport: {store}: server \"db\": \"guards[0].tools\" has a bad glob \"[a\": unclosed character class; \
             missing ']'\n"
        )
    );
}

#[test]
fn add_json_and_set_keep_a_definitions_guards_exactly() {
    let env = Env::new();
    let guards = json!([" pii ", {"plugin": "sql", "tools": ["db_*"], "mode": "audit", "x-why": "team"}]);
    let given = json!({"command": "srv", "guards": guards});
    run(&env, &["mcp", "add-json", "db", &given.to_string()], 0);
    assert_eq!(read_json(&env.store())["mcpServers"]["db"]["guards"], guards);
    run(&env, &["mcp", "set", "db", "cwd", "/srv"], 0);
    run(&env, &["mcp", "set", "db", "timeouts.callMs", "5000"], 0);
    run(&env, &["mcp", "unset", "db", "cwd"], 0);
    assert_eq!(read_json(&env.store())["mcpServers"]["db"]["guards"], guards);

    // A malformed one is refused before anything is written.
    let bad = json!({"command": "srv", "guards": [{"plugin": "pii", "failOpen": "yes"}]});
    let (_, err) = run(&env, &["mcp", "add-json", "other", &bad.to_string()], 2);
    assert_eq!(
        err,
        "toolport: server \"other\": \"guards[0].failOpen\" must be true or false, not \"yes\"\n"
    );
    assert_eq!(read_json(&env.store())["mcpServers"].get("other"), None);
}
