//! Issue 45 item 2: a call of a tool whose server is connecting, in `error` or paused says
//! so, the same in `toolport call`, the session, ACP and serve (stdio and HTTP): the
//! reference's `Unknown MCP tool: NAME`, then the tool's own server and its state when its
//! pins or its `tools.include` say which it is, else every server that is not up. The servers
//! are the binary's own demo-server: one that answers, one whose start outlasts its
//! `connectMs` (in `error`), one slower than the test (connecting, behind serve), one paused
//! in the session.

use std::time::Duration;

use serde_json::{Value, json};

use crate::serve::clients::{Via, py};
use crate::support::acp::Agent;
use crate::support::common::Env;
use crate::support::runtime::{demo, write_config};
use crate::support::serve::ServeHttp;
use crate::support::session::Scripted;

/// How long one command may take.
const WITHIN: Duration = Duration::from_secs(60);
/// What the server that cannot start in time is in `error` with.
const DOWN: &str = "down (error: connect timed out after 500 ms)";

/// A demo-server whose tools are prefixed `prefix`, answering `initialize` only after
/// `delay_ms`, under `connect_ms`; `include` its tool filter.
fn slow(prefix: &str, delay_ms: u64, connect_ms: u64, include: &[&str]) -> Value {
    let mut def = demo(&["--prefix", prefix, "--delay-ms", &delay_ms.to_string()]);
    def["timeouts"] = json!({ "connectMs": connect_ms });
    if !include.is_empty() {
        def["tools"] = json!({ "include": include });
    }
    def
}

/// `ok` answers; `down` outlasts its 500 ms `connectMs` and names `d_echo` in its
/// `tools.include`.
fn ok_and_down() -> Value {
    json!({ "ok": demo(&["--prefix", "ok_"]), "down": slow("d_", 10_000, 500, &["d_echo"]) })
}

#[test]
fn call_names_the_server_of_a_pinned_tool_and_every_server_not_up() {
    let env = Env::new();
    write_config(
        &env,
        json!({ "ok": demo(&["--prefix", "ok_"]), "time": demo(&["--prefix", "t_"]) }),
        &["ok", "time"],
        json!({}),
    );
    // A first run pins time's tools in .toolport/tools.lock …
    let (code, stdout, stderr) = env.run(&["call", "t_echo", r#"{"message": "pinned"}"#], WITHIN);
    assert_eq!((code, stdout.as_str()), (0, "pinned\n"), "{stderr}");
    // … then time no longer starts within its connectMs.
    let servers = json!({ "ok": demo(&["--prefix", "ok_"]), "time": slow("t_", 10_000, 500, &[]) });
    write_config(&env, servers, &["ok", "time"], json!({}));
    let warning = "Warning: MCP unavailable: time (connect timed out after 500 ms)\n";
    let (code, stdout, stderr) = env.run(&["call", "t_echo", r#"{"message": "pinned"}"#], WITHIN);
    let said = format!(
        "{warning}toolport: Unknown MCP tool: t_echo. Its server is not connected: time (error: connect timed \
         out after 500 ms)\n"
    );
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (1, "", said.as_str()));
    // A name no server is known for: every server that is not up.
    let (code, _, stderr) = env.run(&["call", "nope"], WITHIN);
    let said = format!(
        "{warning}toolport: Unknown MCP tool: nope. Not connected: time (error: connect timed out after 500 ms)\n"
    );
    assert_eq!((code, stderr.as_str()), (1, said.as_str()));
    // The others' tools are unaffected.
    let (code, stdout, _) = env.run(&["call", "ok_echo", r#"{"message": "fine"}"#], WITHIN);
    assert_eq!((code, stdout.as_str()), (0, "fine\n"));
}

#[test]
fn the_session_names_a_paused_server_with_its_resume_command_and_a_failed_one() {
    let env = Env::new();
    let servers = json!({
        "ok": demo(&["--prefix", "ok_"]),
        "pausable": demo(&["--prefix", "p_"]),
        "down": slow("d_", 10_000, 500, &["d_echo"]),
    });
    write_config(&env, servers, &["ok", "pausable", "down"], json!({}));
    let mut s = Scripted::start(&env);
    assert_eq!(s.run(r#"/call p_echo {"message": "up"}"#), "up\n");
    // Its owner from its tool filter's `include`.
    assert_eq!(
        s.run("/call d_echo"),
        format!("Unknown MCP tool: d_echo. Its server is not connected: {DOWN}\n")
    );
    s.run("/mcp pause pausable");
    // Its owner from the pins the session's start recorded.
    let paused = "pausable (paused; `/mcp resume pausable` resumes it)";
    assert_eq!(
        s.run(r#"/call p_echo {"message": "up"}"#),
        format!("Unknown MCP tool: p_echo. Its server is not connected: {paused}\n")
    );
    assert_eq!(s.run("/call nope"), format!("Unknown MCP tool: nope. Not connected: {paused}, {DOWN}\n"));
    // The command it prints is the fix.
    s.run("/mcp resume pausable");
    assert_eq!(s.run(r#"/call p_echo {"message": "back"}"#), "back\n");
    assert!(s.quit().success());
}

#[test]
fn acp_names_the_server_of_a_tool_in_error_in_both_ways_to_call() {
    let env = Env::new();
    write_config(&env, ok_and_down(), &["ok", "down"], json!({}));
    let mut agent = Agent::start(&env);
    let new = agent.call(1, "session/new", json!({"cwd": env.root(), "mcpServers": []}));
    let session = new["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{new}")).to_string();
    let call = agent.call(2, "_toolport/tools/call", json!({"sessionId": session, "name": "d_echo"}));
    let owned = format!("Unknown MCP tool: d_echo. Its server is not connected: {DOWN}");
    assert_eq!(call["error"]["message"], json!(owned), "{call}");
    assert_eq!(agent.prompt(3, &session, "/call d_echo").1, owned);
    assert_eq!(
        agent.prompt(4, &session, "/call nope").1,
        format!("Unknown MCP tool: nope. Not connected: {DOWN}")
    );
    assert_eq!(agent.prompt(5, &session, r#"/call ok_echo {"message": "fine"}"#).1, "fine");
    agent.finish();
}

/// `ok`, `down`, and `slow`, whose start takes longer than the test (connecting throughout),
/// naming `s_echo` in its `tools.include`.
fn behind_serve() -> Env {
    let env = Env::new();
    let mut servers = ok_and_down();
    servers["slow"] = slow("s_", 600_000, 600_000, &["s_echo"]);
    write_config(&env, servers, &["ok", "down", "slow"], json!({}));
    env
}

/// The Python SDK's client calls each tool through serve: the answers are results the model
/// reads (`isError`), word for word.
fn check_serve(via: &Via) {
    let steps = json!([
        ["call", "s_echo", {"message": "x"}],
        ["call", "d_echo", {}],
        ["call", "nope", {}],
        ["call", "ok_echo", {"message": "fine"}],
    ]);
    let seen = py("whole", via, &["--steps", &steps.to_string()]);
    let error = |text: String| json!({"content": [{"type": "text", "text": text}], "isError": true, "resultType": "complete"});
    let expected = [
        error("Unknown MCP tool: s_echo. Its server is not connected: slow (connecting)".into()),
        error(format!("Unknown MCP tool: d_echo. Its server is not connected: {DOWN}")),
        error(format!("Unknown MCP tool: nope. Not connected: {DOWN}, slow (connecting)")),
    ];
    let answers = seen["answers"].as_array().cloned().unwrap_or_default();
    assert_eq!(answers.get(..3), Some(&expected[..]), "{seen}");
    assert_eq!(answers[3]["content"][0]["text"], "fine", "{seen}");
}

#[test]
fn serve_over_stdio_names_a_connecting_and_a_failed_server() {
    let env = behind_serve();
    check_serve(&Via::Stdio(&env));
}

#[test]
fn serve_over_http_names_a_connecting_and_a_failed_server() {
    let env = behind_serve();
    let serve = ServeHttp::listening(&env);
    check_serve(&Via::Http(&serve.url));
}

/// A host's own record of which servers list a tool ([`toolport::ToolOwners`], e.g. a listing
/// kept from an earlier run) names the owner when neither a pin nor `tools.include` does; a
/// named owner that is up does not hide the servers that are not.
#[tokio::test(flavor = "multi_thread")]
async fn a_hosts_own_record_of_owners_names_the_server() {
    let env = Env::new();
    let servers = json!({ "ok": demo(&["--prefix", "ok_"]), "down": slow("d_", 10_000, 500, &[]) });
    write_config(&env, servers, &["ok", "down"], json!({}));
    let owners = |tool: &str| match tool {
        "d_echo" => vec!["down".to_string()],
        "gone_from_ok" => vec!["ok".to_string()],
        _ => Vec::new(),
    };
    let options =
        toolport::RuntimeOptions { tool_owners: Some(std::sync::Arc::new(owners)), ..Default::default() };
    let runtime = crate::support::runtime::start(&env, &[], options).await;
    let said = |r: Result<toolport::CallOutcome, toolport::CallError>| r.err().map(|e| e.to_string());
    assert_eq!(
        said(runtime.call("d_echo", "").await).as_deref(),
        Some(format!("Unknown MCP tool: d_echo. Its server is not connected: {DOWN}").as_str())
    );
    assert_eq!(
        said(runtime.call("gone_from_ok", "").await).as_deref(),
        Some(format!("Unknown MCP tool: gone_from_ok. Not connected: {DOWN}").as_str())
    );
    runtime.shutdown().await;
}
