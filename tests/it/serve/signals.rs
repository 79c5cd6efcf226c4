//! `toolport serve` leaves on SIGTERM and SIGINT, over stdio and HTTP, with every server it
//! started ended: the built-in demo server and a Python server on the official SDK (the venv
//! `tests/peers/install_clients.sh` makes). Agents kill toolport soon after signalling it, so
//! what must hold is that it exits by itself and leaves no server behind; how fast is a figure
//! (`bench/signal_exit.sh`), not an assertion. Also `DELETE /mcp` of an unknown session.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::auth::python;
use crate::support::common::{Env, Piped, toolport_path};
use crate::support::runtime::write_config;
use crate::support::serve::{INITIALIZE, MCP_HEADERS, SETTLED_LINE, ServeHttp, http_post};

/// A bound on the exit that only a hang breaks (a debug build on a loaded machine included).
const EXIT_BOUND: Duration = Duration::from_secs(5);

/// A Python stdio server on the SDK's `MCPServer`, with one tool.
const PY_SERVER: &str = "from mcp.server.mcpserver import MCPServer\n\
app = MCPServer('py')\n\
@app.tool()\n\
def now() -> str:\n    return 'now'\n\
app.run()\n";

/// An env with the demo server and the Python server enabled.
fn two_servers() -> Env {
    let env = Env::new();
    let script = env.root().join("py_server.py");
    std::fs::write(&script, PY_SERVER).unwrap_or_else(|e| panic!("write {}: {e}", script.display()));
    let servers = json!({
        "demo": { "type": "stdio", "command": toolport_path(), "args": ["demo-server"] },
        "py": { "type": "stdio", "command": python(), "args": [script] },
    });
    write_config(&env, servers, &["demo", "py"], json!({}));
    env
}

/// The pids of `parent`'s children, from /proc: every thread's (a server is the child of
/// the thread that spawned it, a runtime worker's as much as the main thread's).
fn children(parent: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) else { return Vec::new() };
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|text| text.split_whitespace().filter_map(|p| p.parse().ok()).collect::<Vec<u32>>())
        .collect()
}

/// Whether `pid` still exists as anything but a zombie.
fn running(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    let state = stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next());
    state != Some("Z")
}

/// Waits (at most [`EXIT_BOUND`]) for `child` to exit; its exit code.
fn exit_code(child: &mut Child) -> Option<i32> {
    let deadline = Instant::now() + EXIT_BOUND;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Signals serve, checks it exits with 128+signal, and that none of its servers is left.
fn signal_and_check(child: &mut Child, signal: &str, code: i32) {
    let servers = children(child.id());
    assert_eq!(servers.len(), 2, "serve runs the demo and the Python server: {servers:?}");
    let sent = Command::new("kill").arg(format!("-{signal}")).arg(child.id().to_string()).status();
    assert!(sent.is_ok_and(|s| s.success()), "kill -{signal}");
    assert_eq!(exit_code(child), Some(code), "serve exits on {signal}");
    let deadline = Instant::now() + EXIT_BOUND;
    while servers.iter().any(|&pid| running(pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let left: Vec<u32> = servers.into_iter().filter(|&pid| running(pid)).collect();
    assert!(left.is_empty(), "servers left after {signal}: {left:?}");
}

/// `serve` over stdio, initialized, its servers up. The client keeps stdin open (it stays in
/// the returned [`Piped`]), as an agent does: serve must leave on the signal alone.
fn serve_stdio(env: &Env) -> Piped {
    let mut serve = env.spawn_piped(true, &["serve"]);
    writeln!(serve.stdin, "{INITIALIZE}").unwrap_or_else(|e| panic!("write: {e}"));
    let line =
        serve.lines.recv_timeout(EXIT_BOUND * 4).unwrap_or_else(|e| panic!("no initialize answer: {e}"));
    assert!(line.contains("\"result\""), "initialize: {line}");
    let printed = serve.wait_for_stderr(SETTLED_LINE, EXIT_BOUND * 6);
    assert!(printed.contains(SETTLED_LINE), "serve's servers did not settle: {printed}");
    serve
}

#[test]
fn serve_over_stdio_exits_on_sigterm_and_sigint_with_its_servers_ended() {
    let env = two_servers();
    for (signal, code) in [("TERM", 143), ("INT", 130)] {
        let mut serve = serve_stdio(&env);
        signal_and_check(&mut serve.child, signal, code);
    }
}

#[test]
fn serve_over_http_exits_on_sigterm_and_sigint_with_a_session_open_and_its_servers_ended() {
    let env = two_servers();
    for (signal, code) in [("TERM", 143), ("INT", 130)] {
        let mut serve = ServeHttp::start(&env);
        let (status, head) = http_post(&serve.authority(), &MCP_HEADERS, INITIALIZE);
        assert_eq!(status, 200, "{head}");
        signal_and_check(&mut serve.child, signal, code);
    }
}

/// `DELETE /mcp` with `session` as its session id: the status code.
fn delete(authority: &str, session: &str) -> u16 {
    let mut stream = TcpStream::connect(authority).unwrap_or_else(|e| panic!("connect {authority}: {e}"));
    let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
    let request = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: {authority}\r\nMcp-Session-Id: {session}\r\n\
         MCP-Protocol-Version: 2025-11-25\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).unwrap_or_else(|e| panic!("write: {e}"));
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

#[test]
fn delete_of_an_unknown_or_ended_session_is_404_and_of_a_live_one_200() {
    let env = Env::new();
    write_config(&env, json!({}), &[], json!({}));
    let serve = ServeHttp::start(&env);
    let authority = serve.authority();
    assert_eq!(delete(&authority, "no-such-session"), 404);
    let (status, head) = http_post(&authority, &MCP_HEADERS, INITIALIZE);
    assert_eq!(status, 200, "{head}");
    let session = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id")))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| panic!("no session id: {head}"));
    assert_eq!(
        delete(&authority, &session),
        200,
        "a live session is ended (200, as the SDKs' servers answer)"
    );
    assert_eq!(delete(&authority, &session), 404, "an ended session is unknown");
}
