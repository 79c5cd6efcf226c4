//! The hostile sandboxed server (`plugins/fixtures/server-hostile`, one misbehaviour per
//! `args[1]`) as `type: wasm` servers of the built binary. Every case runs the bad server next
//! to a healthy neighbour (the same component in `healthy` mode, tool `echo`) in one long-lived
//! `toolport session`, asserts the exact message, and then that the neighbour still answers and
//! the host still serves: what a hostile server does may only ever cost that server.

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::common::Env;
use crate::support::faults::{Snapshot, write};
use crate::support::session::{COMMAND_TIMEOUT, Scripted};
use crate::support::wasm::{SMALL_CONNECT_MS, seed_cache};

/// A store's socket budget: `MAX_SOCKETS` in host/src/plugin/sandbox/socket_budget.rs.
const SOCKET_BUDGET: usize = 32;
/// The connections the `sockets` tool attempts (`SOCKET_ATTEMPTS` in the fixture's modes.rs).
const SOCKET_ATTEMPTS: usize = 100_000;
/// A store's handle table: `MAX_HANDLES` in host/src/plugin/sandbox/store.rs.
const HANDLE_LIMIT: usize = 16_384;

/// The fixture, built by host/build.rs with the other guests.
fn component() -> PathBuf {
    PathBuf::from(toolport::test_support::PLUGIN_BUILD_DIR).join("server_hostile.wasm")
}

/// A `wasm` server running the fixture with `args`, plus the keys of `extra` (`limits`,
/// `grants`, `env`, `timeouts`).
fn hostile(args: &[&str], extra: Value) -> Value {
    let mut def = json!({ "type": "wasm", "component": component(), "args": args });
    if let (Some(def), Some(extra)) = (def.as_object_mut(), extra.as_object()) {
        def.extend(extra.clone());
    }
    def
}

/// Writes `bad` (named after its mode, defined first) and the healthy neighbour `ok`, both
/// enabled, and seeds the home's cache with the compiled fixture; the snapshot proves
/// afterwards that nothing wrote either file.
fn write_pair(env: &Env, name: &str, bad: Value) -> Snapshot {
    let component = component();
    assert!(component.exists(), "{} is missing: host/build.rs builds it", component.display());
    seed_cache(env.home(), &component, &["healthy"], SMALL_CONNECT_MS);
    write(env, &[(name, bad), ("ok", hostile(&["healthy"], json!({})))], json!({}), json!({}))
}

/// The status row of a server with one tool, as `/mcp` prints it.
fn connected(name: &str) -> String {
    format!("- {name} | type=wasm | state=connected | workspace=enabled | paused=no | tools=1")
}

/// The row of `name` in a `/mcp` view.
fn row<'a>(view: &'a str, name: &str) -> &'a str {
    let start = format!("- {name} |");
    view.lines().find(|l| l.starts_with(&start)).unwrap_or_else(|| panic!("no row for {name} in:\n{view}"))
}

/// What the hostile cases ask of a session beyond the common driver.
trait Neighbourly {
    /// `/call <tool> <args>`: the answer without its final newline, and how long it took.
    fn call(&mut self, tool: &str, args: &str) -> (String, Duration);
    /// Polls `/mcp` until `name`'s row is `expected` (a server that died in a call turns
    /// `error` a moment after the call's answer), for at most 5 s.
    fn wait_for_row(&mut self, name: &str, expected: &str);
    /// Asserts the neighbour is connected and answers.
    fn assert_neighbour_fine(&mut self);
    /// [`Neighbourly::call`] waiting at most `within`.
    fn call_within(&mut self, tool: &str, args: &str, within: Duration) -> (String, Duration);
}

impl Neighbourly for Scripted {
    fn call(&mut self, tool: &str, args: &str) -> (String, Duration) {
        self.call_within(tool, args, COMMAND_TIMEOUT)
    }

    fn call_within(&mut self, tool: &str, args: &str, within: Duration) -> (String, Duration) {
        let started = Instant::now();
        let answer = self.run_within(&format!("/call {tool} {args}"), within);
        (answer.strip_suffix('\n').unwrap_or(&answer).to_string(), started.elapsed())
    }

    fn wait_for_row(&mut self, name: &str, expected: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let view = self.run("/mcp");
            if row(&view, name) == expected {
                return;
            }
            if Instant::now() >= deadline {
                assert_eq!(row(&view, name), expected, "{view}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn assert_neighbour_fine(&mut self) {
        let view = self.run("/mcp");
        assert_eq!(row(&view, "ok"), connected("ok"), "{view}");
        assert_eq!(self.call("echo", r#"{"text":"still fine"}"#).0, "still fine");
    }
}

/// Polls `check` every 20 ms until it holds or `within` passes.
fn eventually(within: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    check()
}

/// Open file descriptors of a live process (Linux).
fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap_or_else(|e| panic!("read /proc/{pid}/fd: {e}"))
        .count()
}

/// Peak resident memory of a live process (Linux), in KiB.
fn vm_hwm_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| panic!("read /proc/{pid}/status: {e}"));
    let line =
        status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or_else(|| panic!("no VmHWM:\n{status}"));
    line.split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("VmHWM is not a number: {line}"))
}

/// Samples a process's open descriptors every millisecond until dropped; the most seen.
struct FdWatch {
    stop: Arc<AtomicBool>,
    most: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

impl FdWatch {
    fn start(pid: u32) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let most = Arc::new(AtomicUsize::new(open_fds(pid)));
        let thread = {
            let (stop, most) = (Arc::clone(&stop), Arc::clone(&most));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Acquire) {
                    most.fetch_max(open_fds(pid), Ordering::AcqRel);
                    std::thread::sleep(Duration::from_millis(1));
                }
            })
        };
        Self { stop, most, thread: Some(thread) }
    }

    fn most(mut self) -> usize {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap_or_else(|_| panic!("the descriptor sampler panicked"));
        }
        self.most.load(Ordering::Acquire)
    }
}

impl Drop for FdWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

/// A local TCP server that accepts every connection and holds it open, counting them.
struct Listener {
    port: u16,
    accepted: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Listener {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind 127.0.0.1:0: {e}"));
        let port = listener.local_addr().unwrap_or_else(|e| panic!("the listener's address: {e}")).port();
        listener.set_nonblocking(true).unwrap_or_else(|e| panic!("set_nonblocking: {e}"));
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (accepted, stop) = (Arc::clone(&accepted), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut held = Vec::new();
                while !stop.load(Ordering::Acquire) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            held.push(stream);
                            accepted.fetch_add(1, Ordering::AcqRel);
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(2));
                        }
                        Err(e) => panic!("accept on 127.0.0.1:{port}: {e}"),
                    }
                }
            })
        };
        Self { port, accepted, stop, thread: Some(thread) }
    }

    fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::Acquire)
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The time limit counts computing after a request, not idling: the server idles past
/// `callMs` and is still connected, then its endless loop is stopped at `callMs`; only that
/// server goes to `error`, and `/mcp retry` starts a fresh run with a fresh limit.
#[test]
fn an_endless_loop_is_stopped_at_call_ms_and_retry_starts_it_afresh() {
    let env = Env::new();
    let before = write_pair(&env, "spin", hostile(&["spin"], json!({ "limits": { "callMs": 1500 } })));
    let mut s = Scripted::start(&env);
    let stopped = "kept computing for 1500 ms without waiting (limits.callMs), so it was stopped";

    std::thread::sleep(Duration::from_millis(2000));
    let view = s.run("/mcp");
    assert_eq!(row(&view, "spin"), connected("spin"), "idling counts against callMs:\n{view}");

    let (answer, took) = s.call("spin", "");
    assert_eq!(answer, format!("MCP server spin is not connected: {stopped}"));
    assert!(took >= Duration::from_millis(1500), "stopped after {took:?}, before callMs");
    assert!(took < Duration::from_secs(10), "stopped only after {took:?}");
    eprintln!("spin: the call ended after {took:?} (callMs 1500)");
    s.wait_for_row(
        "spin",
        &format!(
            "- spin | type=wasm | state=error | workspace=enabled | paused=no | tools=0 | error={stopped}"
        ),
    );
    s.assert_neighbour_fine();

    let view = s.run("/mcp retry spin");
    assert_eq!(row(&view, "spin"), connected("spin"), "{view}");
    let (answer, took) = s.call("spin", "");
    assert_eq!(answer, format!("MCP server spin is not connected: {stopped}"));
    assert!(took >= Duration::from_millis(1500), "the fresh run was stopped after {took:?}");
    s.assert_neighbour_fine();
    assert!(s.quit().success());
    before.assert_unchanged(&env);
}

/// `vec![1u8; 1 GiB]` under `memoryMb: 64` aborts in the guest: the server is stopped with the
/// memory limit as the reason and its own last words from stderr. Asked through
/// `try_reserve`, the same refusal is the guest's to handle: a clean tool error, and the
/// server stays connected. The host never holds the gibibyte.
#[test]
fn a_gibibyte_allocation_stops_at_the_memory_limit() {
    let env = Env::new();
    let before = write_pair(&env, "alloc", hostile(&["alloc"], json!({ "limits": { "memoryMb": 64 } })));
    let mut s = Scripted::start(&env);

    let (answer, _) = s.call("alloc", r#"{"how":"try_reserve"}"#);
    assert_eq!(
        answer,
        "tool error: cannot allocate 1073741824 bytes: memory allocation failed because the memory \
         allocator returned an error"
    );
    let view = s.run("/mcp");
    assert_eq!(row(&view, "alloc"), connected("alloc"), "{view}");

    let reason = "exceeded its memory limit (64 MiB); stderr: memory allocation of 1073741824 bytes \
                  failed | note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace";
    let (answer, _) = s.call("alloc", "");
    assert_eq!(answer, format!("MCP server alloc is not connected: {reason}"));
    // The view clips an error to 120 characters.
    let clipped: String = reason.chars().take(117).collect();
    s.wait_for_row(
        "alloc",
        &format!(
            "- alloc | type=wasm | state=error | workspace=enabled | paused=no | tools=0 | error={clipped}..."
        ),
    );
    s.assert_neighbour_fine();
    let hwm = vm_hwm_kib(s.process_id());
    eprintln!("alloc: toolport peak RSS {hwm} KiB");
    assert!(hwm < 512 * 1024, "the host's peak RSS reached {hwm} KiB");

    let view = s.run("/mcp retry alloc");
    assert_eq!(row(&view, "alloc"), connected("alloc"), "{view}");
    assert!(s.quit().success());
    before.assert_unchanged(&env);
}

/// The `sockets` server granted the port of a listener of its own, next to the neighbour, in
/// a running session: the listener, its address, the files' snapshot and the session.
fn granted_sockets(env: &Env) -> (Listener, String, Snapshot, Scripted) {
    let peer = Listener::start();
    let address = peer.address();
    let def = hostile(&["sockets", &address], json!({ "grants": { "hosts": [format!("tcp://{address}")] } }));
    let before = write_pair(env, "sockets", def);
    (peer, address, before, Scripted::start(env))
}

/// 100,000 connects to a granted port, none closed: the store's socket budget (32) holds, the
/// guest's first error is the refusal, the peer sees no more than 32 connections, the host's
/// descriptors stay within the budget, and they all come back when the call ends (a second
/// call gets its 32 again). The neighbour never notices.
#[test]
fn opening_sockets_in_a_loop_stops_at_the_socket_budget() {
    let env = Env::new();
    let (peer, address, before, mut s) = granted_sockets(&env);
    s.assert_neighbour_fine();

    let idle = open_fds(s.process_id());
    let watch = FdWatch::start(s.process_id());
    let (answer, took) = s.call("sockets", "");
    let most = watch.most();
    let expected = format!(
        "opened {SOCKET_BUDGET} of {SOCKET_ATTEMPTS} connections to {address}; first error: No file \
         descriptors available (os error 33)"
    );
    assert_eq!(answer, expected);
    assert!(
        eventually(Duration::from_secs(5), || peer.accepted() == SOCKET_BUDGET),
        "the peer accepted {} connections",
        peer.accepted()
    );
    let after = open_fds(s.process_id());
    eprintln!(
        "sockets: call took {took:?}; toolport's descriptors: {idle} idle, at most {most} during the call, {after} after"
    );
    assert!(most <= idle + SOCKET_BUDGET + 8, "{most} descriptors during the call, {idle} before it");
    assert!(after <= idle + 2, "{after} descriptors after the call, {idle} before it");

    // The host's own record of why: the server carries on, its row says what it was refused.
    let view = s.run("/mcp");
    let refused =
        format!("{} | denied=reached its socket limit ({SOCKET_BUDGET} open sockets)", connected("sockets"));
    assert_eq!(row(&view, "sockets"), refused, "{view}");
    s.assert_neighbour_fine();
    // The budget came back with the sockets: the next call gets as far as the first.
    assert_eq!(s.call("sockets", "").0, expected);
    assert!(eventually(Duration::from_secs(5), || peer.accepted() == 2 * SOCKET_BUDGET));
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(peer.accepted(), 2 * SOCKET_BUDGET, "the peer saw more than the budget");
    assert!(s.quit().success());
    before.assert_unchanged(&env);
}

/// Issue 26 item 13: 100,000 clock subscriptions, none dropped, fill the store's handle table
/// (`MAX_HANDLES` in host/src/plugin/sandbox/store.rs). The guest is stopped and its row names the
/// cap in the words of the other caps, not wasmtime's "resource table has no free keys"; the
/// neighbour never notices, and a retry starts a fresh run with an empty table.
#[test]
fn a_handle_flood_stops_at_the_handle_limit_and_names_it() {
    let env = Env::new();
    let before = write_pair(&env, "handles", hostile(&["handles"], json!({})));
    let mut s = Scripted::start(&env);
    let reason = format!("reached its handle limit ({HANDLE_LIMIT})");

    let (answer, _) = s.call("handles", "");
    assert_eq!(answer, format!("MCP server handles is not connected: {reason}"));
    s.wait_for_row(
        "handles",
        &format!(
            "- handles | type=wasm | state=error | workspace=enabled | paused=no | tools=0 | error={reason}"
        ),
    );
    s.assert_neighbour_fine();

    let view = s.run("/mcp retry handles");
    assert_eq!(row(&view, "handles"), connected("handles"), "{view}");
    let (answer, _) = s.call("handles", "");
    assert_eq!(answer, format!("MCP server handles is not connected: {reason}"));
    s.assert_neighbour_fine();
    assert!(s.quit().success());
    before.assert_unchanged(&env);
}

/// A connect to an address outside `grants.hosts` (another port is granted) never leaves the
/// host: the peer sees nothing, the guest gets `Permission denied`, and the host's record is on
/// the server's row.
#[test]
fn a_socket_to_an_address_not_granted_is_refused_and_recorded() {
    let env = Env::new();
    let peer = Listener::start();
    let address = peer.address();
    let other = Listener::start();
    let def = hostile(
        &["sockets", &address],
        json!({ "grants": { "hosts": [format!("tcp://{}", other.address())] } }),
    );
    let before = write_pair(&env, "sockets", def);
    let mut s = Scripted::start(&env);

    let (answer, _) = s.call("sockets", "");
    assert_eq!(
        answer,
        format!(
            "opened 0 of {SOCKET_ATTEMPTS} connections to {address}; first error: Permission denied (os error 2)"
        )
    );
    let view = s.run("/mcp");
    assert_eq!(
        row(&view, "sockets"),
        format!("{} | denied=not granted: tcp://{address}", connected("sockets"))
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!((peer.accepted(), other.accepted()), (0, 0));
    s.assert_neighbour_fine();
    assert!(s.quit().success());
    before.assert_unchanged(&env);
}

/// The same connect with no host granted at all: the refusal is still recorded by the host
/// (ARCHITECTURE's invariant), because sockets stay on and every connect reaches the check.
#[test]
fn a_socket_with_no_host_granted_at_all_is_refused_and_recorded() {
    let env = Env::new();
    let peer = Listener::start();
    let address = peer.address();
    let before = write_pair(&env, "sockets", hostile(&["sockets", &address], json!({})));
    let mut s = Scripted::start(&env);

    let (answer, _) = s.call("sockets", "");
    assert_eq!(
        answer,
        format!(
            "opened 0 of {SOCKET_ATTEMPTS} connections to {address}; first error: Permission denied (os error 2)"
        )
    );
    assert_eq!(peer.accepted(), 0);
    let view = s.run("/mcp");
    assert_eq!(
        row(&view, "sockets"),
        format!("{} | denied=not granted: tcp://{address}", connected("sockets"))
    );
    s.assert_neighbour_fine();
    assert!(s.quit().success());
    before.assert_unchanged(&env);
}

/// 100,000 refused sockets are one fault, not 100,000 log lines: the host's warnings about
/// refusals (`refused a plugin socket`, `denied a socket`) stay a handful per call, as a flood
/// of messages that are not JSON-RPC does (`faults::foreign_text`): each store warns once per
/// refusal it has not seen.
#[test]
fn a_socket_flood_costs_a_few_log_lines() {
    let env = Env::new();
    let (_peer, _, before, mut s) = granted_sockets(&env);
    let (answer, _) = s.call("sockets", "");
    assert!(answer.starts_with(&format!("opened {SOCKET_BUDGET} of {SOCKET_ATTEMPTS}")), "{answer}");
    s.assert_neighbour_fine();
    let log = s.stderr();
    assert!(s.quit().success());
    before.assert_unchanged(&env);
    let about_sockets: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("refused a plugin socket") || l.contains("denied a socket"))
        .collect();
    assert!(
        about_sockets.len() <= 10,
        "{} log lines about refused sockets for one call ({} bytes of stderr); the first: {:?}",
        about_sockets.len(),
        log.len(),
        about_sockets.first()
    );
}

/// A `/call` in a session on `bad` and the neighbour, then `/mcp`: the answer, the view, and
/// toolport's peak RSS (KiB) while it still runs.
fn flood_session(tool: &str, args: &str) -> (String, String, u64) {
    let env = Env::new();
    let bad = hostile(
        &["stderr"],
        // 50 MB through a debug build takes half a minute: room for a slow machine, and no
        // share of a core to keep to (it computes most of that time).
        json!({ "limits": { "callMs": 240_000, "cpuPercent": 100 }, "timeouts": { "callMs": 240_000 } }),
    );
    let before = write_pair(&env, "stderr", bad);
    let mut s = Scripted::start(&env);
    let (answer, took) = s.call_within(tool, args, Duration::from_secs(300));
    eprintln!("stderr: /call {tool} took {took:?}");
    let view = s.run("/mcp");
    let hwm = vm_hwm_kib(s.process_id());
    assert!(s.quit().success());
    before.assert_unchanged(&env);
    (answer, view, hwm)
}

/// 50 MB of stderr in 100-byte lines during a call: the call answers `done`, the server stays
/// connected, and toolport's peak memory is where it is without the flood (only a bounded
/// tail is kept). The baseline is the same session calling the neighbour instead.
#[test]
fn a_50_mb_stderr_flood_answers_done_and_memory_stays_bounded() {
    let (_, _, quiet) = flood_session("echo", r#"{"text":"quiet"}"#);
    let (answer, view, loud) = flood_session("stderr", "");
    assert_eq!(answer, "done");
    assert_eq!(row(&view, "stderr"), connected("stderr"), "{view}");
    assert_eq!(row(&view, "ok"), connected("ok"), "{view}");
    eprintln!("stderr flood: toolport peak RSS {loud} KiB (without the flood: {quiet} KiB)");
    assert!(loud < quiet + 16 * 1024, "peak RSS {loud} KiB with the flood, {quiet} KiB without");
}

/// One session on an `env`-mode server defined by `extra`: what its tool answers.
fn env_answer(args: &[&str], extra: Value) -> String {
    let env = Env::new();
    let before = write_pair(&env, "env", hostile(args, extra));
    let mut s = Scripted::start_with(&env, &[("TOOLPORT_TEST_SECRET", "s3cret")]);
    let (answer, _) = s.call("env", "");
    s.assert_neighbour_fine();
    assert!(s.quit().success());
    before.assert_unchanged(&env);
    answer
}

/// toolport's own environment (here holding `TOOLPORT_TEST_SECRET=s3cret`, and PATH, HOME and
/// whatever the test runner has) stays out: the guest sees exactly its configured `env` and the
/// names `grants.env` lets through.
#[test]
fn an_environment_variable_not_granted_is_not_set() {
    assert!(std::env::var_os("PATH").is_some() && std::env::var_os("HOME").is_some());
    let configured = json!({ "env": { "GIVEN": "1" } });
    assert_eq!(env_answer(&["env"], configured), "TOOLPORT_TEST_SECRET is not set\nvisible: GIVEN");
    assert_eq!(
        env_answer(&["env", "HOME"], json!({ "env": { "GIVEN": "1" } })),
        "HOME is not set\nvisible: GIVEN"
    );
    let granted =
        json!({ "env": { "GIVEN": "1" }, "grants": { "env": ["TOOLPORT_TEST_SECRET", "NOT_SET_ANYWHERE"] } });
    assert_eq!(env_answer(&["env"], granted), "value: s3cret\nvisible: GIVEN, TOOLPORT_TEST_SECRET");
}

/// A name both configured in `env` and granted: the configured value wins and the guest sees
/// the name once (not twice, the host's value first).
#[test]
fn a_configured_value_wins_over_the_same_name_granted() {
    let both = json!({
        "env": { "TOOLPORT_TEST_SECRET": "configured" },
        "grants": { "env": ["TOOLPORT_TEST_SECRET"] },
    });
    assert_eq!(env_answer(&["env"], both), "value: configured\nvisible: TOOLPORT_TEST_SECRET");
}

/// Only the granted folder exists for the guest, under its guest path: `/etc/passwd` and the
/// folder's own host path are not there at all, and a `..` or a symbolic link out of the folder
/// is refused.
#[test]
fn files_outside_the_granted_folder_cannot_be_read() {
    let env = Env::new();
    let outer = tempfile::tempdir().unwrap_or_else(|e| panic!("temp folder: {e}"));
    let granted = outer.path().join("granted");
    std::fs::create_dir_all(granted.join("sub")).unwrap_or_else(|e| panic!("mkdir: {e}"));
    std::fs::write(granted.join("sub/notes.txt"), "granted text").unwrap_or_else(|e| panic!("write: {e}"));
    std::fs::write(outer.path().join("outside.txt"), "outside text").unwrap_or_else(|e| panic!("write: {e}"));
    std::os::unix::fs::symlink(outer.path().join("outside.txt"), granted.join("link.txt"))
        .unwrap_or_else(|e| panic!("symlink: {e}"));
    let grants = json!({ "grants": { "dirs": [{ "host": granted, "guest": "/data", "mode": "ro" }] } });
    let before = write_pair(&env, "dir", hostile(&["dir"], grants));
    let mut s = Scripted::start(&env);
    let mut read = |path: &str| s.call("dir", &json!({ "path": path }).to_string()).0;

    assert_eq!(read("/data/sub/notes.txt"), "granted text");
    assert_eq!(
        read("/etc/passwd"),
        "tool error: cannot read /etc/passwd: No such file or directory (os error 44)"
    );
    let host_path = granted.join("sub/notes.txt").display().to_string();
    assert_eq!(
        read(&host_path),
        format!("tool error: cannot read {host_path}: No such file or directory (os error 44)")
    );
    for escape in ["/data/../outside.txt", "/data/sub/../../outside.txt", "/data/link.txt"] {
        assert_eq!(
            read(escape),
            format!("tool error: cannot read {escape}: Operation not permitted (os error 63)")
        );
    }
    let view = s.run("/mcp");
    assert_eq!(row(&view, "dir"), connected("dir"), "{view}");
    s.assert_neighbour_fine();
    assert!(s.quit().success());
    before.assert_unchanged(&env);
}
