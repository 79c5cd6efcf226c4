//! Fixtures for the ACP tests: `toolport acp` driven line by line, the Node client built on the
//! official `@agentclientprotocol/sdk` (installed by `tests/acp/install.sh`), and
//! `@modelcontextprotocol/server-everything` in streamable HTTP mode (installed by
//! `tests/peers/install.sh`). A missing install is a failure, never a skip.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, ChildStdin};
use std::sync::{OnceLock, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::common::{Env, toolport_path};

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
        Self::start_with(env, &[])
    }

    /// `toolport acp <flags…>`.
    pub fn start_with(env: &Env, flags: &[&str]) -> Self {
        let args: Vec<&str> = std::iter::once("acp").chain(flags.iter().copied()).collect();
        Self::over(env.spawn_piped(false, &args))
    }

    /// Any peer that speaks JSON-RPC in lines on its stdio (e.g. `codex app-server`).
    pub fn over(piped: crate::support::common::Piped) -> Self {
        let crate::support::common::Piped { child, stdin, lines, .. } = piped;
        Self { child, stdin: Some(stdin), lines }
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

impl Agent {
    /// The agent's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
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

/// The SDK client's folder and the Node that runs it.
pub fn acp_client() -> (PathBuf, PathBuf) {
    static CLIENT: OnceLock<String> = OnceLock::new();
    let line = crate::support::peers::install("acp/install.sh", &CLIENT);
    let (dir, node) = line.split_once(' ').unwrap_or_else(|| panic!("unexpected install output {line:?}"));
    (PathBuf::from(dir), PathBuf::from(node))
}
