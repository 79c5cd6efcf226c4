//! The hostile server (`tests/sandbox/hostile_server.py`) confined by `"sandbox": true`, one
//! family of attacks per case, each in one long-lived `toolport session` beside the unconfined
//! `demo-server` neighbour. Every attack must answer `refused: …`; each family has a control
//! (the same tool on what was granted) that must work, so a refusal is the sandbox's and not the
//! tool's. Afterwards toolport is alive, the neighbour answers, the planted secrets appeared in
//! no answer and no log line, and neither config file changed ([`Confined::finish`]).
//!
//! Run unconfined, the server answers `ESCAPED: …` to every attack: each case fails then.

use std::net::IpAddr;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr as UnixAddr, UnixListener};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{
    Confined, Folders, GRANTED_VAR, HOSTILE, SECRET_VAR, Trap, own_addresses, processes_holding, random_word,
};

/// How long a datagram or a connection may still be on its way after the attack answered.
const IN_FLIGHT: Duration = Duration::from_millis(300);

/// Polls `done` every 50 ms for up to 10 s; whether it came true.
fn wait_until(done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}

#[test]
fn files_outside_the_grants_are_neither_read_nor_written() {
    let mut c = Confined::start(Folders::new(), json!({}));
    let (ro, rw, home, outside) = (c.f.ro(), c.f.rw(), c.f.home(), c.f.outside());
    let toolport = c.toolport_pid();
    let neighbour = c.neighbour_pid();

    // Controls: what was granted, and what every sandboxed server gets.
    let notes = c.works("read", json!({ "path": ro.join("notes.txt") }));
    assert_eq!(notes, "ESCAPED: read 13 bytes: granted text\\n");
    c.works("read", json!({ "path": "/etc/os-release" }));
    c.works("write", json!({ "path": rw.join("made.txt") }));
    let info = c.info();
    let (own_home, own_tmp) = (info["HOME"].as_str().unwrap_or(""), info["TMPDIR"].as_str().unwrap_or(""));
    assert!(!own_home.is_empty() && !own_tmp.is_empty(), "a private HOME and TMPDIR: {info}");
    assert_ne!(std::path::Path::new(own_home), home, "the server's HOME is not toolport's");
    c.works("write", json!({ "path": format!("{own_tmp}/scratch.txt") }));
    c.works("write", json!({ "path": format!("{own_home}/.cache-file") }));

    let ssh_key = c.f.ssh_key();
    let reads = [
        ssh_key.clone(),
        home.join(".toolport/credentials.json"),
        outside.join("secret.txt"),
        c.env.store(),
        "/etc/shadow".into(),
        "/etc/gshadow".into(),
        "/etc/ssh/ssh_config".into(),
        format!("/proc/{toolport}/environ").into(),
        format!("/proc/{neighbour}/environ").into(),
        format!("/proc/self/root{}", ssh_key.display()).into(),
        format!("/proc/{toolport}/root{}", ssh_key.display()).into(),
        format!("/proc/1/root{}", ssh_key.display()).into(),
        format!("/proc/{toolport}/cwd/../../../../../../../..{}", ssh_key.display()).into(),
    ];
    for path in reads.iter().filter(|p| p.exists() || p.starts_with("/proc")) {
        c.refused("read", json!({ "path": path }));
    }

    let escape = std::env::temp_dir().join(random_word("toolport-escape"));
    let writes = [
        ro.join("new.txt"),
        ro.join("notes.txt"),
        escape.clone(),
        home.join("escape"),
        outside.join("escape"),
    ];
    for path in &writes {
        c.refused("write", json!({ "path": path }));
    }
    assert_eq!(std::fs::read_to_string(ro.join("notes.txt")).ok().as_deref(), Some("granted text\n"));
    for path in [&writes[0], &writes[2], &writes[3], &writes[4]] {
        assert!(!path.exists(), "{} was made", path.display());
    }
    assert!(rw.join("made.txt").exists(), "the control's file is on disk");
    c.finish();
}

/// Toolport was started with descriptor 7 open on the SSH key (as an agent may leave a file or
/// a socket open to what it starts); the confined server must not get it, nor any other.
#[test]
fn no_descriptor_of_toolports_reaches_the_server() {
    let mut c = Confined::start(Folders::new(), json!({}));
    // The wrapper opens it and then becomes toolport: wait for that, not for a guess of time.
    let link = format!("/proc/{}/fd/7", c.toolport_pid());
    let started = std::time::Instant::now();
    let mut fd = std::fs::read_link(&link).ok();
    while fd.as_ref() != Some(&c.f.ssh_key()) && started.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(20));
        fd = std::fs::read_link(&link).ok();
    }
    assert_eq!(fd, Some(c.f.ssh_key()), "the test's premise: toolport holds descriptor 7");
    assert_eq!(c.refused("inherited_fds", json!({})), "refused: none");
    c.finish();
}

#[test]
fn the_environment_holds_only_what_was_configured_or_granted() {
    let mut c = Confined::start(Folders::new(), json!({}));
    assert_eq!(c.refused("getenv", json!({ "name": SECRET_VAR })), "refused: not set");
    assert_eq!(
        c.call("getenv", json!({ "name": GRANTED_VAR })),
        format!("ESCAPED: {GRANTED_VAR}=granted-value")
    );
    assert_eq!(c.call("getenv", json!({ "name": "GIVEN" })), "ESCAPED: GIVEN=configured");
    let info = c.info();
    let names: Vec<&str> = info["env"].as_array().into_iter().flatten().filter_map(|n| n.as_str()).collect();
    for absent in [SECRET_VAR, "TOOLPORT_CACHE_DIR", "CARGO_MANIFEST_DIR", "RUST_BACKTRACE"] {
        assert!(!names.contains(&absent), "{absent} reached the server: {names:?}");
    }
    for proxy in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
        let url = info[proxy].as_str().unwrap_or("");
        assert!(url.starts_with("http://"), "{proxy} is the egress proxy: {info}");
    }
    assert_eq!(info["NODE_USE_ENV_PROXY"], json!("1"), "{info}");
    c.finish();
}

#[test]
fn no_connection_leaves_the_network_namespace() {
    let f = Folders::new();
    let mut ips: Vec<IpAddr> = vec![
        "127.0.0.1".parse().unwrap_or_else(|e| panic!("{e}")),
        "::1".parse().unwrap_or_else(|e| panic!("{e}")),
    ];
    // The machine's own addresses stand for "outside": a packet to them never leaves this
    // machine, whatever the sandbox does (the test aims at no other host).
    ips.extend(own_addresses());
    let tcp: Vec<Trap> = ips.iter().map(|ip| Trap::tcp(*ip)).collect();
    let udp: Vec<Trap> = ips.iter().map(|ip| Trap::udp(*ip)).collect();
    let name = random_word("toolport-test");
    let abstract_addr = UnixAddr::from_abstract_name(name.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    let abstract_hits =
        Trap::unix(UnixListener::bind_addr(&abstract_addr).unwrap_or_else(|e| panic!("bind @{name}: {e}")));
    let agent = f.outside().join("agent.sock");
    let agent_hits =
        Trap::unix(UnixListener::bind(&agent).unwrap_or_else(|e| panic!("bind {}: {e}", agent.display())));
    let mut c = Confined::start(f, json!({}));

    for trap in &tcp {
        let (host, port) = (trap.addr.ip().to_string(), trap.port());
        c.refused("connect", json!({ "host": host, "port": port, "proto": "tcp" }));
    }
    for trap in &udp {
        let (host, port) = (trap.addr.ip().to_string(), trap.port());
        let answer = c.call("connect", json!({ "host": host, "port": port, "proto": "udp" }));
        assert!(
            answer.starts_with("refused: ") || answer.starts_with("sent: "),
            "udp to {}: {answer}",
            trap.addr
        );
    }
    c.refused("abstract_connect", json!({ "name": name }));
    c.refused("unix_connect", json!({ "path": agent }));
    std::thread::sleep(IN_FLIGHT);
    for trap in tcp.iter().chain(&udp) {
        assert_eq!(trap.hits(), 0, "{} was reached", trap.addr);
    }
    assert_eq!(abstract_hits.load(std::sync::atomic::Ordering::SeqCst), 0, "@{name} was reached");
    assert_eq!(agent_hits.load(std::sync::atomic::Ordering::SeqCst), 0, "{} was reached", agent.display());
    c.finish();
}

#[test]
fn the_proxy_lets_through_granted_hosts_only_and_records_the_first_refusal() {
    let granted = Trap::http("hello from the granted server");
    let other = Trap::http("hello from the other server");
    let (g, o) = (granted.port(), other.port());
    let mut c =
        Confined::start(Folders::new(), json!({ "grants": { "hosts": [format!("http://127.0.0.1:{g}")] } }));

    let page = c.works(
        "proxy_request",
        json!({ "target": format!("http://127.0.0.1:{g}/page"), "host": format!("127.0.0.1:{g}") }),
    );
    assert!(page.ends_with(": hello from the granted server"), "{page}");
    let row = c.row(HOSTILE);
    assert!(!row.contains("denied="), "{row}");

    c.refused(
        "proxy_request",
        json!({ "target": format!("http://127.0.0.1:{o}/"), "host": format!("127.0.0.1:{o}") }),
    );
    let row = c.row(HOSTILE);
    assert!(row.starts_with("- hostile | type=stdio | state=connected |"), "{row}");
    assert!(row.ends_with(&format!(" | denied=not granted: http://127.0.0.1:{o}")), "{row}");

    // Other spellings of the port that is not granted: refused, or sent where the grant says.
    let tricks = [
        (format!("http://127.0.0.1:{g}@127.0.0.1:{o}/"), format!("127.0.0.1:{o}")),
        (format!("http://localhost:{o}/"), format!("localhost:{o}")),
        (format!("http://2130706433:{o}/"), format!("2130706433:{o}")),
        (format!("http://127.1:{o}/"), format!("127.1:{o}")),
        (format!("http://0x7f000001:{o}/"), format!("0x7f000001:{o}")),
        ("/".to_string(), format!("127.0.0.1:{o}")),
        (format!("http://127.0.0.1:{g}/"), format!("127.0.0.1:{o}")),
    ];
    for (target, host) in tricks {
        let answer = c.call("proxy_request", json!({ "target": target, "host": host }));
        assert!(!answer.contains("the other server"), "{target} (Host: {host}) reached it: {answer}");
    }
    c.refused("proxy_connect", json!({ "host": "127.0.0.1", "port": o }));
    std::thread::sleep(IN_FLIGHT);
    assert_eq!(other.hits(), 0, "the port not granted was reached");
    c.finish();
}

#[test]
fn other_processes_cannot_be_signalled_or_traced() {
    let mut sleeper = Command::new("sleep").arg("120").spawn().unwrap_or_else(|e| panic!("spawn sleep: {e}"));
    let mut c = Confined::start(Folders::new(), json!({}));
    let (toolport, neighbour, other) = (c.toolport_pid(), c.neighbour_pid(), sleeper.id());

    for pid in [toolport, neighbour, other] {
        c.refused("signal", json!({ "pid": pid, "sig": 0 }));
    }
    for pid in [other, neighbour, toolport] {
        c.refused("signal", json!({ "pid": pid, "sig": 15 }));
    }
    for pid in [toolport, neighbour, other] {
        c.refused("ptrace", json!({ "pid": pid }));
    }
    // Its own child: nothing but seccomp stands in the way.
    c.refused("ptrace", json!({ "pid": 0 }));
    assert!(matches!(sleeper.try_wait(), Ok(None)), "the other process was ended");
    assert_eq!(c.neighbour_pid(), neighbour, "the neighbour was ended");
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    c.finish();
}

#[test]
fn no_namespace_mount_or_forbidden_system_call_is_allowed() {
    let mut c = Confined::start(Folders::new(), json!({}));
    let rw = c.f.rw();
    let tmp = c.info()["TMPDIR"].as_str().unwrap_or("/tmp").to_string();
    c.refused("new_userns", json!({}));
    c.refused("mount", json!({ "target": rw }));
    c.refused("mount", json!({ "target": tmp }));
    c.refused("forbidden_syscalls", json!({}));
    c.finish();
}

#[test]
fn a_detached_grandchild_is_as_confined_and_ends_with_the_server() {
    let mut c = Confined::start(Folders::new(), json!({}));
    let token = random_word("toolport-orphan");
    let marker = c.f.outside().join("marker");
    let secret = c.f.ssh_key();
    let answer = c.refused("setsid_child", json!({ "secret": secret, "marker": marker, "token": token }));
    assert!(answer.contains("; read E") && answer.contains("; write E"), "{answer}");
    assert!(!marker.exists(), "the grandchild wrote {}", marker.display());
    // It answered before it became the sleeper: wait for that, so the check below means something.
    let living = wait_until(|| !processes_holding(&token).is_empty());
    assert!(living, "the grandchild did not live on as `python -c … {token}` while the server did");
    c.finish();
    // The session has quit: its servers are gone, and so is everything they started.
    wait_until(|| processes_holding(&token).is_empty());
    let left = processes_holding(&token);
    for pid in &left {
        let _ = Command::new("kill").arg("-KILL").arg(pid.to_string()).status();
    }
    assert!(left.is_empty(), "the grandchild outlived toolport: {left:?}");
}

#[test]
fn links_cannot_lead_out_of_a_granted_folder() {
    let mut c = Confined::start(Folders::new(), json!({}));
    let (ro, rw, secret) = (c.f.ro(), c.f.rw(), c.f.ssh_key());
    let outside = c.f.outside().join("secret.txt");
    for target in [&secret, &outside] {
        c.refused("symlink_out", json!({ "granted_dir": rw, "target": target }));
        c.refused("hardlink_out", json!({ "granted_dir": rw, "target": target }));
        c.refused("symlink_out", json!({ "granted_dir": ro, "target": target }));
    }
    // Control: a link within the granted folder is followed.
    c.works("symlink_out", json!({ "granted_dir": rw, "target": ro.join("notes.txt") }));
    let left: Vec<_> =
        std::fs::read_dir(&rw).into_iter().flatten().filter_map(Result::ok).map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "links left in the granted folder: {left:?}");
    c.finish();
}

/// The limits of the case below: small, so a sandbox that fails to hold them still cannot take
/// the machine down (the attacks stop at four times each).
const MEMORY_MB: u64 = 256;
const PROCESSES: u64 = 64;
const OPEN_FILES: u64 = 256;

#[test]
fn memory_processes_and_open_files_stop_at_their_limits() {
    let limits =
        json!({ "limits": { "memoryMb": MEMORY_MB, "processes": PROCESSES, "openFiles": OPEN_FILES } });
    let mut c = Confined::start(Folders::new(), limits);
    // Either refused by the limit or the server is gone (its call then fails): never all of it.
    let files = c.call("open_files", json!({ "n": OPEN_FILES * 4 }));
    assert!(files.starts_with("refused: EMFILE after "), "{files}");
    assert!(count_before(&files, " more files") < OPEN_FILES, "{files}");
    let forks = c.call("fork_bomb", json!({ "n": PROCESSES * 4 }));
    assert!(within_or_gone(&forks), "{forks}");
    if forks.starts_with("refused: ") {
        assert!(count_before(&forks, " children") < PROCESSES, "{forks}");
    }
    let memory = c.call("eat_memory", json!({ "mb": MEMORY_MB * 4 }));
    assert!(within_or_gone(&memory), "{memory}");
    if memory.starts_with("refused: ") {
        assert!(memory.starts_with("refused: MemoryError after "), "{memory}");
        assert!(count_before(&memory, " MiB") < MEMORY_MB, "{memory}");
    }
    c.finish();
}

/// An exhaustion attack's answer: refused by its limit, or the call failed because the
/// server is gone (killed by the kernel at its limit); never `ESCAPED`.
fn within_or_gone(answer: &str) -> bool {
    answer.starts_with("refused: ") || (answer.contains(HOSTILE) && !answer.starts_with("ESCAPED"))
}

/// The number an answer such as `refused: EAGAIN after 12 children` gives before `unit`.
fn count_before(answer: &str, unit: &str) -> u64 {
    let head = answer.strip_suffix(unit).unwrap_or_else(|| panic!("no {unit:?} at the end: {answer}"));
    let n = head.rsplit(' ').next().unwrap_or("");
    n.parse().unwrap_or_else(|_| panic!("no count in {answer}"))
}
