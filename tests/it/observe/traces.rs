//! OpenTelemetry traces end to end (issue 29 item 2): `toolport serve --http` exporting over
//! OTLP/HTTP to a real receiver (`tests/observe/otlp_receiver.py`, decoding with PyPI
//! `opentelemetry-proto`), called by the Python SDK's `mcp.Client` with a caller's trace
//! context, and calling a Python SDK server (`tests/observe/meta_server.py`) that writes down
//! the `_meta` it receives. The trace must run unbroken: the caller's span → serve's SERVER
//! span → the downstream CLIENT span → the server's `_meta.traceparent` (and, to an HTTP
//! server, its `traceparent` header). Over OTLP/gRPC too (a `grpcio` receiver); the CLI's spans
//! flushed at exit; plugin calls and sign-ins with spans of their own, no secret in them; off
//! unless asked. A CLIENT span carries the request's id, revision and transport as the SERVER
//! span does.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::auth::python;
use crate::support::common::{Env, toolport_path};
use crate::support::peers::observers_python;
use crate::support::runtime::write_config;
use crate::support::serve::ServeHttp;

/// Only stops a hang: the Python SDK's imports, a debug build, a batch on its way.
const WAIT: Duration = Duration::from_secs(90);

/// The caller's trace and span, as a client would send them.
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

fn traceparent() -> String {
    format!("00-{TRACE_ID}-{CALLER_SPAN}-01")
}

fn observe_file(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("observe").join(file)
}

/// The OTLP receiver: its stdout's JSON lines, read as they come; killed on drop.
struct Receiver {
    child: Child,
    port: u16,
    lines: Arc<Mutex<Vec<Value>>>,
}

impl Receiver {
    /// Over OTLP/HTTP.
    fn start() -> Self {
        Self::start_with(&[])
    }

    /// With `args` (`--grpc`: over OTLP/gRPC).
    fn start_with(args: &[&str]) -> Self {
        let mut child = Command::new(observers_python())
            .arg(observe_file("otlp_receiver.py"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn otlp_receiver.py: {e}"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let mut reader = BufReader::new(stdout);
        let mut first = String::new();
        let _ = reader.read_line(&mut first);
        let port = first
            .trim()
            .strip_prefix("listening ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("otlp_receiver.py did not say its port: {first:?}"));
        let lines = Arc::new(Mutex::new(Vec::new()));
        let kept = lines.clone();
        std::thread::spawn(move || {
            for line in reader.lines().map_while(Result::ok) {
                let parsed = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
                if let Ok(mut kept) = kept.lock() {
                    kept.push(parsed);
                }
            }
        });
        Self { child, port, lines }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every line so far.
    fn seen(&self) -> Vec<Value> {
        self.lines.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The spans so far, once `done` holds for them (or [`WAIT`] passed).
    fn spans_when(&self, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + WAIT;
        loop {
            let spans: Vec<Value> = self.seen().into_iter().filter(|l| l.get("span_id").is_some()).collect();
            if done(&spans) || Instant::now() > deadline {
                return spans;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Every request made so far: a marker POSTed now comes back after all earlier ones.
    fn requests(&self) -> Vec<String> {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port))
            .unwrap_or_else(|e| panic!("connect to the receiver: {e}"));
        let _ = stream
            .write_all(b"POST /marker HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        let deadline = Instant::now() + WAIT;
        loop {
            let seen = self.seen();
            let paths: Vec<String> = seen
                .iter()
                .filter_map(|l| l.get("request").and_then(Value::as_str))
                .map(str::to_string)
                .collect();
            if paths.iter().any(|p| p == "/marker") || Instant::now() > deadline {
                return paths.into_iter().filter(|p| p != "/marker").collect();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A workspace with the `_meta`-recording server enabled as `meta`; returns its log.
fn meta_server() -> (Env, PathBuf) {
    let env = Env::new();
    let log = env.root().join("meta.log");
    let def =
        json!({"type": "stdio", "command": python(), "args": [observe_file("meta_server.py"), "--log", log]});
    write_config(&env, json!({ "meta": def }), &["meta"], json!({}));
    (env, log)
}

/// The `_meta` of every call the server received.
fn received(log: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

/// `traced_client.py`: one `tools/call echo` through `serve` with `flags`.
fn call_through(serve: &ServeHttp, flags: &[&str]) -> Value {
    let out = Command::new(python())
        .arg(observe_file("traced_client.py"))
        .args(["--url", &serve.url])
        .args(flags)
        .output()
        .unwrap_or_else(|e| panic!("run traced_client.py: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "traced_client.py failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// The variables that send traces to `receiver` over OTLP/HTTP, in batches every 100 ms.
fn otlp_http(receiver: &Receiver) -> Vec<(&'static str, String)> {
    vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf".to_string()),
        ("OTEL_BSP_SCHEDULE_DELAY", "100".to_string()),
    ]
}

fn serve_with(env: &Env, vars: &[(&'static str, String)]) -> ServeHttp {
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    ServeHttp::start_with(env, &[], &vars)
}

fn named<'a>(spans: &'a [Value], name: &str) -> Option<&'a Value> {
    spans.iter().find(|s| s["name"] == name)
}

/// The one `traceparent` of the server's last call, split: (trace id, parent span id).
fn downstream_parent(log: &Path) -> (String, String) {
    let metas = received(log);
    let last = metas.last().unwrap_or_else(|| panic!("the server received no call"));
    let parent = last["traceparent"].as_str().unwrap_or_else(|| panic!("no _meta.traceparent: {last}"));
    let parts: Vec<&str> = parent.split('-').collect();
    assert_eq!(parts.len(), 4, "{parent}");
    (parts[1].to_string(), parts[2].to_string())
}

/// A CLIENT span shares with the SERVER span the request's `jsonrpc.request.id` (the id the
/// server received, `got["id"]`), `mcp.protocol.version` (the revision of toolport's session
/// with the server) and `network.transport`.
fn shares_the_request(client: &Value, got: &Value, transport: &str) {
    let attributes = &client["attributes"];
    assert!(got["id"].is_string(), "the server logged no id: {got}");
    assert_eq!(attributes["jsonrpc.request.id"], got["id"], "{client}");
    assert_eq!(attributes["network.transport"], transport, "{client}");
    assert!(got["protocol"].is_string(), "the server logged no revision: {got}");
    assert_eq!(attributes["mcp.protocol.version"], got["protocol"], "{client}");
}

#[test]
fn a_call_through_serve_continues_the_callers_trace_from_meta_to_the_server() {
    let receiver = Receiver::start();
    let (env, log) = meta_server();
    let serve = serve_with(&env, &otlp_http(&receiver));
    let answer = call_through(&serve, &["--meta", &traceparent()]);
    assert_eq!(answer["texts"], json!(["Echo: traced"]), "{answer}");

    let spans = receiver.spans_when(|s| named(s, "tools/call echo").is_some() && s.len() >= 2);
    let server = spans
        .iter()
        .find(|s| s["kind"] == "SERVER" && s["name"] == "tools/call echo")
        .unwrap_or_else(|| panic!("no SERVER span tools/call echo in {spans:#?}"));
    assert_eq!(server["trace_id"], TRACE_ID, "{server}");
    assert_eq!(server["parent_span_id"], CALLER_SPAN, "{server}");
    assert_eq!(server["service"], "toolport", "{server}");
    let attributes = &server["attributes"];
    assert_eq!(attributes["mcp.method.name"], "tools/call", "{server}");
    assert_eq!(attributes["gen_ai.tool.name"], "echo", "{server}");
    assert_eq!(attributes["gen_ai.operation.name"], "execute_tool", "{server}");
    assert_eq!(attributes["network.transport"], "tcp", "{server}");
    assert!(attributes["jsonrpc.request.id"].is_string(), "{server}");
    assert_eq!(server["status"], "UNSET", "{server}");

    let client = spans
        .iter()
        .find(|s| s["kind"] == "CLIENT")
        .unwrap_or_else(|| panic!("no CLIENT span in {spans:#?}"));
    assert_eq!(client["name"], "tools/call echo", "{client}");
    assert_eq!(client["trace_id"], TRACE_ID, "{client}");
    assert_eq!(client["parent_span_id"], server["span_id"], "the downstream call is serve's child: {client}");
    assert_eq!(client["attributes"]["toolport.server"], "meta", "{client}");
    assert_eq!(client["attributes"]["mcp.method.name"], "tools/call", "{client}");

    let (trace, parent) = downstream_parent(&log);
    assert_eq!(trace, TRACE_ID);
    assert_eq!(
        parent,
        client["span_id"].as_str().unwrap_or_default(),
        "the server's parent is the CLIENT span"
    );
    shares_the_request(client, received(&log).last().unwrap_or(&Value::Null), "pipe");
    // No argument value anywhere in what was exported.
    let exported = serde_json::to_string(&spans).unwrap_or_default();
    assert!(!exported.contains("traced"), "an argument's value was exported: {exported}");
}

#[test]
fn over_http_the_w3c_header_is_the_parent_when_meta_has_none() {
    let receiver = Receiver::start();
    let (env, log) = meta_server();
    let serve = serve_with(&env, &otlp_http(&receiver));
    let header_span = "b7ad6b7169203331";
    let header = format!("00-{TRACE_ID}-{header_span}-01");
    call_through(&serve, &["--header", &header]);

    let spans =
        receiver.spans_when(|s| s.iter().any(|s| s["kind"] == "SERVER" && s["name"] == "tools/call echo"));
    let server = spans
        .iter()
        .find(|s| s["kind"] == "SERVER" && s["name"] == "tools/call echo")
        .unwrap_or_else(|| panic!("no SERVER span in {spans:#?}"));
    assert_eq!(server["trace_id"], TRACE_ID, "{server}");
    assert_eq!(server["parent_span_id"], header_span, "{server}");
    let (trace, _) = downstream_parent(&log);
    assert_eq!(trace, TRACE_ID);
}

#[test]
fn the_cli_call_flushes_its_span_before_it_exits() {
    let receiver = Receiver::start();
    let (env, log) = meta_server();
    // The default batch delay (5 s) is longer than the call: only the flush at exit sends it.
    let out = Command::new(toolport_path())
        .arg("--home")
        .arg(env.home())
        .arg("--workspace")
        .arg(env.root())
        .args(["call", "echo", r#"{"message":"from the cli"}"#])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env_remove("RUST_LOG")
        .env_remove("TOOLPORT_HOME")
        .output()
        .unwrap_or_else(|e| panic!("run toolport call: {e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The process has exited: whatever it sent has arrived.
    let requests = receiver.requests();
    assert!(requests.iter().any(|p| p == "/v1/traces"), "{requests:?}");
    let spans = receiver.spans_when(|s| !s.is_empty());
    let client = named(&spans, "tools/call echo").unwrap_or_else(|| panic!("{spans:#?}"));
    assert_eq!(client["kind"], "CLIENT");
    assert_eq!(client["parent_span_id"], "", "a CLI call starts its own trace: {client}");
    let (trace, parent) = downstream_parent(&log);
    assert_eq!(trace, client["trace_id"].as_str().unwrap_or_default());
    assert_eq!(parent, client["span_id"].as_str().unwrap_or_default());
}

/// A collector that cannot be reached costs the call nothing, and the person is told the spans
/// were lost (the SDK's own error line), not left wondering why nothing arrives.
#[test]
fn an_unreachable_collector_is_said_and_the_call_still_answers() {
    let (env, _log) = meta_server();
    // A port nothing listens on: bound, then closed.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let out = Command::new(toolport_path())
        .arg("--home")
        .arg(env.home())
        .arg("--workspace")
        .arg(env.root())
        .args(["call", "echo", r#"{"message":"nobody collects"}"#])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{closed}"))
        .env_remove("RUST_LOG")
        .env_remove("TOOLPORT_HOME")
        .output()
        .unwrap_or_else(|e| panic!("run toolport call: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("nobody collects"));
    assert!(stderr.contains("ExportError") && stderr.contains("HTTP export failed"), "{stderr}");
    assert!(!stderr.contains("nobody collects"), "an argument reached the log: {stderr}");
}

#[test]
fn nothing_is_sent_and_no_trace_context_is_added_unless_asked() {
    let receiver = Receiver::start();
    let (env, log) = meta_server();
    // An endpoint, but traces turned off by the standard switch.
    let mut vars = otlp_http(&receiver);
    vars.push(("OTEL_TRACES_EXPORTER", "none".to_string()));
    let serve = serve_with(&env, &vars);
    call_through(&serve, &[]);
    // Ended (SIGTERM, waited for): what it would have flushed at exit has been sent.
    drop(serve);
    // The switch is per signal: the metrics, not turned off, still went to the same endpoint.
    let requests = receiver.requests();
    assert!(!requests.iter().any(|p| p == "/v1/traces"), "traces were sent though turned off: {requests:?}");
    assert!(requests.iter().any(|p| p == "/v1/metrics"), "{requests:?}");
    let metas = received(&log);
    assert_eq!(metas.len(), 1);
    assert!(metas[0].get("traceparent").is_none(), "{}", metas[0]);

    // No variable at all: toolport adds no trace context of its own.
    let serve = serve_with(&env, &[]);
    call_through(&serve, &["--meta", &traceparent()]);
    let metas = received(&log);
    assert_eq!(metas.len(), 2);
    assert_eq!(metas[1].get("traceparent"), None, "{}", metas[1]);
}

#[test]
fn a_protocol_toolport_does_not_send_is_a_usage_error_naming_the_variable() {
    let env = Env::new();
    let out = Command::new(toolport_path())
        .arg("--home")
        .arg(env.home())
        .args(["tools"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .output()
        .unwrap_or_else(|e| panic!("run toolport: {e}"));
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "OTEL_EXPORTER_OTLP_PROTOCOL=http/json: toolport sends OTLP as \"grpc\" or \"http/protobuf\""
        ),
        "{stderr}"
    );
}

/// `meta_server.py --http`: its URL; killed on drop.
struct HttpMetaServer {
    child: Child,
    url: String,
}

impl HttpMetaServer {
    fn start(log: &Path) -> Self {
        let mut child = Command::new(python())
            .arg(observe_file("meta_server.py"))
            .arg("--log")
            .arg(log)
            .arg("--http")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn meta_server.py --http: {e}"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let mut first = String::new();
        let _ = BufReader::new(stdout).read_line(&mut first);
        let url = first.trim().strip_prefix("READY ").map(str::to_string);
        let url = url.unwrap_or_else(|| panic!("meta_server.py --http did not say its URL: {first:?}"));
        Self { child, url }
    }
}

impl Drop for HttpMetaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_http_server_gets_the_trace_context_in_the_w3c_header_too() {
    let receiver = Receiver::start();
    let env = Env::new();
    let log = env.root().join("meta.log");
    let downstream = HttpMetaServer::start(&log);
    write_config(&env, json!({ "meta": {"type": "http", "url": downstream.url} }), &["meta"], json!({}));
    let serve = serve_with(&env, &otlp_http(&receiver));
    call_through(&serve, &["--meta", &traceparent()]);

    let spans = receiver.spans_when(|s| s.iter().any(|s| s["kind"] == "CLIENT"));
    let client = spans
        .iter()
        .find(|s| s["kind"] == "CLIENT")
        .unwrap_or_else(|| panic!("no CLIENT span in {spans:#?}"));
    let metas = received(&log);
    let last = metas.last().unwrap_or_else(|| panic!("the server received no call"));
    let expected = format!("00-{TRACE_ID}-{}-01", client["span_id"].as_str().unwrap_or_default());
    assert_eq!(last["traceparent"], expected.as_str(), "{last}");
    assert_eq!(last["header:traceparent"], expected.as_str(), "{last}");
    shares_the_request(client, last, "tcp");
}

#[test]
fn over_otlp_grpc_the_same_spans_arrive() {
    let receiver = Receiver::start_with(&["--grpc"]);
    let (env, _log) = meta_server();
    let vars = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc".to_string()),
        ("OTEL_BSP_SCHEDULE_DELAY", "100".to_string()),
        ("OTEL_SERVICE_NAME", "gateway-7".to_string()),
    ];
    let serve = serve_with(&env, &vars);
    call_through(&serve, &["--meta", &traceparent()]);
    let spans = receiver.spans_when(|s| s.iter().filter(|s| s["name"] == "tools/call echo").count() >= 2);
    let server = spans
        .iter()
        .find(|s| s["kind"] == "SERVER" && s["name"] == "tools/call echo")
        .unwrap_or_else(|| panic!("no SERVER span over gRPC in {spans:#?}"));
    assert_eq!(server["trace_id"], TRACE_ID, "{server}");
    assert_eq!(server["parent_span_id"], CALLER_SPAN, "{server}");
    assert_eq!(server["service"], "gateway-7", "OTEL_SERVICE_NAME names the service: {server}");
    let client = spans.iter().find(|s| s["kind"] == "CLIENT").unwrap_or_else(|| panic!("{spans:#?}"));
    assert_eq!(client["parent_span_id"], server["span_id"], "{client}");
}

#[test]
fn a_prompt_and_a_read_through_serve_continue_the_trace_too() {
    let receiver = Receiver::start();
    let (env, log) = meta_server();
    let serve = serve_with(&env, &otlp_http(&receiver));
    let answer = call_through(&serve, &["--method", "prompt", "--meta", &traceparent()]);
    assert_eq!(answer["texts"], json!(["Hello"]), "{answer}");
    let answer = call_through(&serve, &["--method", "read", "--meta", &traceparent()]);
    assert_eq!(answer["texts"], json!(["a note"]), "{answer}");

    for (name, method) in [("prompts/get greet", "prompts/get"), ("resources/read", "resources/read")] {
        let of = |kind: &str, spans: &[Value]| {
            spans.iter().find(|s| s["kind"] == kind && s["name"] == name).cloned()
        };
        let spans = receiver.spans_when(|s| of("SERVER", s).is_some() && of("CLIENT", s).is_some());
        let server = of("SERVER", &spans).unwrap_or_else(|| panic!("no SERVER span {name} in {spans:#?}"));
        let client = of("CLIENT", &spans).unwrap_or_else(|| panic!("no CLIENT span {name} in {spans:#?}"));
        assert_eq!(server["trace_id"], TRACE_ID, "{server}");
        assert_eq!(server["parent_span_id"], CALLER_SPAN, "{server}");
        assert_eq!(server["attributes"]["mcp.method.name"], method, "{server}");
        assert_eq!(client["parent_span_id"], server["span_id"], "{client}");
        assert_eq!(client["attributes"]["toolport.server"], "meta", "{client}");
        let metas = received(&log);
        let got = metas.iter().find(|m| m["method"] == method).unwrap_or_else(|| panic!("{metas:?}"));
        let expected = format!("00-{TRACE_ID}-{}-01", client["span_id"].as_str().unwrap_or_default());
        assert_eq!(got["traceparent"], expected.as_str(), "{got}");
        shares_the_request(&client, got, "pipe");
    }
    let spans = receiver.spans_when(|_| true);
    let read = spans.iter().find(|s| s["kind"] == "SERVER" && s["name"] == "resources/read");
    let read = read.unwrap_or_else(|| panic!("{spans:#?}"));
    assert_eq!(read["attributes"]["mcp.resource.uri"], "meta://note", "{read}");
    let prompt = spans.iter().find(|s| s["kind"] == "SERVER" && s["name"] == "prompts/get greet");
    assert_eq!(prompt.map(|p| &p["attributes"]["gen_ai.prompt.name"]), Some(&json!("greet")));
}

#[test]
fn plugin_calls_have_spans_naming_the_plugin_its_kind_and_export() {
    let receiver = Receiver::start();
    let (env, _log) = meta_server();
    write_config(
        &env,
        json!({ "meta": {"type": "stdio", "command": python(), "args": [observe_file("meta_server.py"), "--log", env.root().join("meta.log")]} }),
        &["meta"],
        json!({ "namePolicy": "namespace", "toolShape": "openai" }),
    );
    let out = Command::new(toolport_path())
        .arg("--home")
        .arg(env.home())
        .arg("--workspace")
        .arg(env.root())
        .arg("tools")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env_remove("RUST_LOG")
        .env_remove("TOOLPORT_HOME")
        .output()
        .unwrap_or_else(|e| panic!("run toolport tools: {e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let spans = receiver.spans_when(|s| s.len() >= 2);
    let review = named(&spans, "plugin review namespace").unwrap_or_else(|| panic!("{spans:#?}"));
    assert_eq!(review["kind"], "INTERNAL", "{review}");
    assert_eq!(review["attributes"]["toolport.plugin.kind"], "name-policy", "{review}");
    assert_eq!(review["attributes"]["toolport.plugin.export"], "review", "{review}");
    assert_eq!(review["attributes"]["toolport.plugin.tools"], 2, "echo and sleep: {review}");
    let convert = named(&spans, "plugin convert openai").unwrap_or_else(|| panic!("{spans:#?}"));
    assert_eq!(convert["attributes"]["toolport.plugin.kind"], "tool-shape", "{convert}");
    assert_eq!(convert["status"], "UNSET", "{convert}");
}

#[test]
fn a_machine_sign_in_has_a_span_without_its_secret() {
    use crate::support::auth::{NAME, OAuthServer, add_enabled, run};
    const SECRET: &str = "cc-it-7d1f0a93-traced-secret";
    let receiver = Receiver::start();
    let server = OAuthServer::start(&["--client", &format!("toolport-machine:{SECRET}")]);
    let env = Env::new();
    let definition = json!({
        "type": "http",
        "url": server.url,
        "oauth": {"grant": "client_credentials", "clientId": "toolport-machine", "clientSecret": "${TRACED_SECRET}"},
    });
    add_enabled(&env, &server, NAME, &definition);
    let endpoint = receiver.endpoint();
    let vars = [("TRACED_SECRET", SECRET), ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str())];
    let ran = run(&env, &[], &["tools"], &vars);
    assert!(ran.output.status.success(), "{}\n{}", ran.all(), server.log());

    let spans = receiver.spans_when(|s| named(s, "sign-in client_credentials").is_some());
    let sign_in = named(&spans, "sign-in client_credentials").unwrap_or_else(|| panic!("{spans:#?}"));
    assert_eq!(sign_in["kind"], "INTERNAL", "{sign_in}");
    assert_eq!(sign_in["attributes"]["toolport.server"], NAME, "{sign_in}");
    assert_eq!(sign_in["attributes"]["toolport.sign_in.grant"], "client_credentials", "{sign_in}");
    assert_eq!(sign_in["status"], "UNSET", "{sign_in}");
    let exported = serde_json::to_string(&spans).unwrap_or_default();
    assert!(!exported.contains(SECRET), "the secret was exported: {exported}");
}

#[test]
fn a_call_given_up_at_its_timeout_ends_its_span_as_cancelled() {
    let receiver = Receiver::start();
    let env = Env::new();
    let log = env.root().join("meta.log");
    let def = json!({
        "type": "stdio",
        "command": python(),
        "args": [observe_file("meta_server.py"), "--log", log],
        "timeouts": {"callMs": 500},
    });
    write_config(&env, json!({ "meta": def }), &["meta"], json!({}));
    let out = Command::new(toolport_path())
        .arg("--home")
        .arg(env.home())
        .arg("--workspace")
        .arg(env.root())
        .args(["call", "sleep", r#"{"seconds": 30}"#])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env_remove("RUST_LOG")
        .env_remove("TOOLPORT_HOME")
        .output()
        .unwrap_or_else(|e| panic!("run toolport call: {e}"));
    assert!(!out.status.success(), "the call should time out");
    let spans = receiver.spans_when(|s| named(s, "tools/call sleep").is_some());
    let client = named(&spans, "tools/call sleep").unwrap_or_else(|| panic!("{spans:#?}"));
    assert_eq!(client["kind"], "CLIENT", "{client}");
    assert_eq!(client["attributes"]["error.type"], "cancelled", "{client}");
    assert_eq!(client["status"], "ERROR", "{client}");
}
