//! Issue 44 item 1: a tool name is matched exactly at every door of `serve --http`. A name with
//! whitespace or a control character around it (`"delete_note "`, `" delete_note"`,
//! `"delete_note\t"`, or the same sent as JSON escapes, `"\u0020delete_note"`,
//! `"delete_note\u0000"`) is no tool's: the policy, the bundle and the executor all see that
//! exact name, so it cannot run the tool the policy forbids or the bundle leaves out. Real
//! pieces: the notes server (`tests/trust/confirm_server.py`, which logs every call it
//! receives, so "not run" is read from the server itself), a Cedar policy with the book's
//! `no-destructive` forbid (`docs/src/serve/team.md`), `confirm: "never"`, a bundle, a shared
//! token, and the Python SDK's default `mcp.Client` (`tests/team/access_client.py`) beside requests
//! sent byte for byte.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use super::policy::{access_client, call_text};
use crate::serve::clients::python;
use crate::support::common::Env;
use crate::support::runtime::write_config;
use crate::support::serve::ServeHttp;

const TOKEN_VAR: &str = "TOOLPORT_NAMES_TEST_TOKEN";
const TOKEN: &str = "names-test-token-4f1d2c9a7e";

/// Everyone may do anything but call a destructive tool (`docs/src/serve/team.md`: `no-destructive`).
const POLICY: &str = r#"
@id("everyone")
permit(principal, action, resource);

@id("no-destructive")
forbid(principal, action == Action::"call", resource)
when { resource.annotations has destructiveHint && resource.annotations.destructiveHint };
"#;

/// The notes server enabled with `settings`, never asking before a call (`confirm: "never"`),
/// a bundle `reader` holding only `read_note`, and `POLICY` in a file; returns the server's
/// log of the calls it received and the policy file.
fn notes(env: &Env) -> (PathBuf, PathBuf) {
    let log = env.root().join("calls.log");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("trust/confirm_server.py");
    let def = json!({"type": "stdio", "command": python(), "args": [script, "--log", log]});
    let settings = json!({
        "confirm": "never",
        "bundles": {"reader": {"servers": ["notes"], "tools": {"include": ["read_note"]}}},
    });
    write_config(env, json!({ "notes": def }), &["notes"], settings);
    let policy = env.home().join("team.cedar");
    std::fs::write(&policy, POLICY).unwrap_or_else(|e| panic!("{e}"));
    (log, policy)
}

/// The calls the server received, one `<tool> <arguments>` each.
fn received(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log).unwrap_or_default().lines().map(str::to_string).collect()
}

/// One POST of `body` to `path` with the token, on a fresh connection: the status, the
/// lower-cased head and the body (de-chunked).
fn post(authority: &str, path: &str, session: Option<&str>, body: &str) -> (u16, String, String) {
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: \
         application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: \
         2025-11-25\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(id) = session {
        request.push_str(&format!("Mcp-Session-Id: {id}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    let mut stream = TcpStream::connect(authority).unwrap_or_else(|e| panic!("connect {authority}: {e}"));
    let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
    stream.write_all(request.as_bytes()).unwrap_or_else(|e| panic!("send: {e}"));
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let response = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let head = head.to_ascii_lowercase();
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = if head.contains("transfer-encoding: chunked") { dechunked(body) } else { body.to_string() };
    (status, head, body)
}

/// A chunked body's data.
fn dechunked(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || after.len() < size {
            break;
        }
        out.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    out
}

/// The JSON-RPC response with `id` in a body (plain JSON, or server-sent events).
fn response(body: &str, id: u64) -> Value {
    let answers = std::iter::once(body).chain(body.lines().filter_map(|l| l.strip_prefix("data:")));
    answers
        .filter_map(|text| serde_json::from_str::<Value>(text.trim()).ok())
        .find(|message| message["id"] == id)
        .unwrap_or_else(|| panic!("no response {id} in:\n{body}"))
}

/// A 2025-11-25 session at `path`, opened by hand: its id.
fn open_session(authority: &str, path: &str) -> String {
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let (status, head, body) = post(authority, path, None, init);
    assert_eq!(status, 200, "{head}\n{body}");
    let id = head.lines().find_map(|l| l.strip_prefix("mcp-session-id:")).map(str::trim);
    let id = id.unwrap_or_else(|| panic!("no session id in:\n{head}")).to_string();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (status, head, _) = post(authority, path, Some(&id), initialized);
    assert_eq!(status, 202, "{head}");
    id
}

/// `tools/call` of the name written as JSON text `name` (escapes and all, sent byte for byte)
/// in `session` at `path`: `(isError, text)` of the result.
fn raw_call(authority: &str, path: &str, session: &str, id: u64, name: &str) -> (Value, String) {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":{name},"arguments":{{"id":"raw"}}}}}}"#
    );
    let (status, head, body) = post(authority, path, Some(session), &body);
    assert_eq!(status, 200, "{name}: {head}\n{body}");
    let answer = response(&body, id);
    let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default().to_string();
    (answer["result"]["isError"].clone(), text)
}

/// The issue's attack through the binary: under the book's `no-destructive` forbid with
/// `confirm: "never"`, `"delete_note "` (the issue's `"admin_wipe "`) and its kin are unknown
/// tools, at `/mcp` and in a bundle, from the SDK and byte for byte, and none gets past a spent
/// `--tool-rate-limit`; the server receives only the calls the policy and the bundle allow.
#[test]
fn a_padded_name_is_an_unknown_tool_not_the_tool_the_policy_or_bundle_refuses() {
    let env = Env::new();
    let (log, policy) = notes(&env);
    let policy = policy.to_string_lossy().into_owned();
    let serve = ServeHttp::start_with(
        &env,
        &["--token-env", TOKEN_VAR, "--policy", &policy, "--tool-rate-limit", "2/h"],
        &[(TOKEN_VAR, TOKEN)],
    );

    let padded = ["delete_note ", " delete_note", "delete_note\t", "\u{a0}delete_note"];
    let mut calls: Vec<&str> = vec!["--call", "delete_note", "--call", "read_note"];
    for name in padded {
        calls.extend(["--call", name]);
    }
    let seen = access_client(&serve.url, Some(TOKEN), &calls);
    assert_eq!(call_text(&seen, "read_note"), "is_error=false read_note done: {}");
    // The forbidden tool is an unknown one, and so is every padded form of its name, each
    // shown as sent (a control character escaped).
    assert_eq!(call_text(&seen, "delete_note"), "is_error=true Unknown MCP tool: delete_note");
    for (name, shown) in [
        ("delete_note ", "delete_note "),
        (" delete_note", " delete_note"),
        ("delete_note\t", "delete_note\\u{9}"),
        ("\u{a0}delete_note", "\u{a0}delete_note"),
    ] {
        assert_eq!(call_text(&seen, name), format!("is_error=true Unknown MCP tool: {shown}"), "{name:?}");
    }

    // The bundle holds `read_note` only: `add_note` (which the policy allows) padded is no way in.
    let reader = format!("{}/reader", serve.url);
    let seen = access_client(
        &reader,
        Some(TOKEN),
        &["--call", "read_note", "--call", "add_note ", "--call", " read_note"],
    );
    assert_eq!(call_text(&seen, "read_note"), "is_error=false read_note done: {}");
    assert_eq!(call_text(&seen, "add_note "), "is_error=true Unknown MCP tool: add_note ");
    assert_eq!(call_text(&seen, " read_note"), "is_error=true Unknown MCP tool:  read_note");

    // Byte for byte: the names as JSON escapes, decoded by the JSON reader before any check.
    let authority = serve.authority();
    let session = open_session(&authority, "/mcp");
    for (id, name, shown) in [
        (2, r#""\u0020delete_note""#, " delete_note"),
        (3, r#""delete_note\u0000""#, "delete_note\\u{0}"),
        (4, r#""delete_note\u001b[2J""#, "delete_note\\u{1b}[2J"),
        (5, r#""\u00a0delete_note""#, "\u{a0}delete_note"),
        (6, r#""delete_note\u2028""#, "delete_note\\u{2028}"),
    ] {
        let (is_error, text) = raw_call(&authority, "/mcp", &session, id, name);
        assert_eq!((is_error, text.as_str()), (json!(true), format!("Unknown MCP tool: {shown}").as_str()));
    }
    let reader_session = open_session(&authority, "/mcp/reader");
    let (is_error, text) = raw_call(&authority, "/mcp/reader", &reader_session, 2, r#""add_note\u0009""#);
    assert_eq!((is_error, text.as_str()), (json!(true), "Unknown MCP tool: add_note\\u{9}"));

    // `read_note`'s budget (2/h) is spent by the two calls above: the next one is refused, but
    // a padded name is no tool and spends nothing, and a forbidden tool never reaches its
    // budget (a 429 would tell the caller it exists).
    let call =
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read_note","arguments":{}}}"#;
    let (status, head, body) = post(&authority, "/mcp", Some(&session), call);
    assert_eq!(status, 429, "{head}\n{body}");
    assert!(body.contains("too many calls of tool `read_note`"), "{body}");
    let (is_error, text) = raw_call(&authority, "/mcp", &session, 10, r#""read_note\u0020""#);
    assert_eq!((is_error, text.as_str()), (json!(true), "Unknown MCP tool: read_note "));
    for id in 11..14 {
        let (is_error, text) = raw_call(&authority, "/mcp", &session, id, r#""delete_note""#);
        assert_eq!((is_error, text.as_str()), (json!(true), "Unknown MCP tool: delete_note"));
    }

    // What the server received: the two allowed calls, nothing else.
    assert_eq!(received(&log), ["read_note {}", "read_note {}"]);
}

/// The lazy surface's `describe_tool` and `call_tool` take the name as exactly as a direct
/// call: a padded one is unknown, not the tool without the padding.
#[test]
fn the_lazy_surface_matches_a_name_exactly_too() {
    let env = Env::new();
    let (log, policy) = notes(&env);
    let policy = policy.to_string_lossy().into_owned();
    let serve = ServeHttp::start_with(
        &env,
        &["--token-env", TOKEN_VAR, "--policy", &policy, "--lazy"],
        &[(TOKEN_VAR, TOKEN)],
    );
    let seen = access_client(
        &serve.url,
        Some(TOKEN),
        &[
            "--call",
            r#"describe_tool={"name": " read_note"}"#,
            "--call",
            r#"call_tool={"name": "read_note\t", "arguments": {"id": "lazy"}}"#,
        ],
    );
    assert_eq!(call_text(&seen, "describe_tool"), "is_error=true Unknown MCP tool:  read_note");
    assert_eq!(call_text(&seen, "call_tool"), "is_error=true Unknown MCP tool: read_note\\u{9}");
    let seen = access_client(
        &serve.url,
        Some(TOKEN),
        &["--call", r#"call_tool={"name": "delete_note ", "arguments": {"id": "lazy"}}"#],
    );
    assert_eq!(call_text(&seen, "call_tool"), "is_error=true Unknown MCP tool: delete_note ");
    assert_eq!(received(&log), Vec::<String>::new());
}
