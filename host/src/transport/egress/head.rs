//! A client's request head, read and checked before the proxy does anything with it: read up
//! to its blank line within [`HEAD_LIMIT`], then parsed strictly (CRLF only, no folded or
//! nameless header lines, HTTP/1.0 or 1.1) into a tunnel's destination or a plain request
//! rewritten in origin-form for its destination. Pure but for the reading; the words of each
//! `400` are here.

use std::borrow::Cow;
use std::io;
use std::net::Ipv6Addr;

use tokio::io::{AsyncRead, AsyncReadExt};

/// Bytes a request head may take: far above any real client's, small enough that a server
/// cannot make the host hold much per connection.
pub(super) const HEAD_LIMIT: usize = 16 * 1024;
/// Where a request goes: a lower-case name or an IP literal (an IPv6 one without brackets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Dest {
    pub(super) host: String,
    pub(super) port: u16,
}

impl Dest {
    /// The host as a URL writes it: an IPv6 literal in brackets.
    pub(super) fn shown_host(&self) -> Cow<'_, str> {
        if self.host.contains(':') {
            Cow::Owned(format!("[{}]", self.host))
        } else {
            Cow::Borrowed(&self.host)
        }
    }

    /// `scheme://host:port`, the form of a grant and of a refusal.
    pub(super) fn origin(&self, scheme: &str) -> String {
        format!("{scheme}://{}:{}", self.shown_host(), self.port)
    }
}

/// A request head, read for what the proxy does with it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Request {
    /// `CONNECT host:port`.
    Tunnel(Dest),
    /// Absolute-form plain HTTP, its head already rewritten for the destination.
    Plain { dest: Dest, head: Vec<u8> },
}

/// Why a head was not read: the words of the `400` (none of the request echoed).
pub(super) type Malformed = &'static str;

pub(super) const MALFORMED_HEAD: Malformed = "toolport sandbox: malformed request head";
pub(super) const OVERSIZED_HEAD: Malformed = "toolport sandbox: request head over 16 KiB";
pub(super) const ONLY_PROXY_FORMS: Malformed = "toolport sandbox: this proxy takes only absolute-form requests (GET http://host/path) or CONNECT host:port";
pub(super) const HTTPS_NOT_ABSOLUTE: Malformed =
    "toolport sandbox: send https through a tunnel (CONNECT host:443), not as an absolute-form request";
pub(super) const BAD_DESTINATION: Malformed =
    "toolport sandbox: malformed destination (expected host:port, [ipv6]:port or http://host[:port]/path)";

/// Reads until the end of the request head (`\r\n\r\n`): the bytes read and the head's length
/// (without the blank line); `None` when the head is over [`HEAD_LIMIT`]. A connection closed
/// before a whole head is an error.
pub(super) async fn read_head<S: AsyncRead + Unpin>(stream: &mut S) -> io::Result<Option<(Vec<u8>, usize)>> {
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
pub(super) fn parse_head(head: &[u8]) -> Result<Request, Malformed> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
