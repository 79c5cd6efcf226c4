//! Sees every `tools/list` answer of a streamable HTTP server before rmcp does, so a tool that
//! rmcp leaves out for breaking SEP-2243's `x-mcp-header` rules can be named in a warning (rmcp
//! drops it without saying which server it came from). It wraps rmcp's own reqwest client and
//! changes nothing on the wire.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use rmcp::model::{ServerJsonRpcMessage, ServerResult};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{StreamableHttpError, StreamableHttpPostResponse};

use super::connect_error::ConnectError;
use super::header_rules::header_rule_broken;
use super::trace_headers::trace_headers;
use crate::http_layer::{Headers, HttpLayer, Layered, Request};

/// A tool whose annotations break a rule, with the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadHeaderTool {
    /// The tool's name as the server sent it.
    pub tool: String,
    /// What is wrong (`property "value": x-mcp-header is empty`).
    pub rule: String,
}

/// The breaking tools of the latest `tools/list` pages, shared between the client (which
/// fills it) and the connection (which reads it after listing).
#[derive(Debug, Clone, Default)]
pub struct HeaderAudit(Arc<Mutex<HashMap<String, String>>>);

impl HeaderAudit {
    /// Which of the tools seen break a rule and are not in `kept` (what rmcp passed on): those
    /// are the ones left out of the surface. A tool rmcp kept (an older revision, where the
    /// annotations mean nothing) is not reported.
    pub fn left_out<'a>(&self, kept: impl IntoIterator<Item = &'a str>) -> Vec<BadHeaderTool> {
        let seen = self.0.lock().map(|m| m.clone()).unwrap_or_default();
        let kept: Vec<&str> = kept.into_iter().collect();
        let mut out: Vec<BadHeaderTool> = seen
            .into_iter()
            .filter(|(tool, _)| !kept.contains(&tool.as_str()))
            .map(|(tool, rule)| BadHeaderTool { tool, rule })
            .collect();
        out.sort_by(|a, b| a.tool.cmp(&b.tool));
        out
    }

    fn record(&self, message: &ServerJsonRpcMessage) {
        let ServerJsonRpcMessage::Response(response) = message else { return };
        let ServerResult::ListToolsResult(list) = &response.result else { return };
        let Ok(mut seen) = self.0.lock() else { return };
        for tool in &list.tools {
            match header_rule_broken(&tool.input_schema) {
                Some(rule) => seen.insert(tool.name.to_string(), rule),
                None => seen.remove(tool.name.as_ref()),
            };
        }
    }

    /// Records from an SSE stream as its events go by (only events that can be a tool list are
    /// parsed a second time).
    fn watch(&self, stream: BoxedSseResponse) -> BoxedSseResponse {
        let audit = self.clone();
        stream
            .inspect(move |event| {
                if let Ok(event) = event
                    && let Some(data) = event.data.as_deref()
                    && data.contains("\"tools\"")
                    && let Ok(message) = serde_json::from_str::<ServerJsonRpcMessage>(data)
                {
                    audit.record(&message);
                }
            })
            .boxed()
    }

    fn response(&self, response: StreamableHttpPostResponse) -> StreamableHttpPostResponse {
        match response {
            StreamableHttpPostResponse::Json(message, session) => {
                self.record(&message);
                StreamableHttpPostResponse::Json(message, session)
            }
            StreamableHttpPostResponse::Sse(stream, session) => {
                StreamableHttpPostResponse::Sse(self.watch(stream), session)
            }
            other => other,
        }
    }
}

/// rmcp's reqwest client with a [`HeaderAudit`] on its answers: a layer that only looks at
/// what comes back.
#[derive(Clone)]
pub struct AuditingClient {
    inner: reqwest::Client,
    audit: HeaderAudit,
}

/// Redirects one request may follow; rmcp's own client uses the same bound.
const MAX_REDIRECTS: usize = 10;

impl AuditingClient {
    /// A client that fills `audit`, built as rmcp builds its default one: no idle pool (it
    /// stalls on delayed ACKs), and only same-origin 307/308 redirects (they keep the method and
    /// body; another origin would receive the session id and our headers).
    pub fn new(audit: HeaderAudit) -> Result<Layered<Self>, ConnectError> {
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            let same_origin =
                attempt.previous().first().is_some_and(|first| first.origin() == attempt.url().origin());
            let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
            if same_origin && keeps_body && attempt.previous().len() <= MAX_REDIRECTS {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        // On the process's one TLS configuration: the root certificates are loaded once, not
        // at every connect (`auth/tls.rs`).
        let inner = crate::auth::tls::client_builder()
            .pool_max_idle_per_host(0)
            .redirect(redirects)
            .build()
            .map_err(|e| {
                ConnectError::Failed(format!(
                    "cannot build the HTTP client: {}",
                    crate::cause::deepest_cause(&e)
                ))
            })?;
        Ok(Layered(Self { inner, audit }))
    }
}

impl HttpLayer for AuditingClient {
    type Error = reqwest::Error;

    fn send<R: Request>(
        &self,
        request: R,
        auth_header: Option<String>,
        headers: Headers,
    ) -> impl Future<Output = Result<R::Output, StreamableHttpError<reqwest::Error>>> + Send {
        let headers = trace_headers(request.message(), headers);
        request.send_via(&self.inner, auth_header, headers)
    }

    fn answered(&self, response: StreamableHttpPostResponse) -> StreamableHttpPostResponse {
        self.audit.response(response)
    }

    fn streamed(&self, stream: BoxedSseResponse) -> BoxedSseResponse {
        self.audit.watch(stream)
    }
}
