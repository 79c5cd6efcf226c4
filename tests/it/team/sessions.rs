//! Issue 44 item 3: a session is its caller's. `serve --http --auth oidc` in front of a real
//! issuer (`tests/team/issuer.py`) and the confirm fixture (`tests/trust/confirm_server.py`,
//! which logs every call it receives, so "not run" is what the server saw). alice opens a
//! 2025-11-25 session; bob, with a valid token of his own, is told it does not exist, whatever
//! he sends on it (a request, a `GET` stream, a `DELETE`, the answer to alice's question), and
//! alice's destructive call waits for her answer; the question's id cannot be guessed. Sealed
//! ids (`--session-key-env`) carry their caller to every replica, stay ended after a `DELETE`
//! on the replica that took it, and expire. A 2026-07-28 call waiting for an answer resumes
//! only for its caller. Raw HTTP by hand: no well-behaved client sends any of this.

use std::io::{BufRead as _, BufReader, Read as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::oidc::{AUDIENCE, keys_known};
use crate::support::common::Env;
use crate::support::issuer::{Issuer, serve_oidc};
use crate::support::serve::{SETTLED_LINE, ServeHttp, http_exchange, session_of};
use crate::trust::confirm::{declined, notes, question, received};

/// rmcp's words for an unknown session.
const NOT_FOUND: &str = "Not Found: Session not found";
/// The variable the replicas read their shared key from, and the key (a test value).
const KEY_VAR: &str = "TOOLPORT_TEST_SESSION_KEY";
const KEY: &str = "sessions-test-key-0123456789-abcdefghij";
/// How long serve's servers may take to connect (the fixture is Python).
const SETTLE: Duration = Duration::from_secs(60);

/// One request on a fresh connection (`Connection: close`) by `token`'s caller on `session`:
/// the status, the head, and the body still to read (an SSE stream stays open while it lasts).
fn send(
    serve: &ServeHttp,
    method: &str,
    token: Option<&str>,
    session: Option<&str>,
    body: &str,
) -> (u16, String, BufReader<TcpStream>) {
    let on_session = session.map(|s| [("Mcp-Session-Id", s), ("Mcp-Protocol-Version", "2025-11-25")]);
    send_with(serve, method, token, on_session.as_ref().map_or(&[][..], |h| &h[..]), body)
}

/// [`send`] with `headers` instead of a session's.
fn send_with(
    serve: &ServeHttp,
    method: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, BufReader<TcpStream>) {
    let bearer = token.map(|token| format!("Bearer {token}"));
    let mut all: Vec<(&str, &str)> = bearer.iter().map(|b| ("Authorization", b.as_str())).collect();
    all.extend_from_slice(headers);
    http_exchange(&serve.authority(), method, &all, body)
}

/// The rest of a body that ends (a refusal's text), its chunked framing taken off when it has
/// one.
fn rest(mut reader: BufReader<TcpStream>) -> String {
    let mut raw = String::new();
    let _ = reader.read_to_string(&mut raw);
    let (mut body, mut left) = (String::new(), raw.as_str());
    while let Some((size, after)) = left.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { return raw };
        if size == 0 {
            return body;
        }
        let Some(chunk) = after.get(..size) else { return raw };
        body.push_str(chunk);
        left = after.get(size + 2..).unwrap_or_default();
    }
    raw
}

/// The next JSON-RPC message on an SSE body (chunk sizes and SSE fields other than `data`
/// skipped); `None` once it ends.
fn next_message(reader: &mut BufReader<TcpStream>) -> Option<Value> {
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
        }
        if let Some(data) = line.trim_end().strip_prefix("data:")
            && let Ok(message) = serde_json::from_str::<Value>(data.trim())
        {
            return Some(message);
        }
    }
}

/// The next message on an SSE body that `wanted` (notifications before it skipped).
fn next_where(reader: &mut BufReader<TcpStream>, wanted: impl Fn(&Value) -> bool) -> Option<Value> {
    loop {
        let message = next_message(reader)?;
        if wanted(&message) {
            return Some(message);
        }
    }
}

/// A session opened by `token`'s caller, offering elicitation, initialized: its id.
fn open_session(serve: &ServeHttp, token: Option<&str>) -> String {
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                   "clientInfo": {"name": "raw", "version": "1"}},
    });
    let (status, head, body) = send(serve, "POST", token, None, &init.to_string());
    assert_eq!(status, 200, "{head}\n{}", rest(body));
    let session = session_of(&head);
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (status, head, _) = send(serve, "POST", token, Some(&session), initialized);
    assert_eq!(status, 202, "{head}");
    session
}

/// `tools/list` on `session` by `token`'s caller: the status and, when 200, the tools' names
/// (else the body).
fn list(serve: &ServeHttp, token: Option<&str>, session: &str) -> (u16, Result<Vec<String>, String>) {
    let body = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#;
    let (status, head, mut reader) = send(serve, "POST", token, Some(session), body);
    if status != 200 {
        return (status, Err(format!("{head}{}", rest(reader))));
    }
    let answer = next_where(&mut reader, |m| m.get("id") == Some(&json!(2)))
        .unwrap_or_else(|| panic!("no answer to tools/list: {head}"));
    let tools = answer["result"]["tools"].as_array().cloned().unwrap_or_default();
    (status, Ok(tools.iter().filter_map(|t| t["name"].as_str().map(str::to_string)).collect()))
}

/// An answer to a server's question `id` (`action`), as a client POSTs it.
fn answer(id: &Value, action: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": {"action": action, "content": {}}}).to_string()
}

/// The confirm fixture behind `serve --http --auth oidc`, the issuer, and the log of the calls
/// the fixture received.
fn notes_behind_oidc() -> (Env, Issuer, ServeHttp, std::path::PathBuf) {
    let (env, log) = notes(json!({}));
    let issuer = Issuer::start();
    let serve = serve_oidc(&env, 0, &issuer.url, AUDIENCE, &[]);
    settled(&serve);
    (env, issuer, serve, log)
}

/// Once every server behind `serve` connected.
fn settled(serve: &ServeHttp) {
    let printed = serve.wait_for_line(SETTLED_LINE, SETTLE);
    assert!(printed.contains(SETTLED_LINE), "{printed}");
}

fn token(issuer: &Issuer, subject: &str) -> String {
    issuer.mint(json!({"sub": subject, "aud": AUDIENCE}))
}

/// bob's valid token on alice's session: every method is told the session does not exist,
/// while alice goes on using it; after her `DELETE` it is unknown to her too. Before, bob's
/// requests were served in alice's session.
#[test]
fn a_session_answers_only_the_caller_who_opened_it() {
    let (_env, issuer, serve, _log) = notes_behind_oidc();
    let (alice, bob) = (token(&issuer, "alice"), token(&issuer, "bob"));
    keys_known(&serve, &alice);
    let session = open_session(&serve, Some(&alice));

    let (status, listed) = list(&serve, Some(&bob), &session);
    assert_eq!(
        (status, listed.as_ref().err().map(|b| b.ends_with(NOT_FOUND))),
        (404, Some(true)),
        "{listed:?}"
    );
    for method in ["GET", "DELETE"] {
        let (status, head, body) = send(&serve, method, Some(&bob), Some(&session), "");
        assert_eq!(status, 404, "bob's {method}: {head}");
        assert_eq!(rest(body), NOT_FOUND, "bob's {method}");
    }
    let (status, listed) = list(&serve, Some(&alice), &session);
    assert_eq!(status, 200, "{listed:?}");
    assert!(listed.unwrap_or_default().contains(&"delete_note".to_string()));

    let (status, head, _) = send(&serve, "DELETE", Some(&alice), Some(&session), "");
    assert_eq!(status, 200, "{head}");
    let (status, listed) = list(&serve, Some(&alice), &session);
    assert_eq!(status, 404, "{listed:?}");
}

/// alice's destructive call asks her first. bob answers "accept" on her session, under rmcp's
/// own first id (0) and under the real one: 404 both times. The question's id is 128 random
/// bits, and an answer under any other id (alice's own `0`) is dropped: the call goes on
/// waiting, alice declines, and the server never hears of the call. Before, bob's `{"id": 0}`
/// was taken as alice's yes and the call ran.
#[test]
fn only_the_caller_asked_answers_a_question_and_its_id_cannot_be_guessed() {
    let (_env, issuer, serve, log) = notes_behind_oidc();
    let (alice, bob) = (token(&issuer, "alice"), token(&issuer, "bob"));
    keys_known(&serve, &alice);
    let session = open_session(&serve, Some(&alice));

    let call = json!({
        "jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "delete_note", "arguments": {"id": "1"}},
    });
    let (status, head, mut stream) = send(&serve, "POST", Some(&alice), Some(&session), &call.to_string());
    assert_eq!(status, 200, "{head}");
    let asked = next_where(&mut stream, |m| m.get("method").is_some_and(|m| m == "elicitation/create"))
        .unwrap_or_else(|| panic!("the call ended without a question"));
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    assert_eq!(asked["params"]["message"], question("1"), "{asked}");
    let id = asked["id"].clone();
    let random = id.as_str().is_some_and(|s| s.len() == 32 && s.chars().all(|c| c.is_ascii_hexdigit()));
    assert!(random, "a guessable question id: {id}");

    for guess in [json!(0), id.clone()] {
        let (status, head, body) =
            send(&serve, "POST", Some(&bob), Some(&session), &answer(&guess, "accept"));
        assert_eq!(status, 404, "bob's answer under {guess}: {head}");
        assert_eq!(rest(body), NOT_FOUND);
    }
    let (status, head, _) = send(&serve, "POST", Some(&alice), Some(&session), &answer(&json!(0), "accept"));
    assert_eq!(status, 202, "{head}");
    let (status, head, _) = send(&serve, "POST", Some(&alice), Some(&session), &answer(&id, "decline"));
    assert_eq!(status, 202, "{head}");

    let result = next_where(&mut stream, |m| m.get("id") == Some(&json!(3)) && m.get("method").is_none())
        .unwrap_or_else(|| panic!("the call ended without a result"));
    let why = declined("delete_note", "destructive tools", "the answer was no");
    assert_eq!(result["id"], 3, "{result}");
    assert_eq!(result["result"]["content"][0]["text"], why, "{result}");
    assert_eq!(result["result"]["isError"], true, "{result}");
    assert!(received(&log).is_empty(), "the call reached the server: {:?}", received(&log));
}

/// A sealed session carries its caller: bob is told alice's does not exist on the replica
/// that holds it and on one that would take it up; alice is served on both. Before, any
/// replica restored it for whoever sent the id.
#[test]
fn a_sealed_session_is_its_callers_on_every_replica() {
    let (env, _log) = notes(json!({}));
    let issuer = Issuer::start();
    let args =
        ["--auth", "oidc", "--issuer", &issuer.url, "--audience", AUDIENCE, "--session-key-env", KEY_VAR];
    let replica = || ServeHttp::listening_on(&env, "127.0.0.1:0", &args, &[(KEY_VAR, KEY)]);
    let (first, second) = (replica(), replica());
    settled(&first);
    settled(&second);
    let (alice, bob) = (token(&issuer, "alice"), token(&issuer, "bob"));
    keys_known(&first, &alice);
    keys_known(&second, &alice);
    let session = open_session(&first, Some(&alice));
    for serve in [&second, &first] {
        let (status, listed) = list(serve, Some(&bob), &session);
        assert_eq!(status, 404, "bob on {}: {listed:?}", serve.authority());
    }
    for serve in [&second, &first] {
        let (status, listed) = list(serve, Some(&alice), &session);
        assert_eq!(status, 200, "alice on {}: {listed:?}", serve.authority());
    }
}

/// A sealed id stays ended on the replica that took its `DELETE` (a second `DELETE` is 404
/// too), and an id past `--session-lifetime` is an unknown session. Before, the deleted id
/// was restored from what it carries on its next request, and sealed ids never expired.
#[test]
fn a_deleted_sealed_id_stays_ended_and_an_expired_one_is_unknown() {
    let (env, _log) = notes(json!({}));
    let args = ["--session-key-env", KEY_VAR, "--session-lifetime", "10s"];
    let serve = ServeHttp::start_with(&env, &args, &[(KEY_VAR, KEY)]);

    let ended = open_session(&serve, None);
    assert_eq!(list(&serve, None, &ended).0, 200);
    let (status, head, _) = send(&serve, "DELETE", None, Some(&ended), "");
    assert_eq!(status, 200, "{head}");
    let (status, listed) = list(&serve, None, &ended);
    assert_eq!(status, 404, "a deleted id served again: {listed:?}");
    let (status, head, _) = send(&serve, "DELETE", None, Some(&ended), "");
    assert_eq!(status, 404, "{head}");

    let opened = Instant::now();
    let expiring = open_session(&serve, None);
    assert_eq!(list(&serve, None, &expiring).0, 200);
    std::thread::sleep(Duration::from_secs(11).saturating_sub(opened.elapsed()));
    let (status, listed) = list(&serve, None, &expiring);
    assert_eq!(status, 404, "an expired id served: {listed:?}");
    assert_eq!(listed.err().map(|b| b.ends_with(NOT_FOUND)), Some(true));
}

/// A 2026-07-28 `tools/call` with its `_meta` (no session), by `token`'s caller, resuming
/// `state` with `answer` when given: the JSON-RPC answer.
fn call_2026(serve: &ServeHttp, token: &str, state: Option<(&str, &str)>) -> Value {
    let mut params = json!({
        "name": "delete_note", "arguments": {"id": "1"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        },
    });
    if let Some((state, action)) = state {
        params["requestState"] = json!(state);
        params["inputResponses"] = json!({"input": {"action": action, "content": {}}});
    }
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params});
    let headers =
        [("Mcp-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "delete_note")];
    let (status, head, mut reader) = send_with(serve, "POST", Some(token), &headers, &body.to_string());
    assert_eq!(status, 200, "{head}{}", rest(reader));
    if head.to_ascii_lowercase().contains("content-type: application/json") {
        return serde_json::from_str(rest(reader).trim()).unwrap_or_else(|e| panic!("{e}: {head}"));
    }
    next_where(&mut reader, |m| m.get("id") == Some(&json!(5))).unwrap_or_else(|| panic!("no answer: {head}"))
}

/// A 2026-07-28 call waiting for alice's answer: bob's retry with her `requestState` and an
/// "accept" is told no call waits under it; the call goes on waiting for alice, her decline
/// ends it, and the server never hears of it.
#[test]
fn a_waiting_2026_call_resumes_only_for_its_caller() {
    let (_env, issuer, serve, log) = notes_behind_oidc();
    let (alice, bob) = (token(&issuer, "alice"), token(&issuer, "bob"));
    keys_known(&serve, &alice);
    let asked = call_2026(&serve, &alice, None);
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let state = asked["result"]["requestState"].as_str().unwrap_or_default().to_string();

    let taken = call_2026(&serve, &bob, Some((&state, "accept")));
    assert_eq!(
        taken["error"]["message"],
        "no call waits under this requestState (it ended or expired): call the tool again",
        "{taken}"
    );
    let ended = call_2026(&serve, &alice, Some((&state, "decline")));
    let why = declined("delete_note", "destructive tools", "the answer was no");
    assert_eq!(ended["result"]["content"][0]["text"], why, "{ended}");
    assert!(received(&log).is_empty(), "the call reached the server: {:?}", received(&log));
}
