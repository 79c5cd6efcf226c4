//! A workspace-level mistake is a configuration error: a `toolShape` or `namePolicy` that names
//! no plugin of that kind stops every command that needs the surface with exit 2 and one
//! message naming the file and what exists, and no file is touched.

use std::fs;

use serde_json::json;

use crate::support::common::Env;
use crate::support::runtime::{demo, write_config};

/// Runs `args` and returns (exit code, stderr).
fn failing(env: &Env, args: &[&str]) -> (Option<i32>, String) {
    let o = env.cmd(args).output().unwrap_or_else(|e| panic!("{args:?}: {e}"));
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn an_unknown_tool_shape_is_the_workspaces_error_not_every_servers() {
    let env = Env::new();
    write_config(&env, json!({ "demo": demo(&[]) }), &["demo"], json!({ "toolShape": "nope" }));
    let store = fs::read(env.store()).unwrap_or_default();
    let workspace = fs::read(env.workspace_file()).unwrap_or_default();
    let expected = format!(
        "toolport: {}: toolShape \"nope\": unknown plugin (built-in: openai, anthropic; configured: none)\n",
        env.workspace_file().display()
    );
    for args in [&["tools"][..], &["tools", "--json"], &["call", "echo", "{}"], &["mcp", "list"]] {
        assert_eq!(failing(&env, args), (Some(2), expected.clone()), "{args:?}");
    }
    assert_eq!(fs::read(env.store()).unwrap_or_default(), store, "the store is untouched");
    assert_eq!(
        fs::read(env.workspace_file()).unwrap_or_default(),
        workspace,
        "the workspace file is untouched"
    );
}

#[test]
fn a_plugin_of_the_wrong_kind_is_named_with_what_would_fit() {
    let env = Env::new();
    let servers = json!({ "demo": demo(&[]) });
    write_config(&env, servers.clone(), &["demo"], json!({ "namePolicy": "sse" }));
    // A configured policy is offered next to the built-in one (it is never loaded here).
    let mut store: serde_json::Value =
        serde_json::from_slice(&fs::read(env.store()).unwrap_or_default()).unwrap_or_default();
    store["plugins"] = json!({ "mine": { "kind": "name-policy", "path": "mine.wasm" } });
    fs::write(env.store(), store.to_string()).unwrap_or_else(|e| panic!("write store: {e}"));
    let (code, stderr) = failing(&env, &["tools"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        format!(
            "toolport: {}: namePolicy \"sse\": plugin sse is a transport plugin, not a name-policy plugin \
             (built-in: namespace; configured: mine)\n",
            env.workspace_file().display()
        )
    );
    // The interactive session refuses to start on the same mistake.
    let (code, stderr) = failing(&env, &["session"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("namePolicy \"sse\": plugin sse is a transport plugin"), "{stderr}");
}
