//! What `serve` shows and routes, seen by toolport's own client (which speaks 2026-07-28 first
//! and falls back to 2025-11-25) and by raw requests: the surface after the host's rules, the
//! instructions naming the servers behind, both revisions, a question declined for a client
//! that cannot answer it.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::common::Env;
use crate::support::peers::everything_stdio;
use crate::support::runtime::{DEMO_TOOLS, clash, demo, write_config};
use crate::support::serve::{INITIALIZE, MCP_HEADERS, ServeHttp, http_post, serve_command};

/// Three demo-servers, one of which clashes with the first (the host's rules put it in error).
fn inner() -> Env {
    let env = Env::new();
    let servers = json!({
        "demo": demo(&["--resources", "2"]),
        "clash": demo(&[]),
        "more": demo(&["--prefix", "b_"]),
    });
    write_config(&env, servers, &["demo", "clash", "more"], json!({}));
    env
}

/// A home whose one server `front` is `def`.
fn outer(def: Value) -> Env {
    let env = Env::new();
    write_config(&env, json!({ "front": def }), &["front"], json!({}));
    env
}

fn stdio_front(inner: &Env) -> Value {
    let argv: Vec<String> = serve_command(inner).iter().map(|a| a.to_string_lossy().into_owned()).collect();
    json!({ "type": "stdio", "command": argv[0], "args": argv[1..] })
}

fn run(env: &Env, args: &[&str]) -> (i32, String, String) {
    env.run(args, Duration::from_secs(60))
}

/// The final names of `toolport tools` (OpenAI function tools).
fn tool_names(env: &Env) -> Vec<String> {
    let (code, stdout, stderr) = run(env, &["tools", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let tools: Vec<Value> = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    tools
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().or(t["name"].as_str()).map(String::from))
        .collect()
}

#[test]
fn serve_shows_the_surface_after_the_host_rules_and_routes_to_the_owner() {
    let inner = inner();
    let direct = tool_names(&inner);
    assert!(direct.contains(&"b_add".to_string()) && direct.contains(&"echo".to_string()), "{direct:?}");
    let outer = outer(stdio_front(&inner));
    assert_eq!(tool_names(&outer), direct, "serve must show exactly the runtime's surface");
    let (code, stdout, stderr) = run(&outer, &["call", "b_add", r#"{"a": 2, "b": 3}"#]);
    assert_eq!((code, stdout.trim()), (0, "5"), "{stderr}");
    let (code, stdout, stderr) = run(&outer, &["read", "front", "demo://item/2"]);
    assert_eq!((code, stdout.trim()), (0, "item 2"), "{stderr}");
}

#[test]
fn the_instructions_name_every_server_behind_and_its_state() {
    let inner = inner();
    let serve = ServeHttp::start(&inner);
    let (status, _) = http_post(&serve.authority(), &MCP_HEADERS, INITIALIZE);
    assert_eq!(status, 200);
    let answer = initialize_answer(&serve);
    let result = &answer["result"];
    assert_eq!(result["serverInfo"]["name"], "toolport");
    let instructions = result["instructions"].as_str().unwrap_or_default();
    assert!(instructions.contains("- demo (connected, 6 tools)"), "{instructions}");
    assert!(instructions.contains("- more (connected, 6 tools)"), "{instructions}");
    assert!(
        instructions
            .contains(&format!("- clash (error: {})", clash("clash", "echo", "demo", &DEMO_TOOLS, true))),
        "{instructions}"
    );
    for capability in ["tools", "resources", "prompts", "completions", "logging"] {
        assert!(result["capabilities"].get(capability).is_some(), "{capability} missing: {result}");
    }
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
}

/// The `initialize` answer of a fresh session, read from its SSE stream.
fn initialize_answer(serve: &ServeHttp) -> Value {
    use std::io::{BufRead as _, BufReader, Write as _};
    let mut stream = std::net::TcpStream::connect(serve.authority()).unwrap_or_else(|e| panic!("{e}"));
    let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{INITIALIZE}",
        serve.authority(),
        INITIALIZE.len()
    );
    stream.write_all(request.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    for line in BufReader::new(stream).lines().map_while(Result::ok) {
        if let Some(data) = line.strip_prefix("data: ")
            && let Ok(value) = serde_json::from_str::<Value>(data)
            && value.get("result").is_some()
        {
            return value;
        }
    }
    panic!("no initialize answer on the stream");
}

#[test]
fn a_2026_client_is_served_statelessly_over_http() {
    let inner = inner();
    let serve = ServeHttp::start(&inner);
    let outer = outer(json!({ "type": "http", "url": serve.url }));
    let (code, stdout, stderr) = run(&outer, &["mcp", "list", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let front = &listed["servers"][0];
    assert_eq!(front["state"], "connected", "{listed}");
    assert_eq!(front["protocolVersion"], "2026-07-28", "{listed}");
    assert_eq!(front["tools"], 12, "{listed}");
    let (code, stdout, stderr) = run(&outer, &["call", "b_echo", r#"{"message": "stateless"}"#]);
    assert_eq!((code, stdout.trim()), (0, "stateless"), "{stderr}");
}

#[test]
fn a_2025_client_gets_a_session_over_stdio() {
    let inner = inner();
    let outer = outer(stdio_front(&inner));
    let (code, stdout, stderr) = run(&outer, &["mcp", "list", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let version = listed["servers"][0]["protocolVersion"].as_str().unwrap_or_default().to_string();
    assert!(version == "2026-07-28" || version == "2025-11-25", "{listed}");
}

/// A downstream question reaches only a client that said it answers questions; any other
/// client's call hears `decline` from toolport, and the server carries on.
#[test]
fn a_question_for_a_client_that_cannot_answer_is_declined() {
    let env = Env::new();
    write_config(&env, json!({ "everything": everything_stdio() }), &["everything"], json!({}));
    let seen = crate::serve::clients::py(
        "call",
        &crate::serve::clients::Via::Stdio(&env),
        &["--tool", "trigger-elicitation-request", "--args", "{}"],
    );
    let texts = seen["texts"].to_string();
    assert!(texts.to_lowercase().contains("decline"), "{seen}");
}

/// A server that crashes is reconnected by serve on its own (with a backoff), and calls work
/// again without anyone retrying it.
#[test]
fn a_crashed_server_is_reconnected_by_serve() {
    let inner = Env::new();
    write_config(&inner, json!({ "demo": demo(&["--crash-after", "1"]) }), &["demo"], json!({}));
    let serve = ServeHttp::start(&inner);
    let outer = outer(json!({ "type": "http", "url": serve.url }));
    let (code, stdout, stderr) = run(&outer, &["call", "echo", r#"{"message": "first"}"#]);
    assert_eq!((code, stdout.trim()), (0, "first"), "{stderr}");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (code, stdout, _) = run(&outer, &["call", "echo", r#"{"message": "again"}"#]);
        if code == 0 && stdout.trim() == "again" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the crashed server was not reconnected: {stdout}");
        std::thread::sleep(Duration::from_millis(300));
    }
    let printed = serve.wait_for_line("toolport serve: reconnecting demo", Duration::from_secs(5));
    assert!(printed.contains("toolport serve: reconnecting demo"), "{printed}");
}

/// A 2026-07-28 client cannot be sent a question: a downstream server's question reaches it as
/// an input-required result, and its retry with the answer resumes the same downstream call
/// (here twice: `confirm` asks two rounds of a 2026-07-28 demo-server).
#[test]
fn a_2026_client_answers_downstream_questions_through_input_required_rounds() {
    let inner = Env::new();
    write_config(&inner, json!({ "demo": demo(&["--confirm"]) }), &["demo"], json!({}));
    let serve = ServeHttp::start(&inner);
    let outer = outer(json!({ "type": "http", "url": serve.url }));
    let args = ["call", "confirm", r#"{"rounds": 2}"#, "--elicit", "accept-defaults"];
    let (code, stdout, stderr) = run(&outer, &args);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with(r#"confirmed {"size":"m","colour":"blue","count":2,"gift":false}; rounds 2;"#),
        "{stdout}\n{stderr}"
    );
    assert_eq!(stderr.matches("answered MCP server front with the form's defaults").count(), 2, "{stderr}");
    let (code, stdout, stderr) = run(&outer, &["call", "confirm", "{}", "--elicit", "decline"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("not confirmed: decline; rounds 1;"), "{stdout}");
}
