//! `transport-tcp`: a server at `tcp://host:port` speaking newline-delimited JSON-RPC (one
//! message per line, the stdio framing over a socket).
//!
//! One pump for the connection's life: it waits with `wasi:io/poll` on the host's inbox and the
//! socket at once, so a server message is forwarded the moment it arrives even while requests
//! are being written, and a write the server is slow to take never blocks reading.

wit_bindgen::generate!({
    world: "transport",
    path: "../../wit/since_v0.1.0",
    with: { "wasi:io/poll@0.2.12": wasip2::io::poll },
});

mod net;

use exports::toolport::plugin::connection::Guest;
use toolport::plugin::channel::{Inbox, Outbox, Received};
use toolport::plugin::types::Server;
use wasip2::io::poll::poll;
use wasip2::io::streams::{InputStream, OutputStream, StreamError};

/// A line longer than this is a broken or hostile server, not a message: refuse it rather than
/// grow until the memory limit traps.
const MAX_LINE: usize = 16 << 20;
/// Bytes asked for per socket read.
const READ_CHUNK: u64 = 64 * 1024;

struct Tcp;

impl Guest for Tcp {
    fn run(server: Server, inbox: Inbox, outbox: Outbox) -> Result<(), String> {
        let url = server.url.as_deref().ok_or("tcp transport requires url")?;
        let target = net::Target::parse(url, "tcp", None)?;
        let conn = net::connect(&target)?;
        pump(&inbox, &outbox, &conn.input, &conn.output, &target.to_string())
    }
}

/// Moves lines both ways until the host closes the inbox (`Ok`) or the socket fails (`Err`).
fn pump(
    inbox: &Inbox,
    outbox: &Outbox,
    input: &InputStream,
    output: &OutputStream,
    url: &str,
) -> Result<(), String> {
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
        net::write_some(output, &mut unsent, url)?;
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

export!(Tcp);
