//! Stdio servers run confined (`"sandbox": true`, issue 46), through the built binary: a hostile
//! server of our own (`tests/sandbox/hostile_server.py`, Python SDK) trying one attack per tool
//! next to an unconfined `demo-server` that must keep answering (`hostile.rs`), and real servers
//! doing their work within their grants (`real_servers.rs`: server-filesystem, server-memory,
//! mcp-server-fetch, mcp-server-git, server-everything).
//!
//! The fixtures here plant what a confined server must not reach: a user's home (toolport's own
//! `HOME`) holding an SSH key and toolport's credentials, a secret in toolport's environment,
//! listeners on loopback and on the machine's own addresses, unix sockets, and processes to
//! signal. Every secret is a random word, so a test can say it never appeared in any output.

mod cgroups;
mod hostile;
mod package_runners;
mod real_servers;
mod unavailable;

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv6Addr, SocketAddr, TcpListener, UdpSocket};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::support::auth::python;
use crate::support::common::{Env, shared_cache};
use crate::support::faults::{Snapshot, write};
use crate::support::runtime::demo;
use crate::support::session::Scripted;

/// The hostile server's name in the store.
const HOSTILE: &str = "hostile";
/// The unconfined neighbour: `demo-server` with its tools prefixed `ok_`.
const OK: &str = "ok";
/// The variable in toolport's own environment a confined server must not see.
const SECRET_VAR: &str = "TOOLPORT_TEST_SECRET";
/// The variable `grants.env` lets through (set in toolport's environment).
const GRANTED_VAR: &str = "TOOLPORT_TEST_GRANTED";

/// `tests/sandbox/<file>`.
pub fn sandbox_file(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sandbox").join(file)
}

/// A random word: a secret no test could print by chance.
pub fn random_word(prefix: &str) -> String {
    let a = RandomState::new().build_hasher().finish();
    let mut h = RandomState::new().build_hasher();
    h.write_u64(a ^ u64::from(std::process::id()));
    format!("{prefix}-{a:016x}{:016x}", h.finish())
}

/// `dir` made in the system's temp folder, as the sandbox sees it (real path).
fn temp_dir(what: &str) -> TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{what}: {e}"))
}

fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write_file(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("mkdir {}: {e}", parent.display()));
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// What a confined server must not reach, planted before toolport starts, and the folders its
/// grants name. Every path is real (no link on the way), as the sandbox compares them.
pub struct Folders {
    /// Toolport's own `HOME`: `.ssh/id_rsa` and `.toolport/credentials.json`, each holding
    /// [`Folders::secret`].
    user_home: TempDir,
    /// A folder nothing grants, holding `secret.txt` (the secret too).
    outside: TempDir,
    /// Granted read-only: `notes.txt` ("granted text").
    ro: TempDir,
    /// Granted read-write, empty.
    rw: TempDir,
    /// What every planted file holds.
    pub secret: String,
}

impl Folders {
    pub fn new() -> Self {
        let f = Self {
            user_home: temp_dir("user home"),
            outside: temp_dir("outside"),
            ro: temp_dir("ro"),
            rw: temp_dir("rw"),
            secret: random_word("planted-secret"),
        };
        write_file(&f.home().join(".ssh/id_rsa"), &format!("-----BEGIN KEY-----\n{}\n", f.secret));
        write_file(
            &f.home().join(".toolport/credentials.json"),
            &format!("{{\"token\":\"{}\"}}\n", f.secret),
        );
        write_file(&f.outside().join("secret.txt"), &format!("{}\n", f.secret));
        write_file(&f.ro().join("notes.txt"), "granted text\n");
        f
    }

    pub fn home(&self) -> PathBuf {
        real(self.user_home.path())
    }

    pub fn outside(&self) -> PathBuf {
        real(self.outside.path())
    }

    pub fn ro(&self) -> PathBuf {
        real(self.ro.path())
    }

    pub fn rw(&self) -> PathBuf {
        real(self.rw.path())
    }

    /// `~/.ssh/id_rsa` of toolport's `HOME`.
    pub fn ssh_key(&self) -> PathBuf {
        self.home().join(".ssh/id_rsa")
    }
}

/// One long-lived `toolport session` holding the hostile server, confined, next to the
/// unconfined neighbour; and everything planted around it.
pub struct Confined {
    pub env: Env,
    pub f: Folders,
    /// The value of [`SECRET_VAR`] in toolport's environment.
    pub secret_env: String,
    pub session: Scripted,
    snapshot: Snapshot,
    /// Every answer so far, for [`Confined::finish`]'s look for the secrets.
    transcript: String,
}

impl Confined {
    /// The hostile server with `grants.dirs` of `ro` and `rw` (`rw` read-write), `grants.env`
    /// of [`GRANTED_VAR`], `env: {"GIVEN": "configured"}`, and `extra` keys of its definition
    /// merged in (`limits`; `grants` key by key); the neighbour beside it; the session started
    /// with toolport's `HOME` the planted one, [`SECRET_VAR`] in its environment and descriptor
    /// 7 open on the planted SSH key.
    pub fn start(f: Folders, extra: Value) -> Self {
        let env = Env::new();
        let secret_env = random_word("environment-secret");
        let mut def = json!({
            "command": python(),
            "args": [sandbox_file("hostile_server.py")],
            "sandbox": true,
            "env": { "GIVEN": "configured" },
            "grants": {
                "dirs": [f.ro(), { "host": f.rw(), "mode": "rw" }],
                "env": [GRANTED_VAR],
            },
        });
        merge(&mut def, extra);
        let snapshot = write(&env, &[(HOSTILE, def), (OK, demo(&["--prefix", "ok_"]))], json!({}), json!({}));
        let home = f.home().display().to_string();
        let cache = shared_cache().display().to_string();
        let vars = [
            ("HOME", home.as_str()),
            (SECRET_VAR, secret_env.as_str()),
            (GRANTED_VAR, "granted-value"),
            ("TOOLPORT_CACHE_DIR", cache.as_str()),
        ];
        // Toolport's parent leaves it descriptor 7, open on the SSH key (no close-on-exec), as
        // an agent may leave an open file or socket to what it starts.
        let key = f.ssh_key().display().to_string();
        let session =
            Scripted::start_wrapped(&env, &vars, &["bash", "-c", r#"exec 7<"$0"; exec "$@""#, key.as_str()]);
        Self { env, f, secret_env, session, snapshot, transcript: String::new() }
    }

    /// `/call <tool> <arguments>`, its answer without the final newline.
    pub fn call(&mut self, tool: &str, arguments: Value) -> String {
        let answer = self.session.run(&format!("/call {tool} {arguments}")).trim_end().to_string();
        // Shown with a failing case's output: every attack and what it got.
        eprintln!("{tool} {arguments} -> {answer}");
        self.transcript.push_str(&answer);
        self.transcript.push('\n');
        answer
    }

    /// Calls the hostile server's `tool` and asserts the attack was refused.
    pub fn refused(&mut self, tool: &str, arguments: Value) -> String {
        let answer = self.call(tool, arguments.clone());
        assert!(answer.starts_with("refused: "), "{tool} {arguments} was not refused: {answer}");
        answer
    }

    /// Calls the hostile server's `tool` on what it was granted (a control: the attack's code
    /// works, so its refusals elsewhere are the sandbox's) and asserts it worked.
    pub fn works(&mut self, tool: &str, arguments: Value) -> String {
        let answer = self.call(tool, arguments.clone());
        assert!(
            answer.starts_with("ESCAPED: "),
            "{tool} {arguments} failed on what it was granted: {answer}"
        );
        answer
    }

    /// What the hostile server's `info` says, as JSON.
    pub fn info(&mut self) -> Value {
        let answer = self.call("info", json!({}));
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("info is not JSON ({e}): {answer}"))
    }

    /// toolport's own process id.
    pub fn toolport_pid(&self) -> u32 {
        self.session.process_id()
    }

    /// The neighbour's process id (its `ok_pid`).
    pub fn neighbour_pid(&mut self) -> u32 {
        self.session.pid("ok_")
    }

    /// The row of `name` in `/mcp`.
    pub fn row(&mut self, name: &str) -> String {
        let view = self.session.run("/mcp");
        let start = format!("- {name} |");
        view.lines()
            .find(|l| l.starts_with(&start))
            .unwrap_or_else(|| panic!("no row {name}:\n{view}"))
            .to_string()
    }

    /// The end of every case: toolport is alive, the neighbour answers, nothing printed any
    /// secret, the session quits cleanly and neither config file changed.
    pub fn finish(mut self) {
        assert!(matches!(self.session.child.try_wait(), Ok(None)), "toolport is gone");
        assert_eq!(self.call("ok_echo", json!({ "message": "still fine" })), "still fine");
        let row = self.row(OK);
        assert!(row.starts_with("- ok | type=stdio | state=connected |"), "{row}");
        let stderr = self.session.stderr();
        for secret in [&self.f.secret, &self.secret_env] {
            assert!(
                !self.transcript.contains(secret.as_str()),
                "a secret was answered:\n{}",
                self.transcript
            );
            assert!(!stderr.contains(secret.as_str()), "a secret was logged:\n{stderr}");
        }
        let Confined { env, session, snapshot, .. } = self;
        assert!(session.quit().success());
        snapshot.assert_unchanged(&env);
    }
}

/// Merges `extra`'s keys into `def`; an object into an object key by key.
fn merge(def: &mut Value, extra: Value) {
    if let (Some(def), Value::Object(extra)) = (def.as_object_mut(), extra) {
        for (key, value) in extra {
            match (def.get_mut(&key), value) {
                (Some(Value::Object(inner)), Value::Object(more)) => inner.extend(more),
                (_, value) => {
                    def.insert(key, value);
                }
            }
        }
    }
}

/// A listener the sandbox must keep a server from: it counts what reaches it.
pub struct Trap {
    pub addr: SocketAddr,
    hits: Arc<AtomicUsize>,
}

impl Trap {
    /// A TCP listener on `ip`, a free port.
    pub fn tcp(ip: IpAddr) -> Self {
        let listener = TcpListener::bind((ip, 0)).unwrap_or_else(|e| panic!("bind tcp {ip}: {e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("addr: {e}"));
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        std::thread::spawn(move || {
            for _ in listener.incoming() {
                counted.fetch_add(1, Ordering::SeqCst);
            }
        });
        Self { addr, hits }
    }

    /// A UDP socket on `ip`, a free port, counting datagrams.
    pub fn udp(ip: IpAddr) -> Self {
        let socket = UdpSocket::bind((ip, 0)).unwrap_or_else(|e| panic!("bind udp {ip}: {e}"));
        let addr = socket.local_addr().unwrap_or_else(|e| panic!("addr: {e}"));
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 512];
            while socket.recv_from(&mut buf).is_ok() {
                counted.fetch_add(1, Ordering::SeqCst);
            }
        });
        Self { addr, hits }
    }

    /// A unix socket listening at `path`, or in the abstract namespace under `name`.
    pub fn unix(listener: UnixListener) -> Arc<AtomicUsize> {
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        std::thread::spawn(move || {
            for _ in listener.incoming() {
                counted.fetch_add(1, Ordering::SeqCst);
            }
        });
        hits
    }

    /// An HTTP server on loopback answering every request with `body`, counting connections.
    pub fn http(body: &'static str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("addr: {e}"));
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        std::thread::spawn(move || {
            for mut conn in listener.incoming().map_while(Result::ok) {
                counted.fetch_add(1, Ordering::SeqCst);
                let mut request = [0u8; 4096];
                let _ = conn.read(&mut request);
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Self { addr, hits }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// How many connections or datagrams reached it so far.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// The machine's own addresses that are not loopback or link-local (`/proc/net/fib_trie`'s
/// local host routes, `/proc/net/if_inet6`'s global ones): addresses outside a server's network
/// namespace that are still this machine's, so a test aims at them and never at another host.
pub fn own_addresses() -> Vec<IpAddr> {
    let mut found: Vec<IpAddr> = Vec::new();
    let trie = std::fs::read_to_string("/proc/net/fib_trie").unwrap_or_default();
    let mut last: Option<IpAddr> = None;
    for line in trie.lines() {
        let line = line.trim();
        if let Some(addr) = line.strip_prefix("|-- ") {
            last = addr.parse().ok();
        } else if line == "/32 host LOCAL"
            && let Some(ip) = last.filter(|ip| !ip.is_loopback() && !found.contains(ip))
        {
            found.push(ip);
        }
    }
    let inet6 = std::fs::read_to_string("/proc/net/if_inet6").unwrap_or_default();
    for line in inet6.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [hex, _, _, scope, _, name] = fields[..] else { continue };
        if scope != "00" || name == "lo" || hex.len() != 32 {
            continue;
        }
        if let Ok(bits) = u128::from_str_radix(hex, 16) {
            let ip = IpAddr::V6(Ipv6Addr::from(bits));
            if !found.contains(&ip) {
                found.push(ip);
            }
        }
    }
    found
}

/// The pids of processes whose command line holds `token`.
pub fn processes_holding(token: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.windows(token.len()).any(|w| w == token.as_bytes()))
        })
        .collect()
}
