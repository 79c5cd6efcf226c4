//! What one request may see and use: the caller (`caller.rs`; none over stdio or with a
//! shared token: `User::"anonymous"`), the bundle its URL names (`/mcp/<bundle>`, the
//! workspace's `bundles`) and the policy file (`policy/`). Lists are filtered by it and every
//! call, read and prompt is checked by it, in `front.rs` and the lazy surface alike.
//!
//! Outside the bundle or denied, an item is answered as one that does not exist (the same
//! words as an unknown tool, resource or prompt): a caller learns nothing of what it may not
//! use. A denial is an audit line with the outcome `denied`, the word `policy` (or `bundle`)
//! and the ids of the `forbid`s that decided (none: no `permit` matched). Without a policy
//! everything is allowed, as before; without a bundle the whole surface is in scope.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::http::request::Parts;
use rmcp::RoleServer;
use rmcp::model::Tool;
use rmcp::service::RequestContext;

use super::Caller;
use crate::config::Bundle;
use crate::observe::{Exchange, Kind, Outcome};
use crate::policy::{Action, Decision, Hints, Policy, Principal, Target};
use crate::runtime::{Catalog, Runtime, ToolRecord};
use crate::status::{ServerState, ServerStatus};

/// The prefix of a bundle's endpoint (`/mcp/docs`).
pub const BUNDLE_PATH: &str = "/mcp/";

/// The policy every request is decided by (none: everything allowed).
#[derive(Default)]
pub struct Access {
    policy: RwLock<Option<Arc<Policy>>>,
}

impl Access {
    /// Decides by `policy` from now on (`None`: allow everything).
    pub fn set_policy(&self, policy: Option<Policy>) {
        *self.policy.write().unwrap_or_else(|p| p.into_inner()) = policy.map(Arc::new);
    }

    /// Whether `caller` may read the operator's endpoint `path` (`/status`, `/metrics`), asked
    /// only with `--auth oidc` (with a shared token or none, whoever is let in is the one
    /// operator): the policy must permit `Action::"operate"` on `Endpoint::"<path>"`, and
    /// without a policy no caller is an operator. `Err` is the 403's body.
    pub fn operates(&self, caller: Option<&Caller>, path: &str) -> Result<(), String> {
        let policy = self.policy.read().unwrap_or_else(|p| p.into_inner()).clone();
        let target = Target::Endpoint { path };
        let Some(policy) = policy else {
            return Err(format!(
                "Forbidden: {path} is for operators: with --auth oidc, a caller the policy permits \
                 Action::\"operate\" on {}, and serve has no policy (--policy FILE, or policy.cedar in its home)\n",
                target.describe()
            ));
        };
        let principal = caller.map_or_else(Principal::anonymous, principal_of);
        let decision = policy.decide(&principal, Action::Operate, &target);
        if decision.allowed {
            return Ok(());
        }
        tracing::info!(subject = %principal.subject, path, "operator endpoint refused: {}", decision.explain());
        Err(format!(
            "Forbidden: {path} is for operators: the policy does not permit User::{:?} Action::\"operate\" on {}\n",
            principal.subject,
            target.describe()
        ))
    }

    /// The scope of one request.
    pub fn scope(&self, runtime: &Runtime, context: &RequestContext<RoleServer>) -> Scope {
        self.scope_of(runtime, context.extensions.get::<Parts>())
    }

    /// The scope of the request whose head is `parts` (none: stdio), as [`Access::scope`]
    /// reads it in a handler; the rate limits read it before the handler runs.
    pub fn scope_of(&self, runtime: &Runtime, parts: Option<&Parts>) -> Scope {
        let policy = self.policy.read().unwrap_or_else(|p| p.into_inner()).clone();
        // A bundle edited away since the request was let in holds nothing.
        let bundle = parts
            .and_then(|parts| bundle_in(parts.uri.path()))
            .map(|name| runtime.bundle(name).unwrap_or_default());
        let principal = parts
            .and_then(|parts| parts.extensions.get::<Caller>())
            .map_or_else(Principal::anonymous, principal_of);
        Scope { principal, bundle, policy }
    }
}

/// The principal a policy decides `caller`'s requests for.
fn principal_of(caller: &Caller) -> Principal {
    let (subject, groups, client_id) =
        (caller.subject.clone(), caller.groups.clone(), caller.client_id.clone());
    Principal { subject, groups, client_id }
}

/// The bundle named by a request's path (`/mcp/docs` → `docs`), if any.
pub fn bundle_in(path: &str) -> Option<&str> {
    path.strip_prefix(BUNDLE_PATH).map(|rest| rest.trim_end_matches('/')).filter(|name| !name.is_empty())
}

/// `/mcp/<bundle>` of a bundle the workspace does not declare is 404, before rmcp sees it.
pub async fn known_bundle(
    axum::extract::State(runtime): axum::extract::State<Runtime>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    if let Some(name) = bundle_in(request.uri().path())
        && runtime.bundle(name).is_none()
    {
        let body = format!(
            "no bundle \"{}\" in this workspace: serve it by adding it to \"bundles\" in .toolport/workspace.json\n",
            crate::text::escape_line(name)
        );
        return (axum::http::StatusCode::NOT_FOUND, body).into_response();
    }
    next.run(request).await
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
    Allowed { record: ToolRecord, by: Vec<String> },
    /// The tool, outside the bundle or denied: answered as unknown, audited as `denied`.
    Refused { record: ToolRecord, verdict: Verdict },
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
        records: &[ToolRecord],
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
    pub fn tools(&self, records: Vec<ToolRecord>) -> Vec<Tool> {
        records
            .into_iter()
            .filter(|record| self.lists_tool(record))
            .map(|record| {
                let mut tool = record.tool;
                tool.name = record.name.into();
                tool
            })
            .collect()
    }
}

/// A call, read or prompt refused by `verdict` goes to the audit log as `denied`: the word
/// `bundle` or `policy`, and the `forbid`s that decided. `client` is the request's label.
pub fn audit_refusal(
    runtime: &Runtime,
    client: Option<&str>,
    kind: Kind,
    server: &str,
    name: &str,
    verdict: &Verdict,
) {
    let (error, policies) = match verdict {
        Verdict::Allowed(_) => return,
        Verdict::Outside => ("bundle", &[][..]),
        Verdict::Denied(decision) => ("policy", decision.policies.as_slice()),
    };
    runtime.observer().finished(&Exchange {
        kind,
        client,
        server,
        name,
        outcome: Outcome::Denied,
        duration: Duration::ZERO,
        bytes_in: 0,
        bytes_out: 0,
        arguments: None,
        error: Some(error),
        policies,
        audit: runtime.audit_choice(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundle_is_the_path_after_mcp() {
        assert_eq!(bundle_in("/mcp/docs"), Some("docs"));
        assert_eq!(bundle_in("/mcp/docs/"), Some("docs"));
        assert_eq!(bundle_in("/mcp"), None);
        assert_eq!(bundle_in("/mcp/"), None);
    }
}
