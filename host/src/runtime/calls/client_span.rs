//! One CLIENT span per request toolport sends a server (`tools/call`, `resources/read`,
//! `prompts/get`), named as the OpenTelemetry conventions for MCP say, and its context passed
//! to the server in the request's `_meta.traceparent`/`tracestate` (SEP-414), so the server's
//! own spans join the caller's trace. Nothing of the arguments enters it; a resource's URI only
//! with its secrets masked. It shares with the SERVER span (`serve/request_span.rs`) the
//! request's `jsonrpc.request.id` (the id it went out under), `mcp.protocol.version` (the
//! revision the server's connection settled on) and `network.transport` (`pipe` for stdio,
//! `tcp` for HTTP), the last two from the connection the request goes on ([`on`]). Off (no
//! span, no `_meta`) unless traces are exported.

use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{
    CallToolRequestParams, ClientRequest, GetPromptRequest, GetPromptRequestParams, GetPromptResult,
    ReadResourceRequest, ReadResourceRequestParams, ReadResourceResult, RequestParamsMeta, ServerResult,
};
use rmcp::service::ServiceError;
use rmcp::{Peer, RoleClient};
use tracing::Span;
use tracing::field::Empty;

use crate::observe::traces;
use crate::runtime::tool_call::request_once;

/// What a CLIENT span says of the connection its request goes on.
#[derive(Debug, Clone)]
pub(crate) struct Link {
    /// The revision the connection settled on.
    pub(crate) protocol: Option<String>,
    /// `pipe`, `tcp`; `None` when not known (a transport plugin).
    pub(crate) transport: Option<&'static str>,
}

tokio::task_local! {
    /// The connection of the request being made in this task ([`on`]).
    static LINK: Link;
}

/// `work`, a request on the connection `link` describes: the CLIENT spans started in it say
/// so. `link` is asked only while traces are exported.
pub(crate) async fn on<F: Future>(link: impl FnOnce() -> Link, work: F) -> F::Output {
    if !traces::on() {
        return work.await;
    }
    LINK.scope(link(), work).await
}

/// A request's method and its low-cardinality target, for the span.
pub trait Method {
    /// The JSON-RPC method.
    const NAME: &'static str;
    /// Records the target's attributes on `span` and says what goes in the span's name.
    fn describe(&self, span: &Span) -> Option<String>;
}

impl Method for CallToolRequestParams {
    const NAME: &'static str = "tools/call";
    fn describe(&self, span: &Span) -> Option<String> {
        span.record("gen_ai.operation.name", "execute_tool");
        span.record("gen_ai.tool.name", self.name.as_ref());
        Some(self.name.to_string())
    }
}

impl Method for ReadResourceRequestParams {
    const NAME: &'static str = "resources/read";
    fn describe(&self, span: &Span) -> Option<String> {
        span.record("mcp.resource.uri", crate::redact::redact_urls(&self.uri).as_ref());
        None
    }
}

impl Method for GetPromptRequestParams {
    const NAME: &'static str = "prompts/get";
    fn describe(&self, span: &Span) -> Option<String> {
        span.record("gen_ai.prompt.name", self.name.as_str());
        Some(self.name.clone())
    }
}

/// A request `serve` and the views send through [`traced`]: its request and its answer.
pub trait Sent: Method + RequestParamsMeta + Sized {
    /// What the server answers.
    type Answer;
    /// The request that carries these parameters.
    fn request(self) -> ClientRequest;
    /// The answer in the server's result, `None` for another kind of result.
    fn answer(result: ServerResult) -> Option<Self::Answer>;
}

impl Sent for ReadResourceRequestParams {
    type Answer = ReadResourceResult;
    fn request(self) -> ClientRequest {
        ClientRequest::ReadResourceRequest(ReadResourceRequest::new(self))
    }
    fn answer(result: ServerResult) -> Option<ReadResourceResult> {
        match result {
            ServerResult::ReadResourceResult(result) => Some(result),
            _ => None,
        }
    }
}

impl Sent for GetPromptRequestParams {
    type Answer = GetPromptResult;
    fn request(self) -> ClientRequest {
        ClientRequest::GetPromptRequest(GetPromptRequest::new(self))
    }
    fn answer(result: ServerResult) -> Option<GetPromptResult> {
        match result {
            ServerResult::GetPromptResult(result) => Some(result),
            _ => None,
        }
    }
}

/// The span of one request to `server`, started where it is made (the caller's span, if any,
/// is its parent), with `params` stamped with its context. Dropped before its answer was
/// recorded (the caller's timeout, a cancel: toolport then sends `notifications/cancelled`), it
/// says `error.type=cancelled`.
pub(crate) struct ClientSpan {
    span: Span,
    answered: AtomicBool,
}

impl ClientSpan {
    /// Starts the span for `params` to `server` and writes its context into their `_meta`
    /// (replacing whatever trace context they carried: the server's parent is this span).
    pub(crate) fn start<P: Method + RequestParamsMeta>(server: &str, params: &mut P) -> Self {
        if !traces::on() {
            return Self { span: Span::none(), answered: AtomicBool::new(true) };
        }
        let span = tracing::info_span!(
            target: "toolport::runtime",
            "mcp.client",
            otel.name = Empty,
            otel.kind = "client",
            otel.status_code = Empty,
            mcp.method.name = P::NAME,
            mcp.protocol.version = Empty,
            mcp.resource.uri = Empty,
            jsonrpc.request.id = Empty,
            network.transport = Empty,
            gen_ai.operation.name = Empty,
            gen_ai.tool.name = Empty,
            gen_ai.prompt.name = Empty,
            toolport.server = server,
            error.type = Empty,
        );
        let name = match params.describe(&span) {
            Some(target) => format!("{} {target}", P::NAME),
            None => P::NAME.to_string(),
        };
        span.record("otel.name", name.as_str());
        let _ = LINK.try_with(|link| {
            if let Some(protocol) = &link.protocol {
                span.record("mcp.protocol.version", protocol.as_str());
            }
            if let Some(transport) = link.transport {
                span.record("network.transport", transport);
            }
        });
        let meta = params.meta_mut().get_or_insert_with(Default::default);
        meta.remove(traces::TRACEPARENT);
        meta.remove(traces::TRACESTATE);
        for (key, value) in traces::carrier(&span) {
            meta.insert(key.to_string(), value.into());
        }
        if params.meta().is_some_and(|m| m.is_empty()) {
            *params.meta_mut() = None;
        }
        Self { span, answered: AtomicBool::new(false) }
    }

    /// `work` (the request on the wire) inside this span.
    pub(crate) fn within<F: Future>(&self, work: F) -> tracing::instrument::Instrumented<F> {
        tracing::Instrument::instrument(work, self.span.clone())
    }

    /// Records a failed request: `error.type` is the JSON-RPC error's code, or what failed
    /// (`timeout`, `transport`).
    pub(crate) fn failed(&self, error: &str) {
        self.span.record("error.type", error);
        self.span.record("otel.status_code", "ERROR");
    }

    /// Records how `answer` ended.
    pub(crate) fn ended<T>(&self, answer: &Result<T, ServiceError>) {
        self.answered.store(true, Ordering::Relaxed);
        if let Err(e) = answer {
            self.failed(&service_error_type(e));
        }
    }
}

impl Drop for ClientSpan {
    fn drop(&mut self) {
        if !self.answered.load(Ordering::Relaxed) {
            self.failed("cancelled");
        }
    }
}

/// `params` sent to `server` on `peer` as one request in a CLIENT span, stamped with its
/// context: the reads and prompts of the views and of `serve` go through here.
pub async fn traced<P: Sent>(
    server: &str,
    peer: Peer<RoleClient>,
    mut params: P,
) -> Result<P::Answer, ServiceError> {
    let span = ClientSpan::start(server, &mut params);
    let answer = span.within(request_once(&peer, params.request())).await;
    let answer = answer.and_then(|result| P::answer(result).ok_or(ServiceError::UnexpectedResponse));
    span.ended(&answer);
    answer
}

/// The conventions' `error.type` of a failed request.
fn service_error_type(e: &ServiceError) -> String {
    match e {
        ServiceError::McpError(e) => e.code.0.to_string(),
        ServiceError::Timeout { .. } => "timeout".to_string(),
        _ => "transport".to_string(),
    }
}
