//! The fault suite, processes: a stdio server that starts a helper (`sleep 300`, ignoring
//! SIGTERM) next to the healthy `demo-server`. Whatever ends the server — a one-shot command,
//! a runtime shutdown, a retry, SIGTERM to a session, toolport being killed — must not leave
//! the server or its helper running.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use toolport::ServerState;

use crate::support::common::Env;
use crate::support::faults::{assert_neighbour_fine, fault, row, start, write_pair};
use crate::support::runtime::eventually;

/// Generous: process teardown on a loaded 2-core machine, never a timing assertion.
const BOUND: Duration = Duration::from_secs(20);

/// The fault server that starts a helper, writing both pids to `pid_file`.
fn with_helper(pid_file: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["--pid-file", pid_file.to_str().unwrap_or_else(|| panic!("pid file path"))];
    args.extend_from_slice(extra);
    fault("spawn-helper", &args)
}

/// `<server pid> <helper pid>` once the server has written them. A plain pair: only
/// [`wait_for_pids`] makes the [`Pids`] guard, which kills them when dropped.
pub fn read_pids(pid_file: &Path) -> Option<(u32, u32)> {
    let text = std::fs::read_to_string(pid_file).ok()?;
    let mut it = text.split_whitespace().map(str::parse::<u32>);
    match (it.next(), it.next()) {
        (Some(Ok(server)), Some(Ok(helper))) => Some((server, helper)),
        _ => None,
    }
}

/// Waits for the pid file and checks both processes are running, so a later "gone" means
/// the host ended them.
async fn wait_for_pids(pid_file: &Path) -> Pids {
    assert!(eventually(BOUND, || read_pids(pid_file).is_some()).await, "the server never wrote its pids");
    let (server, helper) = read_pids(pid_file).unwrap_or_else(|| panic!("pids vanished"));
    let pids = Pids { server, helper };
    assert!(alive(pids.server) && alive(pids.helper), "the fault server or its helper is not running");
    pids
}

/// Whether `pid` is a running process (a zombie has ended; only its parent has not reaped it).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// The two processes of one fault server; killed when dropped so a failing test leaves
/// nothing behind either.
struct Pids {
    server: u32,
    helper: u32,
}

impl Pids {
    async fn assert_gone(&self) {
        let gone = eventually(BOUND, || !alive(self.server) && !alive(self.helper)).await;
        assert!(
            gone,
            "left running: server {} ({}), helper {} ({})",
            self.server,
            alive(self.server),
            self.helper,
            alive(self.helper)
        );
    }
}

impl Drop for Pids {
    fn drop(&mut self) {
        for pid in [self.server, self.helper] {
            if alive(pid) {
                let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            }
        }
    }
}

fn pid_file(env: &Env) -> PathBuf {
    env.home().join("fault.pids")
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_list_leaves_no_server_or_helper_behind() {
    let env = Env::new();
    write_pair(&env, with_helper(&pid_file(&env), &[]));
    let out = env.cmd(["mcp", "list"]).output().unwrap_or_else(|e| panic!("mcp list: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("- bad | type=stdio | state=connected"), "{text}");
    assert!(text.contains("- ok | type=stdio | state=connected"), "{text}");
    let (server, helper) = read_pids(&pid_file(&env)).unwrap_or_else(|| panic!("no pids written"));
    Pids { server, helper }.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_runtime_shutdown_ends_the_servers_helpers() {
    let env = Env::new();
    write_pair(&env, with_helper(&pid_file(&env), &[]));
    let runtime = start(&env).await;
    let pids = wait_for_pids(&pid_file(&env)).await;
    assert_eq!(row(&runtime, "bad").state, ServerState::Connected);
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    pids.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retry_ends_the_old_servers_helpers_and_keeps_the_new_one() {
    let env = Env::new();
    write_pair(&env, with_helper(&pid_file(&env), &[]));
    let runtime = start(&env).await;
    let old = wait_for_pids(&pid_file(&env)).await;
    std::fs::remove_file(pid_file(&env)).unwrap_or_else(|e| panic!("remove pid file: {e}"));
    runtime.retry("bad").await.unwrap_or_else(|e| panic!("retry: {e:#}"));
    let new = wait_for_pids(&pid_file(&env)).await;
    old.assert_gone().await;
    assert!(alive(new.server) && alive(new.helper), "the new server must keep running");
    assert_eq!(row(&runtime, "bad").state, ServerState::Connected);
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    new.assert_gone().await;
}

/// Waits for `child` to exit and returns its exit code (`None`: killed by a signal).
async fn exit_code(child: &mut std::process::Child) -> Option<i32> {
    let mut status = None;
    let exited = eventually(BOUND, || {
        status = child.try_wait().ok().flatten();
        status.is_some()
    })
    .await;
    if !exited {
        let _ = child.kill();
        panic!("toolport did not exit");
    }
    status.and_then(|s| s.code())
}

fn signal(pid: u32, name: &str) {
    let ok = Command::new("kill").args([&format!("-{name}"), &pid.to_string()]).status();
    assert!(ok.is_ok_and(|s| s.success()), "kill -{name} {pid}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_to_a_session_closes_its_servers_and_exits() {
    let env = Env::new();
    // --linger: the server ignores its stdin closing, so only the host's signals end it.
    write_pair(&env, with_helper(&pid_file(&env), &["--linger"]));
    let mut session = env.spawn_piped(true, &["session"]);
    let pids = wait_for_pids(&pid_file(&env)).await;
    // The session answers, so it is past starting its servers.
    use std::io::Write as _;
    writeln!(session.stdin, "/call ok_echo {{\"message\":\"up\"}}").unwrap_or_else(|e| panic!("write: {e}"));
    let line = session.lines.recv_timeout(BOUND).unwrap_or_else(|e| panic!("no answer: {e}"));
    assert!(line.contains("up"), "{line}");
    signal(session.child.id(), "TERM");
    assert_eq!(exit_code(&mut session.child).await, Some(143), "SIGTERM is handled: exit 128 + 15");
    pids.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_toolport_takes_its_servers_with_it() {
    let env = Env::new();
    write_pair(&env, with_helper(&pid_file(&env), &["--linger"]));
    let mut session = env.spawn_piped(true, &["session"]);
    let pids = wait_for_pids(&pid_file(&env)).await;
    signal(session.child.id(), "KILL");
    assert_eq!(exit_code(&mut session.child).await, None);
    // The parent-death signal reaches the server itself; its helper is its own business then.
    assert!(eventually(BOUND, || !alive(pids.server)).await, "server {} outlived toolport", pids.server);
}

/// A well-behaved server is let go the way the MCP stdio shutdown asks (its stdin closed, its
/// exit waited for) with its stdout still read: server-everything writes as it leaves, and used
/// to die of `EPIPE` on a pipe toolport had already dropped (Node's `write EPIPE`, `write after
/// end`, in its stderr at `-vv`). Repeated, since the race was lost only some of the time.
#[test]
fn mcp_list_lets_server_everything_exit_without_epipe() {
    let env = Env::new();
    crate::support::runtime::write_config(
        &env,
        serde_json::json!({ "everything": crate::support::peers::everything_stdio() }),
        &["everything"],
        serde_json::json!({}),
    );
    for _ in 0..3 {
        let out = env.cmd(["-vv", "mcp", "list"]).output().unwrap_or_else(|e| panic!("mcp list: {e}"));
        let (text, log) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{text}\n{log}");
        assert!(text.contains("- everything | type=stdio | state=connected"), "{text}\n{log}");
        for noise in ["EPIPE", "write after end"] {
            assert!(!log.contains(noise), "{noise} in the log of mcp list:\n{log}");
        }
    }
}
