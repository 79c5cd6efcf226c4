//! Live status: `serve --http`'s probes (`/healthz`, `/readyz`), `/status` and who may read
//! what, and `toolport status --url` showing a real slow call in flight, its client and the
//! servers — and saying clearly why when it cannot; a resource read in flight shown without
//! the secrets its URI carries.

use std::net::TcpListener;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::serve::clients::{py_command, python};
use crate::support::common::{Env, toolport_path};
use crate::support::operator::http_get;
use crate::support::peers::{Everything, everything_stdio};
use crate::support::runtime::write_config;
use crate::support::serve::{SETTLED_LINE, ServeHttp};

/// How long a test waits for what it waits on (a call to show up, serve to settle); never an
/// assertion on speed.
const WAIT: Duration = Duration::from_secs(60);

fn env_with(servers: Value, enabled: &[&str]) -> Env {
    let env = Env::new();
    write_config(&env, servers, enabled, json!({}));
    env
}

fn everything_and_broken() -> Env {
    let broken = json!({ "type": "stdio", "command": "/nonexistent/toolport-test-server" });
    env_with(json!({ "everything": everything_stdio(), "broken": broken }), &["everything", "broken"])
}

fn body(got: &crate::support::operator::Got) -> Value {
    serde_json::from_str(got.body.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {}", got.body))
}

#[test]
fn probes_are_open_and_status_and_metrics_need_the_token() {
    let env = everything_and_broken();
    let secret = "operator-s3cret";
    let serve =
        ServeHttp::start_with(&env, &["--metrics", "--token-env", "SERVE_TOKEN"], &[("SERVE_TOKEN", secret)]);
    let at = serve.authority();
    let health = http_get(&at, "/healthz", &[]);
    assert_eq!((health.status, health.body.as_str()), (200, "ok\n"), "{}", health.head);
    let ready = http_get(&at, "/readyz", &[]);
    assert_eq!(ready.status, 200, "{}", ready.body);
    assert_eq!(
        body(&ready),
        json!({"ready": true, "servers": [{"name": "everything", "state": "connected"}, {"name": "broken", "state": "error"}]})
    );
    for path in ["/metrics", "/status"] {
        let refused = http_get(&at, path, &[]);
        assert_eq!(refused.status, 401, "{path} without the token: {}", refused.head);
        assert!(refused.head.to_ascii_lowercase().contains("www-authenticate: bearer"), "{}", refused.head);
        let wrong = http_get(&at, path, &[("Authorization", "Bearer operator-s3creX")]);
        assert_eq!(wrong.status, 401, "{path} with a wrong token");
    }
    let bearer = format!("Bearer {secret}");
    let metrics = http_get(&at, "/metrics", &[("Authorization", bearer.as_str())]);
    assert_eq!(metrics.status, 200, "{}", metrics.head);
    let status = http_get(&at, "/status", &[("Authorization", bearer.as_str())]);
    assert_eq!(status.status, 200, "{}", status.head);
    let status = body(&status);
    assert_eq!(status["servers"][0]["name"], "everything", "{status}");
    assert!(status["servers"][0]["tools"].as_u64().is_some_and(|n| n > 5), "{status}");
    assert_eq!(status["servers"][1]["state"], "error", "{status}");
    // The probes pass the same checks against DNS rebinding as /mcp.
    let rebound = http_get(&at, "/healthz", &[("Host", "evil.example")]);
    assert_eq!(rebound.status, 403, "{}", rebound.head);
    let foreign = http_get(&at, "/readyz", &[("Origin", "http://evil.example")]);
    assert_eq!(foreign.status, 403, "{}", foreign.head);
}

/// A stdio server that starts only once `gate` exists: serve's start is unfinished until then.
fn gated_server(gate: &std::path::Path) -> Value {
    let script = format!(
        "while [ ! -e '{}' ]; do sleep 0.05; done; exec '{}' demo-server",
        gate.display(),
        toolport_path().display()
    );
    json!({ "type": "stdio", "command": "sh", "args": ["-c", script] })
}

#[test]
fn readyz_answers_503_until_every_server_was_tried() {
    let gate_dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let gate = gate_dir.path().join("go");
    let env = env_with(json!({ "slow": gated_server(&gate) }), &["slow"]);
    let serve = ServeHttp::listening(&env);
    let at = serve.authority();
    let before = http_get(&at, "/readyz", &[]);
    assert_eq!(before.status, 503, "{}", before.body);
    assert_eq!(body(&before)["ready"], false, "{}", before.body);
    assert_eq!(http_get(&at, "/healthz", &[]).status, 200, "live while not ready");
    std::fs::write(&gate, "").unwrap_or_else(|e| panic!("{e}"));
    let printed = serve.wait_for_line(SETTLED_LINE, WAIT);
    assert!(printed.contains(SETTLED_LINE), "{printed}");
    let after = http_get(&at, "/readyz", &[]);
    assert_eq!(after.status, 200, "{}", after.body);
    assert_eq!(body(&after), json!({"ready": true, "servers": [{"name": "slow", "state": "connected"}]}));
}

/// `toolport status ARGS…` with `vars`: exit code, stdout, stderr.
fn status(args: &[&str], vars: &[(&str, &str)]) -> (i32, String, String) {
    let out = crate::support::common::toolport()
        .arg("status")
        .args(args)
        .envs(vars.iter().copied())
        .timeout(WAIT)
        .output()
        .unwrap_or_else(|e| panic!("toolport status: {e}"));
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// A Python SDK client (`mcp.Client`, default mode) calling server-everything's long-running
/// operation through serve; killed on drop.
struct SlowCall(Child);

impl Drop for SlowCall {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn toolport_status_shows_a_call_in_flight_its_client_and_the_servers() {
    let env = everything_and_broken();
    let serve = ServeHttp::start(&env);
    let args = r#"{"duration": 120, "steps": 120}"#;
    let mut cmd = py_command(
        "call",
        &[
            "--client",
            "default",
            "--tool",
            "trigger-long-running-operation",
            "--args",
            args,
            "--timeout",
            "300",
        ],
    );
    let child = cmd.arg("--url").arg(&serve.url).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
    let _call = SlowCall(child.unwrap_or_else(|e| panic!("cannot start the client: {e}")));
    // Until the call is in flight (the client lists first).
    let deadline = Instant::now() + WAIT;
    let json = loop {
        let (code, stdout, stderr) = status(&["--url", &serve.url, "--json"], &[]);
        assert_eq!(code, 0, "{stderr}");
        let json: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("--json ({e}): {stdout}"));
        if json["calls"].as_array().is_some_and(|c| !c.is_empty()) || Instant::now() > deadline {
            break json;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let call = &json["calls"][0];
    assert_eq!(
        (call["method"].as_str(), call["name"].as_str()),
        (Some("tools/call"), Some("trigger-long-running-operation")),
        "{json}"
    );
    let client = call["client"].as_str().unwrap_or_default().to_string();
    assert!(!client.is_empty(), "the call names its client: {json}");
    assert!(
        json["clients"].as_array().is_some_and(|c| c.iter().any(|c| c["name"] == client.as_str())),
        "{json}"
    );
    let (code, text, stderr) = status(&["--url", &serve.url], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(text.contains("- everything | state=connected | tools="), "{text}");
    assert!(text.contains("- broken | state=error | tools=0 | error="), "{text}");
    assert!(
        text.contains(&format!("- tools/call trigger-long-running-operation | client={client} | session=")),
        "{text}"
    );
    assert!(text.contains("clients:\n- "), "{text}");
}

#[test]
fn toolport_status_says_why_it_cannot_read() {
    // Nothing listens on a port just freed.
    let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port());
    let url = format!("http://127.0.0.1:{}", port.unwrap_or_else(|e| panic!("{e}")));
    let (code, _, stderr) = status(&["--url", &url], &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.starts_with(&format!("toolport: cannot reach {url}/status: ")), "{stderr}");
    assert!(stderr.contains("is `toolport serve --http` running there?"), "{stderr}");

    let env = env_with(json!({}), &[]);
    let serve = ServeHttp::start_with(&env, &["--token-env", "SERVE_TOKEN"], &[("SERVE_TOKEN", "right")]);
    let base = format!("http://{}", serve.authority());
    let (code, _, stderr) = status(&["--url", &serve.url], &[]);
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        format!(
            "toolport: {base}/status needs a bearer token (401): pass --token-env VAR naming the variable that holds it\n"
        )
    );
    let (code, _, stderr) = status(&["--url", &serve.url, "--token-env", "WRONG"], &[("WRONG", "wrong")]);
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        format!(
            "toolport: {base}/status refused the token in WRONG (401): pass the one serve was started with\n"
        )
    );
    let (code, stdout, stderr) =
        status(&["--url", &serve.url, "--token-env", "RIGHT"], &[("RIGHT", "right")]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("servers: (none)\nclients: (none)\ncalls in flight: (none)\n"), "{stdout}");

    let mut other = Everything::streamable_http();
    let elsewhere = other.url.trim_end_matches("/mcp").to_string();
    let (code, _, stderr) = status(&["--url", &other.url], &[]);
    other.stop();
    assert_eq!(code, 1);
    assert!(
        stderr.starts_with(&format!("toolport: {elsewhere}/status is not toolport serve's status (HTTP ")),
        "{stderr}"
    );
}

/// A read in flight is shown by its URI without the user info, query and fragment a caller put
/// in it: `/status` is read by an operator, the URI was a caller's.
#[test]
fn status_shows_a_read_in_flight_without_the_secrets_of_its_uri() {
    let env = Env::new();
    let observe = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("observe");
    let meta = json!({
        "type": "stdio",
        "command": python(),
        "args": [observe.join("meta_server.py"), "--log", env.root().join("meta.log")],
    });
    write_config(&env, json!({ "meta": meta }), &["meta"], json!({}));
    let serve = ServeHttp::start(&env);
    let secret_uri = "slow://admin:pw@doc?token=x#f";
    let client = std::process::Command::new(python())
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("team/access_client.py"))
        .args(["--url", &serve.url, "--read", secret_uri])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let _read = SlowCall(client.unwrap_or_else(|e| panic!("cannot start the client: {e}")));
    let deadline = Instant::now() + WAIT;
    let (json, text) = loop {
        let got = http_get(&serve.authority(), "/status", &[]);
        assert_eq!(got.status, 200, "{}", got.head);
        if body(&got)["calls"].as_array().is_some_and(|c| !c.is_empty()) || Instant::now() > deadline {
            break (body(&got), got.body);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let call = &json["calls"][0];
    assert_eq!(
        (call["method"].as_str(), call["name"].as_str()),
        (Some("resources/read"), Some("slow://doc")),
        "{json}"
    );
    for secret in ["admin", "pw", "token", "#f"] {
        assert!(!text.contains(secret), "{secret} in /status: {text}");
    }
}
