//! The runtime as an embedding host sees it (the library API), against real `demo-server`
//! processes: the five states, timeouts, crashes, `list_changed`, retry and reconcile.

use std::time::{Duration, Instant};

use serde_json::json;
use toolport::{CallError, RuntimeOptions, ServerState, load_resolved};

use crate::support::common::Env;
use crate::support::runtime::{
    DEMO_TOOLS, call_text, clash, demo, eventually, names, paths, reserved_one, start, write_config,
};

#[tokio::test(flavor = "multi_thread")]
async fn all_five_states_in_one_workspace() {
    let env = Env::new();
    write_config(
        &env,
        json!({
            "one": demo(&[]),
            "two": demo(&["--prefix", "two_"]),
            "clash": demo(&[]),
            "held": demo(&[]),
            "spare": demo(&[]),
        }),
        &["one", "two", "clash", "held", "ghost"],
        json!({}),
    );
    let runtime = start(&env, &["held"], RuntimeOptions::default()).await;
    let rows: Vec<(String, ServerState, usize, Option<String>)> =
        runtime.status().into_iter().map(|r| (r.name, r.state, r.tools, r.error)).collect();
    assert_eq!(
        rows,
        vec![
            ("one".into(), ServerState::Connected, 6, None),
            ("two".into(), ServerState::Connected, 6, None),
            ("clash".into(), ServerState::Error, 0, Some(clash("clash", "echo", "one", &DEMO_TOOLS, true))),
            ("held".into(), ServerState::Paused, 0, None),
            ("spare".into(), ServerState::Disabled, 0, None),
            (
                "ghost".into(),
                ServerState::Missing,
                0,
                Some("workspace references undefined MCP server".into())
            ),
        ]
    );
    assert_eq!(
        runtime.warnings(),
        [
            format!("Warning: MCP unavailable: clash ({})", clash("clash", "echo", "one", &DEMO_TOOLS, true)),
            "Warning: MCP unavailable: ghost (workspace references undefined MCP server)".to_string(),
        ]
    );
    assert_eq!(runtime.tools().len(), 12);
    runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hang_at_initialize_hits_the_connect_timeout_while_the_others_connect() {
    let env = Env::new();
    let mut hang = demo(&["--delay-ms", "60000"]);
    hang["timeouts"] = json!({ "connectMs": 2500 });
    let mut servers = serde_json::Map::new();
    servers.insert("hang".into(), hang);
    // Five slow servers: one at a time would take 5 × 2500 ms on top of the 2500 ms hang.
    let mut enabled = vec!["hang".to_string()];
    for i in 0..5 {
        let prefix = format!("s{i}_");
        servers.insert(format!("s{i}"), demo(&["--delay-ms", "2500", "--prefix", &prefix]));
        enabled.push(format!("s{i}"));
    }
    let enabled: Vec<&str> = enabled.iter().map(String::as_str).collect();
    write_config(&env, servers.into(), &enabled, json!({}));
    let started = Instant::now();
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    let elapsed = started.elapsed();
    let rows = runtime.status();
    assert_eq!(rows[0].state, ServerState::Error);
    assert_eq!(rows[0].error.as_deref(), Some("connect timed out after 2500 ms"));
    assert!(rows[1..].iter().all(|r| r.state == ServerState::Connected), "{rows:?}");
    // Concurrent: one at a time cannot finish in under 15 s (the sum of the waits); together
    // they take about one wait. The wide gap keeps this true on a loaded machine.
    assert!(elapsed < Duration::from_millis(10_000), "start took {elapsed:?}");
    runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_mid_session_turns_the_server_into_error_and_calls_say_why() {
    let env = Env::new();
    write_config(
        &env,
        json!({ "crashy": demo(&["--crash-after", "1"]), "steady": demo(&["--prefix", "s_"]) }),
        &["crashy", "steady"],
        json!({}),
    );
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    assert_eq!(call_text(&runtime, "echo", r#"{"message":"once"}"#).await, "once");
    // No call needed: the runtime notices the exit on its own.
    let noticed =
        eventually(Duration::from_secs(5), || runtime.status()[0].state == ServerState::Error).await;
    assert!(noticed, "{:?}", runtime.status());
    let expected =
        "process exited with status 3; stderr: demo-server: crashing after 1 calls (--crash-after)";
    assert_eq!(runtime.status()[0].error.as_deref(), Some(expected));
    assert_eq!(runtime.warnings(), [format!("Warning: MCP unavailable: crashy ({expected})")]);
    match runtime.call("echo", r#"{"message":"again"}"#).await {
        Err(e @ CallError::NotConnected { .. }) => {
            assert_eq!(e.to_string(), format!("MCP server crashy is not connected: {expected}"));
        }
        other => panic!("expected NotConnected, got {other:?}"),
    }
    assert_eq!(names(&runtime.tools()).len(), 6, "the crashed server's tools left the surface");
    assert_eq!(call_text(&runtime, "s_echo", r#"{"message":"fine"}"#).await, "fine");
    runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn list_changed_refreshes_the_registry() {
    let env = Env::new();
    write_config(&env, json!({ "changing": demo(&["--notify-after-ms", "300"]) }), &["changing"], json!({}));
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    let refreshed =
        eventually(Duration::from_secs(5), || names(&runtime.tools()).contains(&"late".to_string())).await;
    assert!(refreshed, "{:?}", names(&runtime.tools()));
    assert_eq!(runtime.status()[0].tools, 7);
    assert_eq!(call_text(&runtime, "late", "").await, "late");
    runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_reconnects_only_that_server() {
    let env = Env::new();
    write_config(&env, json!({ "a": demo(&[]), "b": demo(&["--prefix", "b_"]) }), &["a", "b"], json!({}));
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    let (a1, b1) = (call_text(&runtime, "pid", "").await, call_text(&runtime, "b_pid", "").await);
    runtime.retry("a").await.unwrap_or_else(|e| panic!("retry: {e}"));
    let (a2, b2) = (call_text(&runtime, "pid", "").await, call_text(&runtime, "b_pid", "").await);
    assert_ne!(a1, a2, "a has a new process");
    assert_eq!(b1, b2, "b kept its process");
    assert!(runtime.status().iter().all(|r| r.state == ServerState::Connected));
    let unknown = runtime.retry("zzz").await.err().map(|e| e.to_string());
    assert_eq!(unknown.as_deref(), Some("Unknown MCP server: zzz"));
    runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_brings_a_crashed_server_back() {
    let env = Env::new();
    write_config(&env, json!({ "crashy": demo(&["--crash-after", "1"]) }), &["crashy"], json!({}));
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    call_text(&runtime, "echo", r#"{"message":"x"}"#).await;
    assert!(eventually(Duration::from_secs(5), || runtime.status()[0].state == ServerState::Error).await);
    runtime.retry("crashy").await.unwrap_or_else(|e| panic!("retry: {e}"));
    assert_eq!(runtime.status()[0].state, ServerState::Connected);
    assert_eq!(call_text(&runtime, "echo", r#"{"message":"back"}"#).await, "back");
    runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn reconcile_touches_only_what_changed() {
    let env = Env::new();
    let servers = json!({ "a": demo(&[]), "b": demo(&["--prefix", "b_"]), "c": demo(&["--prefix", "c_"]) });
    write_config(&env, servers.clone(), &["a", "b"], json!({}));
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    let a1 = call_text(&runtime, "pid", "").await;
    // Disable b, enable c.
    write_config(&env, servers, &["a", "c"], json!({}));
    let resolved = load_resolved(&paths(&env), &Default::default()).unwrap_or_else(|e| panic!("{e}"));
    runtime.reconcile(resolved).await.unwrap_or_else(|e| panic!("reconcile: {e}"));
    assert_eq!(call_text(&runtime, "pid", "").await, a1, "a untouched");
    let states: Vec<ServerState> = runtime.status().iter().map(|r| r.state).collect();
    assert_eq!(states, [ServerState::Connected, ServerState::Disabled, ServerState::Connected]);
    assert!(matches!(runtime.call("b_echo", "").await, Err(CallError::UnknownTool(_))));
    assert_eq!(call_text(&runtime, "c_echo", r#"{"message":"c"}"#).await, "c");
    runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_embedding_agents_builtin_tools_are_reserved() {
    let env = Env::new();
    write_config(&env, json!({ "a": demo(&[]) }), &["a"], json!({}));
    let options = RuntimeOptions { builtin_tools: vec!["Echo".into()], ..RuntimeOptions::default() };
    let runtime = start(&env, &[], options).await;
    assert_eq!(runtime.status()[0].error.as_deref(), Some(reserved_one("a", "echo").as_str()));
    runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_call_hits_the_call_timeout_and_every_block_is_kept() {
    let env = Env::new();
    let mut server = demo(&[]);
    server["timeouts"] = json!({ "callMs": 300 });
    write_config(&env, json!({ "a": server }), &["a"], json!({}));
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    let slow = runtime.call("sleep", r#"{"ms": 5000}"#).await;
    assert_eq!(
        slow.err().map(|e| e.to_string()).as_deref(),
        Some("MCP tool sleep on server a timed out after 300 ms")
    );
    let add = runtime.call("add", r#"{"a": 1, "b": 2}"#).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(add.to_json()["content"], json!([{"type": "text", "text": "3"}]));
    assert_eq!(add.structured, Some(json!({"sum": 3.0})));
    assert!(!add.is_error);
    let big = runtime.call("big", r#"{"size": 300000}"#).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(big.render_text().len(), 300_000);
    runtime.shutdown().await;
}
