//! The fault suite, shared pools and stuck threads (issue 11, items 5 and 7): a transport that
//! hoards sockets, one that holds an instance per server for 130 servers, and one that opens a
//! FIFO in a granted folder. Each hits a cap of its own, or gets an error instead of a stuck
//! thread, with a message that names it; the stdio neighbour keeps connecting, answering and
//! retrying; nothing is left behind (descriptors, threads, a process that cannot exit).

use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolport::ServerState;

use crate::support::common::{Env, toolport_path};
use crate::support::faults::{OK, assert_failed, assert_neighbour_fine, healthy, row, start, write};
use crate::support::transport::{Exposed, Framing, built_plugin};

/// Sockets one plugin store may hold (`plugin/socket_budget.rs`).
const MAX_SOCKETS: usize = 32;
/// Live instances one third-party plugin may hold (`plugin/admission.rs`).
const PLUGIN_STORES: usize = 128;
/// How long any of these may take before the test calls it a hang (not a timing check).
const HANG: Duration = Duration::from_secs(120);

/// The hostile transport, granted `dirs`.
fn hostile(dirs: &[&Path]) -> Value {
    json!({
        "kind": "transport",
        "path": built_plugin("fixture_transport_hostile"),
        "grants": { "dirs": dirs },
    })
}

/// A TCP listener on 127.0.0.1 that accepts every connection and counts it (the test
/// process's own descriptors are counted, so it does not keep them).
fn keeping_listener() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    let url = format!("tcp://{}", listener.local_addr().unwrap_or_else(|e| panic!("addr: {e}")));
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&accepted);
    std::thread::spawn(move || {
        for _stream in listener.incoming().flatten() {
            count.fetch_add(1, Ordering::AcqRel);
        }
    });
    (url, accepted)
}

/// Open file descriptors of this test process.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map(|d| d.count()).unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_socket_hoarding_transport_stops_at_its_cap_and_gives_them_back() {
    let (url, accepted) = keeping_listener();
    let env = Env::new();
    let before = write(
        &env,
        &[("hoard", json!({ "type": "hostile", "url": url })), (OK, healthy())],
        json!({ "hostile": hostile(&[]) }),
        json!({}),
    );
    let runtime = start(&env).await;
    // The plugin hides why its 33rd connect failed; the host says which cap it hit.
    let refused = "transport plugin hostile: reached its socket limit (32 open sockets)";
    assert_failed(&runtime, "hoard", refused);
    let waited = tokio::time::timeout(HANG, async {
        while accepted.load(Ordering::Acquire) < MAX_SOCKETS {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "the listener saw {} connections", accepted.load(Ordering::Acquire));
    assert_eq!(accepted.load(Ordering::Acquire), MAX_SOCKETS, "exactly the cap got through");
    assert_neighbour_fine(&runtime).await;

    // Each retry hoards again in a fresh store and gives every socket back when it fails:
    // the host's descriptors do not grow with the retries.
    let fds = open_fds();
    for _ in 0..5 {
        runtime.retry("hoard").await.unwrap_or_else(|e| panic!("retry: {e:#}"));
        assert_failed(&runtime, "hoard", refused);
    }
    assert!(open_fds() <= fds + 8, "descriptors grew from {fds} to {} over 5 retries", open_fds());
    runtime.retry(OK).await.unwrap_or_else(|e| panic!("retry ok: {e:#}"));
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

#[tokio::test(flavor = "multi_thread")]
async fn one_transport_holding_an_instance_per_server_stops_at_its_own_cap() {
    let (url, _) = keeping_listener();
    let env = Env::new();
    let names: Vec<String> = (0..PLUGIN_STORES + 2).map(|i| format!("idle-{i:03}")).collect();
    // Short enough that the test does not wait long for the idle ones to give up, long
    // enough that all of them hold their instance at the same time.
    let idle = json!({ "type": "hostile", "url": url, "timeouts": { "connectMs": 8000 } });
    let mut servers: Vec<(&str, Value)> = names.iter().map(|n| (n.as_str(), idle.clone())).collect();
    servers.push((OK, healthy()));
    let before = write(&env, &servers, json!({ "hostile": hostile(&[]) }), json!({}));
    let runtime = start(&env).await;
    let capped = "transport plugin hostile: reached its instance limit (128 live instances)";
    let errors: Vec<Option<String>> = names.iter().map(|n| row(&runtime, n).error).collect();
    let refused = errors.iter().filter(|e| e.as_deref() == Some(capped)).count();
    assert_eq!(refused, 2, "two servers past the plugin's cap: {:?}", &errors[..4]);
    assert!(
        names.iter().all(|n| row(&runtime, n).state == ServerState::Error),
        "the idle ones time out, the capped ones fail at once"
    );
    // The stdio neighbour's tools went through the built-in shape while the plugin held 128
    // instances: its share is not the neighbour's problem.
    assert_neighbour_fine(&runtime).await;
    runtime.retry(OK).await.unwrap_or_else(|e| panic!("retry ok: {e:#}"));
    assert_neighbour_fine(&runtime).await;
    // The idle connections are closed by now: a retry gets an instance again.
    let first_capped = names.iter().find(|n| row(&runtime, n).error.as_deref() == Some(capped));
    let Some(first_capped) = first_capped else { panic!("no capped row") };
    runtime.retry(first_capped).await.unwrap_or_else(|e| panic!("retry capped: {e:#}"));
    assert_ne!(row(&runtime, first_capped).error.as_deref(), Some(capped));
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

/// A granted folder with a FIFO nobody writes to and a regular file beside it.
fn folder_with_fifo(env: &Env) -> std::path::PathBuf {
    let dir = env.root().join("granted");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("mkdir: {e}"));
    std::fs::write(dir.join("notes.txt"), "fine").unwrap_or_else(|e| panic!("write: {e}"));
    let fifo = dir.join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo {}", fifo.display());
    dir
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fifo_in_a_granted_folder_is_refused_not_waited_on() {
    let exposed = Exposed::start(Framing::Tcp, &[]);
    let env = Env::new();
    let dir = folder_with_fifo(&env);
    let path = |f: &str| dir.join(f).to_string_lossy().into_owned();
    let reading = |f: &str| json!({ "type": "hostile", "url": exposed.url(), "args": [path(f)] });
    let before = write(
        &env,
        &[("read-fifo", reading("pipe")), ("read-file", reading("notes.txt")), (OK, healthy())],
        json!({ "hostile": hostile(&[&dir]) }),
        json!({}),
    );
    let runtime = start(&env).await;
    // wasi-libc words the host's `access` as EACCES: "Permission denied".
    let refused =
        format!("transport plugin hostile: cannot read {}: Permission denied (os error 2)", path("pipe"));
    assert_failed(&runtime, "read-fifo", &refused);
    // The regular file beside it reads, and the server behind it connects as usual.
    let file = row(&runtime, "read-file");
    assert_eq!((file.state, file.tools, file.error.as_deref()), (ServerState::Connected, 6, None));
    // Retrying does not leave a thread behind each time: every retry answers at once.
    let retries = tokio::time::timeout(HANG, async {
        for _ in 0..20 {
            runtime.retry("read-fifo").await.unwrap_or_else(|e| panic!("retry: {e:#}"));
            assert_failed(&runtime, "read-fifo", &refused);
        }
    })
    .await;
    assert!(retries.is_ok(), "retries of the FIFO reader hung");
    assert_neighbour_fine(&runtime).await;
    let shutdown = tokio::time::timeout(HANG, runtime.shutdown()).await;
    assert!(shutdown.is_ok(), "shutdown hung");
    before.assert_unchanged(&env);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_binary_exits_when_a_plugin_meets_a_fifo() {
    let (url, _) = keeping_listener();
    let env = Env::new();
    let dir = folder_with_fifo(&env);
    let fifo = dir.join("pipe").to_string_lossy().into_owned();
    write(
        &env,
        &[("read-fifo", json!({ "type": "hostile", "url": url, "args": [fifo] })), (OK, healthy())],
        json!({ "hostile": hostile(&[&dir]) }),
        json!({}),
    );
    let mut cmd = tokio::process::Command::new(toolport_path());
    cmd.arg("--home").arg(env.home()).arg("--workspace").arg(env.root()).args(["mcp", "list"]);
    cmd.env_remove("RUST_LOG").env_remove("TOOLPORT_HOME").kill_on_drop(true);
    let output = tokio::time::timeout(HANG, cmd.output()).await;
    let Ok(Ok(output)) = output else { panic!("toolport mcp list did not exit: {output:?}") };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().find(|l| l.contains("read-fifo")).unwrap_or_default().to_string();
    assert!(line.contains("state=error") && line.contains("cannot read"), "{stdout}");
    assert!(stdout.lines().any(|l| l.contains(OK) && l.contains("state=connected")), "{stdout}");
}
