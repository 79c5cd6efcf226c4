//! `{{name}}`: a toolport transport. It reaches the server at its `url`, `tcp://host:port`, and
//! moves newline-delimited JSON-RPC (stdio's framing over a socket) both ways.
//!
//! One pump for the connection's life: it waits with `wasi:io/poll` on the host's inbox and the
//! socket at once, so a server message is forwarded the moment it arrives even while requests
//! are being written, and a write the server is slow to take never blocks reading. The sandbox
//! lets a transport reach its own server's address and nothing else unless granted.

use toolport_guest::wasip2::io::poll::poll;
use toolport_guest::wasip2::io::streams::{InputStream, OutputStream, StreamError};
use toolport_guest::wasip2::sockets::instance_network::instance_network;
use toolport_guest::wasip2::sockets::ip_name_lookup::resolve_addresses;
use toolport_guest::wasip2::sockets::network::{
    ErrorCode, IpAddress, IpAddressFamily, IpSocketAddress, Ipv4SocketAddress, Ipv6SocketAddress, Network,
};
use toolport_guest::wasip2::sockets::tcp::TcpSocket;
use toolport_guest::wasip2::sockets::tcp_create_socket::create_tcp_socket;
use toolport_guest::{Inbox, Outbox, Received, Server, TransportGuest};

/// A line longer than this is a broken or hostile server: refuse it rather than grow until the
/// memory limit traps.
const MAX_LINE: usize = 16 << 20;
/// Bytes asked for per socket read.
const READ_CHUNK: u64 = 64 * 1024;

struct Transport;

impl TransportGuest for Transport {
    /// Returns `Ok` when the host closes the inbox; `Err(text)` puts the server in `error`.
    fn run(server: Server, inbox: Inbox, outbox: Outbox) -> Result<(), String> {
        let url = server.url.as_deref().ok_or("this transport needs a url (tcp://host:port)")?;
        let (host, port) = parse_url(url)?;
        let target = format!("tcp://{host}:{port}");
        toolport_guest::info!("{}: connecting to {target}", server.name);
        let conn = connect(&host, port, &target)?;
        pump(&inbox, &outbox, &conn.input, &conn.output, &target)
    }
}

/// `tcp://host:port` (IPv6 in brackets) → host and port.
fn parse_url(url: &str) -> Result<(String, u16), String> {
    let bad = |why: &str| format!("bad url {url:?}: {why} (expected tcp://host:port)");
    let authority = url.strip_prefix("tcp://").ok_or_else(|| bad("not tcp://"))?;
    let authority = authority.split('/').next().unwrap_or_default();
    let (host, port) = authority.rsplit_once(':').ok_or_else(|| bad("no port"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = port.parse::<u16>().map_err(|_| bad("bad port"))?;
    if host.is_empty() {
        return Err(bad("no host"));
    }
    Ok((host.to_string(), port))
}

/// An open connection. Field order is drop order: the streams are the socket's children.
struct Conn {
    input: InputStream,
    output: OutputStream,
    _socket: TcpSocket,
}

/// Resolves `host` and connects to the first address that answers. A refusal by the sandbox
/// reads `not granted: tcp://host:port`, the host's own wording.
fn connect(host: &str, port: u16, target: &str) -> Result<Conn, String> {
    let network = instance_network();
    let mut last = format!("{target}: no address");
    for address in resolve(&network, host, target)? {
        match connect_one(&network, address, port) {
            Ok(conn) => return Ok(conn),
            Err(ErrorCode::AccessDenied) => return Err(format!("not granted: {target}")),
            Err(e) => last = format!("cannot connect to {target}: {}", e.name().replace('-', " ")),
        }
    }
    Err(last)
}

fn resolve(network: &Network, host: &str, target: &str) -> Result<Vec<IpAddress>, String> {
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(v4)) => {
            let [a, b, c, d] = v4.octets();
            return Ok(vec![IpAddress::Ipv4((a, b, c, d))]);
        }
        Ok(std::net::IpAddr::V6(v6)) => {
            let s = v6.segments();
            return Ok(vec![IpAddress::Ipv6((s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]))]);
        }
        Err(_) => {}
    }
    let failed = |e: ErrorCode| match e {
        ErrorCode::AccessDenied | ErrorCode::NotSupported => format!("not granted: {target}"),
        e => format!("cannot resolve {host}: {}", e.name().replace('-', " ")),
    };
    let stream = resolve_addresses(network, host).map_err(failed)?;
    let ready = stream.subscribe();
    let mut found = Vec::new();
    loop {
        match stream.resolve_next_address() {
            Ok(Some(address)) => found.push(address),
            Ok(None) => return Ok(found),
            Err(ErrorCode::WouldBlock) => ready.block(),
            Err(e) => return Err(failed(e)),
        }
    }
}

fn connect_one(network: &Network, address: IpAddress, port: u16) -> Result<Conn, ErrorCode> {
    let (family, remote) = match address {
        IpAddress::Ipv4(address) => {
            (IpAddressFamily::Ipv4, IpSocketAddress::Ipv4(Ipv4SocketAddress { port, address }))
        }
        IpAddress::Ipv6(address) => (
            IpAddressFamily::Ipv6,
            IpSocketAddress::Ipv6(Ipv6SocketAddress { port, flow_info: 0, address, scope_id: 0 }),
        ),
    };
    let socket = create_tcp_socket(family)?;
    socket.start_connect(network, remote)?;
    let ready = socket.subscribe();
    let (input, output) = loop {
        match socket.finish_connect() {
            Ok(streams) => break streams,
            Err(ErrorCode::WouldBlock) => ready.block(),
            Err(e) => return Err(e),
        }
    };
    drop(ready);
    Ok(Conn { input, output, _socket: socket })
}

/// Moves lines both ways until the host closes the inbox (`Ok`) or the socket fails (`Err`).
fn pump(
    inbox: &Inbox,
    outbox: &Outbox,
    input: &InputStream,
    output: &OutputStream,
    url: &str,
) -> Result<(), String> {
    // Pollables are children of their resources: made after them, dropped before them.
    let inbox_ready = inbox.subscribe();
    let readable = input.subscribe();
    let writable = output.subscribe();
    let mut unsent: Vec<u8> = Vec::new();
    let mut partial: Vec<u8> = Vec::new();
    loop {
        loop {
            match inbox.try_recv() {
                Received::Message(message) => {
                    unsent.extend_from_slice(message.as_bytes());
                    unsent.push(b'\n');
                }
                Received::Empty => break,
                Received::Closed => return Ok(()),
            }
        }
        write_some(output, &mut unsent, url)?;
        match input.read(READ_CHUNK) {
            Ok(bytes) => {
                partial.extend_from_slice(&bytes);
                if !forward_lines(&mut partial, outbox)? {
                    return Ok(());
                }
            }
            Err(StreamError::Closed) => return Err(format!("{url} closed the connection")),
            Err(StreamError::LastOperationFailed(e)) => {
                return Err(format!("reading from {url}: {}", e.to_debug_string()));
            }
        }
        if unsent.is_empty() {
            poll(&[&inbox_ready, &readable]);
        } else {
            poll(&[&inbox_ready, &readable, &writable]);
        }
    }
}

/// Writes as much of `unsent` as the stream takes right now, never waiting.
fn write_some(output: &OutputStream, unsent: &mut Vec<u8>, url: &str) -> Result<(), String> {
    let failed = |e: StreamError| match e {
        StreamError::Closed => format!("{url} closed the connection"),
        StreamError::LastOperationFailed(e) => format!("writing to {url}: {}", e.to_debug_string()),
    };
    while !unsent.is_empty() {
        let room = output.check_write().map_err(failed)?;
        if room == 0 {
            return Ok(());
        }
        let n = usize::try_from(room).unwrap_or(usize::MAX).min(unsent.len());
        output.write(&unsent[..n]).map_err(failed)?;
        unsent.drain(..n);
        output.flush().map_err(failed)?;
    }
    Ok(())
}

/// Hands every complete line in `buffer` to the host and keeps the unfinished tail. `Ok(false)`
/// when the host is gone.
fn forward_lines(buffer: &mut Vec<u8>, outbox: &Outbox) -> Result<bool, String> {
    let mut start = 0;
    while let Some(offset) = buffer[start..].iter().position(|b| *b == b'\n') {
        let line = &buffer[start..start + offset];
        start += offset + 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if outbox.send(&String::from_utf8_lossy(line)).is_err() {
            return Ok(false);
        }
    }
    buffer.drain(..start);
    if buffer.len() > MAX_LINE {
        return Err(format!("the server sent a line longer than {} MiB", MAX_LINE >> 20));
    }
    Ok(true)
}

toolport_guest::export!(Transport);
