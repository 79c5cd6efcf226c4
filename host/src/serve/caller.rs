//! Who is calling `serve --http`, once the caller's token was checked: the identity a policy
//! decides on, a rate limit counts against and the audit log names. The HTTP side puts it in
//! the request's extensions; rmcp hands every request's `http::request::Parts` to the handler,
//! so a `Front` finds it there. Over stdio, or with a shared token, there is no caller.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::RequestContext;
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
}
