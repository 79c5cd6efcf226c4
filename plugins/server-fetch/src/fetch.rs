//! The `fetch` tool: GET a URL (following a few redirects, each one checked by the host's
//! grants again) and return the status and the body as text, cut at `maxBytes`.

use rmcp::model::{CallToolResult, ContentBlock};

use crate::http::{self, FetchError};
use crate::url::Target;

pub const DEFAULT_MAX_BYTES: usize = 100_000;
/// The hard cap on `maxBytes`: 5 MiB.
pub const MAX_BYTES_CAP: usize = 5 * 1024 * 1024;
const MAX_REDIRECTS: usize = 5;
/// The whole fetch, redirects included, within this.
const DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);
/// How much of an error response's body the error shows.
const ERROR_BODY: usize = 1000;

pub async fn fetch(url: &str, max_bytes: Option<u64>) -> CallToolResult {
    let max_bytes = match max_bytes {
        Some(0) => return failure("maxBytes must be at least 1".to_string()),
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX).min(MAX_BYTES_CAP),
        None => DEFAULT_MAX_BYTES,
    };
    let target = match Target::parse(url) {
        Ok(target) => target,
        Err(message) => return failure(message),
    };
    // The deadline is a monotonic-clock pollable in the same reactor, not a tokio timer.
    tokio::select! {
        result = follow(target, max_bytes) => result,
        () = wasi_stdio::sleep(DEADLINE) => failure(format!("GET {url}: no answer within {} s", DEADLINE.as_secs())),
    }
}

async fn follow(mut target: Target, max_bytes: usize) -> CallToolResult {
    for _ in 0..=MAX_REDIRECTS {
        let response = match http::get(&target, max_bytes).await {
            Ok(response) => response,
            Err(FetchError::NotGranted(origin)) => return failure(format!("not granted: {origin}")),
            Err(FetchError::Failed(message)) => return failure(message),
        };
        let status = response.status;
        if matches!(status, 301 | 302 | 303 | 307 | 308)
            && let Some(location) = &response.location
        {
            match target.join(location) {
                Ok(next) => {
                    target = next;
                    continue;
                }
                Err(message) => {
                    return failure(format!("HTTP {status}: cannot follow the redirect: {message}"));
                }
            }
        }
        return render(&target, &response, max_bytes);
    }
    failure(format!("GET {}: more than {MAX_REDIRECTS} redirects", target.url()))
}

fn render(target: &Target, response: &http::Response, max_bytes: usize) -> CallToolResult {
    let status = response.status;
    let head = format!("HTTP {status}{} from {}", reason(status), target.url());
    let (text, binary) = body_text(&response.body);
    if !(200..300).contains(&status) {
        let mut message = head;
        if !binary && !text.trim().is_empty() {
            message.push_str("\n\n");
            message.push_str(&clip(&text, ERROR_BODY));
        }
        return failure(message);
    }
    let mut out = head;
    if let Some(content_type) = &response.content_type {
        out.push_str(&format!("\ncontent-type: {content_type}"));
    }
    out.push_str("\n\n");
    if binary {
        out.push_str(&format!("[a binary body of {} bytes is not shown]", response.body.len()));
    } else {
        out.push_str(&text);
    }
    if response.truncated {
        out.push_str(&format!(
            "\n\n[truncated at {max_bytes} bytes: the body is longer; ask with a larger maxBytes (at most {MAX_BYTES_CAP})]"
        ));
    }
    CallToolResult::success(vec![ContentBlock::text(out)])
}

/// The body as text: UTF-8 with a character cut by truncation dropped and other invalid bytes
/// replaced; `true` when it looks binary (NUL bytes).
fn body_text(body: &[u8]) -> (String, bool) {
    if body.contains(&0) {
        return (String::new(), true);
    }
    let valid = match std::str::from_utf8(body) {
        Err(e) if e.error_len().is_none() => &body[..e.valid_up_to()],
        _ => body,
    };
    (String::from_utf8_lossy(valid).into_owned(), false)
}

fn clip(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

fn failure(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => " OK",
        201 => " Created",
        202 => " Accepted",
        204 => " No Content",
        301 => " Moved Permanently",
        302 => " Found",
        303 => " See Other",
        304 => " Not Modified",
        307 => " Temporary Redirect",
        308 => " Permanent Redirect",
        400 => " Bad Request",
        401 => " Unauthorized",
        403 => " Forbidden",
        404 => " Not Found",
        405 => " Method Not Allowed",
        408 => " Request Timeout",
        410 => " Gone",
        429 => " Too Many Requests",
        500 => " Internal Server Error",
        502 => " Bad Gateway",
        503 => " Service Unavailable",
        504 => " Gateway Timeout",
        _ => "",
    }
}
