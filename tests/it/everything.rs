//! The real `@modelcontextprotocol/server-everything` over stdio and streamable HTTP. The
//! package is installed by `tests/peers/install.sh` into the target folder, once; a missing
//! peer fails these tests (never skips them), so CI cannot pass without running them.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use toolport::ServerState;
use toolport::{CallError, Runtime, RuntimeOptions};

use crate::common::Env;
use crate::peers::{Everything, everything_entry, everything_stdio, node};
use crate::runtime_support::{eventually, start, write_config};

/// The server's own `tools/list` (all pages), read with a bare JSON-RPC exchange over stdio:
/// an independent count and the schemas as the server sent them. It declares the capabilities
/// a library runtime advertises (roots and sampling, no elicitation), since server-everything
/// lists some tools only to clients that have them.
fn raw_tool_list() -> Vec<Value> {
    let mut child = Command::new(node())
        .arg(everything_entry())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn node: {e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("stdin"));
    let mut stdout = BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("stdout")));
    let mut send = |msg: Value| writeln!(stdin, "{msg}").unwrap_or_else(|e| panic!("write: {e}"));
    let mut read_response = |id: u64| loop {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap_or(0) == 0 {
            panic!("server closed stdout");
        }
        let msg: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if msg.get("id") == Some(&json!(id)) {
            return msg;
        }
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {"roots": {"listChanged": true}, "sampling": {}}, "clientInfo": {"name": "raw", "version": "1"}}}));
    read_response(1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut tools = Vec::new();
    let mut cursor: Option<Value> = None;
    for id in 2.. {
        let params = cursor.take().map(|c| json!({ "cursor": c })).unwrap_or(json!({}));
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params}));
        let result = read_response(id)["result"].clone();
        tools.extend(result["tools"].as_array().cloned().unwrap_or_default());
        match result.get("nextCursor") {
            Some(c) if !c.is_null() => cursor = Some(c.clone()),
            _ => break,
        }
    }
    stop(&mut child);
    tools
}

fn stop(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// What both transports must show: connected, the server's own count, echo, schemas intact.
async fn check(runtime: &Runtime, raw: &[Value]) {
    let rows = runtime.status();
    assert_eq!(rows[0].state, ServerState::Connected, "{rows:?}");
    assert_eq!(rows[0].tools, raw.len());
    let surface = runtime.tools();
    assert_eq!(surface.len(), raw.len());
    for tool in raw {
        let name = tool["name"].as_str().unwrap_or_default();
        let shaped = surface.iter().find(|t| t["function"]["name"] == json!(name));
        let shaped = shaped.unwrap_or_else(|| panic!("{name} missing from the surface"));
        assert_eq!(shaped["function"]["parameters"], tool["inputSchema"], "schema of {name}");
    }
    let echo = runtime.call("echo", r#"{"message": "round trip"}"#).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(!echo.is_error);
    assert!(echo.render_text().contains("round trip"), "{}", echo.render_text());
}

#[tokio::test(flavor = "multi_thread")]
async fn server_everything_over_stdio() {
    let raw = raw_tool_list();
    assert!(raw.len() > 5, "server-everything lists its tools: {}", raw.len());
    let env = Env::new();
    let server = everything_stdio();
    write_config(&env, json!({ "everything": server }), &["everything"], json!({}));
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    check(&runtime, &raw).await;
    runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn server_everything_over_streamable_http() {
    let raw = raw_tool_list();
    let mut server = Everything::streamable_http();

    let env = Env::new();
    let def = json!({
        "type": "http",
        "url": server.url,
        "headers": { "X-Toolport-Test": "${TP_EVERYTHING_TOKEN:-none}" }
    });
    write_config(&env, json!({ "everything": def }), &["everything"], json!({}));
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    check(&runtime, &raw).await;

    // The server goes away: the next call says the server is not connected, and the view
    // turns to `error` instead of staying `connected`.
    server.stop();
    match runtime.call("echo", r#"{"message": "anyone?"}"#).await {
        Err(e @ CallError::NotConnected { .. }) => {
            assert!(e.to_string().starts_with("MCP server everything is not connected: "), "{e}")
        }
        other => panic!("expected NotConnected, got {other:?}"),
    }
    let noticed =
        eventually(Duration::from_secs(5), || runtime.status()[0].state == ServerState::Error).await;
    assert!(noticed, "{:?}", runtime.status());
    runtime.shutdown().await;
}
