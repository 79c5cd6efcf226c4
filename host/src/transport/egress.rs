//! The one way out of a confined stdio server (issue 46): an HTTP proxy toolport runs for it.
//!
//! The server runs in a network namespace of its own with no route out; the launcher hands us a
//! TCP listener bound to `127.0.0.1:<port>` inside that namespace, and the server is told to use
//! it as its HTTP(S) proxy. Everything it reaches goes through here, so every destination is
//! checked against the server's `grants.hosts` by the host, in the sandbox's words, and every
//! refusal is recorded by the host (the server cannot hide or misstate why it failed).
//!
//! What the proxy takes, and nothing else:
//! - `CONNECT host:port`, a tunnel. What goes through it is opaque (TLS, a WebSocket, anything),
//!   so its scheme is unknown: a tunnel is granted when any `https`, `wss`, `http` or `ws`
//!   pattern allows `host:port`. A refusal is worded `https://host:port` (`http://` on port 80),
//!   the grant most tunnels want. `tcp://` grants do not open tunnels: they are the raw sockets
//!   of a `wasm` server, which an HTTP proxy client does not ask for.
//! - Absolute-form plain HTTP (`GET http://host[:port]/path`), checked as `http://host:port`,
//!   sent on in origin-form with `Connection: close` and the `Host` of the URL (RFC 9112 §3.2.2:
//!   the client's `Host` is ignored, so it cannot name another site behind the same address).
//!   One client connection carries requests to one destination only: after the head, bytes are
//!   copied as they are until the answer ends.
//!
//! Names are resolved here, on the host's network, so `localhost` or `127.0.0.1` in a grant is
//! the host's own loopback. What a tunnel carries is not read (a TLS `Host` or SNI naming another
//! site on a granted address is out of reach). Nothing of a URL but `scheme://host:port` is
//! logged, recorded or echoed: its path, query and user info never are.
//!
//! This file is the proxy itself (its record, the accept loop, each connection's decision, the
//! connect); a request head is read and parsed in `head.rs`, and the bytes let through and the
//! proxy's own answers are `relay.rs`'s. Its tests are in `tests.rs`.

mod head;
mod relay;

use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::config::HostPattern;
use crate::plugin::Denials;
use head::{Dest, OVERSIZED_HEAD, Request, parse_head, read_head};
use relay::{Status, answer, close_after_answer, relay_one_exchange, tunnel, write_answer};

/// How long a client has to send its request head, so an idle connection does not stay forever.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long name resolution and the connect together may take before the client gets a `502`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once: each holds two of the host's descriptors, and a server opening
/// connections in a loop must not exhaust them. Past it, new ones wait in the listen backlog.
const MAX_CONNECTIONS: usize = 256;
/// The pause after the host ran out of descriptors or memory to accept with, instead of spinning.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);
/// The schemes whose grants open a tunnel.
const TUNNEL_SCHEMES: [&str; 4] = ["https", "wss", "http", "ws"];

/// Destinations the proxy refused a server, as `scheme://host:port`, recorded by the host so the
/// sandboxed server cannot hide them: the wasm sandbox's record ([`Denials`]: each once, the
/// first eight kept). Cheap to clone: every clone is the same record.
#[derive(Debug, Clone, Default)]
pub(crate) struct EgressRefusals(Denials);

impl EgressRefusals {
    /// Records `target`; whether it is news, so a server retrying the same refused destination
    /// in a loop costs one log line, not one per attempt.
    fn record(&self, target: String) -> bool {
        self.0.record(target)
    }

    /// Every kept refusal in the status view's words (`not granted: https://example.com:443`),
    /// oldest first.
    pub fn all(&self) -> Vec<String> {
        self.0.all().into_iter().map(|target| format!("not granted: {target}")).collect()
    }
}

/// `not granted: <target>`, and the command that grants it when the server has a name.
fn not_granted(target: &str, server: &str) -> String {
    if server.is_empty() {
        return format!("not granted: {target}");
    }
    format!("not granted: {target} (grant it with: {})", crate::fix_command::grant_host_fix(server, target))
}

/// A refusal as [`EgressRefusals::all`] words it, followed by the command that grants it:
/// `not granted: https://x:443 (grant it with: toolport mcp grant fs --host https://x:443)`.
pub(crate) fn with_fix(refusal: &str, server: &str) -> String {
    match refusal.strip_prefix("not granted: ") {
        Some(target) => not_granted(target, server),
        None => refusal.to_string(),
    }
}

/// Serves `listener` (the socket the launcher bound inside the sandbox's namespace) as the
/// egress proxy of `server`, whose `hosts` grants decide what it reaches; refusals go to
/// `refusals`. `server` names the server in the printed fix (`toolport mcp grant <server> …`);
/// empty, the refusal says only what was refused. Must be called inside a tokio runtime. The
/// task serves until `stop` is cancelled or the listener fails; connections in flight are
/// dropped with it.
pub(crate) fn spawn(
    listener: std::net::TcpListener,
    server: String,
    hosts: Vec<HostPattern>,
    refusals: EgressRefusals,
    stop: CancellationToken,
) -> io::Result<JoinHandle<()>> {
    let runtime = tokio::runtime::Handle::try_current().map_err(io::Error::other)?;
    listener.set_nonblocking(true)?;
    let listener = TcpListener::from_std(listener)?;
    let proxy = Arc::new(Proxy { server, hosts, refusals });
    Ok(runtime.spawn(serve(listener, proxy, stop)))
}

/// One server's proxy: its grants, its record, its name for the printed fix.
struct Proxy {
    server: String,
    hosts: Vec<HostPattern>,
    refusals: EgressRefusals,
}

/// The accept loop. Connections live in a `JoinSet`, so they end with this task.
async fn serve(listener: TcpListener, proxy: Arc<Proxy>, stop: CancellationToken) {
    let mut connections = JoinSet::new();
    // Whether the last accept ran out of resources: warned once per spell, not every pause.
    let mut starved = false;
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept(), if connections.len() < MAX_CONNECTIONS => accepted,
        };
        let e = match accepted {
            Ok((stream, _)) => {
                starved = false;
                connections.spawn(handle(stream, proxy.clone()));
                continue;
            }
            Err(e) => e,
        };
        match accept_error(&e) {
            AcceptError::Passing => {}
            AcceptError::OutOfResources => {
                if !std::mem::replace(&mut starved, true) {
                    tracing::warn!(server = %proxy.server, "the egress proxy cannot accept connections now: {e}");
                }
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => {}
                }
            }
            AcceptError::Fatal => {
                tracing::warn!(server = %proxy.server, "the egress proxy's listener failed: {e}");
                break;
            }
        }
    }
}

/// What an `accept` failure means for the loop.
enum AcceptError {
    /// One connection's trouble (reset before it was accepted, a signal): go on.
    Passing,
    /// The host is out of descriptors or memory: go on after a pause.
    OutOfResources,
    /// The listener itself is broken.
    Fatal,
}

fn accept_error(e: &io::Error) -> AcceptError {
    use rustix::io::Errno;
    match e.kind() {
        io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset | io::ErrorKind::Interrupted => {
            return AcceptError::Passing;
        }
        io::ErrorKind::OutOfMemory => return AcceptError::OutOfResources,
        _ => {}
    }
    let exhausted = [Errno::MFILE, Errno::NFILE, Errno::NOBUFS, Errno::NOMEM];
    match e.raw_os_error() {
        Some(code) if exhausted.iter().any(|errno| errno.raw_os_error() == code) => {
            AcceptError::OutOfResources
        }
        _ => AcceptError::Fatal,
    }
}

/// One client connection: its head read and checked, then a tunnel, a forwarded request or an
/// answer of the proxy's own.
async fn handle(mut client: TcpStream, proxy: Arc<Proxy>) {
    // Answers go on as they arrive: with Nagle on this side, a reply's second small write
    // waited for the client's delayed ACK, 40 ms a request (measured: a fetch 2.9× slower).
    let _ = client.set_nodelay(true);
    let (mut buf, head_len) = match tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client)).await {
        Err(_) => {
            let why = format!("toolport sandbox: no request head within {} s", HEAD_TIMEOUT.as_secs());
            return answer(client, Status::RequestTimeout, &why).await;
        }
        Ok(Ok(Some(read))) => read,
        Ok(Ok(None)) => return answer(client, Status::BadRequest, OVERSIZED_HEAD).await,
        Ok(Err(e)) => {
            tracing::debug!(server = %proxy.server, "egress connection ended before its request head: {e}");
            return;
        }
    };
    let request = match parse_head(&buf[..head_len]) {
        Ok(request) => request,
        Err(why) => {
            tracing::debug!(server = %proxy.server, "egress request refused: {why}");
            return answer(client, Status::BadRequest, why).await;
        }
    };
    // Whatever the client sent past its head (a body, an eager TLS hello) goes on with it.
    let early = buf.split_off(head_len + 4);
    match request {
        Request::Tunnel(dest) => {
            let Some(upstream) = proxy.open(&mut client, &TUNNEL_SCHEMES, &dest, tunnel_scheme(&dest)).await
            else {
                return close_after_answer(client).await;
            };
            let _ = tunnel(client, upstream, &early).await;
        }
        Request::Plain { dest, head } => {
            let Some(mut upstream) = proxy.open(&mut client, &["http"], &dest, "http").await else {
                return close_after_answer(client).await;
            };
            if upstream.write_all(&head).await.is_ok() && upstream.write_all(&early).await.is_ok() {
                relay_one_exchange(client, upstream).await;
            }
        }
    }
}

/// The scheme a refused tunnel is worded in: `http` on port 80, else `https`.
fn tunnel_scheme(dest: &Dest) -> &'static str {
    if dest.port == 80 { "http" } else { "https" }
}

impl Proxy {
    /// Checks `dest` against the grants under `schemes` and connects to it. A refusal (`403`,
    /// recorded, worded as `named://host:port`) or a failed connect (`502`) is written to
    /// `client` here; `None` then.
    async fn open(
        &self,
        client: &mut TcpStream,
        schemes: &[&str],
        dest: &Dest,
        named: &str,
    ) -> Option<TcpStream> {
        let target = dest.origin(named);
        let shown = dest.shown_host();
        let granted = self.hosts.iter().any(|p| schemes.iter().any(|s| p.allows_url(s, &shown, dest.port)));
        if !granted {
            if self.refusals.record(target.clone()) {
                tracing::info!(server = %self.server, %target, "egress refused: not in grants.hosts");
            } else {
                tracing::debug!(server = %self.server, %target, "egress refused again: not in grants.hosts");
            }
            write_answer(client, Status::Forbidden, &self.refusal(&target)).await;
            return None;
        }
        match connect(dest).await {
            Ok(upstream) => {
                tracing::debug!(server = %self.server, %target, "egress allowed");
                Some(upstream)
            }
            Err(why) => {
                tracing::debug!(server = %self.server, %target, "egress connect failed: {why}");
                let body = format!("toolport sandbox: cannot reach {}:{}: {why}", shown, dest.port);
                write_answer(client, Status::BadGateway, &body).await;
                None
            }
        }
    }

    /// The `403`'s body: what was refused and the command that grants it.
    fn refusal(&self, target: &str) -> String {
        format!("toolport sandbox: {}", not_granted(target, &self.server))
    }
}

/// Resolves `dest` on the host and connects to its addresses in turn, all within
/// [`CONNECT_TIMEOUT`]; the error is the reason a person reads in the `502`.
async fn connect(dest: &Dest) -> Result<TcpStream, String> {
    let attempt = async {
        let addrs =
            tokio::net::lookup_host((dest.host.as_str(), dest.port)).await.map_err(|e| e.to_string())?;
        let mut last = None;
        for addr in addrs {
            match TcpStream::connect(addr).await {
                Ok(stream) => return Ok(stream),
                Err(e) => last = Some(e),
            }
        }
        Err(last.map_or_else(|| "the name has no address".to_string(), |e| e.to_string()))
    };
    let stream = tokio::time::timeout(CONNECT_TIMEOUT, attempt)
        .await
        .unwrap_or_else(|_| Err(format!("no connection within {} s", CONNECT_TIMEOUT.as_secs())))?;
    // Small writes (a TLS handshake, a request line) go out at once, not after a delayed ACK.
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

#[cfg(test)]
mod tests;
