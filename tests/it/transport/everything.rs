//! The real `@modelcontextprotocol/server-everything` over stdio and streamable HTTP. The
//! package is installed by `tests/peers/install.sh` into the target folder, once; a missing
//! peer fails these tests (never skips them), so CI cannot pass without running them.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use toolport::{CallError, Runtime, RuntimeOptions, ServerState};

use crate::support::common::Env;
use crate::support::peers::{Everything, everything_entry, everything_stdio, node};
use crate::support::runtime::{eventually, start, write_config};

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

/// `mcp list --json` and `mcp get --json` of one workspace whose only server is `name`: the
/// negotiated revision each shows.
fn versions_shown(env: &Env, name: &str) -> (Value, Value) {
    let read = |args: &[&str]| -> Value {
        let out = env.cmd(args).output().unwrap_or_else(|e| panic!("toolport {args:?}: {e}"));
        assert!(out.status.success(), "toolport {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("toolport {args:?} --json: {e}"))
    };
    let list = read(&["mcp", "list", "--json"]);
    assert_eq!(list["servers"][0]["state"], json!("connected"), "{list}");
    let get = read(&["mcp", "get", name, "--json"]);
    (list["servers"][0]["protocolVersion"].clone(), get["protocolVersion"].clone())
}

/// server-everything speaks only the `initialize` handshake (2025-11-25): toolport's
/// `server/discover` probe is refused and the fallback connects, over stdio and over
/// streamable HTTP, and both `--json` views say which revision was negotiated.
#[test]
fn the_negotiated_revision_shows_in_json_over_stdio_and_http() {
    let env = Env::new();
    let stdio = everything_stdio();
    let add = env.cmd(["mcp", "add-json", "everything", &stdio.to_string()]).output();
    assert!(add.is_ok_and(|o| o.status.success()));
    assert!(env.cmd(["mcp", "enable", "everything"]).output().is_ok_and(|o| o.status.success()));
    let (list, get) = versions_shown(&env, "everything");
    assert_eq!(list, json!("2025-11-25"));
    assert_eq!(get, list);

    let server = Everything::streamable_http();
    let env = Env::new();
    let add = env.cmd(["mcp", "add", "--transport", "http", "everything", &server.url]).output();
    assert!(add.is_ok_and(|o| o.status.success()));
    assert!(env.cmd(["mcp", "enable", "everything"]).output().is_ok_and(|o| o.status.success()));
    let (list, get) = versions_shown(&env, "everything");
    assert_eq!(list, json!("2025-11-25"));
    assert_eq!(get, list);
}

/// `demo-server --http` on a free port, killed on drop.
struct DemoHttp {
    child: Child,
    url: String,
}

impl DemoHttp {
    fn start() -> Self {
        Self::start_with(&[])
    }

    fn start_with(args: &[&str]) -> Self {
        let mut child = Command::new(crate::support::common::toolport_path())
            .args(["demo-server", "--http", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn demo-server --http: {e}"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let mut line = String::new();
        let read = BufReader::new(stdout).read_line(&mut line);
        assert!(read.is_ok_and(|n| n > 0), "demo-server --http printed nothing");
        let url = line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("{line}")).to_string();
        Self { child, url }
    }
}

impl Drop for DemoHttp {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

/// An HTTP server that speaks 2026-07-28 (rmcp's server transport behind `demo-server --http`)
/// connects statelessly, and both `--json` views say so; its tools answer.
#[test]
fn an_http_server_on_2026_07_28_connects_statelessly() {
    let server = DemoHttp::start();
    let env = Env::new();
    let add = env.cmd(["mcp", "add", "--transport", "http", "demo", &server.url]).output();
    assert!(add.is_ok_and(|o| o.status.success()));
    assert!(env.cmd(["mcp", "enable", "demo"]).output().is_ok_and(|o| o.status.success()));
    let (list, get) = versions_shown(&env, "demo");
    assert_eq!(list, json!("2026-07-28"));
    assert_eq!(get, list);
    let call = env.cmd(["call", "add", r#"{"a": 2, "b": 3}"#]).output();
    let call = call.unwrap_or_else(|e| panic!("call: {e}"));
    assert_eq!(String::from_utf8_lossy(&call.stdout).trim(), "5");
}

/// SEP-2243 end to end: a tool's `x-mcp-header` parameter reaches the server as an
/// `Mcp-Param-*` header, and a tool whose annotation breaks the rules is left out of the
/// surface with a warning naming the server, the tool and the rule, while the rest stays.
#[test]
fn x_mcp_header_tools_are_mirrored_or_left_out_with_a_warning() {
    let server = DemoHttp::start_with(&["--header-tools"]);
    let env = Env::new();
    let add = env.cmd(["mcp", "add", "--transport", "http", "demo", &server.url]).output();
    assert!(add.is_ok_and(|o| o.status.success()));
    assert!(env.cmd(["mcp", "enable", "demo"]).output().is_ok_and(|o| o.status.success()));
    let tools = env.cmd(["tools", "--json"]).output().unwrap_or_else(|e| panic!("tools: {e}"));
    let stderr = String::from_utf8_lossy(&tools.stderr);
    assert!(
        stderr.contains(
            r#"Warning: MCP tool left out: misheaded from demo (property "region": x-mcp-header is empty)"#
        ),
        "{stderr}"
    );
    let listed: Value = serde_json::from_slice(&tools.stdout).unwrap_or_else(|e| panic!("tools --json: {e}"));
    let names: Vec<&str> =
        listed.as_array().into_iter().flatten().filter_map(|t| t["function"]["name"].as_str()).collect();
    assert!(
        names.contains(&"headed") && names.contains(&"echo") && !names.contains(&"misheaded"),
        "{names:?}"
    );
    let call = env.cmd(["call", "headed", r#"{"region": "eu-west-1"}"#]).output();
    let call = call.unwrap_or_else(|e| panic!("call: {e}"));
    assert_eq!(String::from_utf8_lossy(&call.stdout).trim(), "Mcp-Param-Region: eu-west-1");
    let refused = env.cmd(["call", "misheaded", "{}"]).output().unwrap_or_else(|e| panic!("call: {e}"));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).lines().last(),
        Some("toolport: Unknown MCP tool: misheaded")
    );
}
