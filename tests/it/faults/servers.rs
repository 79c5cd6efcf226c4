//! The fault suite, servers: each misbehaving MCP server (tests/faults/fault_server.py) runs
//! next to a healthy `demo-server`. Every case checks the bad server's state and exact message,
//! that the neighbour stays `connected` and answers, and that the global store and the
//! workspace file are byte-for-byte unchanged.

use std::io::Write;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolport::{CallError, ServerState};

use crate::support::common::Env;
use crate::support::faults::{assert_failed, assert_neighbour_fine, fault, row, start, write_pair};
use crate::support::runtime::{call_text, eventually, names};

/// A fault server with short timeouts, so hangs fail in a second rather than thirty.
fn with_timeouts(mut def: serde_json::Value, timeouts: serde_json::Value) -> serde_json::Value {
    def["timeouts"] = timeouts;
    def
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_exits_at_once_is_an_error_with_its_stderr() {
    let env = Env::new();
    let before = write_pair(&env, fault("exit-now", &[]));
    let runtime = start(&env).await;
    assert_failed(&runtime, "bad", "process exited with status 7; stderr: fault-server: exiting at once");
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_exits_mid_call_fails_the_call_with_the_reason() {
    let env = Env::new();
    let before = write_pair(&env, fault("exit-mid-call", &[]));
    let runtime = start(&env).await;
    assert_eq!(row(&runtime, "bad").state, ServerState::Connected);
    let reason = "process exited with status 5; stderr: fault-server: exiting in the middle of a call";
    match runtime.call("poke", "").await {
        Err(e @ CallError::NotConnected { .. }) => {
            assert_eq!(e.to_string(), format!("MCP server bad is not connected: {reason}"));
        }
        other => panic!("expected NotConnected, got {other:?}"),
    }
    assert!(eventually(Duration::from_secs(5), || row(&runtime, "bad").state == ServerState::Error).await);
    assert_failed(&runtime, "bad", reason);
    // The registry is rebuilt just after the state changes: wait for it rather than race it.
    let left = eventually(Duration::from_secs(5), || names(&runtime.tools()).len() == 6).await;
    assert!(left, "the dead server's tool is still on the surface: {:?}", names(&runtime.tools()));
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hang_at_initialize_hits_connect_ms() {
    let env = Env::new();
    let before = write_pair(&env, with_timeouts(fault("hang-init", &[]), json!({ "connectMs": 1000 })));
    let started = Instant::now();
    let runtime = start(&env).await;
    assert!(started.elapsed() < Duration::from_secs(20), "start took {:?}", started.elapsed());
    assert_failed(&runtime, "bad", "connect timed out after 1000 ms");
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hang_in_tools_list_hits_list_ms() {
    let env = Env::new();
    let before = write_pair(&env, with_timeouts(fault("hang-list", &[]), json!({ "listMs": 1000 })));
    let runtime = start(&env).await;
    assert_failed(&runtime, "bad", "tools/list timed out after 1000 ms");
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

/// A line that is not JSON-RPC is skipped by the transport: the real answers that follow it
/// still arrive, so the server works.
#[tokio::test(flavor = "multi_thread")]
async fn garbage_lines_on_stdout_are_skipped_and_the_server_works() {
    let env = Env::new();
    let before = write_pair(&env, with_timeouts(fault("garbage", &[]), json!({ "connectMs": 15000 })));
    let runtime = start(&env).await;
    let r = row(&runtime, "bad");
    assert_eq!((r.state, r.tools, r.error), (ServerState::Connected, 1, None));
    assert_eq!(call_text(&runtime, "poke", "").await, "poked");
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

#[tokio::test(flavor = "multi_thread")]
async fn half_a_json_line_then_exit_is_an_error() {
    let env = Env::new();
    let before = write_pair(&env, with_timeouts(fault("half-line", &[]), json!({ "connectMs": 15000 })));
    let runtime = start(&env).await;
    assert_failed(&runtime, "bad", "process exited with status 0");
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

#[tokio::test(flavor = "multi_thread")]
async fn ten_thousand_tools_work() {
    let env = Env::new();
    let before = write_pair(&env, fault("many-tools", &["--count", "10000"]));
    let runtime = start(&env).await;
    let r = row(&runtime, "bad");
    assert_eq!((r.state, r.tools), (ServerState::Connected, 10_000));
    let surface = names(&runtime.tools());
    assert_eq!(surface.len(), 10_006);
    assert_eq!((surface[0].as_str(), surface[9_999].as_str()), ("t00000", "t09999"));
    assert_eq!(call_text(&runtime, "t09999", "").await, "poked");
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

/// Names with control characters are legal JSON strings and MCP does not forbid them: without
/// a name policy they reach the surface byte for byte and calls route by the exact name.
/// Issue 11 item 9: a name holding a control character (BEL, LF, NUL) would forge lines and
/// escape sequences in every view; the server fails with the first bad name, escaped.
#[tokio::test(flavor = "multi_thread")]
async fn tool_names_with_control_characters_fail_the_server() {
    let env = Env::new();
    let before = write_pair(&env, fault("control-chars", &[]));
    let runtime = start(&env).await;
    assert_failed(
        &runtime,
        "bad",
        "MCP server bad returned an invalid tool name: bell\\u{7}tool (control or format character U+0007)",
    );
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

/// Issue 11 item 9: over `MAX_TOOL_NAME_CHARS` (128, the MCP specification's limit) a name is
/// invalid; at the limit it works (`runtime::names_checked::a_128_character_tool_name_works`).
#[tokio::test(flavor = "multi_thread")]
async fn a_300_character_tool_name_fails_the_server() {
    let env = Env::new();
    let before = write_pair(&env, fault("long-name", &[]));
    let runtime = start(&env).await;
    let shown = format!("{}…", "n".repeat(64));
    assert_failed(
        &runtime,
        "bad",
        &format!(
            "MCP server bad returned an invalid tool name: {shown} (300 characters, over the limit of 128)"
        ),
    );
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

/// The duplicate check of the host's tool-name rules: names from one server compare case-insensitively.
#[tokio::test(flavor = "multi_thread")]
async fn names_differing_only_in_case_are_a_duplicate() {
    let env = Env::new();
    let before = write_pair(&env, fault("case-dup", &[]));
    let runtime = start(&env).await;
    assert_failed(&runtime, "bad", "MCP server bad returned duplicate tool: search");
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

/// A 50 MB result is legal: it arrives whole (the stdio transport accepts messages up to
/// `MAX_STDIO_MESSAGE_BYTES`, 64 MiB), and the server carries on.
#[tokio::test(flavor = "multi_thread")]
async fn a_50_mb_result_arrives_whole() {
    let env = Env::new();
    let before = write_pair(&env, fault("big-result", &[]));
    let runtime = start(&env).await;
    let big = call_text(&runtime, "blob", r#"{"mb": 50}"#).await;
    assert_eq!(big.len(), 50 << 20);
    assert_eq!(row(&runtime, "bad").state, ServerState::Connected);
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

/// Past the cap a message is dropped unread (memory stays bounded); the call ends at its
/// `callMs` and the server itself is not harmed: the next, smaller result arrives.
#[tokio::test(flavor = "multi_thread")]
async fn a_result_over_the_cap_ends_at_call_ms_and_the_server_carries_on() {
    let env = Env::new();
    let before = write_pair(&env, with_timeouts(fault("big-result", &[]), json!({ "callMs": 3000 })));
    let runtime = start(&env).await;
    let huge = runtime.call("blob", r#"{"mb": 70}"#).await;
    assert_eq!(
        huge.err().map(|e| e.to_string()).as_deref(),
        Some("MCP tool blob on server bad timed out after 3000 ms")
    );
    assert_eq!(row(&runtime, "bad").state, ServerState::Connected);
    let small = call_text(&runtime, "blob", r#"{"mb": 8}"#).await;
    assert_eq!(small.len(), 8 << 20);
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

/// Peak resident memory of a live process (Linux), in KiB.
fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The session's stdout lines, read until one satisfies `done`; `None` if none arrives within
/// a minute (a hung session must fail the test, not hang it).
fn read_until(lines: &mpsc::Receiver<String>, done: impl Fn(&str) -> bool) -> Option<Vec<String>> {
    let mut seen = Vec::new();
    loop {
        let line = lines.recv_timeout(Duration::from_secs(60)).ok()?;
        let stop = done(&line);
        seen.push(line);
        if stop {
            return Some(seen);
        }
    }
}

/// Runs a live `toolport session` on `bad` next to the healthy neighbour, calls `tool`, shows
/// `/mcp`, and returns those answers and the process's peak RSS in KiB (`/proc/<pid>/status`)
/// taken while it is still running.
fn session_peak(bad: serde_json::Value, tool: &str) -> (Vec<String>, u64) {
    let env = Env::new();
    let before = write_pair(&env, bad);
    let crate::support::common::Piped { mut child, mut stdin, lines, .. } =
        env.spawn_piped(true, &["session"]);
    writeln!(stdin, "/call {tool}\n/mcp").unwrap_or_else(|e| panic!("write: {e}"));
    let Some(answer) = read_until(&lines, |l| l.starts_with("- ok |")) else {
        let _ = child.kill();
        panic!("the session did not show /mcp within a minute");
    };
    let hwm = vm_hwm_kib(child.id()).unwrap_or_else(|| panic!("no VmHWM for the session"));
    writeln!(stdin, "/quit").unwrap_or_else(|e| panic!("write: {e}"));
    drop(stdin);
    let status = child.wait().unwrap_or_else(|e| panic!("wait: {e}"));
    assert!(status.success(), "{status:?}");
    before.assert_unchanged(&env);
    (answer, hwm)
}

/// 2 × 96 MiB of stderr (long lines and short ones, at connect and during a call) leave the
/// server working and the host's peak memory where it is without the flood: only the last
/// lines are kept. The baseline is the same session on a well-behaved fault server.
#[test]
fn a_stderr_flood_keeps_memory_bounded_and_the_server_works() {
    let (_, quiet) = session_peak(fault("well", &[]), "poke");
    let flood = with_timeouts(fault("flood-stderr", &["--flood-mb", "96"]), json!({ "connectMs": 60000 }));
    let (answer, loud) = session_peak(flood, "poke");
    assert_eq!(answer.first().map(String::as_str), Some("poked"), "{answer:?}");
    assert!(answer.iter().any(|l| l.starts_with("- bad | type=stdio | state=connected |")), "{answer:?}");
    assert!(answer.iter().any(|l| l.starts_with("- ok | type=stdio | state=connected |")), "{answer:?}");
    eprintln!("stderr flood: toolport peak RSS {loud} KiB (without the flood: {quiet} KiB)");
    // 192 MiB went through the pipe; the host may not grow by more than a small fraction.
    assert!(loud < quiet + 16 * 1024, "peak RSS {loud} KiB with the flood, {quiet} KiB without");
}
