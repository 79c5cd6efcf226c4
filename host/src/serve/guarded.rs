//! The one guarded path of a call, a read and a prompt. The request's scope (`scope.rs`)
//! decides; a refusal — outside the request's bundle, or denied by the policy — is recorded
//! the same way whichever of the three it was: an audit line with the outcome `denied`, the
//! word `bundle` or `policy` and the ids of the `forbid`s that decided (none: no `permit`
//! matched), counted by the metrics as well (`Observer::finished`); a `tracing` event; and the
//! request's span ended with the answer. The client is answered as if the item did not exist,
//! in its method's own words (an unknown tool's result, a resource not found, an unknown
//! prompt): a caller learns nothing of what it may not use.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResponse, GetPromptResponse, ReadResourceResponse};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

use super::answer::{catalog_error, respond, unknown_resource};
use super::caller::client_of;
use super::front::Front;
use super::input_rounds::Step;
use super::request_span::{Answer, RequestSpan};
use super::scope::{Callable, Verdict};
use crate::observe::{Exchange, Kind, Outcome};
use crate::runtime::{CallError, CatalogError, ToolRecord};

/// The answer of a guarded method: what the audit log calls it, and what it answers for an
/// item that does not exist (and so for one the caller may not use).
pub(super) trait Guarded: Answer + Sized {
    /// The request, as the audit log names it.
    const KIND: Kind;

    /// The answer for `name` when no item has that name.
    fn unknown(name: &str) -> Result<Self, McpError>;
}

impl Guarded for CallToolResponse {
    const KIND: Kind = Kind::Call;

    fn unknown(name: &str) -> Result<Self, McpError> {
        respond(Step::Done(Err(CallError::UnknownTool(name.to_string()))))
    }
}

impl Guarded for ReadResourceResponse {
    const KIND: Kind = Kind::Read;

    fn unknown(uri: &str) -> Result<Self, McpError> {
        Err(unknown_resource(uri))
    }
}

impl Guarded for GetPromptResponse {
    const KIND: Kind = Kind::Prompt;

    fn unknown(name: &str) -> Result<Self, McpError> {
        Err(catalog_error(CatalogError::UnknownPrompt(name.to_string())))
    }
}

/// A refused request's answer, its refusal already recorded: what its handler returns.
pub(super) type Refused<T> = Result<T, McpError>;

impl Front {
    /// The check every call, read and prompt passes: `verdict` is what the request's scope
    /// said of `server`'s `name` (a tool's name as the client called it, a URI, a prompt's
    /// name). Allowed: the `permit`s that allowed it, for the audit line of the request
    /// itself. Refused: recorded (the module's doc says how) and answered as unknown.
    pub(super) fn guard<T: Guarded>(
        &self,
        context: &RequestContext<RoleServer>,
        span: &RequestSpan,
        server: &str,
        name: &str,
        verdict: Verdict,
    ) -> Result<Vec<String>, Refused<T>> {
        let (word, policies) = match verdict {
            Verdict::Allowed(by) => return Ok(by),
            Verdict::Outside => ("bundle", Vec::new()),
            Verdict::Denied(decision) => ("policy", decision.policies),
        };
        let client = client_of(context);
        self.runtime().observer().finished(&Exchange {
            kind: T::KIND,
            client: client.as_deref(),
            server,
            name,
            outcome: Outcome::Denied,
            duration: Duration::ZERO,
            bytes_in: 0,
            bytes_out: 0,
            arguments: None,
            error: Some(word),
            policies: &policies,
            guards: &[],
            audit: self.runtime().audit_choice(),
        });
        // The name may be a URI: its secrets stay out of the log, as out of the span.
        let shown = crate::redact::redact_urls(name);
        tracing::info!(kind = T::KIND.as_str(), server, name = %shown, ?policies, "refused by the {word}, answered as unknown");
        Err(span.ended(T::unknown(name)))
    }

    /// The tool this request may call under exactly `name` (`scope.rs`) and the `permit`s
    /// that allowed it: the record to run, never the name again. Fails closed: a refused tool
    /// is "unknown tool", guarded as above; a name that is no tool's is refused here too, why
    /// (held, its server not connected) told only to a request with the whole surface in
    /// scope.
    pub(super) async fn may_call(
        &self,
        context: &RequestContext<RoleServer>,
        span: &RequestSpan,
        name: &str,
    ) -> Result<(Arc<ToolRecord>, Vec<String>), Refused<CallToolResponse>> {
        let scope = self.shared.access.scope(self.runtime(), context);
        match scope.callable(self.runtime(), name, self.shared.list_wait).await {
            Callable::Allowed { record, by } => Ok((record, by)),
            Callable::Refused { record, verdict } => {
                self.guard(context, span, &record.server, name, verdict).map(|by| (record, by))
            }
            Callable::Unknown => {
                Err(span.ended(respond(Step::Done(Err(self.runtime().refuse_call(name, scope.is_open()))))))
            }
        }
    }
}
