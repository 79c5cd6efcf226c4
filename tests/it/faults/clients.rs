//! One `serve --http`, several clients (issue 26 items 2 and 3): a server's question reaches
//! the client whose call caused it and no other, and one client's roots never widen what a
//! server set to `roots: "client"` is told for the others. The clients are the official Python
//! SDK's (`tests/serve/client.py`), two at once; the servers are our conformance fixture
//! (`tests/conformance/fixture_server.py --legacy`, questions as requests over streamable HTTP)
//! and server-everything.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::serve::clients::{py_command, py_output, python};
use crate::support::common::{Env, collect_lines, wait_for_text};
use crate::support::peers::everything_stdio;
use crate::support::runtime::write_config;
use crate::support::serve::ServeHttp;

/// The conformance fixture on a free loopback port, until dropped.
struct Fixture {
    child: Child,
    url: String,
}

impl Fixture {
    fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or_else(|e| panic!("no free port: {e}"));
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/fixture_server.py");
        let mut child = Command::new(python())
            .arg(script)
            .arg(port.to_string())
            .arg("--legacy")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start fixture_server.py: {e}"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let lines = collect_lines(stdout);
        let said = wait_for_text(&lines, "fixture listening on port", Duration::from_secs(30));
        assert!(said.contains("fixture listening on port"), "the fixture did not start: {said}");
        Self { child, url: format!("http://127.0.0.1:{port}/mcp") }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `client.py ask` through serve: calls `tool` with `args`, answering every question with
/// `answer` (elicitation: the content; sampling: its `"text"`).
fn ask(serve: &ServeHttp, tool: &str, args: Value, answer: Value) -> Child {
    py_command("ask", &["--tool", tool, "--args", &args.to_string(), "--answer", &answer.to_string()])
        .arg("--url")
        .arg(&serve.url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run client.py: {e}"))
}

fn finished(child: Child, serve: &ServeHttp) -> Value {
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("client.py: {e}"));
    let stderr = serve.stderr.lock().map(|l| l.join("\n")).unwrap_or_default();
    py_output("ask", &out, &format!("serve's stderr:\n{stderr}"))
}

fn one_server(env: &Env, url: &str) {
    write_config(env, json!({ "fx": { "type": "http", "url": url } }), &["fx"], json!({}));
}

/// Client A's call asks a moment after client B's call started: A is asked and answers,
/// B never sees A's question (it was: "the most recent caller" got it, and its answer went
/// back to A).
#[test]
fn a_servers_question_reaches_the_client_whose_call_it_is() {
    let fixture = Fixture::start();
    let env = Env::new();
    one_server(&env, &fixture.url);
    let serve = ServeHttp::start(&env);
    // What each tool's result says of the answer it got: `{}` is who answered.
    for (tool, asked, said) in [
        ("test_elicitation", "asked", "\\\"username\\\": \\\"{}\\\""),
        ("test_sampling", "sampled", "LLM response: {} says"),
    ] {
        let said = |who: &str| said.replace("{}", who);
        let answer = |who: &str| json!({"username": who, "email": format!("{who}@example.com"), "text": format!("{who} says")});
        let a = ask(&serve, tool, json!({"message": "for A", "prompt": "for A", "delay": 2.0}), answer("A"));
        std::thread::sleep(Duration::from_millis(700));
        let b = ask(&serve, tool, json!({"message": "for B", "prompt": "for B", "delay": 4.0}), answer("B"));
        let (a, b) = (finished(a, &serve), finished(b, &serve));
        let texts = |v: &Value| v["texts"].to_string();
        assert_eq!(
            a[asked].as_array().map(Vec::len),
            Some(1),
            "{tool}: A was asked {}; B {}",
            a[asked],
            b[asked]
        );
        assert_eq!(
            b[asked].as_array().map(Vec::len),
            Some(1),
            "{tool}: B was asked {}; A {}",
            b[asked],
            a[asked]
        );
        assert!(a[asked].to_string().contains("for A") && b[asked].to_string().contains("for B"), "{a} {b}");
        assert!(texts(&a).contains(&said("A")), "{tool}: A's call got another answer: {a}");
        assert!(texts(&b).contains(&said("B")), "{tool}: B's call got another answer: {b}");
    }
}

/// A server set to `roots: "client"` is told what every client allows: a second client offering
/// `file:///` does not widen what the first one's root (`file:///a/project/`) let it see.
#[test]
fn one_clients_roots_never_widen_a_server_for_another() {
    let env = Env::new();
    let mut everything = everything_stdio();
    everything["roots"] = json!("client");
    write_config(&env, json!({ "everything": everything }), &["everything"], json!({}));
    let serve = ServeHttp::start(&env);
    let roots = |uri: &str, extra: &[&str]| {
        let mut args = vec!["--uri", uri, "--wait", "15"];
        args.extend_from_slice(extra);
        py_command("roots", &args)
            .arg("--url")
            .arg(&serve.url)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
    };
    let narrow = "file:///a/project/";
    let first = roots(narrow, &["--pause", "4", "--then", "get-roots-list"])
        .unwrap_or_else(|e| panic!("cannot run client.py: {e}"));
    std::thread::sleep(Duration::from_millis(1500));
    let second = roots("file:///", &["--wait", "1"]).unwrap_or_else(|e| panic!("cannot run client.py: {e}"));
    let stderr = || serve.stderr.lock().map(|l| l.join("\n")).unwrap_or_default();
    let second = second.wait_with_output().unwrap_or_else(|e| panic!("client.py: {e}"));
    py_output("roots", &second, &stderr());
    let first = first.wait_with_output().unwrap_or_else(|e| panic!("client.py: {e}"));
    let seen = py_output("roots", &first, &stderr());
    let then = seen["then"].to_string();
    assert!(
        then.contains(narrow),
        "the first client's server was told other roots after the second came: {seen}"
    );
}
