//! The fault suite, names and datagrams (issue 11, items 1 and 2): the hostile transport looks
//! up names it was not granted, and sends UDP to a granted peer and to one it was not. A refused
//! lookup or datagram fails only that server, with the host's own record of the refusal
//! (`not granted: …`); what was granted works, both ways; the healthy neighbour keeps answering.

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use toolport::ServerState;

use crate::support::common::Env;
use crate::support::faults::{OK, assert_failed, assert_neighbour_fine, healthy, row, start, write};
use crate::support::transport::{Exposed, Framing, built_plugin};

/// The hostile transport under `hosts` grants.
fn hostile(hosts: &[&str]) -> Value {
    json!({
        "kind": "transport",
        "path": built_plugin("fixture_transport_hostile"),
        "grants": { "hosts": hosts },
    })
}

/// A server of plugin `plugin` on `exposed` whose hostile mode gets `args`.
fn via(plugin: &str, exposed: &Exposed, args: &[String]) -> Value {
    json!({ "type": plugin, "url": exposed.url(), "args": args })
}

#[tokio::test(flavor = "multi_thread")]
async fn only_granted_names_resolve() {
    let exposed = Exposed::start(Framing::Tcp, &[]);
    let env = Env::new();
    let arg = |name: &str| vec![name.to_string()];
    let before = write(
        &env,
        &[
            // Granted only `api.example.com` (the reproduction), it tries a name that
            // carries a secret to whichever resolver answers, and `localhost`.
            ("resolve-secret", via("hostile", &exposed, &arg("secret-token-abc123.example.org"))),
            ("resolve-localhost", via("hostile", &exposed, &arg("LocalHost"))),
            // The same component granted `localhost` resolves it, then serves as usual.
            ("resolve-granted", via("named", &exposed, &arg("localhost"))),
            (OK, healthy()),
        ],
        json!({
            "hostile": hostile(&["https://api.example.com:443"]),
            "named": hostile(&["tcp://localhost:*"]),
        }),
        json!({}),
    );
    let runtime = start(&env).await;
    assert_failed(
        &runtime,
        "resolve-secret",
        "transport plugin hostile: not granted: name lookup of secret-token-abc123.example.org",
    );
    assert_failed(
        &runtime,
        "resolve-localhost",
        "transport plugin hostile: not granted: name lookup of LocalHost",
    );
    let granted = row(&runtime, "resolve-granted");
    assert_eq!((granted.state, granted.tools, granted.error.as_deref()), (ServerState::Connected, 6, None));
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

/// A UDP socket on 127.0.0.1 that answers every datagram with `echo: ` and its bytes, and
/// reports what it heard.
struct UdpEcho {
    addr: SocketAddr,
    heard: mpsc::Receiver<Vec<u8>>,
    stop: Arc<AtomicBool>,
}

impl UdpEcho {
    fn start() -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
        let addr = socket.local_addr().unwrap_or_else(|e| panic!("local_addr: {e}"));
        // Short reads so the thread notices `stop`; not a limit on the test.
        socket.set_read_timeout(Some(Duration::from_millis(100))).unwrap_or_else(|e| panic!("{e}"));
        let (tell, heard) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut buf = [0u8; 2048];
            while !stopped.load(Ordering::Relaxed) {
                if let Ok((n, from)) = socket.recv_from(&mut buf) {
                    let _ = socket.send_to(&[&b"echo: "[..], &buf[..n]].concat(), from);
                    let _ = tell.send(buf[..n].to_vec());
                }
            }
        });
        Self { addr, heard, stop }
    }
}

impl Drop for UdpEcho {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn granted_udp_works_both_ways_and_other_peers_are_refused_as_udp() {
    let exposed = Exposed::start(Framing::Tcp, &[]);
    let peer = UdpEcho::start();
    let stranger = UdpEcho::start();
    let env = Env::new();
    let granted = format!("udp://{}", peer.addr);
    let before = write(
        &env,
        &[
            ("udp-granted", via("hostile", &exposed, &[peer.addr.to_string()])),
            ("udp-stranger", via("hostile", &exposed, &[stranger.addr.to_string()])),
            (OK, healthy()),
        ],
        json!({ "hostile": hostile(&[&granted]) }),
        json!({}),
    );
    let runtime = start(&env).await;
    // Connected means the plugin heard the echo: the datagram went out and the answer came in.
    let r = row(&runtime, "udp-granted");
    assert_eq!((r.state, r.tools, r.error.as_deref()), (ServerState::Connected, 6, None), "{r:?}");
    assert_eq!(peer.heard.try_recv().ok().as_deref(), Some(&b"ping from the sandbox"[..]));
    assert_failed(
        &runtime,
        "udp-stranger",
        &format!("transport plugin hostile: not granted: udp://{}", stranger.addr),
    );
    assert!(stranger.heard.try_recv().is_err(), "the refused peer must never see a datagram");
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}
