//! `serve --http` in front of a server built as the conformance suite's TypeScript reference
//! server is (issue 44 item 12): the TypeScript SDK's `McpServer` over streamable HTTP
//! (`tests/conformance/sdk_server.mjs`), whose tools ask the client with
//! `server.server.elicitInput` and `createMessage` while the call waits, and which answers
//! `server/discover` too but cannot ask on that stateless revision. Named with
//! `"protocolVersion": "2025-11-25"`, toolport speaks the session era with it, and its
//! questions reach the client that called: a 2025-11-25 client as requests, a 2026-07-28 one as
//! input-required results. The clients are the official Python SDK's (`tests/serve/client.py`).

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::serve::clients::{py_command, py_output};
use crate::support::common::{Env, collect_lines, wait_for_text};
use crate::support::peers::{node, peers};
use crate::support::runtime::write_config;
use crate::support::serve::ServeHttp;

/// `sdk_server.mjs` on a free loopback port, until dropped.
struct SdkServer {
    child: Child,
    url: String,
}

impl SdkServer {
    fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or_else(|e| panic!("no free port: {e}"));
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/sdk_server.mjs");
        let mut child = Command::new(node())
            .arg(script)
            .arg(peers())
            .arg(port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start sdk_server.mjs: {e}"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let lines = collect_lines(stdout);
        let said = wait_for_text(&lines, "sdk server listening on port", Duration::from_secs(30));
        assert!(said.contains("sdk server listening on port"), "sdk_server.mjs did not start: {said}");
        Self { child, url: format!("http://127.0.0.1:{port}/mcp") }
    }
}

impl Drop for SdkServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// serve in front of the one server `sdk` at `url`, defined with nothing else.
fn serve_in_front(env: &Env, url: &str) -> ServeHttp {
    write_config(env, json!({ "sdk": { "type": "http", "url": url } }), &["sdk"], json!({}));
    ServeHttp::start(env)
}

/// `client.py ask` as `client` (`session`: 2025-11-25; `default`: 2026-07-28): calls `tool`
/// with `args`, answering elicitation with `answer` and sampling with its `"text"`.
fn ask(serve: &ServeHttp, client: &str, tool: &str, args: Value, answer: Value) -> Value {
    let out = py_command(
        "ask",
        &["--client", client, "--tool", tool, "--args", &args.to_string(), "--answer", &answer.to_string()],
    )
    .arg("--url")
    .arg(&serve.url)
    .output()
    .unwrap_or_else(|e| panic!("cannot run client.py: {e}"));
    let stderr = serve.stderr.lock().map(|l| l.join("\n")).unwrap_or_default();
    // The session client's `DELETE` on close is answered as the SDKs' servers answer it (200);
    // on rmcp's 202 the Python SDK logs this on every close.
    let client_said = String::from_utf8_lossy(&out.stderr);
    assert!(!client_said.contains("Session termination failed"), "{client}: {client_said}");
    py_output("ask", &out, &format!("serve's stderr:\n{stderr}"))
}

#[test]
fn a_session_servers_questions_reach_the_calling_client_of_either_revision() {
    let server = SdkServer::start();
    let env = Env::new();
    // Named as `docs/src/configure/mcp.md` "MCP revisions" says, through `mcp add`; a revision rmcp does not speak writes nothing.
    let add = |revision: &str| {
        let args = ["mcp", "add", "--protocol-version", revision, "--transport", "http", "sdk", &server.url];
        env.run(&args, Duration::from_secs(30))
    };
    let (code, _, stderr) = add("2025-13-01");
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "--protocol-version must be one of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28, not \"2025-13-01\""
        ),
        "{stderr}"
    );
    assert!(!env.store().exists(), "a refused add wrote the store");
    let (code, stdout, stderr) = add("2025-11-25");
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, stdout, stderr) = env.run(&["mcp", "enable", "sdk"], Duration::from_secs(30));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (_, got, _) = env.run(&["mcp", "get", "sdk", "--json"], Duration::from_secs(30));
    let got: Value = serde_json::from_str(&got).unwrap_or_else(|e| panic!("mcp get --json: {e}: {got}"));
    assert_eq!(got["definition"]["protocolVersion"], "2025-11-25", "{got}");
    let serve = ServeHttp::start(&env);
    for (client, revision) in [("session", "2025-11-25"), ("default", "2026-07-28")] {
        let answer = json!({ "response": "yes please" });
        let asked = ask(&serve, client, "test_elicitation", json!({ "message": "Shall I?" }), answer);
        assert_eq!(asked["protocol"], revision, "{asked}");
        assert_eq!(
            asked["asked"],
            json!([{ "message": "Shall I?", "fields": ["response"] }]),
            "{client}: {asked}"
        );
        assert_eq!(
            asked["texts"],
            json!(["User response: action=accept, content={\"response\":\"yes please\"}"]),
            "{client}: {asked}"
        );

        let answer = json!({ "text": "a sampled answer" });
        let sampled = ask(&serve, client, "test_sampling", json!({ "prompt": "Say something" }), answer);
        assert_eq!(sampled["protocol"], revision, "{sampled}");
        assert_eq!(sampled["sampled"], json!([["Say something"]]), "{client}: {sampled}");
        assert_eq!(sampled["texts"], json!(["LLM response: a sampled answer"]), "{client}: {sampled}");
    }
}

/// Without `protocolVersion` toolport prefers the stateless revision the server also offers,
/// where this server (as the reference server) cannot ask: its own answer is passed on whole
/// and nobody is asked. This is why the setting exists; it also shows that the `-32601` of
/// issue 44 is the server's own in-memory client, not toolport's.
#[test]
fn on_the_stateless_revision_the_server_itself_cannot_ask() {
    let server = SdkServer::start();
    let env = Env::new();
    let serve = serve_in_front(&env, &server.url);
    let answer = json!({ "response": "yes please" });
    let asked = ask(&serve, "session", "test_elicitation", json!({ "message": "Shall I?" }), answer);
    assert_eq!(asked["asked"], json!([]), "{asked}");
    assert_eq!(
        asked["texts"],
        json!(["Elicitation not supported or error: MCP error -32601: Method not found"]),
        "{asked}"
    );
}
