//! One hung server never blocks the others (issue 25 item 2). `serve` answers `initialize` at
//! once and lists what is up, adding the rest by `notifications/tools/list_changed`, with the
//! official Python SDK as the client over stdio and HTTP; `toolport call` waits only for the
//! servers that can decide who owns the tool. The hung server is a real process that never
//! speaks (`/bin/sleep 1000`), the healthy and the slow ones the binary's own demo-server.

use std::time::Duration;

use serde_json::{Value, json};

use crate::serve::clients::{Via, py};
use crate::support::common::Env;
use crate::support::runtime::{demo, write_config};
use crate::support::serve::ServeHttp;

const DEMO_TOOLS: [&str; 6] = ["echo", "add", "sleep", "fail", "big", "pid"];

/// A stdio server that starts and never answers, under `connect_ms`.
fn hung(connect_ms: u64) -> Value {
    json!({ "type": "stdio", "command": "/bin/sleep", "args": ["1000"],
            "timeouts": { "connectMs": connect_ms } })
}

/// The hung server first (so definition order does not help), then a healthy demo-server, then
/// one that answers `initialize` only after `delay_ms`: after serve's first listings (their wait
/// ends 2 s after serve started under [`LIST_WAIT`], and over HTTP the client starts after
/// serve), well before the
/// hung one's 60 s connect timeout, and within rmcp's 10 s `server/discover` wait (a slower
/// one is connected twice: the last test).
fn hung_env(delay_ms: &str) -> Env {
    let env = Env::new();
    let servers = json!({
        "hung": hung(60_000),
        "demo": demo(&[]),
        "slow": demo(&["--prefix", "s_", "--delay-ms", delay_ms]),
    });
    write_config(&env, servers, &["hung", "demo", "slow"], json!({}));
    env
}

fn names(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect())
        .unwrap_or_default()
}

fn check_hung(seen: &Value) {
    // The issue's bound: before, initialize waited for the hung server's connect timeout (60 s
    // here) and real clients gave up. 1 s is what the issue asks; it includes starting
    // toolport itself over stdio, and anything near the timeout would blow far past it.
    let took = seen["initialize_s"].as_f64().unwrap_or(f64::MAX);
    assert!(took < 1.0, "initialize took {took} s: {seen}");
    let instructions = seen["instructions"].as_str().unwrap_or_default();
    let connecting = "still connecting; its tools are added when it is up (notifications/tools/list_changed)";
    assert!(instructions.contains(&format!("- hung ({connecting})")), "{instructions}");
    assert_eq!(names(&seen["before"]), DEMO_TOOLS, "{seen}");
    assert_eq!(seen["called"], json!({ "is_error": false, "texts": ["through a hung neighbour"] }), "{seen}");
    assert_eq!(seen["notified"], true, "no notifications/tools/list_changed reached the client: {seen}");
    let mut all: Vec<String> = DEMO_TOOLS.iter().map(|t| t.to_string()).collect();
    all.extend(DEMO_TOOLS.iter().map(|t| format!("s_{t}")));
    assert_eq!(names(&seen["after"]), all, "{seen}");
}

/// serve's wait for a first listing in these tests: the default (8 s) would race the slow
/// server's 8 s; the default itself is held to the same guarantee in `first_contact.rs`.
const LIST_WAIT: [&str; 2] = ["--list-wait", "2s"];

const HUNG_ARGS: [&str; 8] = [
    "--tool",
    "echo",
    "--args",
    r#"{"message": "through a hung neighbour"}"#,
    "--expect",
    "s_echo",
    "--wait",
    "40",
];

#[test]
fn serve_answers_at_once_beside_a_hung_server_and_adds_a_slow_one_over_stdio() {
    let env = hung_env("8000");
    check_hung(&py("hung", &Via::StdioWith(&env, &LIST_WAIT), &HUNG_ARGS));
}

#[test]
fn serve_answers_at_once_beside_a_hung_server_and_adds_a_slow_one_over_http() {
    // Over HTTP serve runs before the client comes: the client starts as soon as serve
    // listens, so the slow server still answers after its first listing (and the 2 s wait).
    let env = hung_env("8000");
    let serve = ServeHttp::listening_on(&env, "127.0.0.1:0", &LIST_WAIT, &[]);
    check_hung(&py("hung", &Via::Http(&serve.url), &HUNG_ARGS));
}

/// The owner of `echo` is defined before the hung server: no server after it can take the
/// name (the first-defined keeps a contested one), so the call goes ahead without it. Were it
/// waited for, the call would end only at its 60 s connect timeout, past `within`.
#[test]
fn call_does_not_wait_for_a_hung_server_defined_after_the_owner() {
    let env = Env::new();
    write_config(&env, json!({ "demo": demo(&[]), "hung": hung(60_000) }), &["demo", "hung"], json!({}));
    let (code, stdout, stderr) =
        env.run(&["call", "echo", r#"{"message": "no wait"}"#], Duration::from_secs(30));
    assert_eq!((code, stdout.trim()), (0, "no wait"), "{stderr}");
    assert!(!stderr.contains("hung"), "a server the call did not need is not reported: {stderr}");
}

/// Defined before the owner, the hung server could have claimed `echo` had it come up, so the
/// call waits for it to settle (here its 1.5 s connect timeout) exactly as connecting all would.
#[test]
fn call_waits_for_a_hung_server_defined_before_the_owner() {
    let env = Env::new();
    write_config(&env, json!({ "hung": hung(1_500), "demo": demo(&[]) }), &["hung", "demo"], json!({}));
    let (code, stdout, stderr) =
        env.run(&["call", "echo", r#"{"message": "after the timeout"}"#], Duration::from_secs(30));
    assert_eq!((code, stdout.trim()), (0, "after the timeout"), "{stderr}");
    assert!(stderr.contains("Warning: MCP unavailable: hung ("), "{stderr}");
}

/// A server that takes longer than rmcp's 10 s `server/discover` wait to answer (a first
/// `npx -y` fetching its package) answers the probe while rmcp already waits for `initialize`
/// on the same connection: that late answer used to fail the server (`conflict initialized
/// response id`); now it is connected again without the wait.
#[test]
fn a_server_slower_than_the_discovery_wait_still_connects() {
    let env = Env::new();
    write_config(&env, json!({ "late": demo(&["--delay-ms", "10500"]) }), &["late"], json!({}));
    let (code, stdout, stderr) = env.run(&["mcp", "list"], Duration::from_secs(60));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("- late | type=stdio | state=connected |"), "{stdout}{stderr}");
    assert!(stdout.contains("| tools=6"), "{stdout}");
}
