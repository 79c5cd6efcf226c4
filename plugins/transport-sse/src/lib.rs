//! `transport-sse`, built into toolport for `type: sse`: the legacy (2024-11-05) MCP HTTP+SSE
//! transport. `GET` the server's `url` as an event stream; its first `endpoint` event names
//! where to `POST` each client message; server messages arrive as `message` events.
//!
//! All HTTP goes through `wasi:http`, so the host's request hook sees every request and lets
//! through only the server's own origin (plus the plugin's grants). Header values arrive
//! already `${VAR}`-expanded by the host. One pump waits on the inbox, the event stream and
//! the POST in flight at once: a slow POST never delays a server message.
//!
//! The stream may stay quiet for a day (not `wasi:http`'s default ten minutes). When a stream
//! that worked ends, the plugin reconnects after the server's `retry:` delay, sending the last
//! `id:` as `Last-Event-ID`, and takes the new stream's `endpoint`.

wit_bindgen::generate!({
    world: "transport",
    path: "../../wit/since_v0.1.0",
    with: { "wasi:io/poll@0.2.12": wasip2::io::poll },
});

mod events;
mod http;

use std::collections::VecDeque;

use exports::toolport::plugin::connection::Guest;
use toolport::plugin::channel::{Inbox, Outbox, Received};
use toolport::plugin::types::Server;
use wasip2::clocks::monotonic_clock::subscribe_duration;
use wasip2::io::poll::{Pollable, poll};
use wasip2::io::streams::StreamError;

use events::Parser;
use http::{EventStream, Post, Url};

/// Bytes asked for per read of the event stream.
const READ_CHUNK: u64 = 64 * 1024;
/// How long the event stream may stay silent. `wasi:http`'s default between-bytes timeout is
/// 600 s, which ended every quiet session after ten minutes; an MCP server may say nothing for
/// hours while the user is away. A day outlasts any idle session, and a peer that died without
/// closing the connection is still noticed then (and a reconnect follows).
const STREAM_IDLE_NS: u64 = 24 * 60 * 60 * 1_000_000_000;
/// The reconnection delay when the server sent no `retry:`; the SSE format leaves it to the
/// client, and browsers wait about three seconds.
const DEFAULT_RETRY_MS: u64 = 3_000;
/// The longest `retry:` honoured: a server may slow reconnects down, not park them for hours.
const MAX_RETRY_MS: u64 = 60_000;
/// Reconnects in a row without one event in between before the connection fails: a server
/// that is gone for good is reported, not retried forever.
const MAX_RECONNECTS: u32 = 5;

/// The open event stream and its readiness. Field order is drop order: the pollable is a
/// child of the stream's body and must go first.
struct Live {
    readable: Pollable,
    stream: EventStream,
}

impl Live {
    fn open(url: &Url, server: &Server, last_id: &str) -> Result<Live, String> {
        let stream = http::open_event_stream(url, &server.headers, last_id, STREAM_IDLE_NS)?;
        Ok(Live { readable: stream.body.subscribe(), stream })
    }
}

struct Sse;

impl Guest for Sse {
    fn run(server: Server, inbox: Inbox, outbox: Outbox) -> Result<(), String> {
        let url = Url::parse(server.url.as_deref().ok_or("sse transport requires url")?)?;
        let mut live = Live::open(&url, &server, "")?;
        let inbox_ready = inbox.subscribe();
        let mut parser = Parser::default();
        let mut endpoint: Option<Url> = None;
        let mut queued: VecDeque<String> = VecDeque::new();
        // One POST at a time keeps messages in the order the client sent them.
        let mut in_flight: Option<Post> = None;
        let mut reconnects = 0;
        // Set by the first `endpoint`: from then on a lost stream is resumed, not fatal.
        let mut resumable = false;
        loop {
            if !drain(&inbox, &mut queued) {
                return Ok(());
            }
            let lost = match live.stream.body.read(READ_CHUNK) {
                Ok(bytes) => {
                    for event in parser.feed(&bytes)? {
                        reconnects = 0;
                        match event.kind.as_str() {
                            "endpoint" => {
                                endpoint = Some(url.join(event.data.trim())?);
                                resumable = true;
                            }
                            // The host is gone: nothing left to deliver to.
                            "message" if outbox.send(&event.data).is_err() => return Ok(()),
                            _ => {}
                        }
                    }
                    None
                }
                Err(StreamError::Closed) => Some(format!("{} closed the event stream", url.text)),
                Err(StreamError::LastOperationFailed(e)) => {
                    Some(format!("reading the event stream {}: {}", url.text, e.to_debug_string()))
                }
            };
            if let Some(why) = lost {
                // Only a stream that once worked is worth resuming; the server says how soon.
                if !resumable || reconnects >= MAX_RECONNECTS {
                    return Err(why);
                }
                reconnects += 1;
                let delay = parser.retry_ms.unwrap_or(DEFAULT_RETRY_MS).min(MAX_RETRY_MS);
                if !pause(delay, &inbox, &inbox_ready, &mut queued) {
                    return Ok(());
                }
                // The new stream names its own endpoint; messages wait for it.
                endpoint = None;
                parser = parser.fresh();
                match Live::open(&url, &server, &parser.last_id) {
                    Ok(next) => live = next,
                    Err(e) if reconnects >= MAX_RECONNECTS => return Err(e),
                    Err(_) => {}
                }
                continue;
            }
            if let Some(post) = &in_flight
                && post.finished()?
            {
                in_flight = None;
            }
            if in_flight.is_none()
                && let Some(target) = &endpoint
                && let Some(message) = queued.pop_front()
            {
                in_flight = Some(Post::start(target, &server.headers, &message)?);
            }
            match &in_flight {
                Some(post) => {
                    let done = post.subscribe();
                    poll(&[&inbox_ready, &live.readable, &done]);
                }
                None => {
                    poll(&[&inbox_ready, &live.readable]);
                }
            }
        }
    }
}

/// Moves every waiting client message to `queued`; false once the host closed the inbox.
fn drain(inbox: &Inbox, queued: &mut VecDeque<String>) -> bool {
    loop {
        match inbox.try_recv() {
            Received::Message(message) => queued.push_back(message),
            Received::Empty => return true,
            Received::Closed => return false,
        }
    }
}

/// Waits `ms` before a reconnect, still taking client messages; false if the inbox closed.
fn pause(ms: u64, inbox: &Inbox, inbox_ready: &Pollable, queued: &mut VecDeque<String>) -> bool {
    let timer = subscribe_duration(ms.saturating_mul(1_000_000));
    loop {
        if !drain(inbox, queued) {
            return false;
        }
        if timer.ready() {
            return true;
        }
        poll(&[&timer, inbox_ready]);
    }
}

export!(Sse);
