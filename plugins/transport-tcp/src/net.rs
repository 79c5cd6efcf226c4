//! Connecting a WASI TCP socket to `scheme://host:port` and writing without blocking. Shared
//! with `transport-ws` (which includes this file by path) so both speak to the sandbox alike.

use std::fmt;

use wasip2::io::streams::{InputStream, OutputStream, StreamError};
use wasip2::sockets::instance_network::instance_network;
use wasip2::sockets::ip_name_lookup::resolve_addresses;
use wasip2::sockets::network::{
    ErrorCode, IpAddress, IpAddressFamily, IpSocketAddress, Ipv4SocketAddress, Ipv6SocketAddress, Network,
};
use wasip2::sockets::tcp::TcpSocket;
use wasip2::sockets::tcp_create_socket::create_tcp_socket;

/// Where to connect, parsed from the server's `url`.
pub struct Target {
    pub scheme: String,
    pub host: String,
    pub port: u16,
    /// Path and query (`/` when the URL has none). Only `transport-ws` uses it: it shares
    /// this file.
    #[allow(dead_code)]
    pub path: String,
}

impl Target {
    /// Parses `scheme://host[:port][/path]`; without `default_port` the port is required.
    pub fn parse(url: &str, scheme: &str, default_port: Option<u16>) -> Result<Self, String> {
        let bad = |why: &str| format!("bad url {url:?}: {why} (expected {scheme}://host:port)");
        let rest = url
            .strip_prefix(scheme)
            .and_then(|r| r.strip_prefix("://"))
            .ok_or_else(|| bad("wrong scheme"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let (host, port) = match authority.strip_prefix('[') {
            Some(v6) => {
                let (ip, after) = v6.split_once(']').ok_or_else(|| bad("unclosed ["))?;
                (ip, after.strip_prefix(':'))
            }
            None => match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            },
        };
        let port = match port {
            Some(p) => p.parse::<u16>().map_err(|_| bad("bad port"))?,
            None => default_port.ok_or_else(|| bad("no port"))?,
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        Ok(Self { scheme: scheme.to_string(), host: host.to_string(), port, path: path.to_string() })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "{}://[{}]:{}", self.scheme, self.host, self.port)
        } else {
            write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
        }
    }
}

/// An open connection. Field order is drop order: the streams are children of the socket and
/// must go first.
pub struct Conn {
    pub input: InputStream,
    pub output: OutputStream,
    _socket: TcpSocket,
}

/// Resolves and connects, trying each address in turn. A refusal by the sandbox is reported as
/// `not granted: scheme://host:port`, the host's wording for every denied reach.
pub fn connect(target: &Target) -> Result<Conn, String> {
    let network = instance_network();
    let addresses = resolve(&network, target)?;
    let mut last = format!("{target}: no address");
    for address in addresses {
        match connect_one(&network, address, target.port) {
            Ok(conn) => return Ok(conn),
            Err(ErrorCode::AccessDenied) => return Err(format!("not granted: {target}")),
            Err(e) => last = format!("cannot connect to {target}: {}", e.name().replace('-', " ")),
        }
    }
    Err(last)
}

fn resolve(network: &Network, target: &Target) -> Result<Vec<IpAddress>, String> {
    if let Ok(ip) = target.host.parse::<std::net::IpAddr>() {
        return Ok(vec![match ip {
            std::net::IpAddr::V4(v4) => {
                let [a, b, c, d] = v4.octets();
                IpAddress::Ipv4((a, b, c, d))
            }
            std::net::IpAddr::V6(v6) => {
                let s = v6.segments();
                IpAddress::Ipv6((s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]))
            }
        }]);
    }
    let denied = |e: ErrorCode| match e {
        ErrorCode::AccessDenied | ErrorCode::NotSupported => format!("not granted: {target}"),
        e => format!("cannot resolve {}: {}", target.host, e.name().replace('-', " ")),
    };
    let stream = resolve_addresses(network, &target.host).map_err(denied)?;
    let ready = stream.subscribe();
    let mut found = Vec::new();
    loop {
        match stream.resolve_next_address() {
            Ok(Some(address)) => found.push(address),
            Ok(None) => return Ok(found),
            Err(ErrorCode::WouldBlock) => ready.block(),
            Err(e) => return Err(denied(e)),
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

/// Writes as much of `unsent` as the stream takes right now, never waiting.
pub fn write_some(output: &OutputStream, unsent: &mut Vec<u8>, url: &str) -> Result<(), String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_with_and_without_defaults() {
        let t = Target::parse("ws://[::1]:8080/mcp?x=1", "ws", Some(80)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((t.host.as_str(), t.port, t.path.as_str()), ("::1", 8080, "/mcp?x=1"));
        assert_eq!(t.to_string(), "ws://[::1]:8080");
        let t = Target::parse("ws://example.com", "ws", Some(80)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((t.port, t.path.as_str()), (80, "/"));
        assert_eq!(
            Target::parse("tcp://127.0.0.1", "tcp", None).err().as_deref(),
            Some("bad url \"tcp://127.0.0.1\": no port (expected tcp://host:port)")
        );
        assert!(Target::parse("http://x:1", "tcp", None).is_err());
    }
}
