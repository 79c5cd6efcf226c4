//! The fault suite, what a guest can make the host hold (issue 11): stderr, trap messages, the
//! transport outbox, memories and instances per store, sockets and pooled slots, and files
//! that never end. Each hostile component (`plugins/fixtures/`) runs next to a healthy stdio
//! neighbour that must keep answering.

use std::time::Duration;

use serde_json::{Value, json};
use toolport::plugins::{PluginHost, ToolInfo};
use toolport::store::{Grants, Limits, PluginDef, PluginKind, ServerDef};
use toolport::{Runtime, RuntimeOptions, ServerState};

use crate::support::common::Env;
use crate::support::component::shape_with_memories;
use crate::support::faults::write;
use crate::support::runtime::{call_text, demo, eventually, start};
use crate::support::transport::{Exposed, Framing, built_plugin, write_store};

/// The `plugins` entry for one built guest of `kind`.
fn plugin(kind: &str, stem: &str, extra: Value) -> Value {
    let mut entry = json!({ "kind": kind, "path": built_plugin(stem) });
    if let (Some(e), Some(extra)) = (entry.as_object_mut(), extra.as_object()) {
        e.extend(extra.clone());
    }
    entry
}

fn row(runtime: &Runtime, name: &str) -> toolport::ServerStatus {
    runtime.status().into_iter().find(|r| r.name == name).unwrap_or_else(|| panic!("no row for {name}"))
}

/// The healthy neighbour (`local`, tools prefixed `l_`) is connected and answers.
async fn assert_local_fine(runtime: &Runtime) {
    let local = row(runtime, "local");
    assert_eq!((local.state, local.error.as_deref()), (ServerState::Connected, None), "{local:?}");
    assert!(call_text(runtime, "l_echo", r#"{"message": "fine"}"#).await.contains("fine"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_transport_that_floods_stderr_keeps_working_and_its_crash_is_quoted_from_the_tail() {
    let exposed = Exposed::start(Framing::Tcp, &[]);
    let env = Env::new();
    let servers = json!({
        "chatty": { "type": "hostile", "url": exposed.url() },
        "local": demo(&["--prefix", "l_"]),
    });
    let hostile = plugin("transport", "fixture_transport_hostile", json!({}));
    write_store(&env, servers, json!({ "hostile": hostile }), &["chatty", "local"]);
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    // 100 KiB of stderr before the handshake, and the pump still relays: connected, listed.
    let chatty = row(&runtime, "chatty");
    assert_eq!((chatty.state, chatty.tools), (ServerState::Connected, 6), "{chatty:?}");
    assert_local_fine(&runtime).await;
    // Another 100 KiB, then a panic: the message is the guest's, taken from the kept tail.
    assert!(runtime.call("echo", r#"{"message": "boom"}"#).await.is_err());
    let crashed =
        eventually(Duration::from_secs(10), || row(&runtime, "chatty").state == ServerState::Error).await;
    let error = row(&runtime, "chatty").error.unwrap_or_default();
    assert!(crashed, "{error}");
    assert!(error.starts_with("transport plugin hostile: crashed: panicked at"), "{error}");
    // A Rust guest's panic reads `RUST_BACKTRACE`, so it has asked for its environment.
    assert!(
        error.ends_with(
            "hostile transport panicked on purpose; it has no grants.env (variables it reads look unset)"
        ),
        "{error}"
    );
    assert_local_fine(&runtime).await;
    runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stack_overflow_reads_call_stack_exhausted_not_a_backtrace() {
    let env = Env::new();
    let shape = plugin("tool-shape", "fixture_fault_shape", json!({ "limits": { "callMs": 5000 } }));
    let servers = [("deep", demo(&["--prefix", "d_"])), ("local", demo(&["--prefix", "l_"]))];
    write(&env, &servers, json!({ "fault": shape }), json!({ "toolShape": "fault" }));
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    let deep = row(&runtime, "deep");
    assert_eq!(
        (deep.state, deep.error.as_deref()),
        (ServerState::Error, Some("tool shape fault: crashed: call stack exhausted"))
    );
    assert_local_fine(&runtime).await;
    runtime.shutdown().await;
}

/// The test process's resident memory (the host runs in it), from `/proc/self/status`.
fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0);
    kib * 1024
}

/// Far above what the suite needs (a few hundred MiB with every test running at once), far
/// below what an unbounded outbox reaches in the seconds before the queue deadline (GiBs).
const RSS_CEILING: u64 = 2 << 30;

#[tokio::test(flavor = "multi_thread")]
async fn a_transport_that_floods_the_host_fails_with_its_queue_limit_and_memory_stays_bounded() {
    let exposed = Exposed::start(Framing::Tcp, &[]);
    let env = Env::new();
    let servers = json!({
        "flood": { "type": "hostile", "url": exposed.url() },
        "local": demo(&["--prefix", "l_"]),
    });
    let hostile = plugin("transport", "fixture_transport_hostile", json!({}));
    write_store(&env, servers, json!({ "hostile": hostile }), &["flood", "local"]);
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    // Its handshake and list went through before it started flooding.
    assert_eq!(row(&runtime, "flood").tools, 6);
    let mut peak = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    while row(&runtime, "flood").state != ServerState::Error && std::time::Instant::now() < deadline {
        peak = peak.max(rss_bytes());
        assert!(peak < RSS_CEILING, "host RSS reached {} MiB during the flood", peak >> 20);
        // The neighbour keeps answering, tools/list included, while the flood goes on.
        runtime.retry("local").await.unwrap_or_else(|e| panic!("retry local: {e:#}"));
        assert_local_fine(&runtime).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let flood = row(&runtime, "flood");
    eprintln!("peak RSS during the flood: {} MiB", peak >> 20);
    assert_eq!(
        (flood.state, flood.error.as_deref()),
        (ServerState::Error, Some("transport plugin hostile: exceeded its queue limit (16 MiB)")),
        "peak RSS {} MiB",
        peak >> 20
    );
    assert_local_fine(&runtime).await;
    runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn memories_count_together_against_the_memory_limit() {
    // Three memories of 40 MiB: each under the 64 MiB limit, together far over it.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let path = dir.path().join("memories.wasm");
    std::fs::write(&path, shape_with_memories(3, 640)).unwrap_or_else(|e| panic!("write: {e}"));
    let limits = Limits { memory_mb: 64, ..Limits::default() };
    let def = PluginDef {
        name: "memories".into(),
        kind: PluginKind::ToolShape,
        path,
        grants: Grants::default(),
        limits,
        sha256: None,
    };
    let host = PluginHost::new(None, &[def]).unwrap_or_else(|e| panic!("{e:#}"));
    let server = ServerDef { name: "s".into(), command: Some("demo".into()), ..ServerDef::default() };
    let tool = ToolInfo {
        name: "t".into(),
        title: None,
        description: None,
        input_schema: json!({ "type": "object" }),
        output_schema: None,
        annotations: None,
    };
    let shape = host.tool_shape("memories").unwrap_or_else(|e| panic!("load: {e}"));
    let err = shape.convert(&server, std::slice::from_ref(&tool)).await.err().map(|e| e.to_string());
    assert_eq!(err.as_deref(), Some("tool shape memories: exceeded its memory limit (64 MiB)"));
    // The built-in shape, in the same host, is untouched.
    let openai = host.tool_shape("openai").unwrap_or_else(|e| panic!("{e}"));
    let shaped = openai.convert(&server, &[tool]).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(shaped.len(), 1);
}
