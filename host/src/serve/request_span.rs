//! One SERVER span per client request, named and described by the OpenTelemetry semantic
//! conventions for MCP (`tools/call echo`, `mcp.method.name`, `gen_ai.tool.name`, ...), its
//! parent the client's span: `_meta.traceparent` (SEP-414), else over HTTP the W3C
//! `traceparent` header. Exported only when traces are on (`observe::traces`); no argument,
//! token or session id enters it (the session id only as a digest).

use rmcp::model::{CallToolResponse, ErrorCode};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use sha2::{Digest as _, Sha256};
use tracing::Span;
use tracing::field::Empty;

use crate::observe::traces;

/// A request's span: kept by its handler until the answer, cloned into the work it spawns.
pub(super) struct RequestSpan(Span);

/// What the request asks for, for the span's name and attributes.
pub(super) enum Target<'a> {
    /// A listing, or anything without a low-cardinality target.
    None,
    /// `tools/call` of this tool (the name the client used).
    Tool(&'a str),
    /// `prompts/get` of this prompt.
    Prompt(&'a str),
    /// `resources/read` of this URI: an attribute (its secrets masked), never in the name.
    Resource(&'a str),
}

/// The span of the request `method` under way in `context`, not yet entered.
pub(super) fn start(
    method: &'static str,
    target: Target<'_>,
    context: &RequestContext<RoleServer>,
) -> RequestSpan {
    if !traces::on() {
        return RequestSpan(Span::none());
    }
    let name = match target {
        Target::Tool(name) | Target::Prompt(name) => format!("{method} {name}"),
        Target::None | Target::Resource(_) => method.to_string(),
    };
    let parts = context.extensions.get::<http::request::Parts>();
    let span = tracing::info_span!(
        target: "toolport::serve",
        "mcp.server",
        otel.name = %name,
        otel.kind = "server",
        otel.status_code = Empty,
        mcp.method.name = method,
        mcp.protocol.version = Empty,
        mcp.session.id = Empty,
        mcp.resource.uri = Empty,
        gen_ai.operation.name = Empty,
        gen_ai.tool.name = Empty,
        gen_ai.prompt.name = Empty,
        jsonrpc.request.id = %request_id(&context.id),
        network.transport = if parts.is_some() { "tcp" } else { "pipe" },
        error.type = Empty,
    );
    match target {
        Target::Tool(tool) => {
            span.record("gen_ai.operation.name", "execute_tool");
            span.record("gen_ai.tool.name", tool);
        }
        Target::Prompt(prompt) => {
            span.record("gen_ai.prompt.name", prompt);
        }
        Target::Resource(uri) => {
            span.record("mcp.resource.uri", crate::redact::redact_urls(uri).as_ref());
        }
        Target::None => {}
    }
    if let Some(version) = context.protocol_version() {
        span.record("mcp.protocol.version", version.as_str());
    }
    let header = |name: &str| parts.and_then(|p| p.headers.get(name)).and_then(|v| v.to_str().ok());
    if let Some(session) = header("mcp-session-id") {
        span.record("mcp.session.id", session_digest(session).as_str());
    }
    match context.meta.get_traceparent() {
        Some(parent) => traces::adopt(&span, Some(parent), context.meta.get_tracestate()),
        None => traces::adopt(&span, header(traces::TRACEPARENT), header(traces::TRACESTATE)),
    }
    RequestSpan(span)
}

impl RequestSpan {
    /// `work` inside this span.
    pub(super) fn within<F: Future>(&self, work: F) -> tracing::instrument::Instrumented<F> {
        tracing::Instrument::instrument(work, self.0.clone())
    }

    /// Records how the request ended (`error.type`: the JSON-RPC error's code, or `tool_error`
    /// for a tool's own error result) and passes the answer on.
    pub(super) fn ended<T: Answer>(&self, answer: Result<T, McpError>) -> Result<T, McpError> {
        let error = match &answer {
            Ok(answer) => answer.is_error().then(|| "tool_error".to_string()),
            Err(e) => Some(error_type(e.code)),
        };
        if let Some(error) = error {
            self.0.record("error.type", error.as_str());
            self.0.record("otel.status_code", "ERROR");
        }
        answer
    }
}

/// An answer that may be an error of its own.
pub(super) trait Answer {
    /// Whether it reports a failure (a tool's `isError: true`).
    fn is_error(&self) -> bool {
        false
    }
}

impl Answer for CallToolResponse {
    fn is_error(&self) -> bool {
        matches!(self, CallToolResponse::Complete(result) if result.is_error == Some(true))
    }
}

impl Answer for rmcp::model::ReadResourceResponse {}
impl Answer for rmcp::model::GetPromptResponse {}

/// The JSON-RPC id as the conventions write it.
fn request_id(id: &rmcp::model::RequestId) -> String {
    match id {
        rmcp::model::NumberOrString::Number(n) => n.to_string(),
        rmcp::model::NumberOrString::String(s) => s.to_string(),
    }
}

/// The conventions' `error.type` of a JSON-RPC error: its code.
fn error_type(code: ErrorCode) -> String {
    code.0.to_string()
}

/// A session id says who may continue the session: the span keeps only a digest, enough to
/// group one session's requests.
fn session_digest(session: &str) -> String {
    let digest = Sha256::digest(session.as_bytes());
    hex::encode(&digest[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_id_is_kept_only_as_a_digest() {
        let digest = session_digest("f3a0c2d4-secret-session");
        assert_eq!(digest.len(), 16);
        assert!(!digest.contains("secret"));
        assert_eq!(digest, session_digest("f3a0c2d4-secret-session"));
    }
}
