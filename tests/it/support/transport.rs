//! Real servers for the transport tests: the binary's own `demo-server`, exposed over TCP
//! (newline-delimited JSON-RPC, the stdio framing over a socket) and over WebSocket (one
//! message per text frame) on 127.0.0.1 ephemeral ports. Every accepted connection gets a
//! `demo-server` child of its own, killed when the connection or the listener goes away.
//!
//! The listener runs on a thread with its own tokio runtime so tests may block (assert_cmd)
//! without starving it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Message;

use crate::support::common::{Env, toolport_path};

/// How a test server frames messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// One JSON-RPC message per line on a TCP stream.
    Tcp,
    /// One JSON-RPC message per WebSocket text frame.
    Ws,
}

/// A `demo-server` reachable over the network until dropped.
pub struct Exposed {
    /// Where it listens.
    pub addr: SocketAddr,
    framing: Framing,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Exposed {
    /// Listens on 127.0.0.1:0 and serves `toolport demo-server <args…>` per connection.
    pub fn start(framing: Framing, args: &[&str]) -> Self {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
        std_listener.set_nonblocking(true).unwrap_or_else(|e| panic!("nonblocking: {e}"));
        let addr = std_listener.local_addr().unwrap_or_else(|e| panic!("local_addr: {e}"));
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap_or_else(|e| panic!("runtime: {e}"));
            runtime.block_on(async move {
                let listener =
                    TcpListener::from_std(std_listener).unwrap_or_else(|e| panic!("listener: {e}"));
                tokio::select! {
                    _ = accept_loop(listener, framing, args) => {}
                    _ = stopped => {}
                }
            });
            // Dropping the runtime drops every connection task, whose children are kill_on_drop.
            runtime.shutdown_timeout(std::time::Duration::from_secs(2));
        });
        Self { addr, framing, stop: Some(stop), thread: Some(thread) }
    }

    /// The URL a server definition uses: `tcp://127.0.0.1:P` or `ws://127.0.0.1:P/mcp`.
    pub fn url(&self) -> String {
        match self.framing {
            Framing::Tcp => format!("tcp://{}", self.addr),
            Framing::Ws => format!("ws://{}/mcp", self.addr),
        }
    }
}

impl Drop for Exposed {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn accept_loop(listener: TcpListener, framing: Framing, args: Vec<String>) {
    loop {
        let Ok((socket, _)) = listener.accept().await else { continue };
        let args = args.clone();
        tokio::spawn(async move {
            let _ = socket.set_nodelay(true);
            let child = spawn_demo(&args);
            match framing {
                Framing::Tcp => serve_tcp(socket, child).await,
                Framing::Ws => serve_ws(socket, child).await,
            }
        });
    }
}

fn spawn_demo(args: &[String]) -> Child {
    Command::new(toolport_path())
        .arg("demo-server")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("spawn demo-server: {e}"))
}

/// Bytes both ways until either side closes: the framing is already the same.
async fn serve_tcp(socket: TcpStream, mut child: Child) {
    let (mut from_client, mut to_client) = socket.into_split();
    let (Some(mut stdin), Some(mut stdout)) = (child.stdin.take(), child.stdout.take()) else { return };
    tokio::select! {
        _ = tokio::io::copy(&mut from_client, &mut stdin) => {}
        _ = tokio::io::copy(&mut stdout, &mut to_client) => {}
    }
}

/// Text frames to lines and lines to text frames.
async fn serve_ws(socket: TcpStream, mut child: Child) {
    let Ok(ws) = tokio_tungstenite::accept_async(socket).await else { return };
    let (mut sink, mut stream) = ws.split();
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else { return };
    let to_server = async {
        while let Some(Ok(message)) = stream.next().await {
            match message {
                Message::Text(text) => {
                    let line = format!("{}\n", text.as_str());
                    if stdin.write_all(line.as_bytes()).await.is_err() {
                        return;
                    }
                }
                Message::Close(_) => return,
                _ => {}
            }
        }
    };
    let to_client = async {
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if sink.send(Message::text(line)).await.is_err() {
                return;
            }
        }
        let _ = sink.close().await;
    };
    tokio::select! {
        _ = to_server => {}
        _ = to_client => {}
    }
}

/// The folder `build.rs` leaves every built guest component in.
pub fn built_plugin(stem: &str) -> PathBuf {
    let path = PathBuf::from(toolport::test_support::PLUGIN_BUILD_DIR).join(format!("{stem}.wasm"));
    assert!(path.exists(), "{} is missing: the host build script builds plugins/", path.display());
    path
}

/// Writes a global store with `servers` and `plugins`, and a workspace enabling `enabled`.
pub fn write_store(env: &Env, servers: Value, plugins: Value, enabled: &[&str]) {
    let store = json!({ "mcpServers": servers, "plugins": plugins });
    std::fs::write(env.store(), store.to_string()).unwrap_or_else(|e| panic!("write store: {e}"));
    let file = env.workspace_file();
    std::fs::create_dir_all(file.parent().unwrap_or_else(|| panic!("no parent")))
        .unwrap_or_else(|e| panic!("mkdir: {e}"));
    std::fs::write(file, json!({ "enabledMcpServers": enabled }).to_string())
        .unwrap_or_else(|e| panic!("write workspace: {e}"));
}
