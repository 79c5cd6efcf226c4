//! What one ACP client can make `toolport acp` hold: a line over the cap is answered with an
//! error and dropped unread (memory stays bounded), requests over the concurrency cap are
//! refused at once, and a session left idle is closed with its servers. Each case checks the
//! agent keeps serving afterwards.

use std::time::Duration;

use serde_json::{Value, json};

use crate::faults::processes::{alive, read_pids};
use crate::support::acp::{Agent, demo_server};
use crate::support::common::Env;
use crate::support::faults::fault_script;
use crate::support::runtime::eventually;

/// `toolport acp`'s line cap (`MAX_LINE_BYTES`).
const LINE_CAP: usize = 16 * 1024 * 1024;

fn error_of(response: &Value) -> (i64, String) {
    let e = &response["error"];
    (e["code"].as_i64().unwrap_or_default(), e["message"].as_str().unwrap_or_default().to_string())
}

/// Peak resident memory of `pid`, in KiB (`VmHWM`).
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmHWM for {pid}"))
}

fn new_session(agent: &mut Agent, id: u64, cwd: &std::path::Path, servers: Value) -> String {
    let new = agent.call(id, "session/new", json!({"cwd": cwd, "mcpServers": servers}));
    let session = new["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{new}")).to_string();
    agent.next(); // available_commands_update
    session
}

#[test]
fn a_line_over_the_cap_is_an_error_read_in_bounded_memory() {
    let env = Env::new();
    let mut agent = Agent::start(&env);
    let init = agent.call(1, "initialize", json!({"protocolVersion": 1}));
    assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
    let before = peak_kib(agent.pid());
    // Four times the cap, as one JSON string: the old reader held all of it (twice).
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"initialize","params":{{"x":"{}"}}}}"#,
        "a".repeat(4 * LINE_CAP)
    );
    agent.send_line(&huge);
    let reply = agent.next();
    assert_eq!(reply["id"], Value::Null, "{reply}");
    assert_eq!(
        error_of(&reply),
        (-32600, format!("Invalid request: a line is longer than {LINE_CAP} bytes; it was dropped unread"))
    );
    let grew_mib = peak_kib(agent.pid()).saturating_sub(before) / 1024;
    assert!(grew_mib < 32, "reading the long line grew the agent by {grew_mib} MiB");
    // The next line is served as usual.
    let again = agent.call(3, "initialize", json!({"protocolVersion": 1}));
    assert_eq!(again["result"]["protocolVersion"], 1, "{again}");
    agent.finish();
}

#[test]
fn requests_over_the_concurrency_cap_are_refused_and_the_agent_recovers() {
    let env = Env::new();
    let mut agent = Agent::start_with(&env, &["--max-requests", "2"]);
    let session = new_session(&mut agent, 1, env.root(), json!([demo_server("d", "k")]));
    let sleep = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "_toolport/tools/call",
               "params": {"sessionId": session, "name": "k_sleep", "arguments": {"ms": 30000}}})
        .to_string()
    };
    let list = json!({"jsonrpc": "2.0", "id": 4, "method": "_toolport/tools/list", "params": {"sessionId": session}});
    agent.send_line(&format!("{}\n{}\n{list}", sleep(2), sleep(3)));
    let (_, refused) = agent.until_response(4);
    assert_eq!(
        error_of(&refused),
        (-32000, "Too many requests: 2 are already running; this one was refused, send it again once one has answered".into())
    );
    agent.send_line(
        &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}).to_string(),
    );
    // The two answers may come in either order: collect both.
    let mut cancelled = std::collections::BTreeMap::new();
    while cancelled.len() < 2 {
        let msg = agent.next();
        if let Some(id @ (2 | 3)) = msg.get("id").and_then(Value::as_u64) {
            cancelled.insert(id, error_of(&msg).0);
        }
    }
    assert_eq!(cancelled.into_iter().collect::<Vec<_>>(), [(2, -32800), (3, -32800)]);
    let listed = agent.call(5, "_toolport/tools/list", json!({"sessionId": session}));
    assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(6), "{listed}");
    agent.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_session_is_closed_with_its_servers_and_a_busy_one_is_kept() {
    let env = Env::new();
    let pid_file = env.home().join("idle.pids");
    let mut agent = Agent::start_with(&env, &["--idle-timeout", "1s"]);
    let lingering = json!({
        "name": "f",
        "command": "python3",
        "args": [fault_script(), "--mode", "spawn-helper", "--pid-file", pid_file, "--linger"],
        "env": [],
    });
    let idle = new_session(&mut agent, 1, env.root(), json!([lingering]));
    let busy = new_session(&mut agent, 2, env.root(), json!([demo_server("d", "k")]));
    // The busy session is in use for longer than the idle timeout.
    agent.request(
        3,
        "_toolport/tools/call",
        json!({"sessionId": busy, "name": "k_sleep", "arguments": {"ms": 4000}}),
    );
    let (server, helper) = read_pids(&pid_file).unwrap_or_else(|| panic!("the fault server wrote no pids"));
    let closed = eventually(Duration::from_secs(30), || !alive(server) && !alive(helper)).await;
    assert!(closed, "the idle session's server {server} or helper {helper} is still running");
    let (_, slept) = agent.until_response(3);
    assert_eq!(slept["result"]["isError"], false, "the busy session was closed under its call: {slept}");
    let gone = agent.call(4, "_toolport/tools/list", json!({"sessionId": idle}));
    assert_eq!(
        error_of(&gone),
        (-32602, format!("Session {idle} was closed after 1 s idle; session/load reopens it"))
    );
    agent.finish();
}
