//! Transport plugins end to end (issue 5): the built-in `sse` against the real
//! `@modelcontextprotocol/server-everything`, `transport-tcp` and `transport-ws` loaded from
//! their built `.wasm` files against the binary's `demo-server` exposed over TCP and WebSocket,
//! the origin-only grant, and hostile transports that must leave the host usable.

use std::net::TcpListener;
use std::time::Duration;

use serde_json::{Value, json};
use toolport::{Runtime, RuntimeOptions, ServerState, render_status as render};

use crate::support::common::Env;
use crate::support::peers::{Everything, everything_stdio};
use crate::support::runtime::{call_text, demo, eventually, start};
use crate::support::transport::{Exposed, Framing, built_plugin, write_store};

/// Far beyond any healthy start, even on a loaded 2-core machine (it takes under 10 s alone).
const START_HANG_GUARD: Duration = Duration::from_secs(120);

/// The `plugins` entry for one built guest.
fn plugin(stem: &str, extra: Value) -> Value {
    let mut entry = json!({ "kind": "transport", "path": built_plugin(stem) });
    if let (Some(e), Some(extra)) = (entry.as_object_mut(), extra.as_object()) {
        e.extend(extra.clone());
    }
    entry
}

fn row(runtime: &Runtime, name: &str) -> toolport::ServerStatus {
    let rows = runtime.status();
    rows.into_iter().find(|r| r.name == name).unwrap_or_else(|| panic!("no row for {name}"))
}

/// Connected with demo-server's tools (its six plus three generated), and calls go both ways
/// through the plugin, from the library and from the CLI.
async fn check_demo_through(framing: Framing, plugin_name: &str, stem: &str) {
    let exposed = Exposed::start(framing, &["--tools", "3"]);
    let env = Env::new();
    let servers = json!({ "remote": { "type": plugin_name, "url": exposed.url() } });
    write_store(&env, servers, json!({ plugin_name: plugin(stem, json!({})) }), &["remote"]);
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    let status = row(&runtime, "remote");
    assert_eq!(status.state, ServerState::Connected, "{status:?}");
    assert_eq!(status.tools, 9, "{status:?}");
    assert_eq!(
        runtime.tool_names(),
        ["echo", "add", "sleep", "fail", "big", "pid", "tool_1", "tool_2", "tool_3"]
    );
    for i in 0..20 {
        let text =
            call_text(&runtime, "echo", &format!(r#"{{"message": "hello {i} over {plugin_name}"}}"#)).await;
        assert!(text.contains(&format!("hello {i} over {plugin_name}")), "{text}");
    }
    let sum = call_text(&runtime, "add", r#"{"a": 2, "b": 40}"#).await;
    assert!(sum.contains("42"), "{sum}");
    // Concurrent calls share the one connection: full duplex, answers matched by id.
    let calls = (0..16).map(|i| {
        let runtime = runtime.clone();
        async move { call_text(&runtime, "echo", &format!(r#"{{"message": "c{i}"}}"#)).await }
    });
    let answers = futures::future::join_all(calls).await;
    for (i, text) in answers.iter().enumerate() {
        assert!(text.contains(&format!("c{i}")), "{text}");
    }
    runtime.shutdown().await;

    // The same from the command line: a fresh process loads the plugin from the store.
    let out = env.cmd(["call", "echo", r#"{"message": "from the cli"}"#]).output();
    let out = out.unwrap_or_else(|e| panic!("run: {e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("from the cli"));
}

#[tokio::test(flavor = "multi_thread")]
async fn transport_tcp_lists_and_calls_demo_server() {
    check_demo_through(Framing::Tcp, "tcp", "transport_tcp").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn transport_ws_lists_and_calls_demo_server() {
    check_demo_through(Framing::Ws, "ws", "transport_ws").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_tcp_connection_fails_only_that_server() {
    let free =
        TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).unwrap_or_else(|e| panic!("{e}"));
    let env = Env::new();
    let servers = json!({
        "down": { "type": "tcp", "url": format!("tcp://{free}") },
        "local": demo(&["--prefix", "l_"]),
    });
    write_store(&env, servers, json!({ "tcp": plugin("transport_tcp", json!({})) }), &["down", "local"]);
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    let down = row(&runtime, "down");
    assert_eq!(down.state, ServerState::Error);
    assert_eq!(
        down.error.as_deref(),
        Some(format!("transport plugin tcp: cannot connect to tcp://{free}: connection refused").as_str())
    );
    assert_eq!(row(&runtime, "local").state, ServerState::Connected);
    runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_transport_reaching_a_host_it_was_not_granted_gets_not_granted() {
    let exposed = Exposed::start(Framing::Tcp, &[]);
    let elsewhere = Exposed::start(Framing::Tcp, &[]);
    let env = Env::new();
    let servers = json!({
        // The hostile plugin may reach its own url; it tries `elsewhere` instead.
        "wander": { "type": "hostile", "url": exposed.url(), "args": [elsewhere.addr.to_string()] },
        "local": demo(&[]),
    });
    write_store(
        &env,
        servers,
        json!({ "hostile": plugin("fixture_transport_hostile", json!({})) }),
        &["wander", "local"],
    );
    // The plugin hides the refusal; the error is the host's own record of it.
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    let stdout = render(&runtime.status(), None);
    runtime.shutdown().await;
    let expected = format!(
        "wander | type=hostile | state=error | workspace=enabled | paused=no | tools=0 | error=transport plugin \
         hostile: not granted: tcp://{}",
        elsewhere.addr
    );
    assert!(stdout.contains(&expected), "{stdout}");
    assert!(stdout.contains("local | type=stdio | state=connected"), "{stdout}");

    // A grant opens exactly that address.
    let servers = json!({
        "wander": { "type": "hostile", "url": exposed.url(), "args": [elsewhere.addr.to_string()] },
    });
    let grant = json!({ "grants": { "hosts": [format!("tcp://{}", elsewhere.addr)] } });
    write_store(&env, servers, json!({ "hostile": plugin("fixture_transport_hostile", grant) }), &["wander"]);
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    let wander = row(&runtime, "wander");
    assert_eq!(
        wander.error.as_deref(),
        Some(
            format!("transport plugin hostile: reached tcp://{}, which was never granted", elsewhere.addr)
                .as_str()
        )
    );
    runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_transports_leave_the_host_usable() {
    let exposed = Exposed::start(Framing::Tcp, &[]);
    let env = Env::new();
    let servers = json!({
        "spin": { "type": "hostile", "url": exposed.url(), "timeouts": { "connectMs": 1500 } },
        "bomb": { "type": "hostile", "url": exposed.url() },
        "local": demo(&[]),
    });
    let limits = json!({ "limits": { "memoryMb": 16 } });
    write_store(
        &env,
        servers,
        json!({ "hostile": plugin("fixture_transport_hostile", limits) }),
        &["spin", "bomb", "local"],
    );
    // The rows below show each hostile server bounded by its own limits; this bound only turns
    // a start that hangs into a failure (how fast it is belongs to the benchmarks).
    let runtime = tokio::time::timeout(START_HANG_GUARD, start(&env, &[], RuntimeOptions::default()))
        .await
        .unwrap_or_else(|_| panic!("start hung for {START_HANG_GUARD:?}"));
    let spin = row(&runtime, "spin");
    assert_eq!(spin.state, ServerState::Error);
    assert_eq!(spin.error.as_deref(), Some("connect timed out after 1500 ms"));
    let bomb = row(&runtime, "bomb");
    assert_eq!(bomb.state, ServerState::Error);
    assert_eq!(bomb.error.as_deref(), Some("transport plugin hostile: exceeded its memory limit (16 MiB)"));
    assert_eq!(row(&runtime, "local").state, ServerState::Connected);
    // The host still serves calls while the spinning pump is being stopped.
    for _ in 0..5 {
        assert!(call_text(&runtime, "echo", r#"{"message": "still here"}"#).await.contains("still here"));
    }
    runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_transport_that_crashes_mid_session_fails_its_server_and_retry_reopens_it() {
    let exposed = Exposed::start(Framing::Tcp, &[]);
    let env = Env::new();
    let servers = json!({
        "crash-on-call": { "type": "hostile", "url": exposed.url() },
        "local": demo(&["--prefix", "l_"]),
    });
    write_store(
        &env,
        servers,
        json!({ "hostile": plugin("fixture_transport_hostile", json!({})) }),
        &["crash-on-call", "local"],
    );
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    assert_eq!(row(&runtime, "crash-on-call").state, ServerState::Connected);
    assert!(runtime.call("echo", r#"{"message": "boom"}"#).await.is_err());
    let crashed =
        eventually(Duration::from_secs(5), || row(&runtime, "crash-on-call").state == ServerState::Error)
            .await;
    let status = row(&runtime, "crash-on-call");
    assert!(crashed, "{status:?}");
    let error = status.error.unwrap_or_default();
    assert!(error.starts_with("transport plugin hostile: crashed: panicked at"), "{error}");
    assert!(
        error.ends_with(
            "hostile transport panicked on purpose; it has no grants.env (variables it reads look unset)"
        ),
        "{error}"
    );
    assert_eq!(row(&runtime, "local").state, ServerState::Connected);
    assert!(call_text(&runtime, "l_echo", r#"{"message": "fine"}"#).await.contains("fine"));

    runtime.retry("crash-on-call").await.unwrap_or_else(|e| panic!("retry: {e:#}"));
    assert_eq!(row(&runtime, "crash-on-call").state, ServerState::Connected);
    assert_eq!(row(&runtime, "crash-on-call").tools, 6);
    runtime.shutdown().await;
}

// ---- sse against the real server-everything ----

/// The server's tool count as the native stdio transport sees it: an independent reference.
async fn everything_tool_count() -> usize {
    let env = Env::new();
    let server = everything_stdio();
    write_store(&env, json!({ "everything": server }), json!({}), &["everything"]);
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    let status = row(&runtime, "everything");
    assert_eq!(status.state, ServerState::Connected, "{status:?}");
    runtime.shutdown().await;
    status.tools
}

#[tokio::test(flavor = "multi_thread")]
async fn sse_reaches_server_everything() {
    let expected = everything_tool_count().await;
    assert!(expected > 5, "server-everything lists its tools: {expected}");
    let server = Everything::sse();
    let env = Env::new();
    let def = json!({
        "type": "sse",
        "url": server.url,
        "headers": { "X-Toolport-Test": "${TP_SSE_TOKEN:-none}" }
    });
    write_store(
        &env,
        json!({ "legacy": def, "local": demo(&["--prefix", "l_"]) }),
        json!({}),
        &["legacy", "local"],
    );
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    let status = row(&runtime, "legacy");
    assert_eq!(status.state, ServerState::Connected, "{status:?}");
    assert_eq!(status.tools, expected);
    let echo = call_text(&runtime, "echo", r#"{"message": "round trip over sse"}"#).await;
    assert!(echo.contains("round trip over sse"), "{echo}");
    assert_eq!(row(&runtime, "local").state, ServerState::Connected);
    runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sse_to_a_closed_port_fails_with_the_plugins_message() {
    let free =
        TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).unwrap_or_else(|e| panic!("{e}"));
    let env = Env::new();
    let url = format!("http://{free}/sse");
    write_store(&env, json!({ "legacy": { "type": "sse", "url": url } }), json!({}), &["legacy"]);
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    let status = row(&runtime, "legacy");
    assert_eq!(status.state, ServerState::Error);
    assert_eq!(
        status.error.as_deref(),
        Some(format!("transport plugin sse: {url}: connection refused").as_str())
    );
    runtime.shutdown().await;
}

/// A fake legacy server whose `endpoint` event points at another origin: the built-in `sse`
/// plugin may reach only its server's own origin, so the POST is refused by the host.
#[tokio::test(flavor = "multi_thread")]
async fn sse_refuses_an_endpoint_on_another_origin() {
    use std::io::{Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_else(|e| panic!("{e}"));
    let other =
        TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).unwrap_or_else(|e| panic!("{e}"));
    std::thread::spawn(move || {
        for mut socket in listener.incoming().map_while(Result::ok) {
            let mut head = [0u8; 4096];
            let _ = socket.read(&mut head);
            let event = format!("event: endpoint\ndata: http://{other}/message?sessionId=x\n\n");
            let _ = socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n");
            let _ = socket.write_all(event.as_bytes());
            // Keep the stream open, as a real server does, until the client goes away.
            std::thread::spawn(move || {
                let mut sink = [0u8; 1024];
                while socket.read(&mut sink).is_ok_and(|n| n > 0) {}
            });
        }
    });
    let env = Env::new();
    let def = json!({ "type": "sse", "url": format!("http://127.0.0.1:{port}/sse") });
    write_store(&env, json!({ "legacy": def, "local": demo(&[]) }), json!({}), &["legacy", "local"]);
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    let status = row(&runtime, "legacy");
    assert_eq!(status.state, ServerState::Error);
    assert_eq!(
        status.error.as_deref(),
        Some(format!("transport plugin sse: not granted: http://{other}").as_str())
    );
    assert_eq!(row(&runtime, "local").state, ServerState::Connected);
    runtime.shutdown().await;
}

/// The server going away mid-session ends the plugin's pump with its own words; only that
/// server goes to `error`, and retry opens a new connection (a new store, a new socket).
#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_hangs_up_fails_its_tcp_server_and_retry_reconnects() {
    let exposed = Exposed::start(Framing::Tcp, &["--crash-after", "1"]);
    let env = Env::new();
    let servers =
        json!({ "remote": { "type": "tcp", "url": exposed.url() }, "local": demo(&["--prefix", "l_"]) });
    write_store(&env, servers, json!({ "tcp": plugin("transport_tcp", json!({})) }), &["remote", "local"]);
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    assert_eq!(row(&runtime, "remote").state, ServerState::Connected);
    assert!(call_text(&runtime, "echo", r#"{"message": "last words"}"#).await.contains("last words"));
    let gone =
        eventually(Duration::from_secs(5), || row(&runtime, "remote").state == ServerState::Error).await;
    let status = row(&runtime, "remote");
    assert!(gone, "{status:?}");
    assert_eq!(
        status.error.as_deref(),
        Some(format!("transport plugin tcp: {} closed the connection", exposed.url()).as_str())
    );
    assert_eq!(row(&runtime, "local").state, ServerState::Connected);
    runtime.retry("remote").await.unwrap_or_else(|e| panic!("retry: {e:#}"));
    assert_eq!(row(&runtime, "remote").state, ServerState::Connected);
    assert!(call_text(&runtime, "echo", r#"{"message": "again"}"#).await.contains("again"));
    runtime.shutdown().await;
}
