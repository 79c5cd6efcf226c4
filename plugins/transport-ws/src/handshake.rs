//! The opening handshake (RFC 6455 §4.1): an HTTP/1.1 `Upgrade: websocket` request, then a
//! `101` whose `Sec-WebSocket-Accept` proves the server understood this very request.

use crate::net::{Conn, Target};

/// The GUID every WebSocket server appends to the client's key (RFC 6455 §1.3).
const ACCEPT_GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
/// The longest response head accepted.
const MAX_HEAD: usize = 64 * 1024;
/// The most bytes one `blocking-write-and-flush` accepts (WASI's documented limit).
const WRITE_CHUNK: usize = 4096;

/// Upgrades the connection; returns the bytes the server sent after its response head (the
/// start of the first frames, if any).
pub fn upgrade(conn: &Conn, target: &Target, headers: &[(String, String)]) -> Result<Vec<u8>, String> {
    let key = base64(&wasip2::random::random::get_random_bytes(16));
    let host = if target.host.contains(':') { format!("[{}]", target.host) } else { target.host.clone() };
    let mut request = format!(
        "GET {} HTTP/1.1\r\nHost: {host}:{}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n",
        target.path, target.port
    );
    for (name, value) in headers {
        if name.contains(['\r', '\n', ':']) || value.contains(['\r', '\n']) {
            // The value is a secret: name only the header.
            return Err(format!("header {name} cannot be sent"));
        }
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    let failed = |what: &str| format!("WebSocket handshake with {target}: {what}");
    for chunk in request.as_bytes().chunks(WRITE_CHUNK) {
        conn.output
            .blocking_write_and_flush(chunk)
            .map_err(|_| failed("the server closed the connection"))?;
    }
    let mut head = Vec::new();
    let end = loop {
        if let Some(i) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if head.len() > MAX_HEAD {
            return Err(failed("response head too long"));
        }
        let bytes = conn.input.blocking_read(4096).map_err(|_| failed("the server closed the connection"))?;
        head.extend_from_slice(&bytes);
    };
    let text = String::from_utf8_lossy(&head[..end]).into_owned();
    let mut lines = text.split("\r\n");
    let status = lines.next().unwrap_or_default();
    if status.split(' ').nth(1) != Some("101") {
        return Err(failed(&format!("expected 101 Switching Protocols, got {status:?}")));
    }
    let accept = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("sec-websocket-accept"))
        .map(|(_, value)| value.trim().to_string())
        .ok_or_else(|| failed("no Sec-WebSocket-Accept"))?;
    let expected = base64(&sha1_smol::Sha1::from(format!("{key}{ACCEPT_GUID}")).digest().bytes());
    if accept != expected {
        return Err(failed("wrong Sec-WebSocket-Accept"));
    }
    Ok(head[end..].to_vec())
}

/// Standard base64 with padding (the handshake's only encoding need).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_matches_the_rfc_example() {
        // RFC 6455 §1.3.
        let key = "dGhlIHNhbXBsZSBub25jZQ==";
        let accept = base64(&sha1_smol::Sha1::from(format!("{key}{ACCEPT_GUID}")).digest().bytes());
        assert_eq!(accept, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
        assert_eq!(base64(b"ab"), "YWI=");
    }
}
