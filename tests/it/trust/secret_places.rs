//! Secrets outside a tool's text blocks (issue 44 item 9), end to end: a fixture server of our
//! own (`tests/trust/leaky_server.py`, the official Python SDK) answers with an AWS-shaped key
//! and a configured secret (its `LEAK_TOKEN`, expanded by toolport from `${…}`) in a
//! `resource_link`, the base64 `blob` of an embedded `text/plain` resource, a
//! `structuredContent` key, `_meta`, a resource's contents, a prompt, and JSON-RPC errors.
//! Each reaches the caller through the binary (`call`, `read`, `prompt`, and `serve` to the
//! Python SDK's client) masked, or withheld under `secrets.results: "block"`; the audit log
//! keeps neither a secret-shaped argument key nor a password in a read's URI.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::serve::clients::{py_command, py_output};
use crate::support::auth::python;
use crate::support::common::Env;
use crate::support::runtime::write_config;
use crate::support::serve::serve_command;

/// Only stops a hang.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The variable the server's `LEAK_TOKEN` is expanded from, and its value.
const TOKEN_VAR: &str = "TOOLPORT_IT_LEAK_TOKEN";
const TOKEN: &str = "leak-token-0123456789";

/// The fixture's made-up AWS key (built from parts, as the fixture builds it).
fn aws_key() -> String {
    format!("{}{}", "AKIA", "QYLPMN5HHHFPZAM2")
}

/// What every leak reads as once masked.
const MASKED: &str = "aws=*** token=***";

/// The note a result with the fixture's two secrets ends with, `count` hits in all.
fn note(count: usize) -> String {
    format!("[toolport: {count} secrets in this result replaced by *** (aws-access-token, ${TOKEN_VAR})]")
}

/// A workspace with the leaky server enabled, and `extra` workspace keys.
fn leaky(extra: Value) -> Env {
    let env = Env::new();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("trust/leaky_server.py");
    let def = json!({"type": "stdio", "command": python(), "args": [script],
                     "env": {"LEAK_TOKEN": format!("${{{TOKEN_VAR}}}")}});
    let mut workspace = json!({"namePolicy": "namespace"});
    if let (Some(w), Some(extra)) = (workspace.as_object_mut(), extra.as_object()) {
        w.extend(extra.clone());
    }
    write_config(&env, json!({ "leaky": def }), &["leaky"], workspace);
    env
}

/// `toolport <args>` with the token's variable set: exit status, stdout, stderr. Neither
/// stream may hold a secret, whatever else the test checks.
fn run(env: &Env, args: &[&str]) -> (i32, String, String) {
    let out = env
        .cmd(args)
        .env(TOKEN_VAR, TOKEN)
        .timeout(CALL_TIMEOUT)
        .output()
        .unwrap_or_else(|e| panic!("toolport {args:?}: {e}"));
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    for secret in [aws_key().as_str(), TOKEN] {
        assert!(!stdout.contains(secret) && !stderr.contains(secret), "{args:?}:\n{stdout}\n{stderr}");
    }
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

/// `toolport <args> --json`, parsed.
fn json_of(env: &Env, args: &[&str]) -> Value {
    let (code, stdout, stderr) = run(env, &[args, &["--json"]].concat());
    assert_eq!(code, 0, "{args:?}: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// [`MASKED`] as a `blob` carries it: base64 (`base64.b64encode(b"aws=*** token=***")`).
const MASKED_BLOB: &str = "YXdzPSoqKiB0b2tlbj0qKio=";

/// The audit log's lines (`<home>/audit/calls.jsonl`).
fn audit_lines(env: &Env) -> Vec<Value> {
    let text = std::fs::read_to_string(env.home().join("audit/calls.jsonl")).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

#[test]
fn a_link_a_text_blob_a_structured_key_and_meta_come_back_masked_through_call() {
    let env = leaky(json!({}));
    let call = |place: &str| json_of(&env, &["call", "leaky__leak", &json!({ "place": place }).to_string()]);

    let link = call("link");
    assert_eq!(link["content"][1]["uri"], json!("leak://doc/***"), "{link}");
    assert_eq!(link["content"][1]["description"], json!(MASKED), "{link}");
    assert_eq!(link["content"][2]["text"], json!(note(3)), "{link}");

    let blob = call("blob");
    assert_eq!(blob["content"][1]["resource"]["blob"], json!(MASKED_BLOB), "{blob}");
    assert_eq!(blob["content"][2]["text"], json!(note(2)), "{blob}");

    let structured = call("structured");
    assert_eq!(structured["structuredContent"], json!({"***": "***"}), "{structured}");
    assert_eq!(structured["content"][1]["text"], json!(note(2)), "{structured}");

    let meta = call("meta");
    assert_eq!(meta["_meta"]["leak/where"], json!(MASKED), "{meta}");
    assert_eq!(meta["content"][1]["text"], json!(note(2)), "{meta}");
}

#[test]
fn a_servers_error_a_resource_and_a_prompt_come_back_masked_through_the_cli() {
    let env = leaky(json!({}));
    let (code, stdout, stderr) = run(&env, &["call", "leaky__leak", r#"{"place": "error"}"#]);
    assert_eq!((code, stdout.as_str()), (1, ""), "{stderr}");
    assert!(stderr.contains(&format!("upstream refused: {MASKED}")), "{stderr}");

    let read = json_of(&env, &["read", "leaky", "leak://doc"]);
    assert_eq!(read["contents"][0]["text"], json!(MASKED), "{read}");
    assert_eq!(read["contents"][1]["blob"], json!(MASKED_BLOB), "{read}");
    let (code, _, stderr) = run(&env, &["read", "leaky", "leak://error"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains(&format!("cannot read: {MASKED}")), "{stderr}");

    let prompt = json_of(&env, &["prompt", "leak"]);
    assert_eq!(prompt["description"], json!(MASKED), "{prompt}");
    assert_eq!(prompt["messages"][0]["content"]["text"], json!(format!("use {MASKED}")), "{prompt}");
    let (code, _, stderr) = run(&env, &["prompt", "leak_error"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains(&format!("cannot render: {MASKED}")), "{stderr}");
}

#[test]
fn every_place_comes_back_masked_through_serve() {
    let env = leaky(json!({}));
    let call = |place: &str| json!(["call", "leaky__leak", { "place": place }]);
    let steps = json!([
        call("link"),
        call("blob"),
        call("structured"),
        call("meta"),
        call("error"),
        ["read", "leak://doc"],
        ["read", "leak://error"],
        ["prompt", "leak"],
        ["prompt", "leak_error"],
    ]);
    let errlog = env.root().join("serve.stderr");
    // The fixture is Python: it may connect after serve's first listing.
    let wait = ["--expect", "leaky__leak", "--wait", "30"];
    let out = py_command("whole", &[&["--steps", &steps.to_string()][..], &wait].concat())
        .arg("--errlog")
        .arg(&errlog)
        .arg("--")
        .args(serve_command(&env))
        .env(TOKEN_VAR, TOKEN)
        .output()
        .unwrap_or_else(|e| panic!("cannot run client.py: {e}"));
    let serve_stderr = std::fs::read_to_string(&errlog).unwrap_or_default();
    let seen = py_output("whole", &out, &serve_stderr);
    let text = seen.to_string();
    assert!(!text.contains(&aws_key()) && !text.contains(TOKEN), "{text}");
    assert!(!serve_stderr.contains(&aws_key()) && !serve_stderr.contains(TOKEN), "{serve_stderr}");
    let a = &seen["answers"];
    assert_eq!(a[0]["content"][1]["uri"], json!("leak://doc/***"), "{text}\n{serve_stderr}");
    assert_eq!(a[0]["content"][1]["description"], json!(MASKED), "{text}");
    assert_eq!(a[1]["content"][1]["resource"]["blob"], json!(MASKED_BLOB), "{text}");
    assert_eq!(a[2]["structuredContent"], json!({"***": "***"}), "{text}");
    assert_eq!(a[3]["_meta"]["leak/where"], json!(MASKED), "{text}");
    let message = a[4]["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(&format!("upstream refused: {MASKED}")), "{text}");
    assert_eq!(a[5]["contents"][0]["text"], json!(MASKED), "{text}");
    assert_eq!(a[5]["contents"][1]["blob"], json!(MASKED_BLOB), "{text}");
    assert_eq!(
        a[6]["error"],
        json!({"code": -32602, "message": format!("cannot read: {MASKED}"), "data": null})
    );
    assert_eq!(a[7]["description"], json!(MASKED), "{text}");
    assert_eq!(a[7]["messages"][0]["content"]["text"], json!(format!("use {MASKED}")), "{text}");
    assert_eq!(
        a[8]["error"],
        json!({"code": -32602, "message": format!("cannot render: {MASKED}"), "data": null})
    );
}

#[test]
fn results_block_withholds_a_read_a_prompt_and_an_error_carrying_a_secret() {
    let env = leaky(json!({"secrets": {"results": "block"}}));
    let withheld = |subject: &str, said: &str| {
        format!(
            "MCP {subject} on server leaky {said} carrying a secret (aws-access-token, ${TOKEN_VAR}); it was \
             withheld (workspace setting secrets.results is \"block\")"
        )
    };
    let cases: [(&[&str], String); 4] = [
        (&["read", "leaky", "leak://doc"], withheld("resource leak://doc", "returned a result")),
        (&["prompt", "leak"], withheld("prompt leak", "returned a result")),
        (&["read", "leaky", "leak://error"], withheld("resource leak://error", "answered with an error")),
        (
            &["call", "leaky__leak", r#"{"place": "error"}"#],
            withheld("tool leaky__leak", "answered with an error"),
        ),
    ];
    for (args, expected) in cases {
        let (code, stdout, stderr) = run(&env, args);
        assert_eq!((code, stdout.as_str()), (1, ""), "{args:?}: {stderr}");
        assert!(stderr.contains(&expected), "{args:?}: {stderr}");
    }
}

#[test]
fn the_audit_log_keeps_no_secret_in_a_key_nor_a_password_in_a_uri() {
    let env = leaky(json!({}));
    // Answers with no secret: what is checked is the log alone.
    let args = json!({"place": "none", aws_key(): 1, "nested": {TOKEN: true}}).to_string();
    let (code, _, stderr) = run(&env, &["call", "leaky__leak", &args]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = run(&env, &["read", "leaky", "leak://admin:hunter2-pass@plain"]);
    assert_eq!((code, stdout.as_str()), (0, "nothing to hide\n"), "{stderr}");
    let lines = audit_lines(&env);
    let text = serde_json::to_string(&lines).unwrap_or_default();
    for secret in [aws_key().as_str(), TOKEN, "hunter2-pass"] {
        assert!(!text.contains(secret), "{text}");
    }
    let call = lines.iter().find(|l| l["kind"] == "call").unwrap_or_else(|| panic!("no call: {text}"));
    assert_eq!(call["shape"], json!({"place": "string", "***": "number", "nested": {"***": "boolean"}}));
    let read = lines.iter().find(|l| l["kind"] == "read").unwrap_or_else(|| panic!("no read: {text}"));
    assert_eq!(read["uri"], json!("leak://***@plain"));
}
