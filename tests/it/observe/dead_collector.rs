//! A collector that is down when `serve --http` is told to stop: serve still leaves on SIGTERM,
//! with the signal's status, its last metrics and spans given up once the flush's 300 ms are
//! spent (`docs/src/observe.md` "Traces"), whether the port refuses connections or takes them and never
//! answers. How long it takes is measured by `bench/dead_collector.py`, not asserted here.

use std::net::TcpListener;

use serde_json::json;

use crate::support::common::Env;
use crate::support::runtime::{demo, write_config};
use crate::support::serve::ServeHttp;

/// serve (the demo server behind it) exporting traces and metrics over OTLP/HTTP to
/// `endpoint`; SIGTERM; its exit status and stderr.
fn terminated_with_collector_at(endpoint: &str) -> (Option<i32>, String) {
    let env = Env::new();
    write_config(&env, json!({ "demo": demo(&[]) }), &["demo"], json!({}));
    let vars = [("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint), ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")];
    let mut serve = ServeHttp::start_with(&env, &["--metrics"], &vars);
    let status = serve.terminate().unwrap_or_else(|| panic!("serve did not exit within 10 s of SIGTERM"));
    let stderr = serve.stderr.lock().map(|l| l.join("\n")).unwrap_or_default();
    (status.code(), stderr)
}

#[test]
fn serve_leaves_on_sigterm_when_the_collector_refuses_connections() {
    // A port nothing listens on: bound, then closed.
    let closed = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr());
    let closed = closed.unwrap_or_else(|e| panic!("bind: {e}"));
    let (code, stderr) = terminated_with_collector_at(&format!("http://{closed}"));
    assert_eq!(code, Some(143), "128 + SIGTERM: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn serve_leaves_on_sigterm_when_the_collector_never_answers() {
    // Bound and listening, never accepting: a connection is made (the kernel's backlog) and
    // nothing ever answers on it, as with a collector that hangs.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    let at = silent.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let (code, stderr) = terminated_with_collector_at(&format!("http://{at}"));
    assert_eq!(code, Some(143), "128 + SIGTERM: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    drop(silent);
}
