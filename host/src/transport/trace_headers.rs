//! The trace context of a request to an HTTP server in its headers as well as in its `_meta`:
//! done by the bottom layer of every HTTP client (`http_audit.rs`'s), which sends each
//! request out, here where whether traces are exported is known (`observe`).

use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};

use crate::http_layer::Headers;
use crate::observe::traces;

/// `headers` with the W3C `traceparent`/`tracestate` of the request in `message` (a `POST`'s), copied from
/// its `_meta` (SEP-414: over HTTP the headers carry what `_meta` does), while traces are
/// exported: an HTTP server's tracing sees the call's span as its parent without reading MCP.
pub(super) fn trace_headers(message: Option<&ClientJsonRpcMessage>, mut headers: Headers) -> Headers {
    if !traces::on() {
        return headers;
    }
    let Some(JsonRpcMessage::Request(request)) = message else { return headers };
    let meta = match &request.request {
        ClientRequest::CallToolRequest(r) => r.params.meta.as_ref(),
        ClientRequest::ReadResourceRequest(r) => r.params.meta.as_ref(),
        ClientRequest::GetPromptRequest(r) => r.params.meta.as_ref(),
        _ => None,
    };
    let Some(meta) = meta else { return headers };
    for key in [traces::TRACEPARENT, traces::TRACESTATE] {
        let value = meta.get(key).and_then(|v| v.as_str()).and_then(|v| HeaderValue::from_str(v).ok());
        if let Some(value) = value {
            headers.insert(HeaderName::from_static(key), value);
        }
    }
    headers
}
