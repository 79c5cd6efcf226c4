//! Who is calling `serve --http`, once the caller's token was checked: the identity a policy
//! decides on, a rate limit counts against and the audit log names. The HTTP side puts it in
//! the request's extensions; rmcp hands every request's `http::request::Parts` to the handler,
//! so a `Front` finds it there. Over stdio, or with a shared token, there is no caller.
//!
//! The type is the front's, though the gateway makes it (`gateway/bearer.rs`, `gateway/oidc/`):
//! the front reads who is calling without knowing how a token is checked.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::RequestContext;

use crate::observe::CallContext;
use serde_json::{Map, Value};

/// A caller whose token was valid.
#[derive(Debug, Clone, PartialEq)]
pub struct Caller {
    /// The token's `sub`.
    pub subject: String,
    /// The token's `groups` (a list of strings; absent: none).
    pub groups: Vec<String>,
    /// The OAuth client the token was issued to (`client_id`, else `azp`).
    pub client_id: Option<String>,
    /// Every claim of the token, for policies that look further.
    pub claims: Arc<Map<String, Value>>,
}

impl Caller {
    /// The caller of the request `context` belongs to, when the HTTP side established one.
    pub fn of(context: &RequestContext<RoleServer>) -> Option<Caller> {
        context.extensions.get::<axum::http::request::Parts>()?.extensions.get::<Caller>().cloned()
    }

    /// Who this caller is for what it opens: its token's issuer and subject.
    pub fn owner(&self) -> Owner {
        let issuer = self.claims.get("iss").and_then(Value::as_str).unwrap_or_default();
        Owner { issuer: issuer.to_string(), subject: self.subject.clone() }
    }
}

/// Whose a session or a waiting call is: the issuer and subject of the token that opened it
/// (`sub` is unique only within its issuer). Only that caller may use it; anyone else is told
/// it does not exist. `None` where callers have no names (a shared `--token-env` token,
/// loopback without one): there, whoever passes the gate is the same caller.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Owner {
    /// The token's `iss`.
    pub issuer: String,
    /// The token's `sub`.
    pub subject: String,
}

impl Owner {
    /// The owner of a request whose extensions are `extensions` (the gateway's `bearer.rs` put its caller
    /// there).
    pub fn of(extensions: &axum::http::Extensions) -> Option<Owner> {
        extensions.get::<Caller>().map(Caller::owner)
    }

    /// The owner of the request `context` belongs to.
    pub fn of_context(context: &RequestContext<RoleServer>) -> Option<Owner> {
        Caller::of(context).as_ref().map(Caller::owner)
    }
}

/// Who is asking, let through by the policies `permitted`: the [`CallContext`] the runtime
/// records in the audit log.
pub(super) fn call_context(context: &RequestContext<RoleServer>, permitted: Vec<String>) -> CallContext {
    let info = context.client_info();
    let caller = Caller::of(context);
    let subject = caller.as_ref().map(|c| c.subject.as_str());
    let name = info.as_ref().map(|i| i.name.as_str());
    CallContext::default()
        .with_client(label_of(context, subject, name))
        .with_parties(subject, name)
        .with_permitted_by(permitted)
}

/// Who is asking, for the audit log: the caller's subject when its token named one
/// (`--auth oidc`), the client's `clientInfo` name and, over HTTP, its `Mcp-Session-Id`
/// (`observe::call_context::label`).
pub(super) fn client_of(context: &RequestContext<RoleServer>) -> Option<Arc<str>> {
    let info = context.client_info();
    let caller = Caller::of(context);
    let subject = caller.as_ref().map(|c| c.subject.as_str());
    label_of(context, subject, info.as_ref().map(|i| i.name.as_str()))
}

/// [`client_of`] from its parts, read once by the caller.
fn label_of(
    context: &RequestContext<RoleServer>,
    subject: Option<&str>,
    name: Option<&str>,
) -> Option<Arc<str>> {
    let session = context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.headers.get(rmcp::transport::common::http_header::HEADER_SESSION_ID))
        .and_then(|value| value.to_str().ok());
    crate::observe::call_context::label(subject, name, session)
}
