//! A call while it runs (issue 12, item 6): the server's progress reaches the caller (and a
//! progress bar on a terminal), a call given up on — by its timeout, by Ctrl-C, by an ACP
//! `session/cancel` — is cancelled at the server (`notifications/cancelled`, seen by
//! `demo-server --call-log`), and a server's log messages go to toolport's log under its name.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use toolport::{CallError, RuntimeOptions};

use crate::support::acp::Agent;
use crate::support::common::{Env, toolport_path};
use crate::support::peers::everything_stdio;
use crate::support::runtime::{demo, start, write_config};

/// How long a test waits for the server to write what it saw (a hang guard, not a timing check).
const WAIT: Duration = Duration::from_secs(30);

/// Waits until `log` holds `line`; panics with what it holds after [`WAIT`].
async fn wait_for_line(log: &Path, line: &str) {
    let seen = tokio::time::timeout(WAIT, async {
        loop {
            if std::fs::read_to_string(log).is_ok_and(|text| text.lines().any(|l| l == line)) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    })
    .await;
    assert!(seen.is_ok(), "{} never got {line:?}: {:?}", log.display(), std::fs::read_to_string(log));
}

/// A demo-server (tools prefixed `d_`) that records its sleeps in `<root>/calls.log`.
fn recording(env: &Env, extra: serde_json::Value) -> PathBuf {
    let log = env.root().join("calls.log");
    let mut def = demo(&["--prefix", "d_", "--call-log", &log.to_string_lossy()]);
    if let (Some(def), Some(extra)) = (def.as_object_mut(), extra.as_object()) {
        def.extend(extra.clone());
    }
    write_config(env, json!({ "d": def }), &["d"], json!({}));
    log
}

#[tokio::test(flavor = "multi_thread")]
async fn a_timed_out_call_is_cancelled_at_the_server() {
    let env = Env::new();
    let log = recording(&env, json!({ "timeouts": { "callMs": 700 } }));
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    let outcome = runtime.call("d_sleep", r#"{"ms": 20000}"#).await;
    assert_eq!(
        outcome.err(),
        Some(CallError::Timeout { tool: "d_sleep".into(), server: "d".into(), ms: 700 }),
    );
    wait_for_line(&log, "cancelled sleep 20000").await;
    // The server is free again and still answers.
    let echoed = runtime.call("d_echo", r#"{"message": "after"}"#).await.map(|o| o.render_text());
    assert_eq!(echoed.ok().as_deref(), Some("after"));
    runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_calls_progress_reaches_its_caller_in_order() {
    let env = Env::new();
    recording(&env, json!({}));
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    let (reports, mut received) = tokio::sync::mpsc::unbounded_channel();
    let outcome = runtime.call_with_progress("d_sleep", r#"{"ms": 500}"#, reports).await;
    assert_eq!(outcome.map(|o| o.render_text()).ok().as_deref(), Some("slept 500 ms"));
    let mut seen = Vec::new();
    while let Ok(report) = received.try_recv() {
        seen.push((report.progress, report.total, report.message));
    }
    let expected: Vec<_> = (1..=10).map(|i| (f64::from(i), Some(10.0), Some(format!("{i}/10")))).collect();
    assert_eq!(seen, expected);
    // Another call made meanwhile without a listener gets nothing routed to this one.
    let plain = runtime.call("d_sleep", r#"{"ms": 100}"#).await.map(|o| o.render_text());
    assert_eq!(plain.ok().as_deref(), Some("slept 100 ms"));
    assert!(received.try_recv().is_err());
    runtime.shutdown().await;
}

/// A server that reports and answers back to back (no wait between the last report and the
/// answer) still has every report delivered before its call returns: rmcp handles each
/// notification in a task of its own, so without reading them in order the last report of
/// some calls arrived after the answer and was dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn every_report_arrives_before_its_calls_answer() {
    let env = Env::new();
    recording(&env, json!({}));
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    for round in 0..40 {
        let (reports, mut received) = tokio::sync::mpsc::unbounded_channel();
        let outcome = runtime.call_with_progress("d_sleep", r#"{"ms": 0}"#, reports).await;
        assert_eq!(outcome.map(|o| o.render_text()).ok().as_deref(), Some("slept 0 ms"));
        let mut last = None;
        while let Ok(report) = received.try_recv() {
            last = Some(report.progress);
        }
        assert_eq!(last, Some(10.0), "call {round}: the last report came after the answer");
    }
    runtime.shutdown().await;
}

/// `toolport …` under a pseudo-terminal (util-linux `script`), its output as the terminal got it.
fn on_a_terminal(env: &Env, args: &str) -> String {
    let command = format!(
        "{} --home {} --workspace {} {args}",
        toolport_path().display(),
        env.home().display(),
        env.root().display()
    );
    let output = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env_remove("RUST_LOG")
        .output()
        .unwrap_or_else(|e| panic!("script: {e}"));
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn call_on_a_terminal_draws_the_servers_progress_and_clears_it() {
    let env = Env::new();
    write_config(&env, json!({ "everything": everything_stdio() }), &["everything"], json!({}));
    let shown = on_a_terminal(&env, r#"call trigger-long-running-operation '{"duration": 2, "steps": 4}'"#);
    // server-everything reports each step of four; the bar shows the count as it goes.
    assert!(["1/4", "2/4", "3/4"].iter().any(|step| shown.contains(step)), "{shown:?}");
    assert!(shown.contains("Long running operation completed"), "{shown:?}");
    // Off a terminal, the same call prints only the result.
    let plain =
        env.cmd(["call", "trigger-long-running-operation", r#"{"duration": 1, "steps": 2}"#]).output();
    let plain = plain.unwrap_or_else(|e| panic!("call: {e}"));
    let (stdout, stderr) = (String::from_utf8_lossy(&plain.stdout), String::from_utf8_lossy(&plain.stderr));
    assert!(
        stdout.contains("Long running operation completed") && !stderr.contains("/2"),
        "{stdout}{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_during_call_cancels_it_at_the_server() {
    let env = Env::new();
    let log = recording(&env, json!({}));
    let mut child = tokio::process::Command::new(toolport_path())
        .arg("--home")
        .arg(env.home())
        .arg("--workspace")
        .arg(env.root())
        .args(["call", "d_sleep", r#"{"ms": 30000}"#])
        .env_remove("RUST_LOG")
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    wait_for_line(&log, "started sleep 30000").await;
    let pid = child.id().unwrap_or_else(|| panic!("no pid"));
    let sent = std::process::Command::new("kill").args(["-INT", &pid.to_string()]).status();
    assert!(sent.is_ok_and(|s| s.success()));
    let status = tokio::time::timeout(WAIT, child.wait()).await;
    let Ok(Ok(status)) = status else { panic!("toolport call did not exit after SIGINT: {status:?}") };
    assert_eq!(status.code(), Some(130));
    wait_for_line(&log, "cancelled sleep 30000").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_acp_session_cancel_reaches_the_server() {
    let env = Env::new();
    let log = env.root().join("calls.log");
    let mut agent = Agent::start(&env);
    let server = json!({
        "name": "d",
        "command": toolport_path(),
        "args": ["demo-server", "--prefix", "k_", "--call-log", log],
        "env": [],
    });
    let new = agent.call(1, "session/new", json!({"cwd": env.root(), "mcpServers": [server]}));
    let session = new["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{new}")).to_string();
    let prompt = json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": r#"/call k_sleep {"ms": 30000}"#}]}});
    agent.send_line(&prompt.to_string());
    wait_for_line(&log, "started sleep 30000").await;
    agent.send_line(
        &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}).to_string(),
    );
    let (_, response) = agent.until_response(2);
    assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
    wait_for_line(&log, "cancelled sleep 30000").await;
    agent.finish();
}

#[test]
fn a_servers_log_messages_reach_the_log_under_its_name() {
    let env = Env::new();
    write_config(&env, json!({ "everything": everything_stdio() }), &["everything"], json!({}));
    // server-everything sends one random-levelled message at once when logging is switched on.
    let output = env.cmd(["-vv", "call", "toggle-simulated-logging"]).output();
    let output = output.unwrap_or_else(|e| panic!("call: {e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr.lines().find(|l| l.contains("-level message") || l.contains("level-message"));
    let Some(line) = line else { panic!("no server log line in:\n{stderr}") };
    assert!(line.contains("server=\"everything\"") || line.contains("server=everything"), "{line}");
    // Never on stdout, which is the result's.
    assert!(!String::from_utf8_lossy(&output.stdout).contains("-level message"));
}
