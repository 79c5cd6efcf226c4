//! `transport-sse`, built into toolport for `type: sse`: the legacy (2024-11-05) MCP HTTP+SSE
//! transport. `GET` the server's `url` as an event stream; its first `endpoint` event names
//! where to `POST` each client message; server messages arrive as `message` events.
//!
//! All HTTP goes through `wasi:http`, so the host's request hook sees every request and lets
//! through only the server's own origin (plus the plugin's grants). Header values arrive
//! already `${VAR}`-expanded by the host. One pump waits on the inbox, the event stream and
//! the POST in flight at once: a slow POST never delays a server message.

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
use wasip2::io::poll::poll;
use wasip2::io::streams::StreamError;

use events::Parser;
use http::{Post, Url};

/// Bytes asked for per read of the event stream.
const READ_CHUNK: u64 = 64 * 1024;

struct Sse;

impl Guest for Sse {
    fn run(server: Server, inbox: Inbox, outbox: Outbox) -> Result<(), String> {
        let url = Url::parse(server.url.as_deref().ok_or("sse transport requires url")?)?;
        let stream = http::open_event_stream(&url, &server.headers)?;
        let body = &stream.body;
        let inbox_ready = inbox.subscribe();
        let readable = body.subscribe();
        let mut parser = Parser::default();
        let mut endpoint: Option<Url> = None;
        let mut queued: VecDeque<String> = VecDeque::new();
        // One POST at a time keeps messages in the order the client sent them.
        let mut in_flight: Option<Post> = None;
        loop {
            loop {
                match inbox.try_recv() {
                    Received::Message(message) => queued.push_back(message),
                    Received::Empty => break,
                    Received::Closed => return Ok(()),
                }
            }
            match body.read(READ_CHUNK) {
                Ok(bytes) => {
                    for event in parser.feed(&bytes)? {
                        match event.kind.as_str() {
                            "endpoint" => endpoint = Some(url.join(event.data.trim())?),
                            // The host is gone: nothing left to deliver to.
                            "message" if outbox.send(&event.data).is_err() => return Ok(()),
                            _ => {}
                        }
                    }
                }
                Err(StreamError::Closed) => return Err(format!("{} closed the event stream", url.text)),
                Err(StreamError::LastOperationFailed(e)) => {
                    return Err(format!("reading the event stream {}: {}", url.text, e.to_debug_string()));
                }
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
                    poll(&[&inbox_ready, &readable, &done]);
                }
                None => {
                    poll(&[&inbox_ready, &readable]);
                }
            }
        }
    }
}

export!(Sse);
