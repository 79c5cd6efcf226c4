//! `transport-ws`: a server at `ws://host[:port]/path`, one JSON-RPC message per text frame.
//!
//! The client side of RFC 6455 by hand (handshake in [`handshake`], framing in [`frame`]) over
//! a WASI TCP socket, so the sandbox sees a plain connect to the server's own origin. One pump
//! waits with `wasi:io/poll` on the host's inbox and the socket at once (full duplex).

wit_bindgen::generate!({
    world: "transport",
    path: "../../wit/since_v0.1.0",
    with: { "wasi:io/poll@0.2.12": wasip2::io::poll },
});

mod frame;
mod handshake;
// The socket code is transport-tcp's, shared so both plugins treat the sandbox alike.
#[path = "../../transport-tcp/src/net.rs"]
mod net;

use exports::toolport::plugin::connection::Guest;
use toolport::plugin::channel::{Inbox, Outbox, Received};
use toolport::plugin::types::Server;
use wasip2::io::poll::poll;
use wasip2::io::streams::StreamError;

use frame::{Decoder, Frame, Opcode};

/// Bytes asked for per socket read.
const READ_CHUNK: u64 = 64 * 1024;

struct Ws;

impl Guest for Ws {
    fn run(server: Server, inbox: Inbox, outbox: Outbox) -> Result<(), String> {
        let url = server.url.as_deref().ok_or("ws transport requires url")?;
        let target = net::Target::parse(url, "ws", Some(80))?;
        let conn = net::connect(&target)?;
        let url = target.to_string();
        let leftover = handshake::upgrade(&conn, &target, &server.headers)?;
        let (input, output) = (&conn.input, &conn.output);
        let mut decoder = Decoder::default();
        decoder.feed(&leftover);
        let inbox_ready = inbox.subscribe();
        let readable = input.subscribe();
        let writable = output.subscribe();
        let mut unsent: Vec<u8> = Vec::new();
        loop {
            loop {
                match inbox.try_recv() {
                    Received::Message(message) => {
                        frame::encode(Opcode::Text, message.as_bytes(), &mut unsent)
                    }
                    Received::Empty => break,
                    Received::Closed => {
                        // Say goodbye if the socket takes it right away; never wait for it.
                        frame::encode(Opcode::Close, &1000u16.to_be_bytes(), &mut unsent);
                        let _ = net::write_some(output, &mut unsent, &url);
                        return Ok(());
                    }
                }
            }
            while let Some(frame) = decoder.next()? {
                match frame {
                    Frame::Text(text) => {
                        if outbox.send(&text).is_err() {
                            return Ok(());
                        }
                    }
                    Frame::Ping(payload) => frame::encode(Opcode::Pong, &payload, &mut unsent),
                    Frame::Close(why) => {
                        frame::encode(Opcode::Close, &[], &mut unsent);
                        let _ = net::write_some(output, &mut unsent, &url);
                        return Err(format!("{url} closed the WebSocket{why}"));
                    }
                }
            }
            net::write_some(output, &mut unsent, &url)?;
            match input.read(READ_CHUNK) {
                Ok(bytes) => decoder.feed(&bytes),
                Err(StreamError::Closed) => return Err(format!("{url} closed the connection")),
                Err(StreamError::LastOperationFailed(e)) => {
                    return Err(format!("reading from {url}: {}", e.to_debug_string()));
                }
            }
            if decoder.has_frame() {
                continue;
            }
            if unsent.is_empty() {
                poll(&[&inbox_ready, &readable]);
            } else {
                poll(&[&inbox_ready, &readable, &writable]);
            }
        }
    }
}

export!(Ws);
