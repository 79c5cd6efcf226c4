//! One HTTP GET through `wasi:http/outgoing-handler`. Every wait — the response future, the
//! body stream — goes through wasi-stdio's reactor, so the runtime sleeps in `poll` meanwhile
//! and keeps serving stdin.

use wasi_stdio::Readiness;
use wasip2::http::outgoing_handler::handle;
use wasip2::http::types::{
    ErrorCode, Fields, IncomingBody, IncomingResponse, Method, OutgoingRequest, RequestOptions, Scheme,
    http_error_code,
};
use wasip2::io::streams::{InputStream, StreamError};

use crate::url::Target;

/// Nanoseconds, as wasi:http's options take them.
const CONNECT_TIMEOUT_NS: u64 = 10_000_000_000;
const FIRST_BYTE_TIMEOUT_NS: u64 = 30_000_000_000;
const BETWEEN_BYTES_TIMEOUT_NS: u64 = 30_000_000_000;
/// The most one body read asks for.
const READ_CHUNK: u64 = 64 * 1024;

#[derive(Debug)]
pub enum FetchError {
    /// The host refused the destination (`HTTP-request-denied`): `scheme://host:port`.
    NotGranted(String),
    Failed(String),
}

pub struct Response {
    pub status: u16,
    pub content_type: Option<String>,
    pub location: Option<String>,
    /// At most `max_bytes`.
    pub body: Vec<u8>,
    /// The body went on past `max_bytes`.
    pub truncated: bool,
}

/// GETs `target`, reading at most `max_bytes` of the body.
pub async fn get(target: &Target, max_bytes: usize) -> Result<Response, FetchError> {
    let request = build_request(target)?;
    let options = RequestOptions::new();
    // A host may not support an option (it says so with `err`); the request goes out anyway.
    let _ = options.set_connect_timeout(Some(CONNECT_TIMEOUT_NS));
    let _ = options.set_first_byte_timeout(Some(FIRST_BYTE_TIMEOUT_NS));
    let _ = options.set_between_bytes_timeout(Some(BETWEEN_BYTES_TIMEOUT_NS));
    let pending = handle(request, Some(options)).map_err(|code| error(target, &code))?;

    let readiness = Readiness::new(pending.subscribe());
    readiness.ready().await;
    drop(readiness);
    let response = match pending.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(code))) => return Err(error(target, &code)),
        Some(Err(())) | None => {
            return Err(FetchError::Failed(format!("GET {}: the host lost the response", target.url())));
        }
    };
    drop(pending);

    let (content_type, location) = {
        let headers = response.headers();
        let first = |name: &str| {
            headers.get(name).into_iter().next().map(|v| String::from_utf8_lossy(&v).into_owned())
        };
        (first("content-type"), first("location"))
    };
    let status = response.status();
    let (body, truncated) = read_body(target, response, max_bytes).await?;
    Ok(Response { status, content_type, location, body, truncated })
}

fn build_request(target: &Target) -> Result<OutgoingRequest, FetchError> {
    let headers = Fields::from_list(&[
        ("user-agent".to_string(), concat!("toolport-fetch/", env!("CARGO_PKG_VERSION")).as_bytes().to_vec()),
        ("accept".to_string(), b"text/*, application/json, application/xml;q=0.9, */*;q=0.5".to_vec()),
    ])
    .map_err(|e| FetchError::Failed(format!("cannot build the request headers: {e:?}")))?;
    let request = OutgoingRequest::new(headers);
    let scheme = if target.https { Scheme::Https } else { Scheme::Http };
    let invalid = |part: &str| {
        FetchError::Failed(format!("GET {}: the host refused the request's {part}", target.url()))
    };
    request.set_method(&Method::Get).map_err(|()| invalid("method"))?;
    request.set_scheme(Some(&scheme)).map_err(|()| invalid("scheme"))?;
    request.set_authority(Some(&target.authority)).map_err(|()| invalid("authority"))?;
    request.set_path_with_query(Some(&target.path_with_query)).map_err(|()| invalid("path"))?;
    Ok(request)
}

/// The body, up to `max_bytes`, and whether there was more.
async fn read_body(
    target: &Target,
    response: IncomingResponse,
    max_bytes: usize,
) -> Result<(Vec<u8>, bool), FetchError> {
    let lost = || FetchError::Failed(format!("GET {}: the response has no readable body", target.url()));
    let body: IncomingBody = response.consume().map_err(|()| lost())?;
    let stream: InputStream = body.stream().map_err(|()| lost())?;
    let readiness = Readiness::new(stream.subscribe());
    let mut data = Vec::new();
    let truncated = loop {
        match stream.read(READ_CHUNK) {
            Ok(bytes) if bytes.is_empty() => readiness.ready().await,
            Ok(bytes) => {
                data.extend_from_slice(&bytes);
                if data.len() > max_bytes {
                    data.truncate(max_bytes);
                    break true;
                }
            }
            Err(StreamError::Closed) => break false,
            Err(StreamError::LastOperationFailed(io_error)) => {
                let why = match http_error_code(&io_error) {
                    Some(code) => describe(&code),
                    None => io_error.to_debug_string(),
                };
                return Err(FetchError::Failed(format!(
                    "GET {}: reading the body failed: {why}",
                    target.url()
                )));
            }
        }
    };
    // Children before parents: the pollable, the stream, the body, then the response.
    drop(readiness);
    drop(stream);
    drop(body);
    drop(response);
    Ok((data, truncated))
}

fn error(target: &Target, code: &ErrorCode) -> FetchError {
    match code {
        ErrorCode::HttpRequestDenied => FetchError::NotGranted(target.origin()),
        code => FetchError::Failed(format!("GET {}: {}", target.url(), describe(code))),
    }
}

fn describe(code: &ErrorCode) -> String {
    match code {
        ErrorCode::DnsTimeout => "the DNS lookup timed out".to_string(),
        ErrorCode::DnsError(payload) => {
            format!("the DNS lookup failed ({})", payload.rcode.as_deref().unwrap_or("no code"))
        }
        ErrorCode::DestinationNotFound => "the host was not found".to_string(),
        ErrorCode::DestinationUnavailable => "the host is unavailable".to_string(),
        ErrorCode::ConnectionRefused => "connection refused".to_string(),
        ErrorCode::ConnectionTimeout => "connecting timed out".to_string(),
        ErrorCode::ConnectionReadTimeout => "reading timed out".to_string(),
        ErrorCode::ConnectionTerminated => "the connection was closed early".to_string(),
        ErrorCode::TlsCertificateError => "the TLS certificate was not accepted".to_string(),
        ErrorCode::TlsAlertReceived(alert) => {
            format!("TLS alert: {}", alert.alert_message.as_deref().unwrap_or("(no message)"))
        }
        ErrorCode::InternalError(Some(message)) => message.clone(),
        other => format!("{other:?}"),
    }
}
