//! End to end over stdio: the native build of `server_files`, spawned with a read-only and a
//! read-write root, spoken to in newline-delimited JSON-RPC as an MCP client would. (The
//! component build runs the same protocol under wasmtime in `smoke.sh`.)
#![cfg(not(target_os = "wasi"))]
#![allow(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

/// A fresh folder with `ro/` (a.txt, lines.txt, sub/b.md) and an empty `rw/`.
struct Fixture {
    base: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let base = std::env::temp_dir().join(format!(
            "server-files-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("ro/sub")).unwrap();
        std::fs::create_dir_all(base.join("rw")).unwrap();
        std::fs::write(base.join("ro/a.txt"), "hello\nworld\n").unwrap();
        let lines: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        std::fs::write(base.join("ro/lines.txt"), lines).unwrap();
        std::fs::write(base.join("ro/sub/b.md"), "# Title\nneedle here\n").unwrap();
        Self { base: base.canonicalize().unwrap() }
    }

    fn ro(&self) -> PathBuf {
        self.base.join("ro")
    }

    fn rw(&self) -> PathBuf {
        self.base.join("rw")
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    /// Spawns the server and completes the MCP handshake.
    fn start(fixture: &Fixture) -> (Self, Value) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_server_files"))
            .arg(fixture.ro())
            .arg(format!("{}:rw", fixture.rw().display()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut server = Self { child, stdin, stdout, next_id: 0 };
        let init = server.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}),
        );
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        (server, init)
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and returns its `result`, skipping any notifications.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server closed stdout");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id) {
                assert!(message.get("error").is_none(), "{method} failed: {message}");
                return message["result"].clone();
            }
        }
    }

    /// Calls a tool: (isError, its text).
    fn call(&mut self, tool: &str, arguments: Value) -> (bool, String) {
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let text = result["content"][0]["text"].as_str().unwrap_or_default().to_string();
        (result["isError"] == json!(true), text)
    }

    /// Closes stdin and returns the exit code.
    fn finish(mut self) -> Option<i32> {
        drop(self.stdin.take());
        self.child.wait().unwrap().code()
    }
}

fn p(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn handshake_lists_the_tools_and_eof_exits_cleanly() {
    let fixture = Fixture::new();
    let (mut server, init) = Server::start(&fixture);
    assert_eq!(init["serverInfo"]["name"], "toolport-files");
    let tools = server.request("tools/list", json!({}));
    let mut names: Vec<&str> =
        tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "delete_file",
            "get_file_info",
            "list_allowed_directories",
            "list_directory",
            "move_file",
            "read_text_file",
            "search_content",
            "search_files",
            "write_text_file"
        ]
    );
    let (error, text) = server.call("list_allowed_directories", json!({}));
    assert!(!error);
    assert_eq!(
        text,
        format!("Allowed directories:\n{} (read-only)\n{} (read-write)", p(&fixture.ro()), p(&fixture.rw()))
    );
    assert_eq!(server.finish(), Some(0));
}

#[test]
fn lists_and_reads() {
    let fixture = Fixture::new();
    let (mut server, _) = Server::start(&fixture);
    let (error, text) = server.call("list_directory", json!({"path": p(&fixture.ro())}));
    assert!(!error, "{text}");
    assert_eq!(text, "[FILE] a.txt\n[FILE] lines.txt\n[DIR] sub");

    // Relative paths are under the first root.
    assert_eq!(
        server.call("read_text_file", json!({"path": "a.txt"})),
        (false, "hello\nworld\n".to_string())
    );
    let lines = p(&fixture.ro().join("lines.txt"));
    assert_eq!(server.call("read_text_file", json!({"path": lines, "head": 2})).1, "line 1\nline 2\n");
    assert_eq!(server.call("read_text_file", json!({"path": lines, "tail": 2})).1, "line 9\nline 10\n");
    let (error, text) = server.call("read_text_file", json!({"path": "sub"}));
    assert!(error && text.ends_with("is a folder: use list_directory"), "{text}");

    let (error, text) = server.call("get_file_info", json!({"path": "a.txt"}));
    assert!(!error && text.contains("type: file\nsize: 12 bytes\nmodified: "), "{text}");
    assert_eq!(server.finish(), Some(0));
}

#[test]
fn searches_names_and_content() {
    let fixture = Fixture::new();
    let (mut server, _) = Server::start(&fixture);
    let (error, text) = server.call("search_files", json!({"path": ".", "pattern": "*.md"}));
    assert!(!error);
    assert_eq!(text, p(&fixture.ro().join("sub/b.md")));
    let (_, text) = server.call("search_files", json!({"path": ".", "pattern": "LINES"}));
    assert_eq!(text, p(&fixture.ro().join("lines.txt")));

    let (error, text) =
        server.call("search_content", json!({"path": ".", "pattern": "NEEDLE", "ignoreCase": true}));
    assert!(!error);
    assert_eq!(text, format!("{}:2: needle here", p(&fixture.ro().join("sub/b.md"))));
    let (_, text) = server.call(
        "search_content",
        json!({"path": ".", "pattern": "^line 1[0-9]?$", "regex": true, "maxResults": 1}),
    );
    assert!(
        text.starts_with(&format!("{}:1: line 1\n(stopped at 1 results", p(&fixture.ro().join("lines.txt")))),
        "{text}"
    );
    let (error, text) = server.call("search_content", json!({"path": ".", "pattern": "(", "regex": true}));
    assert!(error && text.starts_with("invalid regex"), "{text}");
    assert_eq!(server.finish(), Some(0));
}

#[test]
fn refuses_paths_outside_the_roots() {
    let fixture = Fixture::new();
    std::os::unix::fs::symlink("/etc", fixture.ro().join("escape")).unwrap();
    let (mut server, _) = Server::start(&fixture);
    for path in ["../rw/x", &format!("{}/../rw", p(&fixture.ro())), "sub/../../etc/passwd"] {
        let (error, text) = server.call("read_text_file", json!({"path": path}));
        assert!(error, "{path}");
        assert_eq!(text, format!("refused: {path}: paths with '..' are not allowed"));
    }
    let (error, text) = server.call("list_directory", json!({"path": "/etc"}));
    assert!(error);
    assert_eq!(text, "refused: /etc is outside the allowed folders");
    let (error, text) = server.call("read_text_file", json!({"path": "escape/hostname"}));
    assert!(error);
    assert_eq!(
        text,
        format!(
            "refused: {} leads outside the allowed folders (through a symbolic link)",
            p(&fixture.ro().join("escape/hostname"))
        )
    );
    assert_eq!(server.finish(), Some(0));
}

#[test]
fn writes_only_in_read_write_roots() {
    let fixture = Fixture::new();
    let (mut server, _) = Server::start(&fixture);
    let (error, text) = server.call("write_text_file", json!({"path": "new.txt", "content": "x"}));
    assert!(error);
    assert_eq!(text, format!("refused: {} is in a read-only folder", p(&fixture.ro().join("new.txt"))));
    assert!(!fixture.ro().join("new.txt").exists());
    let (error, _) = server.call("delete_file", json!({"path": "a.txt"}));
    assert!(error && fixture.ro().join("a.txt").exists());

    let target = fixture.rw().join("note.txt");
    let (error, text) = server.call("write_text_file", json!({"path": p(&target), "content": "written\n"}));
    assert!(!error, "{text}");
    assert_eq!(text, format!("wrote 8 bytes to {}", p(&target)));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "written\n");

    let moved = fixture.rw().join("moved.txt");
    let (error, text) = server.call("move_file", json!({"source": p(&target), "destination": p(&moved)}));
    assert!(!error, "{text}");
    assert!(moved.exists() && !target.exists());
    let (error, text) =
        server.call("move_file", json!({"source": p(&moved), "destination": p(&fixture.ro().join("m"))}));
    assert!(error && text.starts_with("refused: ") && text.ends_with("is in a read-only folder"), "{text}");

    let (error, text) = server.call("delete_file", json!({"path": p(&moved)}));
    assert!(!error, "{text}");
    assert!(!moved.exists());
    let (error, text) = server.call("delete_file", json!({"path": p(&fixture.rw())}));
    assert!(error && text.ends_with("delete_file removes files only"), "{text}");
    assert_eq!(server.finish(), Some(0));
}
