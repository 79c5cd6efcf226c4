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

use std::borrow::Cow;
use std::io;
use std::net::Ipv6Addr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::config::HostPattern;
use crate::plugin::Denials;

/// Bytes a request head may take: far above any real client's, small enough that a server
/// cannot make the host hold much per connection.
const HEAD_LIMIT: usize = 16 * 1024;
/// How long a client has to send its request head, so an idle connection does not stay forever.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long name resolution and the connect together may take before the client gets a `502`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once: each holds two of the host's descriptors, and a server opening
/// connections in a loop must not exhaust them. Past it, new ones wait in the listen backlog.
const MAX_CONNECTIONS: usize = 256;
/// Each direction's copy buffer: large enough that bulk transfers take few system calls.
const COPY_BUFFER: usize = 64 * 1024;
/// After an error answer, how long and how much of what the client still sends is read and
/// dropped, so closing with unread bytes does not reset the connection before it reads the answer.
const LINGER: Duration = Duration::from_secs(2);
const LINGER_BYTES: usize = 64 * 1024;
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

/// The status of an answer the proxy gives itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    BadRequest,
    Forbidden,
    RequestTimeout,
    BadGateway,
}

impl Status {
    fn line(self) -> &'static str {
        match self {
            Status::BadRequest => "400 Bad Request",
            Status::Forbidden => "403 Forbidden",
            Status::RequestTimeout => "408 Request Timeout",
            Status::BadGateway => "502 Bad Gateway",
        }
    }
}

/// Where a request goes: a lower-case name or an IP literal (an IPv6 one without brackets).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Dest {
    host: String,
    port: u16,
}

impl Dest {
    /// The host as a URL writes it: an IPv6 literal in brackets.
    fn shown_host(&self) -> Cow<'_, str> {
        if self.host.contains(':') {
            Cow::Owned(format!("[{}]", self.host))
        } else {
            Cow::Borrowed(&self.host)
        }
    }

    /// `scheme://host:port`, the form of a grant and of a refusal.
    fn origin(&self, scheme: &str) -> String {
        format!("{scheme}://{}:{}", self.shown_host(), self.port)
    }
}

/// A request head, read for what the proxy does with it.
#[derive(Debug, PartialEq, Eq)]
enum Request {
    /// `CONNECT host:port`.
    Tunnel(Dest),
    /// Absolute-form plain HTTP, its head already rewritten for the destination.
    Plain { dest: Dest, head: Vec<u8> },
}

/// Why a head was not read: the words of the `400` (none of the request echoed).
type Malformed = &'static str;

const MALFORMED_HEAD: Malformed = "toolport sandbox: malformed request head";
const OVERSIZED_HEAD: Malformed = "toolport sandbox: request head over 16 KiB";
const ONLY_PROXY_FORMS: Malformed = "toolport sandbox: this proxy takes only absolute-form requests (GET http://host/path) or CONNECT host:port";
const HTTPS_NOT_ABSOLUTE: Malformed =
    "toolport sandbox: send https through a tunnel (CONNECT host:443), not as an absolute-form request";
const BAD_DESTINATION: Malformed =
    "toolport sandbox: malformed destination (expected host:port, [ipv6]:port or http://host[:port]/path)";

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

/// Reads until the end of the request head (`\r\n\r\n`): the bytes read and the head's length
/// (without the blank line); `None` when the head is over [`HEAD_LIMIT`]. A connection closed
/// before a whole head is an error.
async fn read_head<S: AsyncRead + Unpin>(stream: &mut S) -> io::Result<Option<(Vec<u8>, usize)>> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        // The end may straddle two reads: search from three bytes before the new ones.
        let from = buf.len().saturating_sub(3);
        buf.extend_from_slice(&chunk[..n]);
        if let Some(at) = buf[from..].windows(4).position(|w| w == b"\r\n\r\n") {
            let head_len = from + at;
            return Ok((head_len + 4 <= HEAD_LIMIT).then_some((buf, head_len)));
        }
        if buf.len() >= HEAD_LIMIT {
            return Ok(None);
        }
    }
}

/// Reads a request head (without its final blank line) into what the proxy does with it.
/// Strict where leniency would let two readers disagree: CRLF line ends only, no folded or
/// nameless header lines, HTTP/1.0 or 1.1.
fn parse_head(head: &[u8]) -> Result<Request, Malformed> {
    let text = std::str::from_utf8(head).map_err(|_| MALFORMED_HEAD)?;
    let mut lines = text.split("\r\n");
    let request_line = lines.next().ok_or(MALFORMED_HEAD)?;
    let headers: Vec<(&str, &str)> = lines.map(header).collect::<Result<_, _>>()?;
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(MALFORMED_HEAD);
    };
    let version_ok = version == "HTTP/1.1" || version == "HTTP/1.0";
    if !is_token(method) || !version_ok || target.is_empty() || !target.bytes().all(|b| b.is_ascii_graphic())
    {
        return Err(MALFORMED_HEAD);
    }
    if method == "CONNECT" {
        return Ok(Request::Tunnel(authority(target, None)?));
    }
    let (scheme, rest) = target.split_once("://").ok_or(ONLY_PROXY_FORMS)?;
    if scheme.eq_ignore_ascii_case("https") {
        return Err(HTTPS_NOT_ABSOLUTE);
    }
    if !scheme.eq_ignore_ascii_case("http") {
        return Err(ONLY_PROXY_FORMS);
    }
    let cut = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority_text, path) = rest.split_at(cut);
    // User info is not part of where the request goes, and is never sent on.
    let authority_text = authority_text.rsplit_once('@').map_or(authority_text, |(_, host)| host);
    let dest = authority(authority_text, Some(80))?;
    let path = path.split('#').next().unwrap_or_default();
    let path = match path.as_bytes().first() {
        None => Cow::Borrowed("/"),
        Some(b'?') => Cow::Owned(format!("/{path}")),
        Some(_) => Cow::Borrowed(path),
    };
    Ok(Request::Plain { head: origin_form(method, &path, version, &dest, &headers), dest })
}

/// One header line as `(name, value)`, the value without surrounding blanks.
fn header(line: &str) -> Result<(&str, &str), Malformed> {
    let (name, value) = line.split_once(':').ok_or(MALFORMED_HEAD)?;
    let value_ok = value.chars().all(|c| c == '\t' || !c.is_control());
    if !is_token(name) || !value_ok {
        return Err(MALFORMED_HEAD);
    }
    Ok((name, value.trim_matches([' ', '\t'])))
}

/// An HTTP token (a method, a header name): RFC 9110's `tchar`s, at least one.
fn is_token(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// `host:port`, `[ipv6]:port`, or either without the port when `default_port` gives one.
fn authority(text: &str, default_port: Option<u16>) -> Result<Dest, Malformed> {
    let (host, port) = match text.strip_prefix('[') {
        Some(v6) => {
            let (ip, after) = v6.split_once(']').ok_or(BAD_DESTINATION)?;
            let ip: Ipv6Addr = ip.parse().map_err(|_| BAD_DESTINATION)?;
            let port =
                if after.is_empty() { None } else { Some(after.strip_prefix(':').ok_or(BAD_DESTINATION)?) };
            (ip.to_string(), port)
        }
        None => {
            let (host, port) = match text.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (text, None),
            };
            let name_ok = |b: u8| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_';
            if host.is_empty() || host.len() > 253 || !host.bytes().all(name_ok) {
                return Err(BAD_DESTINATION);
            }
            (host.to_ascii_lowercase(), port)
        }
    };
    let port = match port {
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => p.parse().ok(),
        Some(_) => None,
        None => default_port,
    };
    match port {
        Some(port) if port != 0 => Ok(Dest { host, port }),
        _ => Err(BAD_DESTINATION),
    }
}

/// The head sent to the destination: the request line in origin-form, `Host` from the URL, the
/// client's headers less the hop-by-hop ones (the proxy's own, and any its `Connection` names),
/// and `Connection: close`, so the destination ends the exchange after one answer.
fn origin_form(method: &str, path: &str, version: &str, dest: &Dest, headers: &[(&str, &str)]) -> Vec<u8> {
    let mut dropped: Vec<String> =
        ["host", "connection", "proxy-connection", "proxy-authorization", "keep-alive"]
            .map(String::from)
            .into();
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("connection") || name.eq_ignore_ascii_case("proxy-connection") {
            dropped.extend(value.split(',').map(|t| t.trim().to_ascii_lowercase()).filter(|t| !t.is_empty()));
        }
    }
    let mut head = format!("{method} {path} {version}\r\nHost: {}", dest.shown_host());
    if dest.port != 80 {
        head.push_str(&format!(":{}", dest.port));
    }
    head.push_str("\r\n");
    for (name, value) in headers {
        if !dropped.iter().any(|d| name.eq_ignore_ascii_case(d)) {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    head.push_str("Connection: close\r\n\r\n");
    head.into_bytes()
}

/// A tunnel: `200`, the client's early bytes, then both directions copied until both end.
async fn tunnel(mut client: TcpStream, mut upstream: TcpStream, early: &[u8]) -> io::Result<()> {
    client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await?;
    upstream.write_all(early).await?;
    tokio::io::copy_bidirectional_with_sizes(&mut client, &mut upstream, COPY_BUFFER, COPY_BUFFER).await?;
    Ok(())
}

/// One forwarded plain request: both directions copied until the destination's answer ends
/// (it closes, as `Connection: close` asks). A client that stops sending has its end passed on
/// and still gets the answer.
async fn relay_one_exchange(mut client: TcpStream, mut upstream: TcpStream) {
    let (client_read, mut client_write) = client.split();
    let (upstream_read, mut upstream_write) = upstream.split();
    let request = async {
        let _ =
            tokio::io::copy_buf(&mut BufReader::with_capacity(COPY_BUFFER, client_read), &mut upstream_write)
                .await;
        let _ = upstream_write.shutdown().await;
        std::future::pending::<()>().await;
    };
    let reply = async {
        let _ =
            tokio::io::copy_buf(&mut BufReader::with_capacity(COPY_BUFFER, upstream_read), &mut client_write)
                .await;
        let _ = client_write.shutdown().await;
    };
    tokio::select! {
        () = reply => {}
        () = request => {}
    }
}

/// An answer of the proxy's own, then the connection's end.
async fn answer(mut client: TcpStream, status: Status, body: &str) {
    write_answer(&mut client, status, body).await;
    close_after_answer(client).await;
}

/// Ends a connection whose answer is written: our side shut, then what the client still sends
/// read and dropped for a while ([`LINGER`]), so the answer is not lost to a reset.
async fn close_after_answer(mut client: TcpStream) {
    let _ = client.shutdown().await;
    let drain = async {
        let mut sink = [0u8; 4096];
        let mut read = 0;
        while read < LINGER_BYTES {
            match client.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => read += n,
            }
        }
    };
    let _ = tokio::time::timeout(LINGER, drain).await;
}

/// Writes a complete `text/plain` answer; a client already gone is not an error of ours.
async fn write_answer<S: AsyncWrite + Unpin>(client: &mut S, status: Status, body: &str) {
    let response = format!(
        "HTTP/1.1 {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        status.line(),
        body.len()
    );
    let _ = client.write_all(response.as_bytes()).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    struct Running {
        addr: SocketAddr,
        refusals: EgressRefusals,
        stop: CancellationToken,
        task: JoinHandle<()>,
    }

    fn start(grants: &[String]) -> Running {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let hosts = grants.iter().map(|g| HostPattern::parse(g).expect("pattern")).collect();
        let refusals = EgressRefusals::default();
        let stop = CancellationToken::new();
        let task = spawn(listener, "my server".into(), hosts, refusals.clone(), stop.clone()).expect("spawn");
        Running { addr, refusals, stop, task }
    }

    /// Sends `request` and reads the whole answer (the proxy closes after its own answers).
    async fn exchange(addr: SocketAddr, request: &[u8]) -> String {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream.write_all(request).await.expect("write");
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.expect("read");
        String::from_utf8(answer).expect("utf-8")
    }

    fn body(answer: &str) -> &str {
        answer.split_once("\r\n\r\n").map_or("", |(_, body)| body)
    }

    /// A TCP server that echoes every connection back.
    async fn echo_server(bind: &str) -> io::Result<SocketAddr> {
        let listener = TcpListener::bind(bind).await?;
        let addr = listener.local_addr()?;
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let (mut r, mut w) = stream.split();
                    let _ = tokio::io::copy(&mut r, &mut w).await;
                });
            }
        });
        Ok(addr)
    }

    /// Opens a tunnel through the proxy to `target` with `early` bytes sent before the `200`,
    /// and checks it echoes.
    async fn echo_through_tunnel(proxy: SocketAddr, target: &str) {
        let mut stream = TcpStream::connect(proxy).await.expect("connect");
        let request = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\nearly");
        stream.write_all(request.as_bytes()).await.expect("write");
        let established = b"HTTP/1.1 200 Connection established\r\n\r\n";
        let mut got = vec![0u8; established.len() + 5];
        stream.read_exact(&mut got).await.expect("read 200");
        assert_eq!(String::from_utf8_lossy(&got), "HTTP/1.1 200 Connection established\r\n\r\nearly");
        stream.write_all(b"ping").await.expect("write ping");
        let mut ping = [0u8; 4];
        stream.read_exact(&mut ping).await.expect("read ping");
        assert_eq!(&ping, b"ping");
        stream.shutdown().await.expect("shutdown");
        let mut rest = Vec::new();
        stream.read_to_end(&mut rest).await.expect("read to end");
        assert!(rest.is_empty());
    }

    #[tokio::test]
    async fn a_granted_tunnel_carries_bytes_both_ways_and_stop_ends_the_proxy() {
        let echo = echo_server("127.0.0.1:0").await.expect("echo server");
        let proxy = start(&[format!("wss://127.0.0.1:{}", echo.port())]);
        echo_through_tunnel(proxy.addr, &echo.to_string()).await;
        assert!(proxy.refusals.all().is_empty());
        proxy.stop.cancel();
        proxy.task.await.expect("the proxy task ends");
        assert!(TcpStream::connect(proxy.addr).await.is_err(), "the listener is closed");
    }

    #[tokio::test]
    async fn a_refused_tunnel_gets_403_with_the_fix_and_is_recorded_once() {
        let proxy = start(&["https://api.example.com:443".into(), "tcp://example.com:443".into()]);
        let first =
            exchange(proxy.addr, b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n").await;
        assert!(first.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{first}");
        assert_eq!(
            body(&first),
            "toolport sandbox: not granted: https://example.com:443 (grant it with: toolport mcp grant 'my server' --host https://example.com:443)"
        );
        assert_eq!(proxy.refusals.all(), ["not granted: https://example.com:443"]);
        let again = exchange(proxy.addr, b"CONNECT Example.COM:443 HTTP/1.1\r\n\r\n").await;
        assert!(again.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{again}");
        assert_eq!(proxy.refusals.all(), ["not granted: https://example.com:443"]);
    }

    #[tokio::test]
    async fn plain_http_goes_out_in_origin_form_with_connection_close() {
        let upstream = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = upstream.local_addr().expect("addr").port();
        let seen = tokio::spawn(async move {
            let (mut stream, _) = upstream.accept().await.expect("accept");
            let (buf, head_len) = read_head(&mut stream).await.expect("head").expect("small head");
            let mut request = buf;
            while request.len() < head_len + 4 + 3 {
                let mut more = [0u8; 64];
                let n = stream.read(&mut more).await.expect("body");
                request.extend_from_slice(&more[..n]);
            }
            stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
                .await
                .expect("answer");
            String::from_utf8(request).expect("utf-8")
        });
        let proxy = start(&[format!("http://localhost:{port}")]);
        let request = format!(
            "POST http://user:pw@LocalHost:{port}/path?q=1 HTTP/1.1\r\nHost: elsewhere.example\r\n\
             Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eDp5\r\nConnection: keep-alive, X-Hop\r\n\
             X-Hop: 1\r\nAccept: */*\r\nContent-Length: 3\r\n\r\nabc"
        );
        let answer = exchange(proxy.addr, request.as_bytes()).await;
        assert_eq!(answer, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
        assert_eq!(
            seen.await.expect("server"),
            format!(
                "POST /path?q=1 HTTP/1.1\r\nHost: localhost:{port}\r\nAccept: */*\r\nContent-Length: 3\r\n\
                 Connection: close\r\n\r\nabc"
            )
        );
    }

    #[tokio::test]
    async fn refused_plain_http_records_only_scheme_host_and_port() {
        let proxy = start(&[]);
        let answer = exchange(proxy.addr, b"GET http://example.com/secret?token=abc HTTP/1.1\r\n\r\n").await;
        assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
        assert_eq!(
            body(&answer),
            "toolport sandbox: not granted: http://example.com:80 (grant it with: toolport mcp grant 'my server' --host http://example.com:80)"
        );
        assert_eq!(proxy.refusals.all(), ["not granted: http://example.com:80"]);
    }

    #[tokio::test]
    async fn malformed_oversized_and_origin_form_heads_get_400() {
        let proxy = start(&[]);
        let answer = exchange(proxy.addr, b"hello\r\n\r\n").await;
        assert!(answer.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{answer}");
        assert_eq!(body(&answer), MALFORMED_HEAD);
        let answer = exchange(proxy.addr, b"GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n").await;
        assert_eq!(body(&answer), ONLY_PROXY_FORMS);
        let mut huge = b"GET http://example.com/ HTTP/1.1\r\n".to_vec();
        huge.extend(std::iter::repeat_n(b"X-Pad: aaaaaaaaaaaaaaaaaaaaaaaa\r\n".as_slice(), 600).flatten());
        let answer = exchange(proxy.addr, &huge).await;
        assert!(answer.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{answer}");
        assert_eq!(body(&answer), OVERSIZED_HEAD);
        assert!(proxy.refusals.all().is_empty());
    }

    #[tokio::test]
    async fn an_ipv6_loopback_literal_is_tunnelled_or_its_failure_named() {
        match echo_server("[::1]:0").await {
            Ok(echo) => {
                let proxy = start(&[format!("https://[::1]:{}", echo.port())]);
                echo_through_tunnel(proxy.addr, &format!("[::1]:{}", echo.port())).await;
            }
            Err(e) => {
                // No ::1 on this machine: the grant still matches, and the 502 says why.
                eprintln!("no IPv6 loopback ({e}): checking the 502 instead");
                let proxy = start(&["https://[::1]:4443".into()]);
                let answer = exchange(proxy.addr, b"CONNECT [::1]:4443 HTTP/1.1\r\n\r\n").await;
                assert!(answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n"), "{answer}");
                assert!(body(&answer).starts_with("toolport sandbox: cannot reach [::1]:4443: "), "{answer}");
                assert!(proxy.refusals.all().is_empty());
            }
        }
    }

    #[tokio::test]
    async fn an_unreachable_granted_destination_gets_502_with_the_reason() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = closed.local_addr().expect("addr").port();
        drop(closed);
        let proxy = start(&[format!("http://127.0.0.1:{port}")]);
        let answer =
            exchange(proxy.addr, format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes()).await;
        assert!(answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n"), "{answer}");
        assert_eq!(
            body(&answer),
            format!("toolport sandbox: cannot reach 127.0.0.1:{port}: Connection refused (os error 111)")
        );
    }

    #[test]
    fn destinations_are_read_strictly() {
        let dest = |host: &str, port| Dest { host: host.into(), port };
        assert_eq!(
            parse_head(b"CONNECT Api.Example.com:443 HTTP/1.1"),
            Ok(Request::Tunnel(dest("api.example.com", 443)))
        );
        assert_eq!(parse_head(b"CONNECT [::1]:8080 HTTP/1.1"), Ok(Request::Tunnel(dest("::1", 8080))));
        assert_eq!(dest("::1", 8080).origin("https"), "https://[::1]:8080");
        for bad in [
            "CONNECT example.com HTTP/1.1",
            "CONNECT ::1:443 HTTP/1.1",
            "CONNECT example.com:0 HTTP/1.1",
            "CONNECT example.com:+443 HTTP/1.1",
            "CONNECT exa%6dple.com:443 HTTP/1.1",
            "CONNECT [::1%eth0]:443 HTTP/1.1",
            "GET http:///path HTTP/1.1",
        ] {
            assert_eq!(parse_head(bad.as_bytes()), Err(BAD_DESTINATION), "{bad}");
        }
        for bad in [
            "CONNECT example.com:443 HTTP/2",
            "CONNECT  example.com:443 HTTP/1.1",
            "CONNECT example.com:443 HTTP/1.1\r\n folded: header",
            "CONNECT example.com:443 HTTP/1.1\r\nBad Name: x",
            "CONNECT example.com:443 HTTP/1.1\nX: y",
        ] {
            assert_eq!(parse_head(bad.as_bytes()), Err(MALFORMED_HEAD), "{bad:?}");
        }
        assert_eq!(parse_head(b"GET https://example.com/ HTTP/1.1"), Err(HTTPS_NOT_ABSOLUTE));
        assert_eq!(parse_head(b"GET ftp://example.com/ HTTP/1.1"), Err(ONLY_PROXY_FORMS));
        let Ok(Request::Plain { dest: to, head }) = parse_head(b"GET http://[::1]:81?x=1#frag HTTP/1.0")
        else {
            panic!("not a plain request");
        };
        assert_eq!(to, dest("::1", 81));
        assert_eq!(
            String::from_utf8_lossy(&head),
            "GET /?x=1 HTTP/1.0\r\nHost: [::1]:81\r\nConnection: close\r\n\r\n"
        );
    }

    #[test]
    fn refused_tunnels_are_worded_by_port_and_at_most_eight_are_kept() {
        assert_eq!(tunnel_scheme(&Dest { host: "a".into(), port: 80 }), "http");
        assert_eq!(tunnel_scheme(&Dest { host: "a".into(), port: 8443 }), "https");
        let refusals = EgressRefusals::default();
        for i in 0..10 {
            refusals.record(format!("https://h{i}:443"));
        }
        assert_eq!(refusals.all().len(), 8);
        assert_eq!(refusals.all()[0], "not granted: https://h0:443");
    }
}
