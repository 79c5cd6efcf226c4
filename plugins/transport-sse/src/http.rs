//! The HTTP half: URLs, the long `GET` of the event stream, and one `POST` per message, all
//! through `wasi:http/outgoing-handler` (so through the host's request hook).

use wasip2::http::outgoing_handler::handle;
use wasip2::http::types::{
    ErrorCode, Fields, FutureIncomingResponse, IncomingBody, IncomingResponse, Method, OutgoingBody,
    OutgoingRequest, RequestOptions, Scheme,
};
use wasip2::io::poll::Pollable;
use wasip2::io::streams::InputStream;

/// The most bytes one `blocking-write-and-flush` accepts (WASI's documented limit).
const WRITE_CHUNK: usize = 4096;

/// An absolute `http`/`https` URL, split the way `wasi:http` wants it.
#[derive(Clone, Debug)]
pub struct Url {
    /// As given (or as resolved), for messages.
    pub text: String,
    https: bool,
    /// `host[:port]` as written.
    authority: String,
    host: String,
    port: u16,
    /// Path and query, starting with `/`.
    path: String,
}

impl Url {
    /// Parses an absolute `http://` or `https://` URL.
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = |why: &str| format!("bad url {text:?}: {why}");
        let (scheme, rest) = text.split_once("://").ok_or_else(|| bad("no scheme"))?;
        let https = match scheme.to_ascii_lowercase().as_str() {
            "http" => false,
            "https" => true,
            _ => return Err(bad("the sse transport needs http:// or https://")),
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let authority = &rest[..end];
        let mut path = rest[end..].split('#').next().unwrap_or("").to_string();
        if !path.starts_with('/') {
            path.insert(0, '/');
        }
        let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let (host, port) = match hostport.strip_prefix('[') {
            Some(v6) => {
                let (ip, after) = v6.split_once(']').ok_or_else(|| bad("unclosed ["))?;
                (format!("[{ip}]"), after.strip_prefix(':'))
            }
            None => match hostport.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (hostport.to_string(), None),
            },
        };
        let port = match port {
            Some(p) => p.parse::<u16>().map_err(|_| bad("bad port"))?,
            None if https => 443,
            None => 80,
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        Ok(Self { text: text.to_string(), https, authority: hostport.to_string(), host, port, path })
    }

    /// Resolves the `endpoint` event's URL (absolute, scheme-relative, absolute-path or
    /// relative) against this one.
    pub fn join(&self, reference: &str) -> Result<Url, String> {
        let scheme = if self.https { "https" } else { "http" };
        let lower = reference.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            return Url::parse(reference);
        }
        if let Some(rest) = reference.strip_prefix("//") {
            return Url::parse(&format!("{scheme}://{rest}"));
        }
        let path = if reference.starts_with('/') {
            reference.to_string()
        } else {
            let base = self.path.split('?').next().unwrap_or("/");
            let dir = &base[..base.rfind('/').map_or(0, |i| i + 1)];
            format!("{dir}{reference}")
        };
        Url::parse(&format!("{scheme}://{}{path}", self.authority))
    }

    /// `scheme://host:port`, the form grants and denials use.
    fn origin(&self) -> String {
        format!("{}://{}:{}", if self.https { "https" } else { "http" }, self.host, self.port)
    }
}

/// The open event stream. Field order is drop order: a stream goes before its body, the body
/// before its response.
pub struct EventStream {
    /// The response body, read as the server writes events.
    pub body: InputStream,
    _incoming: IncomingBody,
    _response: IncomingResponse,
}

/// `GET`s `url` as `text/event-stream` and waits for the response head. `last_id` (when not
/// empty) goes out as `Last-Event-ID`, so a server can resume where the last stream ended;
/// `idle_ns` is how long the stream may stay silent (`wasi:http`'s between-bytes timeout).
pub fn open_event_stream(
    url: &Url,
    headers: &[(String, String)],
    last_id: &str,
    idle_ns: u64,
) -> Result<EventStream, String> {
    let mut extra = vec![("accept", "text/event-stream")];
    if !last_id.is_empty() {
        extra.push(("last-event-id", last_id));
    }
    let request = request(Method::Get, url, headers, &extra)?;
    let options = RequestOptions::new();
    options
        .set_between_bytes_timeout(Some(idle_ns))
        .map_err(|()| format!("GET {}: the host refused a stream idle timeout", url.text))?;
    let future = handle(request, Some(options)).map_err(|e| describe(&e, url))?;
    let response = wait(&future, url)?;
    let status = response.status();
    if status != 200 {
        return Err(format!("GET {}: HTTP {status} (expected an event stream)", url.text));
    }
    let incoming = response.consume().map_err(|()| format!("GET {}: no response body", url.text))?;
    let body = incoming.stream().map_err(|()| format!("GET {}: no response body", url.text))?;
    Ok(EventStream { body, _incoming: incoming, _response: response })
}

/// One message being `POST`ed to the endpoint.
pub struct Post {
    future: FutureIncomingResponse,
    target: Url,
}

impl Post {
    /// Sends `message` as the body of a `POST` to `target`; the response is awaited later.
    pub fn start(target: &Url, headers: &[(String, String)], message: &str) -> Result<Post, String> {
        let length = message.len().to_string();
        let extra = [("content-type", "application/json"), ("content-length", length.as_str())];
        let request = request(Method::Post, target, headers, &extra)?;
        let body = request.body().map_err(|()| format!("POST {}: no request body", target.text))?;
        let future = handle(request, None).map_err(|e| describe(&e, target))?;
        let written = write_body(body, message);
        // A refused or failed request breaks the body first: its response says why.
        if written.is_err()
            && let Err(reason) = wait(&future, target)
        {
            return Err(reason);
        }
        written.map_err(|e| format!("POST {}: {e}", target.text))?;
        Ok(Post { future, target: target.clone() })
    }

    /// Ready when the response head has arrived (or the request failed).
    pub fn subscribe(&self) -> Pollable {
        self.future.subscribe()
    }

    /// `Ok(true)` once the server accepted the message; an error status or a failed request
    /// ends the connection.
    pub fn finished(&self) -> Result<bool, String> {
        match self.future.get() {
            None => Ok(false),
            Some(Err(())) => Err(format!("POST {}: response already taken", self.target.text)),
            Some(Ok(Err(e))) => Err(describe(&e, &self.target)),
            Some(Ok(Ok(response))) => match response.status() {
                200..=299 => Ok(true),
                status => Err(format!("POST {}: HTTP {status}", self.target.text)),
            },
        }
    }
}

/// Streams `message` into the request body and finishes it.
fn write_body(body: OutgoingBody, message: &str) -> Result<(), String> {
    {
        let out = body.write().map_err(|()| "cannot write the request body".to_string())?;
        for chunk in message.as_bytes().chunks(WRITE_CHUNK) {
            out.blocking_write_and_flush(chunk).map_err(|_| "the request body was cut off".to_string())?;
        }
    }
    OutgoingBody::finish(body, None).map_err(|e| format!("{e:?}"))
}

/// A request with the server's configured headers plus `extra` (which win on a clash).
fn request(
    method: Method,
    url: &Url,
    headers: &[(String, String)],
    extra: &[(&str, &str)],
) -> Result<OutgoingRequest, String> {
    let fields = Fields::new();
    for (name, value) in headers {
        if extra.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
            continue;
        }
        // The value is a secret: name only the header.
        fields.append(name, value.as_bytes()).map_err(|e| format!("header {name} cannot be sent: {e:?}"))?;
    }
    for (name, value) in extra {
        fields.append(name, value.as_bytes()).map_err(|e| format!("header {name}: {e:?}"))?;
    }
    let request = OutgoingRequest::new(fields);
    let bad = |what: &str| format!("{}: bad {what}", url.text);
    request.set_method(&method).map_err(|()| bad("method"))?;
    let scheme = if url.https { Scheme::Https } else { Scheme::Http };
    request.set_scheme(Some(&scheme)).map_err(|()| bad("scheme"))?;
    request.set_authority(Some(&url.authority)).map_err(|()| bad("host"))?;
    request.set_path_with_query(Some(&url.path)).map_err(|()| bad("path"))?;
    Ok(request)
}

fn wait(future: &FutureIncomingResponse, url: &Url) -> Result<IncomingResponse, String> {
    loop {
        match future.get() {
            None => future.subscribe().block(),
            Some(Err(())) => return Err(format!("{}: response already taken", url.text)),
            Some(Ok(Err(e))) => return Err(describe(&e, url)),
            Some(Ok(Ok(response))) => return Ok(response),
        }
    }
}

/// The host's request hook answers a reach outside the grants with `HTTP-request-denied`.
fn describe(e: &ErrorCode, url: &Url) -> String {
    match e {
        ErrorCode::HttpRequestDenied => format!("not granted: {}", url.origin()),
        ErrorCode::ConnectionRefused => format!("{}: connection refused", url.text),
        other => format!("{}: {other:?}", url.text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_resolve_against_the_stream_url() {
        let base = Url::parse("http://127.0.0.1:3001/mcp/sse?x=1").unwrap_or_else(|e| panic!("{e}"));
        let join = |r: &str| base.join(r).map(|u| u.text).unwrap_or_else(|e| e);
        assert_eq!(join("/message?sessionId=a"), "http://127.0.0.1:3001/message?sessionId=a");
        assert_eq!(join("message?sessionId=a"), "http://127.0.0.1:3001/mcp/message?sessionId=a");
        assert_eq!(join("https://other.io/m"), "https://other.io/m");
        assert_eq!(join("//other.io:81/m"), "http://other.io:81/m");
        assert_eq!(base.origin(), "http://127.0.0.1:3001");
    }
}
