//! What one request may see and use, as the front asks it: its [`Scope`] — a principal, the
//! bundle its URL names, the policy in force — decides every list, call, read and prompt, in
//! `front.rs` and the lazy surface alike. Who the principal is, which bundle and which policy
//! is not the front's to know: whoever serves it (the gateway's `access.rs`) gives each
//! request its scope through [`Scopes`], so the front reads no token and no URL.
//!
//! Outside the bundle or denied, an item is answered as one that does not exist (the same
//! words as an unknown tool, resource or prompt): a caller learns nothing of what it may not
//! use. Without a policy everything is allowed; without a bundle the whole surface is in scope.

use std::sync::Arc;
use std::time::Duration;

use axum::http::request::Parts;
use rmcp::RoleServer;
use rmcp::model::Tool;
use rmcp::service::RequestContext;

use crate::config::Bundle;
use crate::policy::{Action, Decision, Hints, Policy, Principal, Target};
use crate::runtime::{Catalog, Runtime, ToolRecord};
use crate::status::{ServerState, ServerStatus};

/// What gives each request its scope: the front asks, the side that knows callers, bundles
/// and the policy answers.
pub trait Scopes: Send + Sync {
    /// The scope of the request whose head is `parts` (none: stdio). The rate limits ask it
    /// before the handler runs.
    fn scope_of(&self, runtime: &Runtime, parts: Option<&Parts>) -> Scope;

    /// The scope of the request `context` belongs to, as a handler asks it.
    fn scope(&self, runtime: &Runtime, context: &RequestContext<RoleServer>) -> Scope {
        self.scope_of(runtime, context.extensions.get::<Parts>())
    }
}

/// Whether an item may be used, and why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Allowed (by these `permit`s; none without a policy).
    Allowed(Vec<String>),
    /// Not in the request's bundle.
    Outside,
    /// Denied by the policy.
    Denied(Decision),
}

/// What a request may do with the tool it names.
pub enum Callable {
    /// The tool, allowed (by these `permit`s; none without a policy).
    Allowed { record: Arc<ToolRecord>, by: Vec<String> },
    /// The tool, outside the bundle or denied: answered as unknown, audited as `denied`.
    Refused { record: Arc<ToolRecord>, verdict: Verdict },
    /// No tool on the surface has exactly this name.
    Unknown,
}

/// One request's caller, bundle and policy.
pub struct Scope {
    principal: Principal,
    bundle: Option<Bundle>,
    policy: Option<Arc<Policy>>,
}

impl Scope {
    /// `principal`'s scope under `policy` (none: everything allowed), within `bundle` (none:
    /// the whole surface).
    pub fn new(principal: Principal, bundle: Option<Bundle>, policy: Option<Arc<Policy>>) -> Self {
        Self { principal, bundle, policy }
    }

    /// Nothing to check: no bundle and no policy (what stdio without a policy file is).
    pub fn is_open(&self) -> bool {
        self.bundle.is_none() && self.policy.is_none()
    }

    fn decide(&self, action: Action, in_bundle: bool, target: &Target<'_>) -> Verdict {
        if !in_bundle {
            return Verdict::Outside;
        }
        let Some(policy) = &self.policy else { return Verdict::Allowed(Vec::new()) };
        let decision = policy.decide(&self.principal, action, target);
        match decision.allowed {
            true => Verdict::Allowed(decision.policies),
            false => Verdict::Denied(decision),
        }
    }

    fn tool_target<'a>(record: &'a ToolRecord) -> Target<'a> {
        let hints = record.tool.annotations.as_ref().map(Hints::from).unwrap_or_default();
        Target::Tool { server: &record.server, name: &record.original, hints }
    }

    fn holds_tool(&self, record: &ToolRecord) -> bool {
        self.bundle.as_ref().is_none_or(|b| b.holds_tool(&record.server, &record.original))
    }

    fn holds_server(&self, server: &str) -> bool {
        self.bundle.as_ref().is_none_or(|b| b.holds_server(server))
    }

    /// May the tool of `record` be called?
    pub fn call(&self, record: &ToolRecord) -> Verdict {
        self.decide(Action::Call, self.holds_tool(record), &Self::tool_target(record))
    }

    /// The tool named exactly `name` (never trimmed or folded: a name with a space or a
    /// control character around it is no tool's) and whether it may be called; when there is
    /// none, again once the servers still connecting have settled (at most `settle` after the
    /// start): a client that calls what it knows without listing first must not miss a server
    /// that is coming up. The record returned is the one to run, not its name.
    pub async fn callable(&self, runtime: &Runtime, name: &str, settle: Duration) -> Callable {
        let record = match runtime.record(name) {
            Some(record) => Some(record),
            None => {
                runtime.settle(settle).await;
                runtime.record(name)
            }
        };
        let Some(record) = record else { return Callable::Unknown };
        match self.call(&record) {
            Verdict::Allowed(by) => Callable::Allowed { record, by },
            verdict => Callable::Refused { record, verdict },
        }
    }

    /// May `server`'s resource `uri` be read?
    pub fn read(&self, server: &str, uri: &str) -> Verdict {
        self.decide(Action::Read, self.holds_server(server), &Target::Resource { server, uri })
    }

    /// May `server`'s prompt `name` be got?
    pub fn prompt(&self, server: &str, name: &str) -> Verdict {
        self.decide(Action::Prompt, self.holds_server(server), &Target::Prompt { server, name })
    }

    fn lists(&self, in_bundle: bool, target: &Target<'_>) -> bool {
        matches!(self.decide(Action::List, in_bundle, target), Verdict::Allowed(_))
    }

    /// Whether the tool of `record` is listed.
    pub fn lists_tool(&self, record: &ToolRecord) -> bool {
        self.is_open() || self.lists(self.holds_tool(record), &Self::tool_target(record))
    }

    /// Whether `server`'s resource (or resource template) `uri` is listed.
    pub fn lists_resource(&self, server: &str, uri: &str) -> bool {
        self.is_open() || self.lists(self.holds_server(server), &Target::Resource { server, uri })
    }

    /// Whether `server`'s prompt `name` is listed.
    pub fn lists_prompt(&self, server: &str, name: &str) -> bool {
        self.is_open() || self.lists(self.holds_server(server), &Target::Prompt { server, name })
    }

    /// The rows of the servers this scope can use, for the instructions: a server with
    /// something the scope lists (a tool, a resource or template, a prompt), its `tools` the
    /// number of its tools the scope lists. A server that lists nothing yet (connecting,
    /// failed) is named when its bundle holds it and there is no policy; under a policy it is
    /// left out until it is up, as what it offers is not known.
    pub fn servers(
        &self,
        rows: Vec<ServerStatus>,
        records: &[Arc<ToolRecord>],
        catalog: &Catalog,
    ) -> Vec<ServerStatus> {
        if self.is_open() {
            return rows;
        }
        rows.into_iter()
            .filter_map(|mut row| {
                let server = row.name.as_str();
                let tools = records.iter().filter(|r| r.server == server && self.lists_tool(r)).count();
                let other = catalog
                    .resources
                    .iter()
                    .any(|r| r.server == server && self.lists_resource(server, &r.item.uri))
                    || catalog
                        .templates
                        .iter()
                        .any(|t| t.server == server && self.lists_resource(server, &t.item.uri_template))
                    || catalog
                        .prompts
                        .iter()
                        .any(|p| p.server == server && self.lists_prompt(server, &p.item.name));
                let unknown =
                    row.state != ServerState::Connected && self.policy.is_none() && self.holds_server(server);
                row.tools = tools;
                (tools > 0 || other || unknown).then_some(row)
            })
            .collect()
    }

    /// The tools of `records` this scope lists, each as its server listed it (title,
    /// description, schemas, annotations, icons, `_meta`) under its final name.
    pub fn tools(&self, records: Vec<Arc<ToolRecord>>) -> Vec<Tool> {
        records
            .into_iter()
            .filter(|record| self.lists_tool(record))
            .map(|record| {
                let mut tool = record.tool.clone();
                tool.name = record.name.clone().into();
                tool
            })
            .collect()
    }
}
