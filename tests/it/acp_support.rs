//! Fixtures for the ACP tests: `toolport acp` driven line by line, the Node client built on the
//! official `@agentclientprotocol/sdk` (installed by `tests/acp/install.sh`), and
//! `@modelcontextprotocol/server-everything` in streamable HTTP mode (installed by
//! `tests/peers/install.sh`). A missing install is a failure, never a skip.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{OnceLock, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Env, toolport_path};

/// How long one answer may take (a session start spawns servers; CI machines are slow).
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

/// `toolport acp` with piped stdio; every stdout line is parsed as JSON (stdout must carry
/// nothing else).
pub struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Agent {
    pub fn start(env: &Env) -> Self {
        let mut child = Command::new(toolport_path())
            .arg("--home")
            .arg(env.home())
            .arg("acp")
            .env_remove("RUST_LOG")
            .env_remove("TOOLPORT_HOME")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn toolport acp: {e}"));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self { child, stdin, lines }
    }

    /// Writes one raw line.
    pub fn send_line(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes());
    }

    /// Writes raw bytes (which need not be UTF-8).
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap_or_else(|| panic!("stdin already closed"));
        stdin.write_all(bytes).unwrap_or_else(|e| panic!("write: {e}"));
        stdin.flush().unwrap_or_else(|e| panic!("flush: {e}"));
    }

    /// Sends a request with `id`.
    pub fn request(&mut self, id: u64, method: &str, params: Value) {
        self.send_line(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
    }

    /// The next message, parsed; panics if a line is not JSON.
    pub fn next(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(ANSWER_TIMEOUT)
            .unwrap_or_else(|e| panic!("no message from toolport acp: {e}"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"))
    }

    /// Messages until the response with `id` (the notifications before it, then it).
    pub fn until_response(&mut self, id: u64) -> (Vec<Value>, Value) {
        let mut notes = Vec::new();
        loop {
            let msg = self.next();
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                return (notes, msg);
            }
            notes.push(msg);
        }
    }

    /// Sends a request and returns its response.
    pub fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.request(id, method, params);
        self.until_response(id).1
    }

    /// A prompt's stop reason and the text of its message chunks.
    pub fn prompt(&mut self, id: u64, session: &str, text: &str) -> (String, String) {
        self.request(
            id,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        );
        let (notes, response) = self.until_response(id);
        let text: String = notes
            .iter()
            .filter(|n| n["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
            .filter_map(|n| n["params"]["update"]["content"]["text"].as_str())
            .collect();
        let stop = response["result"]["stopReason"].as_str().unwrap_or_default().to_string();
        (stop, text)
    }

    /// Closes stdin and waits for a clean exit.
    pub fn finish(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    assert!(status.success(), "toolport acp exited with {status}");
                    return;
                }
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                other => panic!("toolport acp did not exit after end of input: {other:?}"),
            }
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A stdio server entry in the spec's array form running `toolport demo-server --prefix <p>_`.
pub fn demo_server(name: &str, prefix: &str) -> Value {
    json!({
        "name": name,
        "command": toolport_path(),
        "args": ["demo-server", "--prefix", format!("{prefix}_")],
        "env": [{"name": "DEMO_SECRET", "value": "not-to-be-printed"}],
    })
}

/// Runs `script` (an install script printing its result on stdout) once per test process.
fn install(script: &str, cell: &'static OnceLock<String>) -> &'static str {
    cell.get_or_init(|| {
        let target = toolport_path().parent().and_then(Path::parent).map(Path::to_path_buf);
        let target = target.unwrap_or_else(|| panic!("no target folder"));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(script);
        let out = Command::new("bash").arg(&script).arg(&target).output();
        let out = out.unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        assert!(
            out.status.success(),
            "{} failed (a missing test peer is a failure):\n{}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    })
}

/// The SDK client's folder and the Node that runs it.
pub fn acp_client() -> (PathBuf, PathBuf) {
    static CLIENT: OnceLock<String> = OnceLock::new();
    let line = install("acp/install.sh", &CLIENT);
    let (dir, node) = line.split_once(' ').unwrap_or_else(|| panic!("unexpected install output {line:?}"));
    (PathBuf::from(dir), PathBuf::from(node))
}

fn peers() -> PathBuf {
    static PEERS: OnceLock<String> = OnceLock::new();
    PathBuf::from(install("peers/install.sh", &PEERS))
}

/// `server-everything` over HTTP on a free loopback port; killed on drop.
pub struct Everything {
    child: Child,
    /// The MCP endpoint (`/mcp` for streamable HTTP, `/sse` for the legacy SSE transport).
    pub url: String,
}

impl Everything {
    /// The streamable HTTP transport.
    pub fn streamable_http() -> Self {
        Self::start("streamableHttp", "/mcp", "listening on port")
    }

    /// The legacy HTTP+SSE transport.
    pub fn sse() -> Self {
        Self::start("sse", "/sse", "running on port")
    }

    fn start(mode: &str, path: &str, ready: &'static str) -> Self {
        let peers = peers();
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or_else(|e| panic!("free port: {e}"));
        let mut child = Command::new(peers.join("bin/node"))
            .arg(peers.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"))
            .arg(mode)
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn server-everything {mode}: {e}"));
        let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains(ready) {
                    let _ = tx.send(());
                }
            }
        });
        rx.recv_timeout(ANSWER_TIMEOUT)
            .unwrap_or_else(|e| panic!("server-everything {mode} did not start: {e}"));
        Self { child, url: format!("http://127.0.0.1:{port}{path}") }
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
