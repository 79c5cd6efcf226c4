//! WebSocket framing (RFC 6455 §5): client frames are masked, server frames are not; messages
//! may be fragmented; control frames may arrive between fragments.

/// The opcodes this client sends.
#[derive(Clone, Copy)]
pub enum Opcode {
    Text = 1,
    Close = 8,
    Pong = 10,
}

/// What the server sent, once complete.
pub enum Frame {
    /// A whole text (or binary, read as UTF-8) message.
    Text(String),
    /// Must be answered with a pong carrying the same payload.
    Ping(Vec<u8>),
    /// The server is closing; the text is ` (code N: reason)` or empty.
    Close(String),
}

/// The largest message accepted: beyond it the server is broken or hostile.
const MAX_MESSAGE: usize = 16 << 20;

/// Appends one masked frame to `out`.
pub fn encode(opcode: Opcode, payload: &[u8], out: &mut Vec<u8>) {
    out.push(0x80 | opcode as u8);
    let len = payload.len();
    if len < 126 {
        out.push(0x80 | len as u8);
    } else if let Ok(short) = u16::try_from(len) {
        out.push(0x80 | 126);
        out.extend_from_slice(&short.to_be_bytes());
    } else {
        out.push(0x80 | 127);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
    // The mask only has to be unpredictable to intermediaries, not secret.
    let mask = (wasip2::random::insecure::get_insecure_random_u64() as u32).to_be_bytes();
    out.extend_from_slice(&mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
}

/// Reassembles frames from socket reads.
#[derive(Default)]
pub struct Decoder {
    buffer: Vec<u8>,
    message: Vec<u8>,
    in_message: bool,
}

impl Decoder {
    /// Adds bytes read from the socket.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// Whether a whole frame is buffered (so the pump should not wait before decoding).
    pub fn has_frame(&self) -> bool {
        matches!(header(&self.buffer), Some(h) if self.buffer.len() >= h.start.saturating_add(h.len))
    }

    /// The next complete message or control frame, if buffered.
    pub fn next(&mut self) -> Result<Option<Frame>, String> {
        loop {
            let Some(h) = header(&self.buffer) else { return Ok(None) };
            if h.len > MAX_MESSAGE || self.message.len().saturating_add(h.len) > MAX_MESSAGE {
                return Err(format!("the server sent a message longer than {} MiB", MAX_MESSAGE >> 20));
            }
            if self.buffer.len() < h.start + h.len {
                return Ok(None);
            }
            let mut payload: Vec<u8> = self.buffer.drain(..h.start + h.len).skip(h.start).collect();
            if let Some(mask) = h.mask {
                payload.iter_mut().enumerate().for_each(|(i, b)| *b ^= mask[i % 4]);
            }
            match h.opcode {
                8 => {
                    let why = match payload.get(..2) {
                        Some(code) => format!(
                            " (code {}: {})",
                            u16::from_be_bytes([code[0], code[1]]),
                            String::from_utf8_lossy(&payload[2..])
                        ),
                        None => String::new(),
                    };
                    return Ok(Some(Frame::Close(why)));
                }
                9 => return Ok(Some(Frame::Ping(payload))),
                10 => continue,
                1 | 2 if !self.in_message => {
                    self.in_message = true;
                    self.message = payload;
                }
                0 if self.in_message => self.message.extend_from_slice(&payload),
                op => return Err(format!("the server sent an unexpected WebSocket frame (opcode {op})")),
            }
            if h.fin {
                self.in_message = false;
                let message = std::mem::take(&mut self.message);
                return Ok(Some(Frame::Text(String::from_utf8_lossy(&message).into_owned())));
            }
        }
    }
}

struct Header {
    fin: bool,
    opcode: u8,
    mask: Option<[u8; 4]>,
    /// Where the payload starts.
    start: usize,
    len: usize,
}

fn header(buf: &[u8]) -> Option<Header> {
    let (b0, b1) = (*buf.first()?, *buf.get(1)?);
    let masked = b1 & 0x80 != 0;
    let (len, mut start) = match b1 & 0x7f {
        126 => (usize::from(u16::from_be_bytes([*buf.get(2)?, *buf.get(3)?])), 4),
        127 => {
            let bytes: [u8; 8] = buf.get(2..10)?.try_into().ok()?;
            (usize::try_from(u64::from_be_bytes(bytes)).unwrap_or(usize::MAX), 10)
        }
        n => (usize::from(n), 2),
    };
    let mask = if masked {
        let key: [u8; 4] = buf.get(start..start + 4)?.try_into().ok()?;
        start += 4;
        Some(key)
    } else {
        None
    };
    Some(Header { fin: b0 & 0x80 != 0, opcode: b0 & 0x0f, mask, start, len })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server_frame(fin: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![if fin { 0x80 } else { 0 } | opcode];
        if payload.len() < 126 {
            f.push(payload.len() as u8);
        } else {
            f.push(126);
            f.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        }
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn fragments_and_interleaved_pings_reassemble() {
        let long = "x".repeat(300);
        let mut d = Decoder::default();
        let mut bytes = server_frame(false, 1, b"{\"a\":");
        bytes.extend(server_frame(true, 9, b"hi"));
        bytes.extend(server_frame(true, 0, long.as_bytes()));
        d.feed(&bytes[..3]);
        assert!(matches!(d.next(), Ok(None)));
        d.feed(&bytes[3..]);
        assert!(matches!(d.next(), Ok(Some(Frame::Ping(p))) if p == b"hi"));
        assert!(matches!(d.next(), Ok(Some(Frame::Text(t))) if t == format!("{{\"a\":{long}")));
        assert!(!d.has_frame());
        d.feed(&server_frame(true, 8, &[0x03, 0xe8, b'b', b'y', b'e']));
        assert!(matches!(d.next(), Ok(Some(Frame::Close(w))) if w == " (code 1000: bye)"));
    }
}
