//! One CLIENT span per request toolport sends a server (`tools/call`, `resources/read`,
//! `prompts/get`), named as the OpenTelemetry conventions for MCP say, and its context passed
//! to the server in the request's `_meta.traceparent`/`tracestate` (SEP-414), so the server's
//! own spans join the caller's trace. Nothing of the arguments enters it; a resource's URI only
//! with its secrets masked. Off (no span, no `_meta`) unless traces are exported.

use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{
    CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams, RequestParamsMeta,
};
use rmcp::service::ServiceError;
use tracing::Span;
use tracing::field::Empty;

use crate::observe::traces;

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
            mcp.resource.uri = Empty,
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

/// `send(params)` as one request to `server` in a CLIENT span, `params` stamped with its
/// context: what `serve` forwards (a read, a prompt) goes through here.
pub async fn traced<P, T, Fut>(
    server: &str,
    mut params: P,
    send: impl FnOnce(P) -> Fut,
) -> Result<T, ServiceError>
where
    P: Method + RequestParamsMeta,
    Fut: Future<Output = Result<T, ServiceError>>,
{
    let span = ClientSpan::start(server, &mut params);
    let answer = span.within(send(params)).await;
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
