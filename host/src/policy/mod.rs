//! Who may do what through `serve`: a Cedar policy file (`<home>/policy.cedar`, or
//! `serve --policy FILE`) decided per request. A leaf: it knows Cedar and the request's parts
//! ([`Principal`], [`Action`], [`Target`]), nothing of MCP sessions or the runtime.
//!
//! # The model
//! - **principal** `User::"<sub>"`, the token's subject, whose parents are `Group::"<g>"` for
//!   each of its `groups`, with the attribute `client_id` when the token names its client. A
//!   request without a caller (stdio, a shared `--token-env` token) is `User::"anonymous"`
//!   with no group.
//! - **action** `Action::"call"` (a tool), `"read"` (a resource), `"prompt"` (a prompt's
//!   `prompts/get`), `"list"` (seeing it in a list) and `"operate"` (reading one of the
//!   operator's endpoints of `serve --http`, `/status` or `/metrics`: they show every server,
//!   client and call, whoever's).
//! - **resource** `Tool::"<server>/<tool>"` (the server's own name for the tool, as the
//!   per-server tool filters name it) with attributes `server`, `name` and `annotations`, a
//!   record of the booleans the server gave among `readOnlyHint`, `destructiveHint`,
//!   `idempotentHint` and `openWorldHint` (a hint the server left out is absent: test it with
//!   `has`); `Resource::"<uri>"` (attributes `server`, `uri`) and `Prompt::"<server>/<name>"`
//!   (attributes `server`, `name`). Each has the parent `Server::"<server>"`, so
//!   `resource in Server::"docs"` names all a server offers. `Endpoint::"/status"` and
//!   `Endpoint::"/metrics"` (attribute `path`, no parent) are what `operate` is asked of.
//!
//! Deny by default: nothing is allowed that no `permit` allows, and a `forbid` wins. A policy
//! whose condition fails to evaluate (an absent hint read without `has`) counts as not
//! matching. An item is listed when its use (`call`, `read`, `prompt`) is allowed and no
//! `forbid` on `list` matches it: a caller never sees what it may not use, and a policy may
//! hide what it lets be used. Policies are named in decisions by their `@id("...")`
//! annotation, else by Cedar's `policy0`, `policy1`, … in file order.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::str::FromStr as _;

use cedar_policy::{
    Authorizer, Context, Decision as CedarDecision, Effect, Entities, Entity, EntityId, EntityTypeName,
    EntityUid, PolicyId, PolicySet, Request, RestrictedExpression,
};
use miette::Diagnostic as _;

/// The file `serve` reads under the home when `--policy` is not given.
pub const POLICY_FILE: &str = "policy.cedar";

/// The principal of a request without a caller (stdio, a shared token).
pub const ANONYMOUS: &str = "anonymous";

/// A policy file that cannot be used: its path and line:column, and Cedar's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PolicyError(pub String);

/// Cedar's own errors, as text, become the policy's.
impl From<String> for PolicyError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

/// Who asks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Principal {
    /// The token's `sub` ([`ANONYMOUS`] without a caller).
    pub subject: String,
    /// The token's groups.
    pub groups: Vec<String>,
    /// The OAuth client the token was issued to.
    pub client_id: Option<String>,
}

impl Principal {
    /// The principal of a request without a caller.
    pub fn anonymous() -> Self {
        Self { subject: ANONYMOUS.to_string(), ..Self::default() }
    }
}

/// What is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `tools/call`.
    Call,
    /// Seeing the item in a list.
    List,
    /// `resources/read`.
    Read,
    /// `prompts/get`.
    Prompt,
    /// Reading an operator's endpoint (`/status`, `/metrics`).
    Operate,
}

impl Action {
    /// The action's entity id (`Action::"call"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Call => "call",
            Self::List => "list",
            Self::Read => "read",
            Self::Prompt => "prompt",
            Self::Operate => "operate",
        }
    }

    /// `call`, `list`, `read`, `prompt` or `operate`.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Call, Self::List, Self::Read, Self::Prompt, Self::Operate]
            .into_iter()
            .find(|a| a.as_str() == text)
    }
}

/// A tool's annotations as the server gave them (`None`: not given).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hints {
    /// `readOnlyHint`.
    pub read_only: Option<bool>,
    /// `destructiveHint`.
    pub destructive: Option<bool>,
    /// `idempotentHint`.
    pub idempotent: Option<bool>,
    /// `openWorldHint`.
    pub open_world: Option<bool>,
}

impl Hints {
    /// The names Cedar sees them under, in the order of [`Hints::set`].
    pub const NAMES: [&'static str; 4] =
        ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"];

    /// Sets the hint called `name` (one of [`Hints::NAMES`]); false for another name.
    pub fn set(&mut self, name: &str, value: bool) -> bool {
        let slot = match name {
            "readOnlyHint" => &mut self.read_only,
            "destructiveHint" => &mut self.destructive,
            "idempotentHint" => &mut self.idempotent,
            "openWorldHint" => &mut self.open_world,
            _ => return false,
        };
        *slot = Some(value);
        true
    }

    /// `readOnlyHint=true, openWorldHint=false`, or `none`.
    pub fn describe(&self) -> String {
        let given: Vec<String> = self.given().map(|(name, value)| format!("{name}={value}")).collect();
        if given.is_empty() { "none".to_string() } else { given.join(", ") }
    }

    fn given(&self) -> impl Iterator<Item = (&'static str, bool)> {
        let values = [self.read_only, self.destructive, self.idempotent, self.open_world];
        Self::NAMES.into_iter().zip(values).filter_map(|(name, value)| value.map(|v| (name, v)))
    }
}

impl From<&rmcp::model::ToolAnnotations> for Hints {
    fn from(a: &rmcp::model::ToolAnnotations) -> Self {
        Self {
            read_only: a.read_only_hint,
            destructive: a.destructive_hint,
            idempotent: a.idempotent_hint,
            open_world: a.open_world_hint,
        }
    }
}

/// What it is asked of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    /// A tool.
    Tool {
        /// Its server's configured name.
        server: &'a str,
        /// The server's own name for it (not the surface's).
        name: &'a str,
        /// Its annotations.
        hints: Hints,
    },
    /// A resource.
    Resource {
        /// The server that owns it.
        server: &'a str,
        /// Its URI.
        uri: &'a str,
    },
    /// A prompt.
    Prompt {
        /// Its server's configured name.
        server: &'a str,
        /// Its name.
        name: &'a str,
    },
    /// One of the operator's endpoints of `serve --http`.
    Endpoint {
        /// Its path: `/status`, `/metrics`.
        path: &'a str,
    },
}

impl Target<'_> {
    /// The action that uses it: `call`, `read`, `prompt` or `operate`.
    pub fn use_action(&self) -> Action {
        match self {
            Self::Tool { .. } => Action::Call,
            Self::Resource { .. } => Action::Read,
            Self::Prompt { .. } => Action::Prompt,
            Self::Endpoint { .. } => Action::Operate,
        }
    }

    /// `Tool::"docs/read_file"` and the like, as a person reads it.
    pub fn describe(&self) -> String {
        match self {
            Self::Tool { server, name, .. } => format!("Tool::{:?}", format!("{server}/{name}")),
            Self::Resource { uri, .. } => format!("Resource::{uri:?}"),
            Self::Prompt { server, name } => format!("Prompt::{:?}", format!("{server}/{name}")),
            Self::Endpoint { path } => format!("Endpoint::{path:?}"),
        }
    }
}

/// A decision and what made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Allowed.
    pub allowed: bool,
    /// The policies that decided: the `permit`s that allowed it, or the `forbid`s that denied
    /// it; empty when it was denied because no `permit` matched (deny by default).
    pub policies: Vec<String>,
    /// Policies that failed to evaluate (counted as not matching), with Cedar's words.
    pub errors: Vec<String>,
}

impl Decision {
    /// `allow (policy docs-read)`, `deny (forbid: no-destructive)`, `deny: no policy permits
    /// it (deny by default)`: what `policy check` prints.
    pub fn explain(&self) -> String {
        let ids = self.policies.join(", ");
        match (self.allowed, self.policies.is_empty()) {
            (true, _) => format!("allow: permitted by {ids}"),
            (false, false) => format!("deny: forbidden by {ids}"),
            (false, true) => "deny: no policy permits it (deny by default)".to_string(),
        }
    }
}

/// A parsed policy file.
#[derive(Debug)]
pub struct Policy {
    set: PolicySet,
    file: PathBuf,
}

impl Policy {
    /// Reads and parses `file`.
    pub fn load(file: &Path) -> Result<Policy, PolicyError> {
        let text = std::fs::read_to_string(file)
            .map_err(|e| PolicyError(format!("cannot read the policy file {}: {e}", file.display())))?;
        Self::parse(file, &text)
    }

    /// `<home>/policy.cedar`, the policy file when `--policy` names none.
    pub fn home_file(home: &Path) -> PathBuf {
        home.join(POLICY_FILE)
    }

    /// `<home>/policy.cedar` when it exists (`Ok(None)` when not).
    pub fn load_from_home(home: &Path) -> Result<Option<Policy>, PolicyError> {
        let file = Self::home_file(home);
        match file.try_exists() {
            Ok(true) => Self::load(&file).map(Some),
            Ok(false) => Ok(None),
            Err(e) => Err(PolicyError(format!("cannot read the policy file {}: {e}", file.display()))),
        }
    }

    /// Parses `text`, the policy file `file` holds: an error names `file:line:column`.
    pub fn parse(file: &Path, text: &str) -> Result<Policy, PolicyError> {
        let set = PolicySet::from_str(text).map_err(|e| {
            let at = e.labels().and_then(|mut labels| labels.next()).map(|l| l.offset());
            let (line, column) = line_column(text, at.unwrap_or(0));
            let help = e.help().map(|h| format!(" ({h})")).unwrap_or_default();
            PolicyError(format!("{}:{line}:{column}: {e}{help}", file.display()))
        })?;
        Ok(Policy { set, file: file.to_path_buf() })
    }

    /// The file it was read from.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// May `who` do `action` to `what`? `Action::List` is decided as listing is: allowed when
    /// the use is and no `forbid` on `list` matches.
    pub fn decide(&self, who: &Principal, action: Action, what: &Target<'_>) -> Decision {
        if action != Action::List {
            return self.cedar(who, action, what);
        }
        let used = self.cedar(who, what.use_action(), what);
        if !used.allowed {
            return used;
        }
        let listed = self.cedar(who, Action::List, what);
        let hidden = !listed.allowed && !listed.policies.is_empty();
        match hidden {
            true => listed,
            false => used,
        }
    }

    /// One Cedar request.
    fn cedar(&self, who: &Principal, action: Action, what: &Target<'_>) -> Decision {
        let request = match entities(who, action, what) {
            Ok(built) => built,
            Err(e) => return Decision { allowed: false, policies: Vec::new(), errors: vec![e.0] },
        };
        let (principal, action, resource, entities) = request;
        let request = match Request::new(principal, action, resource, Context::empty(), None) {
            Ok(request) => request,
            Err(e) => return Decision { allowed: false, policies: Vec::new(), errors: vec![e.to_string()] },
        };
        let response = Authorizer::new().is_authorized(&request, &self.set, &entities);
        let allowed = response.decision() == CedarDecision::Allow;
        let mut policies: Vec<String> = response
            .diagnostics()
            .reason()
            .filter(|id| self.effect(id) == Some(if allowed { Effect::Permit } else { Effect::Forbid }))
            .map(|id| self.name(id))
            .collect();
        policies.sort();
        let errors: Vec<String> = response.diagnostics().errors().map(|e| e.to_string()).collect();
        for error in &errors {
            tracing::debug!(file = %self.file.display(), "policy: {error}");
        }
        Decision { allowed, policies, errors }
    }

    fn effect(&self, id: &PolicyId) -> Option<Effect> {
        self.set.policy(id).map(|p| p.effect())
    }

    /// A policy's `@id("...")`, else Cedar's id for it.
    fn name(&self, id: &PolicyId) -> String {
        self.set.annotation(id, "id").map_or_else(|| id.to_string(), str::to_string)
    }
}

/// The request's principal, action and resource, and the entities they stand among.
type Built = (EntityUid, EntityUid, EntityUid, Entities);

fn entities(who: &Principal, action: Action, what: &Target<'_>) -> Result<Built, PolicyError> {
    let string = |s: &str| RestrictedExpression::new_string(s.to_string());
    let mut all = Vec::new();
    let groups = who.groups.iter().map(|g| uid("Group", g)).collect::<Result<HashSet<_>, _>>()?;
    for group in &groups {
        all.push(Entity::new_no_attrs(group.clone(), HashSet::new()));
    }
    let principal = uid("User", &who.subject)?;
    let mut attrs = HashMap::new();
    if let Some(client) = &who.client_id {
        attrs.insert("client_id".to_string(), string(client));
    }
    all.push(Entity::new(principal.clone(), attrs, groups).map_err(|e| e.to_string())?);
    let (server, resource, attrs) = match what {
        Target::Tool { server, name, hints } => {
            let hints = hints.given().map(|(k, v)| (k.to_string(), RestrictedExpression::new_bool(v)));
            let hints = RestrictedExpression::new_record(hints).map_err(|e| e.to_string())?;
            let attrs = [("server", string(server)), ("name", string(name)), ("annotations", hints)];
            (Some(*server), uid("Tool", &format!("{server}/{name}"))?, attrs.to_vec())
        }
        Target::Resource { server, uri } => {
            (Some(*server), uid("Resource", uri)?, vec![("server", string(server)), ("uri", string(uri))])
        }
        Target::Prompt { server, name } => {
            let attrs = vec![("server", string(server)), ("name", string(name))];
            (Some(*server), uid("Prompt", &format!("{server}/{name}"))?, attrs)
        }
        Target::Endpoint { path } => (None, uid("Endpoint", path)?, vec![("path", string(path))]),
    };
    let mut parents = HashSet::new();
    if let Some(server) = server {
        let server = uid("Server", server)?;
        all.push(Entity::new_no_attrs(server.clone(), HashSet::new()));
        parents.insert(server);
    }
    let attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    all.push(Entity::new(resource.clone(), attrs, parents).map_err(|e| e.to_string())?);
    let entities = Entities::from_entities(all, None).map_err(|e| e.to_string())?;
    Ok((principal, uid("Action", action.as_str())?, resource, entities))
}

fn uid(kind: &str, id: &str) -> Result<EntityUid, PolicyError> {
    let kind = EntityTypeName::from_str(kind).map_err(|e| e.to_string())?;
    Ok(EntityUid::from_type_name_and_id(kind, EntityId::new(id)))
}

/// The annotations of `server`'s tool `tool` (its own name) as last pinned in the workspace's
/// `.toolport/tools.lock`: what `policy check` decides on without starting a server. `None`
/// when the lock is absent or does not pin the tool.
pub fn pinned_hints(workspace_root: &Path, server: &str, tool: &str) -> Result<Option<Hints>, PolicyError> {
    let file = crate::paths::tools_lock_in(workspace_root);
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(PolicyError(format!("cannot read {}: {e}", file.display()))),
    };
    let lock = crate::trust::Lock::parse(&file, &text).map_err(|e| PolicyError(e.to_string()))?;
    let Some(pin) = lock.tool(server, tool) else { return Ok(None) };
    let mut hints = Hints::default();
    if let Some(annotations) = pin.definition.get("annotations").and_then(|a| a.as_object()) {
        for (name, value) in annotations {
            if let Some(value) = value.as_bool() {
                hints.set(name, value);
            }
        }
    }
    Ok(Some(hints))
}

/// The 1-based line and column (in characters) of byte `offset` of `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset.min(text.len())).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests;
