//! `toolport serve` as the tests start it: the command a client spawns over stdio, a
//! hand-driven JSON-RPC client of it over stdio, and `serve --http` on a free loopback port,
//! read back from its listening line.

use std::ffi::OsString;
use std::io::{BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::common::{Env, Piped, collect_lines, toolport_path, wait_for_text};

/// How long `serve --http` may take to print its listening line, and its servers to connect.
const LISTEN_TIMEOUT: Duration = Duration::from_secs(30);

/// `toolport --home H --workspace W serve`, as a client spawns it.
pub fn serve_command(env: &Env) -> Vec<OsString> {
    vec![
        toolport_path().into(),
        "--home".into(),
        env.home().into(),
        "--workspace".into(),
        env.root().into(),
        "serve".into(),
    ]
}

/// `toolport serve --http 127.0.0.1:0 [extra]` on `env`; SIGTERM (then SIGKILL) on drop.
pub struct ServeHttp {
    pub child: Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// Every stderr line so far (the listening line included).
    pub stderr: Arc<Mutex<Vec<String>>>,
}

/// The stderr line serve prints once every server it connects has connected or failed.
pub const SETTLED_LINE: &str = "toolport serve: every server has connected or failed";

impl ServeHttp {
    /// Started, and every server behind it connected or failed (serve listens before that:
    /// these tests assert on the whole surface).
    pub fn start(env: &Env) -> Self {
        Self::start_with(env, &[], &[])
    }

    /// [`ServeHttp::start`] with more arguments after `--http 127.0.0.1:0` and more
    /// environment variables.
    pub fn start_with(env: &Env, extra: &[&str], vars: &[(&str, &str)]) -> Self {
        let serve = Self::listening_on(env, "127.0.0.1:0", extra, vars);
        let printed = serve.wait_for_line(SETTLED_LINE, LISTEN_TIMEOUT);
        assert!(printed.contains(SETTLED_LINE), "serve's servers did not settle; stderr:\n{printed}");
        serve
    }

    /// Returned as soon as serve listens, its servers maybe still connecting.
    pub fn listening(env: &Env) -> Self {
        Self::listening_on(env, "127.0.0.1:0", &[], &[])
    }

    /// `serve --http ADDR [extra…]` with `vars`, returned as soon as it listens.
    pub fn listening_on(env: &Env, addr: &str, extra: &[&str], vars: &[(&str, &str)]) -> Self {
        let argv = serve_command(env);
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .args(["--http", addr])
            .args(extra)
            .envs(vars.iter().copied())
            .env_remove("RUST_LOG")
            .env_remove("TOOLPORT_HOME")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn toolport serve --http: {e}"));
        let lines = collect_lines(child.stderr.take().unwrap_or_else(|| panic!("no stderr")));
        const LISTENING: &str = "toolport serve: listening on ";
        let printed = wait_for_text(&lines, LISTENING, LISTEN_TIMEOUT);
        if let Some(url) = printed.lines().find_map(|l| l.strip_prefix(LISTENING)) {
            return Self { child, url: url.trim().to_string(), stderr: lines };
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("toolport serve --http printed no listening line; stderr:\n{printed}");
    }

    /// Waits (at most `within`) for a stderr line containing `text`; returns all of stderr.
    pub fn wait_for_line(&self, text: &str, within: Duration) -> String {
        wait_for_text(&self.stderr, text, within)
    }

    /// `host:port` of the listener.
    pub fn authority(&self) -> String {
        let rest = self.url.trim_start_matches("http://");
        rest.split('/').next().unwrap_or_default().to_string()
    }

    /// SIGTERM; waits (at most 10 s) for the exit status.
    pub fn terminate(&mut self) -> Option<std::process::ExitStatus> {
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }
}

impl Drop for ServeHttp {
    fn drop(&mut self) {
        if self.terminate().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One HTTP/1.1 exchange on a fresh connection, by hand: the tests need to send what no
/// well-behaved client sends (a foreign `Host`, a huge body). Returns the status and the
/// response head; the body is read only until `read_body` bytes or the peer closes.
pub fn http_post(authority: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(authority).unwrap_or_else(|e| panic!("connect {authority}: {e}"));
    let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
    let mut request =
        format!("POST /mcp HTTP/1.1\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {authority}\r\n"));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    let _ = stream.write_all(request.as_bytes());
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, head)
}

/// One request to `/mcp` on a fresh connection (`Connection: close`) with a streamable HTTP
/// client's content headers and `headers`, by hand, for what no well-behaved client sends:
/// the status, the head, and the body still to read (an SSE stream stays open while it lasts).
pub fn http_exchange(
    authority: &str,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, BufReader<TcpStream>) {
    let mut stream = TcpStream::connect(authority).unwrap_or_else(|e| panic!("connect {authority}: {e}"));
    let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
    let mut request = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Length: {}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap_or_else(|e| panic!("send: {e}"));
    let mut reader = BufReader::new(stream);
    let head = read_head(&mut reader);
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, head, reader)
}

/// An HTTP/1.1 head read line by line up to its blank line (or the end), the body left unread.
pub fn read_head(reader: &mut impl std::io::BufRead) -> String {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    head
}

/// The `Mcp-Session-Id` of a response head.
pub fn session_of(head: &str) -> String {
    head.lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("mcp-session-id").then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no session id in {head}"))
}

/// The headers of a JSON-RPC POST a streamable HTTP client sends.
pub const MCP_HEADERS: [(&str, &str); 2] =
    [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];

/// An `initialize` request body.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// How long one request may take (serve connects every server first; Node starts slowly; a
/// 30 MB result takes a while in a debug build).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// A hand-driven MCP client of `toolport serve` over stdio (2025-11-25): requests by id,
/// notifications kept for the test to read.
pub struct StdioClient {
    serve: Piped,
    /// Notifications seen while waiting for answers, in order.
    pub notifications: Vec<Value>,
    next_id: u64,
}

impl StdioClient {
    /// `toolport serve [extra…]` on `env`, initialized, and every server behind it connected
    /// or failed (serve answers before that: these tests assert on the whole surface).
    pub fn start(env: &Env, extra: &[&str]) -> Self {
        let args: Vec<&str> = ["serve"].into_iter().chain(extra.iter().copied()).collect();
        let serve = env.spawn_piped(true, &args);
        let mut client = Self { serve, notifications: Vec::new(), next_id: 1 };
        let init = client.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "toolport-tests", "version": "1"}}),
        );
        assert!(init.get("result").is_some(), "initialize: {init}");
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let printed = client.serve.wait_for_stderr(SETTLED_LINE, LISTEN_TIMEOUT);
        assert!(printed.contains(SETTLED_LINE), "serve's servers did not settle; stderr:\n{printed}");
        // What arrived while they connected (each server's tools announced) is not the test's.
        while let Ok(line) = client.serve.lines.try_recv() {
            let _ = line;
        }
        client.notifications.clear();
        client
    }

    /// The names `tools/list` shows.
    pub fn tool_names(&mut self) -> Vec<String> {
        let listed = self.request("tools/list", json!({}));
        let tools = listed["result"]["tools"].as_array().cloned().unwrap_or_default();
        tools.iter().filter_map(|t| t["name"].as_str().map(String::from)).collect()
    }

    pub fn send(&mut self, message: &Value) {
        writeln!(self.serve.stdin, "{message}").unwrap_or_else(|e| panic!("write to serve: {e}"));
        self.serve.stdin.flush().unwrap_or_else(|e| panic!("flush: {e}"));
    }

    /// The whole JSON-RPC response to one request (`result` or `error`).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + REQUEST_TIMEOUT;
        loop {
            let left = deadline.checked_duration_since(Instant::now()).unwrap_or_default();
            let line =
                self.serve.lines.recv_timeout(left).unwrap_or_else(|_| panic!("no answer to {method}"));
            let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return message;
            }
            if message.get("id").is_some() && message.get("method").is_some() {
                // A request of the server's own (roots, …): this client has nothing to offer.
                let refusal = json!({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "not offered"}});
                self.send(&refusal);
                continue;
            }
            self.notifications.push(message);
        }
    }
}

impl Drop for StdioClient {
    fn drop(&mut self) {
        let _ = self.serve.child.kill();
        let _ = self.serve.child.wait();
    }
}
