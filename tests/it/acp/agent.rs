//! `toolport acp`: raw JSON-RPC lines (framing, errors, the `cwd` rules, both `env`/`headers`
//! forms, the local-store fallback) and the official ACP TypeScript SDK as a real client
//! (initialize, sessions with stdio and HTTP servers, prompts, extension methods,
//! `session/load`, two sessions at once, cancellation).

use std::process::Command;

use serde_json::{Value, json};

use crate::support::acp::{Agent, acp_client, demo_server};
use crate::support::common::{Env, toolport_path};
use crate::support::peers::Everything;

fn error_of(response: &Value) -> (i64, String) {
    let code = response["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error: {response}"));
    (code, response["error"]["message"].as_str().unwrap_or_default().to_string())
}

#[test]
fn malformed_lines_get_errors_and_the_agent_keeps_serving() {
    let env = Env::new();
    let mut agent = Agent::start(&env);
    agent.send_line("{this is not json");
    let parse = agent.next();
    assert_eq!(parse["id"], Value::Null);
    assert_eq!(error_of(&parse).0, -32700);
    agent.send_line("[1, 2, 3]");
    assert_eq!(error_of(&agent.next()).0, -32600);
    agent.send_bytes(b"\xff\xfe{\"jsonrpc\": \"2.0\"}\n");
    assert_eq!(error_of(&agent.next()).0, -32700);

    let init = agent.call(1, "initialize", json!({"protocolVersion": 1, "clientCapabilities": {}}));
    assert_eq!(init["result"]["protocolVersion"], 1);
    assert_eq!(init["result"]["agentCapabilities"]["loadSession"], true);
    assert_eq!(init["result"]["agentCapabilities"]["mcpCapabilities"], json!({"http": true, "sse": true}));
    assert_eq!(init["result"]["agentInfo"]["name"], "toolport");
    agent.finish();
}

#[test]
fn unknown_method_is_method_not_found() {
    let env = Env::new();
    let mut agent = Agent::start(&env);
    let (code, message) = error_of(&agent.call(7, "session/frobnicate", json!({})));
    assert_eq!(code, -32601);
    assert_eq!(message, "Method not found: session/frobnicate");
    // A notification of an unknown method is ignored (no answer), and the next request works.
    agent.send_line(r#"{"jsonrpc":"2.0","method":"_unknown/notice","params":{}}"#);
    assert_eq!(error_of(&agent.call(8, "nope", json!(null))).0, -32601);
    agent.finish();
}

#[test]
fn sessions_need_an_absolute_cwd() {
    let env = Env::new();
    let mut agent = Agent::start(&env);
    for (id, method, params, message) in [
        (1, "session/new", json!({"mcpServers": []}), "cwd is required"),
        (2, "session/new", json!({"cwd": "relative/dir", "mcpServers": []}), "cwd must be an absolute path"),
        (3, "session/load", json!({"sessionId": "s", "mcpServers": []}), "cwd is required"),
        (4, "session/load", json!({"sessionId": "s", "cwd": "./here"}), "cwd must be an absolute path"),
    ] {
        let (code, text) = error_of(&agent.call(id, method, params));
        assert_eq!((code, text.as_str()), (-32602, message), "{method}");
    }
    let (code, text) = error_of(&agent.call(5, "session/prompt", json!({"sessionId": "nope", "prompt": []})));
    assert_eq!((code, text.as_str()), (-32602, "Unknown session: nope"));
    agent.finish();
}

#[test]
fn client_servers_in_object_form_replace_the_local_stores() {
    let env = Env::new();
    // A local store whose server must NOT appear: the client's list replaces it.
    std::fs::write(env.store(), json!({"mcpServers": {"local": {"command": "true"}}}).to_string())
        .unwrap_or_else(|e| panic!("{e}"));
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut agent = Agent::start(&env);
    let mut stdio = demo_server("", "o");
    stdio["env"] = json!({"DEMO_SECRET": "not-to-be-printed"});
    let http = json!({"type": "http", "url": format!("http://127.0.0.1:{closed_port}/mcp"),
                      "headers": {"Authorization": "Bearer not-to-be-printed"}});
    let new = agent.call(1, "session/new", json!({"cwd": env.root(), "mcpServers": [stdio, http]}));
    let session = new["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{new}")).to_string();
    let update = agent.next();
    assert_eq!(update["method"], "session/update");
    assert_eq!(update["params"]["update"]["sessionUpdate"], "available_commands_update");

    let (stop, text) = agent.prompt(2, &session, "/mcp");
    assert_eq!(stop, "end_turn");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "mcp:");
    assert_eq!(lines[1], "- mcp-1 | type=stdio | state=connected | workspace=enabled | paused=no | tools=6");
    assert!(
        lines[2].starts_with(
            "- mcp-2 | type=streamable_http | state=error | workspace=enabled | paused=no | tools=0 | error="
        ),
        "{text}"
    );
    assert_eq!(lines.len(), 3, "no store/workspaceConfig trailer over ACP: {text}");
    assert!(!text.contains("not-to-be-printed"));

    let (_, text) = agent.prompt(3, &session, r#"/call o_echo {"message": "object form"}"#);
    assert_eq!(text, "object form");
    let (_, text) = agent.prompt(4, &session, "/mcp pause mcp-1");
    assert!(text.starts_with("Over ACP, /mcp only shows the status view"), "{text}");
    agent.finish();
}

/// A clash between two of the client's own servers is named without a fix: `toolport mcp set`
/// cannot reach a definition the client sent, so no command is printed that would not work.
#[test]
fn a_clash_between_client_servers_prints_no_toolport_fix() {
    let env = Env::new();
    let mut agent = Agent::start(&env);
    let servers = json!([demo_server("first", "o"), demo_server("second", "o")]);
    let new = agent.call(1, "session/new", json!({"cwd": env.root(), "mcpServers": servers}));
    let session = new["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{new}")).to_string();
    let _commands = agent.next();
    let (_, text) = agent.prompt(2, &session, "/mcp");
    assert_eq!(
        text,
        "mcp:\n\
         - first | type=stdio | state=connected | workspace=enabled | paused=no | tools=6\n\
         - second | type=stdio | state=error | workspace=enabled | paused=no | tools=0 | error=MCP tool name \
         conflict: o_echo already provided by first\n"
    );
    agent.finish();
}

#[test]
fn an_empty_server_list_uses_the_local_stores_with_cwd_as_workspace() {
    let env = Env::new();
    let demo = json!({"command": toolport_path(), "args": ["demo-server", "--prefix", "w_"]});
    std::fs::write(
        env.store(),
        json!({"mcpServers": {"local": demo, "other": {"command": "true"}}}).to_string(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let ws = env.workspace_file();
    std::fs::create_dir_all(ws.parent().unwrap_or_else(|| panic!("no parent")))
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&ws, r#"{"enabledMcpServers": ["local"]}"#).unwrap_or_else(|e| panic!("{e}"));

    let mut agent = Agent::start(&env);
    let new = agent.call(1, "session/new", json!({"cwd": env.root(), "mcpServers": []}));
    let session = new["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{new}")).to_string();
    let (_, text) = agent.prompt(2, &session, "/mcp");
    assert_eq!(
        text,
        "mcp:\n\
         - local | type=stdio | state=connected | workspace=enabled | paused=no | tools=6\n\
         - other | type=stdio | state=disabled | workspace=disabled | paused=no | tools=0\n"
    );
    let listed = agent.call(3, "_toolport/tools/list", json!({"sessionId": session}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t.pointer("/function/name").and_then(Value::as_str)).collect())
        .unwrap_or_default();
    assert_eq!(names, ["w_echo", "w_add", "w_sleep", "w_fail", "w_big", "w_pid"]);
    let bad = agent.call(
        4,
        "_toolport/tools/call",
        json!({"sessionId": session, "name": "w_echo", "arguments": "[1]"}),
    );
    assert_eq!(error_of(&bad).1, "Invalid MCP tool arguments: expected a JSON object, got an array");
    agent.finish();
}

/// The official SDK client (tests/acp/client.mjs) against the binary: every message it receives
/// is validated by the SDK's schemas, and its report is checked here.
#[test]
fn the_official_sdk_client_drives_sessions() {
    let (client_dir, node) = acp_client();
    let http = Everything::streamable_http();
    let env = Env::new();
    let config = json!({
        "toolport": toolport_path(),
        "home": env.home(),
        "cwd": env.root(),
        "demo": {"command": toolport_path(), "args": ["demo-server"]},
        "httpUrl": http.url,
    });
    let out = Command::new(&node)
        .arg(client_dir.join("client.mjs"))
        .arg(config.to_string())
        .current_dir(&client_dir)
        .output()
        .unwrap_or_else(|e| panic!("run the ACP client with {}: {e}", node.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "ACP client failed:\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains("not-to-be-printed"), "a secret leaked: {stdout}");
    let r: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("client report ({e}): {stdout}"));

    assert_eq!(r["initialize"]["protocolVersion"], 1);
    assert_eq!(r["initialize"]["agentCapabilities"]["loadSession"], true);
    assert_eq!(r["initialize"]["agentCapabilities"]["mcpCapabilities"], json!({"http": true, "sse": true}));
    assert_eq!(r["initialize"]["agentInfo"]["name"], "toolport");
    assert_eq!(r["commands"], json!(["mcp", "tools", "call"]));

    let mcp = r["mcp"]["text"].as_str().unwrap_or_default();
    assert_eq!(r["mcp"]["stopReason"], "end_turn");
    let lines: Vec<&str> = mcp.lines().collect();
    assert_eq!(lines[0], "mcp:", "{mcp}");
    assert_eq!(lines[1], "- demo-a | type=stdio | state=connected | workspace=enabled | paused=no | tools=6");
    assert!(
        lines[2].starts_with(
            "- everything | type=streamable_http | state=connected | workspace=enabled | paused=no | tools="
        ),
        "{mcp}"
    );
    assert_eq!(lines.len(), 3, "{mcp}");

    assert_eq!(
        (&r["call"]["stopReason"], &r["call"]["text"]),
        (&json!("end_turn"), &json!("hello from acp"))
    );
    assert_eq!(r["callError"]["text"], "tool error: demo failure");
    assert!(r["freeText"]["text"].as_str().unwrap_or_default().contains("not a model"));
    assert!(r["httpCall"]["text"].as_str().unwrap_or_default().contains("over http"), "{}", r["httpCall"]);
    assert_eq!(
        r["extCall"],
        json!({"content": [{"type": "text", "text": "5"}], "isError": false, "structuredContent": {"sum": 5}})
    );
    let ext_list: Vec<&str> =
        r["extList"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    assert!(ext_list.contains(&"a_echo") && ext_list.contains(&"echo"), "{ext_list:?}");

    assert_eq!(r["load"], json!({}));
    assert_eq!(r["loadCommands"], json!(["mcp", "tools", "call"]));
    assert_eq!(
        r["loadMcp"]["text"],
        "mcp:\n- demo-l | type=stdio | state=connected | workspace=enabled | paused=no | tools=6\n"
    );

    // Two sessions side by side: each sees only its own server, and the fast call in one
    // finished while the slow call in the other was still running.
    let p = &r["parallel"];
    assert_eq!(p["fast"]["text"], "fast");
    assert_eq!(p["slow"]["stopReason"], "end_turn");
    assert_eq!(p["fastFirst"], true, "{p}");
    assert!(p["fast"]["ms"].as_u64().unwrap_or(u64::MAX) < 1500, "{p}");
    let s2 = r["s2Mcp"]["text"].as_str().unwrap_or_default();
    let s3 = r["s3Mcp"]["text"].as_str().unwrap_or_default();
    assert!(s2.contains("- demo-b |") && !s2.contains("demo-c"), "{s2}");
    assert!(s3.contains("- demo-c |") && !s3.contains("demo-b"), "{s3}");

    assert_eq!(r["cancelled"]["stopReason"], "cancelled");
    // The call would sleep 20 s; cancelling after 300 ms ends the turn long before that.
    assert!(r["cancelled"]["ms"].as_u64().unwrap_or(u64::MAX) < 10_000, "{}", r["cancelled"]);
}

/// A cancel written right behind its prompt (same write, no pause) still cancels it: the
/// prompt starts listening when it arrives, not when its task happens to run.
#[test]
fn a_cancel_right_behind_its_prompt_is_not_lost() {
    let env = Env::new();
    let mut agent = Agent::start(&env);
    let new = agent.call(1, "session/new", json!({"cwd": env.root(), "mcpServers": [demo_server("d", "k")]}));
    let session = new["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{new}")).to_string();
    let started = std::time::Instant::now();
    let prompt = json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": r#"/call k_sleep {"ms": 30000}"#}]}});
    let cancel = json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}});
    agent.send_line(&format!("{prompt}\n{cancel}"));
    let (_, response) = agent.until_response(2);
    assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    // The session still serves after a cancelled call.
    assert_eq!(agent.prompt(3, &session, r#"/call k_echo {"message": "still here"}"#).1, "still here");
    let unknown = agent.call(4, "_toolport/tools/call", json!({"sessionId": session, "name": "nope"}));
    assert_eq!(error_of(&unknown), (-32602, "Unknown MCP tool: nope".to_string()));
    // A name is matched exactly (issue 44): `k_echo` with a space or a NUL after it is no tool.
    for (id, padded, shown) in [(40, "k_echo ", "k_echo "), (41, "k_echo\u{0}", "k_echo\\u{0}")] {
        let params = json!({"sessionId": session, "name": padded, "arguments": {"message": "x"}});
        let refused = agent.call(id, "_toolport/tools/call", params);
        assert_eq!(error_of(&refused), (-32602, format!("Unknown MCP tool: {shown}")), "{padded:?}");
    }
    // The extension call is cancelled the same way, as a JSON-RPC "request cancelled" error.
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "_toolport/tools/call",
        "params": {"sessionId": session, "name": "k_sleep", "arguments": {"ms": 30000}}});
    agent.send_line(&format!("{call}\n{cancel}"));
    let (_, response) = agent.until_response(5);
    assert_eq!(error_of(&response), (-32800, "Request cancelled by session/cancel".to_string()));
    agent.finish();
}

/// `mcpCapabilities.sse` is advertised, so a client's SSE server must really work: the real
/// server-everything in SSE mode, in the spec's form.
#[test]
fn a_client_sse_server_connects_and_answers() {
    let sse = Everything::sse();
    let env = Env::new();
    let mut agent = Agent::start(&env);
    let server = json!({"type": "sse", "name": "legacy", "url": sse.url, "headers": []});
    let new = agent.call(1, "session/new", json!({"cwd": env.root(), "mcpServers": [server]}));
    let session = new["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{new}")).to_string();
    let (_, view) = agent.prompt(2, &session, "/mcp");
    assert!(
        view.starts_with(
            "mcp:\n- legacy | type=sse | state=connected | workspace=enabled | paused=no | tools="
        ),
        "{view}"
    );
    let (stop, text) = agent.prompt(3, &session, r#"/call echo {"message": "over sse"}"#);
    assert_eq!(stop, "end_turn");
    assert!(text.contains("over sse"), "{text}");
    agent.finish();
}
