//! `serve --http --rate-limit` and `--tool-rate-limit` through a real `serve --http` in front of
//! server-everything: the official Python SDK's default `mcp.Client` (2026-07-28) makes the
//! calls (`tests/team/limits_client.py`), from 127.0.0.1 or 127.0.0.2 (two callers without
//! tokens: serve tells them apart by address), and raw HTTP reads what the SDK hides (the
//! status and `Retry-After`). Rates are per hour where a test needs no refill, so nothing
//! depends on how fast the calls go; the one test that waits waits what `Retry-After` says.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::serve::clients::python;
use crate::support::common::Env;
use crate::support::operator::{http_get, parse_prometheus, sample};
use crate::support::peers::everything_stdio;
use crate::support::runtime::write_config;
use crate::support::serve::ServeHttp;

/// What `limits_client.py` may take, server-everything starting included.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);

fn everything_env() -> Env {
    let env = Env::new();
    write_config(&env, json!({ "everything": everything_stdio() }), &["everything"], json!({}));
    env
}

/// `limits_client.py --url URL --from SOURCE [extra…]`: the JSON it printed.
fn client(serve: &ServeHttp, source: &str, extra: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("team/limits_client.py");
    let out = Command::new(python())
        .arg(&script)
        .args(["--url", &serve.url, "--from", source, "--timeout", &CLIENT_TIMEOUT.as_secs().to_string()])
        .args(extra)
        .output()
        .unwrap_or_else(|e| panic!("cannot run limits_client.py: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!("limits_client.py printed no JSON ({e}):\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr))
    })
}

/// The calls the client made, as `(tool, Ok(texts) | Err(error))`.
fn calls(seen: &Value) -> Vec<(String, Result<Vec<String>, String>)> {
    assert!(seen.get("client_error").is_none(), "the client failed: {seen}");
    let Some(calls) = seen["calls"].as_array() else { panic!("no calls: {seen}") };
    calls
        .iter()
        .map(|c| {
            let tool = c["tool"].as_str().unwrap_or_default().to_string();
            let outcome = match c["error"].as_str() {
                Some(error) => Err(error.to_string()),
                None => {
                    assert_eq!(c["is_error"], false, "{tool} answered isError: {c}");
                    let texts = c["texts"].as_array().cloned().unwrap_or_default();
                    Ok(texts.iter().filter_map(|t| t.as_str().map(String::from)).collect())
                }
            };
            (tool, outcome)
        })
        .collect()
}

/// A `tools/call` of `tool` POSTed by hand from 127.0.0.1 on a fresh connection: the status,
/// the response head (lowercase) and the body.
fn raw_call(serve: &ServeHttp, tool: &str) -> (u16, String, String) {
    let authority = serve.authority();
    let body = json!({
        "jsonrpc": "2.0", "id": 41, "method": "tools/call",
        "params": {"name": tool, "arguments": {"message": "raw"}},
    })
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: \
         application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(&authority).unwrap_or_else(|e| panic!("connect {authority}: {e}"));
    let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
    stream.write_all(request.as_bytes()).unwrap_or_else(|e| panic!("send: {e}"));
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let response = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_string())
}

/// The `Retry-After` seconds of a response head.
fn retry_after(head: &str) -> u64 {
    let value = head.lines().find_map(|l| l.strip_prefix("retry-after:")).map(str::trim);
    value.and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("no whole-second Retry-After in:\n{head}"))
}

/// The line a refusal says (the SDK's error text is the JSON-RPC error's message): the limit,
/// then when to retry.
fn assert_refused(error: &str, said: &str, most: u64) {
    let Some(rest) = error.strip_prefix(said) else { panic!("expected `{said}…`, got: {error}") };
    let seconds = rest.strip_prefix("; retry after ").and_then(|r| r.strip_suffix(" s"));
    let seconds: u64 = seconds.and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no wait in: {error}"));
    assert!((1..=most).contains(&seconds), "retry after {seconds} s, for a limit refilled every {most} s");
}

const ECHO: &str = r#"echo={"message":"hi"}"#;
const SUM: &str = r#"get-sum={"a":1,"b":2}"#;

#[test]
fn a_tool_limit_refuses_that_callers_next_call_of_that_tool_only() {
    let env = everything_env();
    let serve = ServeHttp::start_with(&env, &["--tool-rate-limit", "3/h", "--metrics"], &[]);
    let more = || serve.stderr.lock().map(|l| l.join("\n")).unwrap_or_default();

    let seen = calls(&client(
        &serve,
        "127.0.0.1",
        &["--call", ECHO, "--call", ECHO, "--call", ECHO, "--call", ECHO, "--call", SUM],
    ));
    assert_eq!(seen.len(), 5, "{seen:?}\n{}", more());
    for (tool, outcome) in &seen[..3] {
        assert!(outcome.as_ref().is_ok_and(|t| t.iter().any(|t| t.contains("hi"))), "{tool}: {outcome:?}");
    }
    let Err(error) = &seen[3].1 else { panic!("the 4th echo in an hour was let in: {seen:?}") };
    // 3/h: one call back every 1,200 s.
    assert_refused(
        error,
        "too many calls of tool `echo`: --tool-rate-limit allows 3/h per caller per tool",
        1200,
    );
    assert!(
        seen[4].1.as_ref().is_ok_and(|t| t.iter().any(|t| t.contains('3'))),
        "another tool: {:?}",
        seen[4]
    );

    // Another caller (another address) has its own three.
    let other = calls(&client(&serve, "127.0.0.2", &["--call", ECHO]));
    assert!(other[0].1.is_ok(), "another caller was refused: {other:?}");

    // What the SDK does not show: the status and Retry-After, and the JSON-RPC error it reads.
    let (status, head, body) = raw_call(&serve, "echo");
    assert_eq!(status, 429, "{head}{body}");
    let wait = retry_after(&head);
    assert!((1..=1200).contains(&wait), "Retry-After: {wait}");
    assert!(head.contains("content-type: application/json"), "{head}");
    let error: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(error["id"], 41, "{error}");
    assert_eq!(error["error"]["data"]["retryAfter"], wait, "{error}");
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert_refused(
        message,
        "too many calls of tool `echo`: --tool-rate-limit allows 3/h per caller per tool",
        1200,
    );
    assert!(!body.trim_end().contains('\n'), "one line: {body}");

    // Two refusals (the SDK's and the raw one), counted by limit.
    let got = http_get(&serve.authority(), "/metrics", &[]);
    let samples = parse_prometheus(&got.body);
    let refused = sample(&samples, "toolport_serve_rate_limited_total", &[("limit", "tool")]);
    assert_eq!(refused, Some(2.0), "{}", got.body);
}

/// Issue 44 item 2: the per-tool limit counts the tool a call runs, after routing. On the
/// lazy surface `call_tool` of `echo` spends `echo`'s budget (not one `call_tool` budget shared
/// by every tool), so direct calls and `call_tool`s of `echo` together get three, and
/// `get-sum`'s three are untouched; a padded name is no tool (issue 44 item 1) and spends nothing.
#[test]
fn a_tool_limit_counts_the_tool_a_call_runs_however_it_is_reached() {
    let env = everything_env();
    let serve = ServeHttp::start_with(&env, &["--tool-rate-limit", "3/h", "--lazy"], &[]);
    let via =
        |tool: &str, arguments: Value| format!("call_tool={}", json!({"name": tool, "arguments": arguments}));
    let echo_via = via("echo", json!({"message": "hi"}));
    let sum_via = via("get-sum", json!({"a": 1, "b": 2}));
    let padded = r#"echo ={"message":"hi"}"#;
    let order = [ECHO, &echo_via, ECHO, &echo_via, ECHO, padded, &sum_via, &sum_via, &sum_via];
    let args: Vec<&str> = order.iter().flat_map(|call| ["--call", call]).collect();
    let seen = client(&serve, "127.0.0.1", &args);
    assert!(seen.get("client_error").is_none(), "the client failed: {seen}");
    let calls = seen["calls"].as_array().cloned().unwrap_or_default();
    assert_eq!(calls.len(), order.len(), "{seen}");
    let texts = |i: usize| -> Vec<String> {
        assert_eq!(calls[i]["is_error"], false, "call {i}: {seen}");
        let texts = calls[i]["texts"].as_array().cloned().unwrap_or_default();
        texts.iter().filter_map(|t| t.as_str().map(String::from)).collect()
    };
    for i in 0..3 {
        assert!(texts(i).iter().any(|t| t.contains("hi")), "call {i}: {seen}");
    }
    // The fourth and fifth calls of `echo`, through `call_tool` or not, are refused.
    for i in [3, 4] {
        let error = calls[i]["error"].as_str().unwrap_or_else(|| panic!("call {i} let in: {seen}"));
        assert_refused(
            error,
            "too many calls of tool `echo`: --tool-rate-limit allows 3/h per caller per tool",
            1200,
        );
    }
    // A padded name runs nothing and is not refused for `echo`'s budget: it is no tool.
    assert_eq!(calls[5]["is_error"], true, "{seen}");
    assert_eq!(calls[5]["texts"], json!(["Unknown MCP tool: echo "]), "{seen}");
    // `get-sum` has its own three, whatever `call_tool` was used for before.
    for i in 6..9 {
        assert!(texts(i).iter().any(|t| t.contains('3')), "call {i}: {seen}");
    }
}

#[test]
fn a_caller_limit_refuses_that_caller_only() {
    let env = everything_env();
    let serve = ServeHttp::start_with(&env, &["--rate-limit", "5/h"], &[]);
    let more = || serve.stderr.lock().map(|l| l.join("\n")).unwrap_or_default();

    // Every request counts (the SDK's own first ones too): call until refused.
    let calls_made: Vec<&str> = std::iter::repeat_n(["--call", ECHO], 8).flatten().collect();
    let mut extra = calls_made.clone();
    extra.push("--until-refused");
    let seen = client(&serve, "127.0.0.1", &extra);
    let refusal = seen["calls"]
        .as_array()
        .and_then(|c| c.last())
        .and_then(|c| c["error"].as_str())
        .or_else(|| seen["client_error"].as_str())
        .unwrap_or_else(|| {
            panic!("8 calls and the client's own requests all let in at 5/h: {seen}\n{}", more())
        })
        .to_string();
    let ok = seen["calls"].as_array().map_or(0, |c| c.iter().filter(|c| c.get("error").is_none()).count());
    assert!(ok < 5, "{ok} calls let in at 5/h: {seen}");
    assert!(
        refusal.contains("too many requests: --rate-limit allows 5/h per caller; retry after "),
        "{refusal}"
    );

    let (status, head, body) = raw_call(&serve, "echo");
    assert_eq!(status, 429, "{head}{body}");
    assert!((1..=720).contains(&retry_after(&head)), "{head}");
    let error: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    let message = error["error"]["message"].as_str().unwrap_or_default();
    // 5/h: one request back every 720 s.
    assert_refused(message, "too many requests: --rate-limit allows 5/h per caller", 720);

    let other = calls(&client(&serve, "127.0.0.2", &["--call", ECHO]));
    assert!(other[0].1.is_ok(), "another caller was refused: {other:?}");
}

#[test]
fn a_refused_caller_is_let_in_again_after_retry_after() {
    let env = everything_env();
    let serve = ServeHttp::start_with(&env, &["--tool-rate-limit", "1/s"], &[]);
    // At 1/s, two calls in a row are refused unless a second passed between them: call until one is.
    let mut refused = None;
    for _ in 0..50 {
        let (status, head, body) = raw_call(&serve, "echo");
        if status == 429 {
            refused = Some((head, body));
            break;
        }
    }
    let Some((head, body)) = refused else { panic!("50 calls of echo at 1/s and none refused") };
    let wait = retry_after(&head);
    assert_eq!(wait, 1, "{head}{body}");
    std::thread::sleep(Duration::from_secs(wait));
    let seen = calls(&client(&serve, "127.0.0.1", &["--call", ECHO]));
    assert!(seen[0].1.is_ok(), "refused after waiting Retry-After: {seen:?}");
}

#[test]
fn a_bad_rate_exits_2_naming_it() {
    let env = everything_env();
    for (flag, rate) in [("--rate-limit", "100/fortnight"), ("--tool-rate-limit", "0/min")] {
        let (code, _, stderr) =
            env.run(&["serve", "--http", "127.0.0.1:0", flag, rate], Duration::from_secs(30));
        assert_eq!(code, 2, "{stderr}");
        let said = format!(
            "error: invalid value '{rate}' for '{flag} <RATE>': invalid rate `{rate}`: expected COUNT/UNIT with \
             COUNT a whole number above 0 and UNIT s, min or h (e.g. 100/min, 10/s, 1000/h)"
        );
        assert!(stderr.contains(&said), "expected:\n{said}\ngot:\n{stderr}");
    }
}
