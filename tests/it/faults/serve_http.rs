//! `serve --http` under clients that hold what they take (issue 26 items 4 and 5): headers that
//! never end, bodies that never end, standalone streams, and sessions by the thousand. Raw TCP
//! by hand: no well-behaved client sends any of it. A client with the token must still get in.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::common::Env;
use crate::support::runtime::{demo, write_config};
use crate::support::serve::{INITIALIZE, ServeHttp, http_exchange, session_of};

const TOKEN: &str = "s3cret-token-for-the-gate";

fn demo_env() -> Env {
    let env = Env::new();
    write_config(&env, json!({ "demo": demo(&[]) }), &["demo"], json!({}));
    env
}

/// One request on a fresh connection (`Connection: close`): the status, the head and the body.
fn exchange(authority: &str, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, String, String) {
    let (status, head, mut reader) = http_exchange(authority, method, headers, body);
    let mut body = String::new();
    let _ = reader.read_to_string(&mut body);
    (status, head, body)
}

fn bearer() -> String {
    format!("Bearer {TOKEN}")
}

/// A connection that sent `start` and then nothing more, as a slowloris does.
fn stalled(authority: &str, start: &str) -> TcpStream {
    let mut stream = TcpStream::connect(authority).unwrap_or_else(|e| panic!("connect {authority}: {e}"));
    let _ = stream.write_all(start.as_bytes());
    stream
}

/// Whether serve closed `stream` (or refused it) within `within`: a read returns end of file
/// or an answer instead of timing out.
fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let _ = stream.set_read_timeout(Some(within));
    let mut byte = [0u8; 256];
    match stream.read(&mut byte) {
        // Zero bytes: closed; any: the refusal's answer.
        Ok(_read) => true,
        Err(e) => !matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut),
    }
}

/// Connections that never finish their headers: those beyond the cap are refused at once, the
/// rest are closed once the header deadline (10 s) passes, and the client with the token then
/// gets its answer. Before, every one was held for good, and enough of them exhausted the
/// descriptors before the token was ever checked.
#[test]
fn unfinished_headers_are_cut_off_and_the_client_with_the_token_gets_in() {
    let env = demo_env();
    let args = ["--token-env", "GATE_TOKEN", "--max-connections", "40", "--max-connections-per-peer", "20"];
    let serve = ServeHttp::start_with(&env, &args, &[("GATE_TOKEN", TOKEN)]);
    let authority = serve.authority();
    let half = format!("POST /mcp HTTP/1.1\r\nHost: {authority}\r\nX-Slow: ");
    let mut held: Vec<TcpStream> = (0..20).map(|_| stalled(&authority, &half)).collect();
    std::thread::sleep(Duration::from_millis(300));
    let mut over = stalled(&authority, &half);
    assert!(closed_within(&mut over, Duration::from_secs(5)), "a connection over the per-peer cap was held");
    let started = Instant::now();
    for stream in &mut held {
        let left = Duration::from_secs(20).saturating_sub(started.elapsed());
        assert!(closed_within(stream, left), "a connection with unfinished headers is still open after 20 s");
    }
    let (status, head, _) = exchange(&authority, "POST", &[("Authorization", &bearer())], INITIALIZE);
    assert_eq!(status, 200, "{head}");
}

/// Request bodies that never end hold no request place: with every place's worth of them
/// pending, a whole request is served.
#[test]
fn never_ending_bodies_hold_no_request_place() {
    let env = demo_env();
    let serve = ServeHttp::start_with(&env, &["--max-requests", "4"], &[]);
    let authority = serve.authority();
    let start = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{{\"jsonrpc\":"
    );
    let _pending: Vec<TcpStream> = (0..8).map(|_| stalled(&authority, &start)).collect();
    std::thread::sleep(Duration::from_millis(500));
    let (status, head, body) = exchange(&authority, "POST", &[], INITIALIZE);
    assert_eq!(status, 200, "{head}\n{body}");
}

/// Standalone `GET` streams have places of their own: holding every one of them leaves the
/// request places free.
#[test]
fn standalone_streams_leave_the_request_places_free() {
    let env = demo_env();
    let serve = ServeHttp::start_with(&env, &["--max-requests", "2"], &[]);
    let authority = serve.authority();
    let mut streams = Vec::new();
    for _ in 0..2 {
        let session = open_session(&authority);
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let (status, head, _) = exchange(
            &authority,
            "POST",
            &[("Mcp-Session-Id", &session), ("Mcp-Protocol-Version", "2025-11-25")],
            initialized,
        );
        assert_eq!(status, 202, "{head}");
        let get = format!(
            "GET /mcp HTTP/1.1\r\nHost: {authority}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\
             Mcp-Protocol-Version: 2025-11-25\r\n\r\n"
        );
        let mut stream = stalled(&authority, &get);
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        let mut first = [0u8; 12];
        let _ = stream.read(&mut first);
        assert!(String::from_utf8_lossy(&first).contains("200"), "the stream did not open: {first:?}");
        streams.push(stream);
    }
    let (status, head, body) = exchange(&authority, "POST", &[], INITIALIZE);
    assert_eq!(status, 200, "two open streams took the request places: {head}\n{body}");
}

/// Sessions are capped: the next `initialize` is refused with 503 and a body that says what to
/// do, and ending a session makes room.
#[test]
fn sessions_are_capped_and_an_ended_one_makes_room() {
    let env = demo_env();
    let serve = ServeHttp::start_with(&env, &["--max-sessions", "3"], &[]);
    let authority = serve.authority();
    let sessions: Vec<String> = (0..3).map(|_| open_session(&authority)).collect();
    let (status, head, body) = exchange(&authority, "POST", &[], INITIALIZE);
    assert_eq!(status, 503, "{head}\n{body}");
    assert!(
        body.contains("toolport serve holds as many sessions as it may (3); end one (DELETE /mcp)"),
        "{body}"
    );
    let (status, head, _) = exchange(&authority, "DELETE", &[("Mcp-Session-Id", &sessions[0])], "");
    assert!(status == 200 || status == 202 || status == 204, "{head}");
    let (status, head, body) = exchange(&authority, "POST", &[], INITIALIZE);
    assert_eq!(status, 200, "{head}\n{body}");
}

/// Issue 44 item 4: an `initialize` whose method is spelled with a JSON escape
/// (`"initializ\u0065"`, the same string to rmcp) counts against `--max-sessions` like any
/// other. Before, the cap read the method as a borrowed string, which an escape fails, so a
/// flood of them opened as many sessions as it sent (1,000: RSS from 30 to 104 MB).
#[test]
fn an_escaped_initialize_counts_against_the_session_cap() {
    let env = demo_env();
    let serve = ServeHttp::start_with(&env, &["--max-sessions", "3"], &[]);
    let authority = serve.authority();
    let escaped = INITIALIZE.replace(r#""initialize""#, r#""initializ\u0065""#);
    assert!(escaped.contains(r#""initializ\u0065""#), "{escaped}");
    let answered: Vec<(u16, String)> = (0..20)
        .map(|_| {
            let (status, _, body) = exchange(&authority, "POST", &[], &escaped);
            (status, body)
        })
        .collect();
    let opened = answered.iter().filter(|(status, _)| *status == 200).count();
    assert_eq!(opened, 3, "{answered:?}");
    for (status, body) in answered.iter().filter(|(status, _)| *status != 200) {
        assert_eq!(*status, 503, "{body}");
        assert!(
            body.contains("toolport serve holds as many sessions as it may (3); end one (DELETE /mcp)"),
            "{body}"
        );
    }
    let (status, head, body) = exchange(&authority, "POST", &[], INITIALIZE);
    assert_eq!(status, 503, "{head}\n{body}");
}

/// A new session's id, from an `initialize` that must succeed.
fn open_session(authority: &str) -> String {
    let (status, head, _) = exchange(authority, "POST", &[], INITIALIZE);
    assert_eq!(status, 200, "{head}");
    session_of(&head)
}
