//! Who a request is and what it may reach, as the gateway decides it: the caller (`Caller`,
//! put in the request by `bearer.rs`; none over stdio or with a shared token:
//! `User::"anonymous"`), the bundle its URL names (`/mcp/<bundle>`, the workspace's `bundles`)
//! and the policy file (`policy/`, followed by `policy_watch.rs`). [`Access`] gives the front
//! each request's scope (`serve/scope.rs`, through its `Scopes` seam), which filters the lists
//! and checks every call, read and prompt; and decides who may read the operator's endpoints.
//! Without a policy everything is allowed, as before; without a bundle the whole surface is in
//! scope.

use std::sync::{Arc, RwLock};

use axum::http::request::Parts;

use crate::policy::{Action, Policy, Principal, Target};
use crate::runtime::Runtime;
use crate::serve::{Caller, Scope, Scopes};

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
}

impl Scopes for Access {
    fn scope_of(&self, runtime: &Runtime, parts: Option<&Parts>) -> Scope {
        let policy = self.policy.read().unwrap_or_else(|p| p.into_inner()).clone();
        // A bundle edited away since the request was let in holds nothing.
        let bundle = parts
            .and_then(|parts| bundle_in(parts.uri.path()))
            .map(|name| runtime.bundle(name).unwrap_or_default());
        let principal = parts
            .and_then(|parts| parts.extensions.get::<Caller>())
            .map_or_else(Principal::anonymous, principal_of);
        Scope::new(principal, bundle, policy)
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
