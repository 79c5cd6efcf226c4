//! The metrics: a real client's calls through `serve --http --metrics` counted per server and
//! tool, timed in the latency histogram and the servers counted by state — read from
//! `/metrics` by a real Prometheus parser, and pushed over OTLP/HTTP to a real receiver
//! (`tests/observe/otlp_metrics_receiver.py`, decoding with `opentelemetry-proto`).

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::serve::clients::{Via, py};
use crate::support::common::Env;
use crate::support::operator::{http_get, parse_prometheus, sample};
use crate::support::peers::{everything_stdio, observers_python};
use crate::support::runtime::write_config;
use crate::support::serve::ServeHttp;

/// server-everything, and a server whose command does not exist (it ends in `error`).
fn env() -> Env {
    let env = Env::new();
    let broken = json!({ "type": "stdio", "command": "/nonexistent/toolport-test-server" });
    write_config(
        &env,
        json!({ "everything": everything_stdio(), "broken": broken }),
        &["everything", "broken"],
        json!({}),
    );
    env
}

/// `echo` three times and `get-sum` twice, by the Python SDK's default `mcp.Client`.
fn make_calls(url: &str) {
    let echo = ["--client", "default", "--tool", "echo", "--args", r#"{"message": "hi"}"#, "--calls", "3"];
    py("latency", &Via::Http(url), &echo);
    let sum = ["--client", "default", "--tool", "get-sum", "--args", r#"{"a": 1, "b": 2}"#, "--calls", "2"];
    py("latency", &Via::Http(url), &sum);
}

#[test]
fn metrics_count_calls_per_server_and_tool_in_prometheus_text() {
    let env = env();
    let serve = ServeHttp::start_with(&env, &["--metrics"], &[]);
    make_calls(&serve.url);
    let got = http_get(&serve.authority(), "/metrics", &[]);
    assert_eq!(got.status, 200, "{}\n{}", got.head, got.body);
    assert!(
        got.head.to_ascii_lowercase().contains("content-type: text/plain; version=0.0.4"),
        "{}",
        got.head
    );
    let samples = parse_prometheus(&got.body);
    let ok =
        |tool: &'static str| [("server", "everything"), ("tool", tool), ("kind", "call"), ("outcome", "ok")];
    assert_eq!(sample(&samples, "toolport_calls_total", &ok("echo")), Some(3.0), "{}", got.body);
    assert_eq!(sample(&samples, "toolport_calls_total", &ok("get-sum")), Some(2.0), "{}", got.body);
    assert_eq!(
        sample(&samples, "toolport_call_duration_seconds_count", &ok("echo")),
        Some(3.0),
        "{}",
        got.body
    );
    let mut inf = ok("echo").to_vec();
    inf.push(("le", "+Inf"));
    assert_eq!(sample(&samples, "toolport_call_duration_seconds_bucket", &inf), Some(3.0), "{}", got.body);
    let buckets = samples.iter().filter(|s| s["name"] == "toolport_call_duration_seconds_bucket").count();
    assert!(buckets > 2 * 10, "a bucket per bound for each tool: {}", got.body);
    assert_eq!(sample(&samples, "toolport_servers", &[("state", "connected")]), Some(1.0), "{}", got.body);
    assert_eq!(sample(&samples, "toolport_servers", &[("state", "error")]), Some(1.0), "{}", got.body);
    assert_eq!(sample(&samples, "toolport_tools_held", &[]), Some(0.0), "{}", got.body);
}

#[test]
fn metrics_is_not_found_without_the_flag() {
    let env = env();
    let serve = ServeHttp::start(&env);
    let got = http_get(&serve.authority(), "/metrics", &[]);
    assert_eq!(got.status, 404, "{}", got.head);
    assert_eq!(got.body, "/metrics is off: start serve with --metrics\n");
}

/// The receiver, listening; what it received is in `out`.
struct Receiver(Child);

impl Receiver {
    fn start(out: &Path) -> (Self, u16) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("observe/otlp_metrics_receiver.py");
        let mut child = Command::new(observers_python())
            .arg(script)
            .arg(out)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the OTLP receiver: {e}"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let port = line.trim().strip_prefix("listening ").and_then(|p| p.parse().ok());
        let port = port.unwrap_or_else(|| panic!("the receiver printed {line:?}"));
        (Self(child), port)
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn otlp_metrics_arrive_at_a_real_receiver() {
    let env = env();
    let out = env.root().join("metrics.jsonl");
    let (_receiver, port) = Receiver::start(&out);
    let endpoint = format!("http://127.0.0.1:{port}");
    let vars = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
    ];
    let mut serve = ServeHttp::start_with(&env, &[], &vars);
    make_calls(&serve.url);
    // Ending serve exports what is left: the receiver then holds every call.
    let status = serve.terminate();
    assert!(status.is_some(), "serve did not end");
    let lines = std::fs::read_to_string(&out).unwrap_or_default();
    let points: Vec<Value> = lines.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let last = |name: &str, tool: &str| {
        points
            .iter()
            .rfind(|p| {
                p["name"] == name
                    && p["attributes"]["tool"] == tool
                    && p["attributes"]["server"] == "everything"
            })
            .cloned()
            .unwrap_or_else(|| panic!("no {name} for {tool} arrived:\n{lines}"))
    };
    let echo = last("toolport.calls", "echo");
    assert_eq!((echo["kind"].as_str(), echo["value"].as_i64()), (Some("sum"), Some(3)), "{echo}");
    assert_eq!(echo["attributes"]["outcome"], "ok", "{echo}");
    assert_eq!(last("toolport.calls", "get-sum")["value"], 2, "{lines}");
    let latency = last("toolport.call.duration", "echo");
    assert_eq!(
        (latency["kind"].as_str(), latency["count"].as_u64()),
        (Some("histogram"), Some(3)),
        "{latency}"
    );
    assert_eq!(latency["unit"], "s", "{latency}");
    let bounds = latency["bounds"].as_array().map(Vec::len).unwrap_or_default();
    assert!(bounds > 10, "{latency}");
}
