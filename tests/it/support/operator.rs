//! `serve --http`'s operator endpoints as the tests read them: a GET by hand (a probe sends
//! what a well-behaved client would not: no token, a foreign `Host`), and the Prometheus text
//! parsed by a real parser (`prometheus_client.parser` in the observers' Python).

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::peers::observers_python;

/// One answer: its status, head (lower-cased header names kept as sent) and body.
pub struct Got {
    pub status: u16,
    pub head: String,
    pub body: String,
}

/// `GET path` on a fresh connection to `authority`, with `headers` (a `Host` of its own
/// replaces the authority's).
pub fn http_get(authority: &str, path: &str, headers: &[(&str, &str)]) -> Got {
    let mut stream = TcpStream::connect(authority).unwrap_or_else(|e| panic!("connect {authority}: {e}"));
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut request = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {authority}\r\n"));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap_or_else(|e| panic!("send GET {path}: {e}"));
    let mut all = Vec::new();
    let _ = stream.read_to_end(&mut all);
    let all = String::from_utf8_lossy(&all).into_owned();
    let (head, body) = all.split_once("\r\n\r\n").unwrap_or((all.as_str(), ""));
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    Got { status, head: head.to_string(), body: body.to_string() }
}

/// What `prometheus_client.parser.text_string_to_metric_families` reads in `text`: one entry
/// per sample, `{"family", "type", "name", "labels", "value"}`; a text it cannot parse fails
/// the test.
pub fn parse_prometheus(text: &str) -> Vec<Value> {
    const PARSE: &str = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        out.append({"family": family.name, "type": family.type, "name": s.name, "labels": s.labels, "value": s.value})
print(json.dumps(out))
"#;
    let mut child = Command::new(observers_python())
        .args(["-c", PARSE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run the Prometheus parser: {e}"));
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(text.as_bytes()).unwrap_or_else(|e| panic!("write to the parser: {e}"));
    }
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("the parser: {e}"));
    assert!(
        out.status.success(),
        "prometheus_client could not parse /metrics:\n{}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("the parser's JSON: {e}"))
}

/// The value of the sample `name` whose labels include every pair of `labels`, if any.
pub fn sample(samples: &[Value], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    samples
        .iter()
        .find(|s| s["name"] == name && labels.iter().all(|(k, v)| s["labels"][*k] == *v))
        .and_then(|s| s["value"].as_f64())
}
