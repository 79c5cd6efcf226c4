//! Guard plugins on the path (issue 48), through the binary against real servers:
//! server-everything's `echo` returns what it is sent and its `args-prompt` quotes its
//! arguments, so a rewrite is seen in what comes back; server-memory writes what it is sent to
//! its file, so a call a guard refused is seen not to have reached it. The guards are the three
//! that ship (`plugins/guards/`) and the fixtures (`plugins/fixtures/guard-*`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Value, json};
use toolport::test_support::PLUGIN_BUILD_DIR;

use crate::support::common::Env;
use crate::support::peers::{everything_stdio, install, node, peers};

/// Long enough for Node's first start and a cold compile; only stops a hang.
const WITHIN: Duration = Duration::from_secs(120);

/// A built guest component.
pub(super) fn wasm(stem: &str) -> PathBuf {
    Path::new(PLUGIN_BUILD_DIR).join(format!("{stem}.wasm"))
}

/// The store's `plugins` entries for every guard these tests use.
fn plugins() -> Value {
    let guard = |stem: &str| json!({ "kind": "guard", "path": wasm(stem) });
    json!({
        "pii": guard("pii_redactor"),
        "validator": guard("arg_validator"),
        "reporter": guard("audit_report"),
        "pass": guard("fixture_guard_pass"),
        "deny-all": guard("fixture_guard_deny_all"),
        "hostile": { "kind": "guard", "path": wasm("fixture_guard_hostile"), "limits": { "callMs": 1000 } },
    })
}

/// server-everything and server-memory (writing to `<home>/memory.jsonl`), tools namespaced,
/// with the workspace's `guards` and each server's own (`own`: server → guards).
pub(super) fn servers(env: &Env, guards: Value, own: Value) {
    static MEMORY: OnceLock<String> = OnceLock::new();
    install("peers/install_memory.sh", &MEMORY);
    let memory_entry = peers().join("node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    let mut servers = json!({
        "everything": everything_stdio(),
        "memory": {"type": "stdio", "command": node(), "args": [memory_entry],
                   "env": {"MEMORY_FILE_PATH": memory_file(env)}},
    });
    if let Some(own) = own.as_object() {
        for (server, list) in own {
            servers[server]["guards"] = list.clone();
        }
    }
    let store = json!({ "mcpServers": servers, "plugins": plugins() });
    std::fs::write(env.store(), store.to_string()).unwrap_or_else(|e| panic!("write store: {e}"));
    let workspace = json!({
        "enabledMcpServers": ["everything", "memory"],
        "namePolicy": "namespace",
        "guards": guards,
    });
    let file = env.workspace_file();
    std::fs::create_dir_all(file.parent().unwrap_or_else(|| panic!("no parent")))
        .unwrap_or_else(|e| panic!("mkdir: {e}"));
    std::fs::write(file, workspace.to_string()).unwrap_or_else(|e| panic!("write workspace: {e}"));
}

pub(super) fn memory_file(env: &Env) -> PathBuf {
    env.home().join("memory.jsonl")
}

/// A server-memory call that stores `observation`.
pub(super) fn remember(observation: &str) -> Value {
    json!({"entities": [{"name": "note", "entityType": "note", "observations": [observation]}]})
}

/// `toolport <args>`: exit status, stdout, stderr.
pub(super) fn run(env: &Env, args: &[&str]) -> (i32, String, String) {
    env.run(args, WITHIN)
}

/// `toolport call <tool> <args>`.
pub(super) fn call(env: &Env, tool: &str, args: &Value) -> (i32, String, String) {
    run(env, &["call", tool, &args.to_string()])
}

/// The trail's entries (`<home>/audit/decisions.jsonl`) a guard made.
pub(super) fn guard_trail(env: &Env) -> Vec<Value> {
    let text = std::fs::read_to_string(env.home().join("audit/decisions.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| {
            ["denied", "rewritten", "flagged", "failed"].contains(&l["action"].as_str().unwrap_or(""))
        })
        .collect()
}

/// The audit log's lines (`<home>/audit/calls.jsonl`).
pub(super) fn audit_lines(env: &Env) -> Vec<Value> {
    let text = std::fs::read_to_string(env.home().join("audit/calls.jsonl")).unwrap_or_default();
    text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

#[test]
fn a_redactor_rewrites_a_result_and_the_rewrite_is_recorded_everywhere() {
    let env = Env::new();
    servers(&env, json!([{"plugin": "pii", "phase": "response"}]), json!({}));
    let message = "write to bob@example.com or call +44 20 7946 0958, card 4111 1111 1111 1111, not 4111 1111 1111 1112";
    let (code, stdout, stderr) = call(&env, "everything__echo", &json!({ "message": message }));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout.trim_end(),
        "Echo: write to [email] or call [phone], card [card], not 4111 1111 1111 1112"
    );
    assert!(!stderr.contains("bob@example.com"), "{stderr}");
    let trail = guard_trail(&env);
    assert_eq!(trail.len(), 1, "{trail:?}");
    assert_eq!(
        (&trail[0]["action"], &trail[0]["server"], &trail[0]["tool"], &trail[0]["rule"]),
        (&json!("rewritten"), &json!("everything"), &json!("echo"), &json!("pii")),
        "{trail:?}"
    );
    assert_eq!(trail[0]["reason"], "guard pii rewrote the tools/call response");
    let lines = audit_lines(&env);
    let line = lines.iter().find(|l| l["tool"] == "everything__echo").unwrap_or_else(|| panic!("{lines:?}"));
    assert_eq!(
        line["guards"],
        json!([{"guard": "pii", "phase": "response", "did": "rewritten", "mode": "enforce"}]),
        "{line}"
    );
    // Nothing to redact: the result comes back as it was, and nothing is recorded.
    let (code, stdout, _) = call(&env, "everything__echo", &json!({"message": "nothing here"}));
    assert_eq!((code, stdout.trim_end()), (0, "Echo: nothing here"));
    assert_eq!(guard_trail(&env).len(), 1);
}

#[test]
fn a_validator_refuses_a_call_before_it_reaches_the_server() {
    let env = Env::new();
    servers(&env, json!([{"plugin": "validator", "phase": "request"}]), json!({}));
    let (code, stdout, stderr) =
        call(&env, "memory__search_nodes", &json!({"query": "x'; DROP TABLE users; --"}));
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stderr.contains(
            "MCP tool memory__search_nodes on server memory was refused by guard validator: arg-validator: \
             argument `query` contains the SQL keyword DROP"
        ),
        "{stderr}"
    );
    // A word that only contains the keyword passes, and the server answers.
    let (code, stdout, stderr) = call(&env, "memory__search_nodes", &json!({"query": "dropdown"}));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("entities"), "{stdout}");
    let trail = guard_trail(&env);
    assert_eq!(trail.len(), 1, "{trail:?}");
    assert_eq!((&trail[0]["action"], &trail[0]["tool"]), (&json!("denied"), &json!("search_nodes")));
    let refused = audit_lines(&env).into_iter().find(|l| l["error"] == "guard-denied");
    let refused = refused.unwrap_or_else(|| panic!("no refused line: {:?}", audit_lines(&env)));
    assert_eq!(refused["guards"][0]["did"], "denied", "{refused}");
}

#[test]
fn deny_all_in_enforce_mode_stops_every_call_and_in_audit_mode_only_reports() {
    let env = Env::new();
    servers(&env, json!([{"plugin": "deny-all", "tools": ["memory__*"]}]), json!({}));
    let (code, _, stderr) = call(&env, "memory__create_entities", &remember("kept out"));
    assert_eq!(code, 1);
    assert!(
        stderr.contains(
            "was refused by guard deny-all: guard-deny-all refuses every request (memory__create_entities)"
        ),
        "{stderr}"
    );
    let stored = std::fs::read_to_string(memory_file(&env)).unwrap_or_default();
    assert!(!stored.contains("kept out"), "the server got it: {stored}");
    // Its globs: everything's tools are not its business.
    let (code, stdout, _) = call(&env, "everything__echo", &json!({"message": "hi"}));
    assert_eq!((code, stdout.trim_end()), (0, "Echo: hi"));

    servers(&env, json!([{"plugin": "deny-all", "mode": "audit"}]), json!({}));
    let (code, _, stderr) = call(&env, "memory__create_entities", &remember("let through"));
    assert_eq!(code, 0, "{stderr}");
    let stored = std::fs::read_to_string(memory_file(&env)).unwrap_or_default();
    assert!(stored.contains("let through"), "{stored}");
    let flagged: Vec<Value> = guard_trail(&env).into_iter().filter(|l| l["action"] == "flagged").collect();
    // Its request and its answer, both flagged, neither refused.
    assert_eq!(flagged.len(), 2, "{flagged:?}");
    assert_eq!(flagged[0]["reason"], "guard deny-all would refuse the tools/call request");
    assert_eq!(flagged[1]["reason"], "guard deny-all would refuse the tools/call response");
    let line = audit_lines(&env).into_iter().rev().find(|l| l["tool"] == "memory__create_entities");
    let line = line.unwrap_or_else(|| panic!("no line"));
    assert_eq!(line["outcome"], "ok", "{line}");
    assert_eq!(
        line["guards"],
        json!([
            {"guard": "deny-all", "phase": "request", "did": "flagged", "mode": "audit"},
            {"guard": "deny-all", "phase": "response", "did": "flagged", "mode": "audit"}
        ])
    );
}

#[test]
fn a_servers_own_guards_run_after_the_workspaces_and_only_for_it() {
    let env = Env::new();
    // The workspace's guard passes; the server's own refuses, so the chain got that far.
    servers(&env, json!(["pass"]), json!({"memory": [{"plugin": "deny-all", "phase": "request"}]}));
    let (code, _, stderr) = call(&env, "memory__read_graph", &json!({}));
    assert_eq!(code, 1);
    assert!(stderr.contains("refused by guard deny-all"), "{stderr}");
    let (code, stdout, stderr) = call(&env, "everything__echo", &json!({"message": "free"}));
    assert_eq!((code, stdout.trim_end()), (0, "Echo: free"), "{stderr}");
}

#[test]
fn reads_and_prompts_pass_their_guards_both_ways() {
    let env = Env::new();
    servers(&env, json!(["pii"]), json!({}));
    let (code, stdout, stderr) = run(&env, &["prompt", "args-prompt", r#"{"city": "ann@example.org"}"#]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "user: What's weather in [email]?\n");

    servers(&env, json!([{"plugin": "deny-all", "tools": ["demo://*"]}]), json!({}));
    let (code, _, stderr) =
        run(&env, &["read", "everything", "demo://resource/static/document/architecture.md"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains(
            "MCP resource demo://resource/static/document/architecture.md on server everything was refused by \
             guard deny-all: guard-deny-all refuses every request (demo://resource/static/document/architecture.md)"
        ),
        "{stderr}"
    );
    let (code, stdout, stderr) = run(&env, &["prompt", "args-prompt", r#"{"city": "Oslo"}"#]);
    assert_eq!((code, stdout.as_str()), (0, "user: What's weather in Oslo?\n"), "{stderr}");
}

#[test]
fn a_missing_guard_refuses_unless_it_fails_open() {
    let env = Env::new();
    servers(&env, json!(["nowhere"]), json!({}));
    let (code, _, stderr) = call(&env, "everything__echo", &json!({"message": "hi"}));
    assert_eq!(code, 1);
    assert!(
        stderr.contains(
            "was refused by guard nowhere: unknown plugin (built-in: none; configured: pii, validator, reporter, \
             pass, deny-all, hostile) (the guard does not fail open: failOpen is false)"
        ),
        "{stderr}"
    );
    // Said before any call too, with the file that names it.
    let warning = format!(
        "Warning: {}: guard \"nowhere\": unknown plugin (built-in: none; configured: pii, validator, reporter, \
         pass, deny-all, hostile), so every call it applies to is refused (failOpen is false)",
        env.workspace_file().display()
    );
    assert!(stderr.contains(&warning), "{stderr}");
    servers(&env, json!([{"plugin": "nowhere", "failOpen": true}]), json!({}));
    let (code, stdout, stderr) = call(&env, "everything__echo", &json!({"message": "hi"}));
    assert_eq!((code, stdout.trim_end()), (0, "Echo: hi"), "{stderr}");
    let failed: Vec<Value> = guard_trail(&env).into_iter().filter(|l| l["action"] == "failed").collect();
    assert_eq!(failed.len(), 2, "request and response: {failed:?}");
}

#[test]
fn a_component_built_against_the_0_1_0_contract_keeps_loading() {
    let env = Env::new();
    let store = json!({
        "mcpServers": { "everything": everything_stdio() },
        "plugins": { "old": { "kind": "tool-shape", "path": wasm("fixture_v010_shape") } },
    });
    std::fs::write(env.store(), store.to_string()).unwrap_or_else(|e| panic!("write store: {e}"));
    let workspace = json!({ "enabledMcpServers": ["everything"], "toolShape": "old" });
    let file = env.workspace_file();
    std::fs::create_dir_all(file.parent().unwrap_or_else(|| panic!("no parent")))
        .unwrap_or_else(|e| panic!("mkdir: {e}"));
    std::fs::write(file, workspace.to_string()).unwrap_or_else(|e| panic!("write workspace: {e}"));
    let (code, stdout, stderr) =
        run(&env, &["plugin", "inspect", &wasm("fixture_v010_shape").display().to_string()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("version: toolport:plugin@0.1.0 (served by this toolport)"), "{stdout}");
    let (code, stdout, stderr) = run(&env, &["tools", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let shaped: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let echo = shaped.as_array().and_then(|a| a.iter().find(|t| t["name"] == "echo")).cloned();
    assert_eq!(echo, Some(json!({"name": "echo", "v010": true})), "{stdout}");
}
