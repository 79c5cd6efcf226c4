//! Real peers, installed by the project's own scripts (`tests/peers/install.sh`,
//! `tests/peers/install_sandbox_peers.sh`, `tests/acp/install.sh`) into the target folder once
//! per test process. A failed install fails the test that needs it, never skips it: CI cannot
//! pass without talking to them.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{OnceLock, mpsc};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::common::toolport_path;

/// How long a peer may take to start listening (Node's first start after an install is slow).
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs `script` (relative to `tests/`; it prints its result on stdout) once per process.
pub fn install(script: &str, cell: &'static OnceLock<String>) -> &'static str {
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

/// The folder `tests/peers/install.sh` fills: `bin/node` and `node_modules/`.
pub fn peers() -> PathBuf {
    static PEERS: OnceLock<String> = OnceLock::new();
    PathBuf::from(install("peers/install.sh", &PEERS))
}

/// The Python that reads toolport's telemetry: `opentelemetry-proto` and `prometheus-client`
/// in a venv `tests/peers/install_observers.sh` fills.
pub fn observers_python() -> PathBuf {
    static OBSERVERS: OnceLock<String> = OnceLock::new();
    PathBuf::from(install("peers/install_observers.sh", &OBSERVERS)).join("venv/bin/python")
}

/// A real coding agent's command (`claude`, `gemini`, `codex`), from the folder
/// `tests/peers/install_agents.sh` fills.
pub fn agent_bin(bin: &str) -> PathBuf {
    static AGENTS: OnceLock<String> = OnceLock::new();
    PathBuf::from(install("peers/install_agents.sh", &AGENTS)).join("node_modules/.bin").join(bin)
}

/// The folder `tests/peers/install_sandbox_peers.sh` fills: a venv whose `bin/` holds
/// `mcp-server-fetch` and `mcp-server-git`.
pub fn sandbox_peers() -> PathBuf {
    static SANDBOX_PEERS: OnceLock<String> = OnceLock::new();
    PathBuf::from(install("peers/install_sandbox_peers.sh", &SANDBOX_PEERS))
}

/// `@modelcontextprotocol/server-filesystem`'s entry point (`tests/peers/install_filesystem.sh`).
pub fn filesystem_entry() -> PathBuf {
    static FILESYSTEM: OnceLock<String> = OnceLock::new();
    PathBuf::from(install("peers/install_filesystem.sh", &FILESYSTEM))
        .join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
}

/// `@modelcontextprotocol/server-memory`'s entry point (`tests/peers/install_memory.sh`).
pub fn memory_entry() -> PathBuf {
    static MEMORY: OnceLock<String> = OnceLock::new();
    PathBuf::from(install("peers/install_memory.sh", &MEMORY))
        .join("node_modules/@modelcontextprotocol/server-memory/dist/index.js")
}

/// The Node.js that runs the peers.
pub fn node() -> PathBuf {
    peers().join("bin/node")
}

/// `@modelcontextprotocol/server-everything`'s entry point.
pub fn everything_entry() -> PathBuf {
    peers().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// A stdio definition of server-everything.
pub fn everything_stdio() -> Value {
    json!({ "type": "stdio", "command": node(), "args": [everything_entry()] })
}

/// server-everything over HTTP on a free loopback port; stopped on drop.
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
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or_else(|e| panic!("free port: {e}"));
        let mut child = Command::new(node())
            .arg(everything_entry())
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
        let mut server = Self { child, url: format!("http://127.0.0.1:{port}{path}") };
        if rx.recv_timeout(START_TIMEOUT).is_err() {
            server.stop();
            panic!("server-everything {mode} did not start listening on port {port}");
        }
        server
    }

    /// Kills the server (tests that watch a server go away).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        self.stop();
    }
}
