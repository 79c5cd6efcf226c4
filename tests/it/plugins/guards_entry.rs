//! One guard chain for every entry point (issue 48 item 3): a refusal is the same through
//! `serve` (the official Python SDK's client, which sees it as a tool error the model reads,
//! and whose name the guard is told), the interactive session and the ACP agent, as through
//! `toolport call` (`guards.rs`).

use serde_json::json;

use super::guards::{memory_file, remember, servers};
use crate::serve::clients::{py_command, py_output};
use crate::support::acp::Agent;
use crate::support::common::Env;
use crate::support::serve::serve_command;
use crate::support::session::Scripted;

/// The refusal every entry point shows for `memory__create_entities` under `deny-all`.
const REFUSED: &str = "MCP tool memory__create_entities on server memory was refused by guard deny-all: \
    guard-deny-all refuses every request (memory__create_entities)";

fn deny_memory(env: &Env) {
    servers(env, json!([{"plugin": "deny-all", "tools": ["memory__*"], "phase": "request"}]), json!({}));
}

#[test]
fn through_serve_the_model_reads_the_refusal_and_the_guard_knows_the_client() {
    let env = Env::new();
    deny_memory(&env);
    let args = remember("kept out").to_string();
    let errlog = env.root().join("serve.stderr");
    let out = py_command("call", &["--tool", "memory__create_entities", "--args", &args])
        .arg("--errlog")
        .arg(&errlog)
        .arg("--")
        .args(serve_command(&env))
        .output()
        .unwrap_or_else(|e| panic!("cannot run client.py: {e}"));
    let serve_stderr = std::fs::read_to_string(&errlog).unwrap_or_default();
    let seen = py_output("call", &out, &serve_stderr);
    assert_eq!(seen["is_error"], json!(true), "{seen}");
    let text = seen["texts"][0].as_str().unwrap_or_default();
    assert!(text.starts_with(&format!("{REFUSED} from mcp")), "{seen}");
    let stored = std::fs::read_to_string(memory_file(&env)).unwrap_or_default();
    assert!(!stored.contains("kept out"), "the server got it: {stored}");
}

#[test]
fn in_the_session_a_refused_call_is_said_and_the_next_served() {
    let env = Env::new();
    deny_memory(&env);
    let mut s = Scripted::start(&env);
    let said = s.run(&format!("/call memory__create_entities {}", remember("kept out")));
    assert!(said.contains(REFUSED), "{said}");
    let said = s.run(r#"/call everything__echo {"message": "still here"}"#);
    assert!(said.contains("Echo: still here"), "{said}");
    s.quit();
}

#[test]
fn over_acp_a_refused_call_is_said_to_the_editor() {
    let env = Env::new();
    deny_memory(&env);
    let mut agent = Agent::start(&env);
    agent.call(0, "initialize", json!({"protocolVersion": 1}));
    let new = agent.call(1, "session/new", json!({"cwd": env.root(), "mcpServers": []}));
    let session = new["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{new}")).to_string();
    let (_, text) =
        agent.prompt(2, &session, &format!("/call memory__create_entities {}", remember("kept out")));
    assert!(text.contains(REFUSED), "{text}");
    agent.finish();
}
