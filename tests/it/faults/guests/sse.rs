//! The fault suite, long-lived streams (issue 11, item 16): the built-in `sse` transport must
//! outlive a stream that ends. A hand-made legacy-SSE MCP server sends `retry: 300` and `id: 7`
//! with its first endpoint, then drops the stream; the plugin must come back after at least
//! 300 ms with `Last-Event-ID: 7`, take the new stream's endpoint, and finish the handshake
//! there. (The other half, a stream idle timeout of a day instead of wasi:http's ten minutes,
//! cannot be waited for in a test: the plugin sets it through `wasi:http` request options and
//! the host's request hook passes them on.)

use std::io::{BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolport::ServerState;

use crate::support::common::Env;
use crate::support::faults::{OK, assert_neighbour_fine, healthy, row, start, write};
use crate::support::serve::read_head;

/// The resumable stream: answers wait in `missed` while no stream is open, and go out when the
/// client comes back (what `Last-Event-ID` is for).
#[derive(Default)]
struct Stream {
    open: Option<TcpStream>,
    missed: Vec<String>,
}

/// What the server sent with its first endpoint.
const RETRY_MS: u64 = 300;

/// A GET of the event stream as the server saw it.
struct Get {
    at: Instant,
    head: String,
}

/// The server: the first stream is cut right after its endpoint; the second one stays and
/// carries the answers to every POST.
struct SseServer {
    addr: SocketAddr,
    gets: mpsc::Receiver<Get>,
    cut_at: Arc<Mutex<Option<Instant>>>,
}

impl SseServer {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        let (tell, gets) = mpsc::channel();
        let live: Arc<Mutex<Stream>> = Arc::default();
        let cut_at: Arc<Mutex<Option<Instant>>> = Arc::default();
        let cut = Arc::clone(&cut_at);
        std::thread::spawn(move || {
            for (n, conn) in listener.incoming().enumerate() {
                let Ok(conn) = conn else { return };
                let (tell, live, cut) = (tell.clone(), Arc::clone(&live), Arc::clone(&cut));
                std::thread::spawn(move || serve(n, conn, &tell, &live, &cut));
            }
        });
        Self { addr, gets, cut_at }
    }
}

fn serve(
    n: usize,
    conn: TcpStream,
    tell: &mpsc::Sender<Get>,
    live: &Mutex<Stream>,
    cut: &Mutex<Option<Instant>>,
) {
    let mut reader = BufReader::new(conn);
    let head = read_head(&mut reader);
    let mut conn = reader.get_ref().try_clone().unwrap_or_else(|e| panic!("{e}"));
    let sse = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
    if head.starts_with("GET ") {
        let _ = tell.send(Get { at: Instant::now(), head: head.to_ascii_lowercase() });
        let first = n == 0;
        let event = if first {
            format!("retry: {RETRY_MS}\nid: 7\nevent: endpoint\ndata: /message?session=1\n\n")
        } else {
            "event: endpoint\ndata: /message?session=2\n\n".to_string()
        };
        let mut live = live.lock().unwrap_or_else(|e| e.into_inner());
        let missed: String = if first { String::new() } else { live.missed.drain(..).collect() };
        let _ = conn.write_all(format!("{sse}{event}{missed}").as_bytes());
        if first {
            // Cut the stream: the plugin must resume it.
            let _ = conn.shutdown(std::net::Shutdown::Both);
            *cut.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        } else {
            live.open = Some(conn);
        }
        return;
    }
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: ").or_else(|| l.strip_prefix("Content-Length: ")))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let _ = conn.write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let Some(id) = message.get("id") else { return };
    let result = match message.get("method").and_then(Value::as_str) {
        Some("initialize") => json!({
            "protocolVersion": "2024-11-05",
            "capabilities": { "tools": {} },
            "serverInfo": { "name": "resumed", "version": "1" },
        }),
        Some("tools/list") => {
            json!({ "tools": [{ "name": "resumed_ping", "inputSchema": { "type": "object" } }] })
        }
        _ => json!({}),
    };
    let answer = json!({ "jsonrpc": "2.0", "id": id, "result": result });
    let event = format!("event: message\ndata: {answer}\n\n");
    let mut live = live.lock().unwrap_or_else(|e| e.into_inner());
    match live.open.as_mut() {
        Some(stream) => {
            let _ = stream.write_all(event.as_bytes());
        }
        None => live.missed.push(event),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cut_event_stream_is_resumed_after_the_servers_retry_with_its_last_id() {
    let server = SseServer::start();
    let env = Env::new();
    let url = format!("http://{}/sse", server.addr);
    let before = write(
        &env,
        &[
            ("resumed", json!({ "type": "sse", "url": url, "timeouts": { "connectMs": 20000 } })),
            (OK, healthy()),
        ],
        json!({}),
        json!({}),
    );
    let runtime = start(&env).await;
    let first =
        server.gets.recv_timeout(Duration::from_secs(5)).unwrap_or_else(|e| panic!("no first GET: {e}"));
    let second =
        server.gets.recv_timeout(Duration::from_secs(5)).unwrap_or_else(|e| panic!("no reconnect: {e}"));
    assert!(!first.head.contains("last-event-id"), "{}", first.head);
    assert!(second.head.contains("last-event-id: 7\r\n"), "{}", second.head);
    let cut = server.cut_at.lock().ok().and_then(|c| *c).unwrap_or_else(|| panic!("never cut"));
    assert!(second.at >= cut + Duration::from_millis(RETRY_MS), "reconnected before the server's retry");
    let r = row(&runtime, "resumed");
    assert_eq!((r.state, r.tools, r.error.as_deref()), (ServerState::Connected, 1, None), "{r:?}");
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

/// The mechanism the `sse` plugin relies on: a guest's between-bytes timeout reaches wasmtime's
/// HTTP client through the host's request hook. A stream that goes quiet ends after the
/// configured 300 ms, well inside the call's time limit (wasi:http's default would be 600 s).
#[tokio::test(flavor = "multi_thread")]
async fn a_guests_between_bytes_timeout_is_honoured() {
    use toolport::plugins::{PluginHost, ToolInfo};
    use toolport::store::{Grants, Limits, PluginDef, PluginKind};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().unwrap_or_else(|e| panic!("{e}")).port();
    let (quiet, hold) = mpsc::channel::<TcpStream>();
    std::thread::spawn(move || {
        if let Ok((mut conn, _)) = listener.accept() {
            let mut head = [0u8; 1024];
            let _ = conn.read(&mut head);
            let _ = conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n: hello\n");
            // Keep the connection open and silent for as long as the test runs.
            let _ = quiet.send(conn);
        }
    });
    let def = PluginDef {
        name: "probe".into(),
        kind: PluginKind::ToolShape,
        path: crate::support::transport::built_plugin("fixture_http_probe"),
        grants: Grants { hosts: vec![format!("http://127.0.0.1:{port}")], ..Grants::default() },
        limits: Limits { memory_mb: 64, call_ms: 20_000, ..Limits::default() },
        sha256: None,
    };
    let cache = std::env::temp_dir().join("toolport-it-faults-cache");
    let host = PluginHost::new(Some(cache), &[def]).unwrap_or_else(|e| panic!("{e:#}"));
    let server = toolport::store::ServerDef {
        name: "idle".into(),
        command: Some("demo".into()),
        args: vec![format!("http://127.0.0.1:{port}/sse"), "300".into()],
        ..toolport::store::ServerDef::default()
    };
    let tool = ToolInfo {
        name: "x".into(),
        title: None,
        description: None,
        input_schema: json!({"type": "object"}),
        output_schema: None,
        annotations: None,
    };
    let probe = host.tool_shape("probe").unwrap_or_else(|e| panic!("{e}"));
    let err = probe.convert(&server, &[tool]).await.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.starts_with("tool shape probe: body ended: "), "{err}");
    drop(hold);
}
