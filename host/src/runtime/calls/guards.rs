//! The guard chain of one request (issue 48; the plugin side is `plugin/kinds/guard.rs`): the
//! workspace's `guards`, then its server's, each that applies to the name asked for, in order.
//! A request passes them after policy and confirmation and before the secret guard and the
//! send; an answer passes them before redaction and large results. The same for every entry
//! point, because the executor and `catalog_calls` are the only ways to a server.
//!
//! What an answer does depends on the entry's `mode` and `failOpen`:
//! - `pass`: nothing. `mutate`: the request or answer is replaced, once it fits (a call's
//!   arguments against the tool's input schema; a result against its kind's shape);
//!   `deny`: the request is refused with the guard's reason, for the model and the person.
//! - Under `mode: audit` a deny or a mutation is only recorded (`flagged`), and so is a guard
//!   that failed: an audit-mode guard never changes traffic.
//! - A guard that traps, times out, is missing or answers what does not fit denies, unless it
//!   fails open (`failOpen: true`), when the request goes on and the failure is recorded.
//!
//! Every deny, mutation, finding and failure goes to the trust trail, the exchange's audit line
//! (`GuardStep`) and a `toolport::guard` event on the current span. The guard's reason is
//! shown to the caller, escaped and clipped; the trail and the log keep only our own words.

use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::config::{GuardMode, GuardUse, PluginKind};
use crate::observe::{CallContext, GuardStep, Observer};
use crate::plugin::{GuardAnswer, GuardPlugin, HookContext, HookKind};
use crate::runtime::supervisor::Supervisor;
use crate::trust::audit::{self, Action, Decision};

/// At most this much of a guard's reason reaches a message.
const REASON_CHARS: usize = 300;

/// One guard of the chain, as it applies to this request.
struct Link {
    name: String,
    request: bool,
    response: bool,
    mode: GuardMode,
    fail_open: bool,
    /// The loaded plugin, or why there is none (a missing or wrong-kind plugin).
    plugin: Result<GuardPlugin, String>,
}

/// Why a guard stopped a request: the message's tail (`guard pii: <reason>`).
#[derive(Debug)]
pub(super) struct Refusal(pub String);

/// Why a guard's rewrite does not fit what it rewrote (`it must keep "name": "echo"`): the guard
/// failed, as if it had trapped.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Unfit(pub String);

/// The guards one request passes, in order. Empty (and free) when none applies.
pub(super) struct Chain {
    links: Vec<Link>,
    kind: HookKind,
    server: String,
    target: String,
    /// The tool's or prompt's name on its server, or the URI, for the trail.
    original: String,
    subject: Option<Arc<str>>,
    client: Option<Arc<str>>,
    observer: Observer,
}

impl Chain {
    /// The guards that apply to a `kind` request to `server` for `target` (a final tool name,
    /// a prompt's name, a URI) or `original` (the server's own name).
    pub(super) fn new(
        supervisor: &Supervisor,
        kind: HookKind,
        server: &str,
        target: &str,
        original: &str,
        context: &CallContext,
    ) -> Self {
        let uses: Vec<(String, bool, bool, GuardMode, bool)> = {
            let state = supervisor.lock();
            let own = state.slots.iter().find(|s| s.name() == server).map(|s| &s.resolved.def.guards[..]);
            let workspace = &state.resolved.settings.guards;
            if workspace.is_empty() && own.is_none_or(<[GuardUse]>::is_empty) {
                Vec::new()
            } else {
                crate::config::guard_chain(workspace, own.unwrap_or_default())
                    .filter(|g| g.applies(&[target, original]))
                    .map(|g| (g.plugin.clone(), g.phase.request(), g.phase.response(), g.mode, g.fail_open))
                    .collect()
            }
        };
        let links = uses
            .into_iter()
            .map(|(name, request, response, mode, fail_open)| {
                let host = supervisor.plugins.host();
                // A name that is no guard says which are (the words of `mcp get`'s warning).
                let plugin = host.guard(&name).map_err(|e| match host.misfit(&name, PluginKind::Guard) {
                    Some(misfit) => format!("guard {name}: {misfit}"),
                    None => e.to_string(),
                });
                Link { name, request, response, mode, fail_open, plugin }
            })
            .collect();
        Self {
            links,
            kind,
            server: server.to_string(),
            target: target.to_string(),
            original: original.to_string(),
            subject: context.subject.clone(),
            client: context.client_name.clone(),
            observer: supervisor.options.observer.clone(),
        }
    }

    /// Whether any guard sees the request.
    pub(super) fn on_request(&self) -> bool {
        self.links.iter().any(|l| l.request)
    }

    /// Whether any guard sees the answer.
    pub(super) fn on_response(&self) -> bool {
        self.links.iter().any(|l| l.response)
    }

    /// Runs the request hooks over `params`, replacing them with each enforced mutation that
    /// `fits`: whether any did; `Err` when a guard refused.
    pub(super) async fn request(
        &self,
        params: &mut Value,
        fits: impl Fn(&Value) -> Result<(), Unfit>,
        steps: &mut Vec<GuardStep>,
    ) -> Result<bool, Refusal> {
        let mut changed = false;
        for link in self.links.iter().filter(|l| l.request) {
            let answer = match &link.plugin {
                Ok(plugin) => plugin.on_request(&self.context(), params).await.map_err(|e| e.to_string()),
                Err(missing) => Err(missing.clone()),
            };
            if let Some(new) = self.settle(link, "request", answer, &fits, steps)? {
                *params = new;
                changed = true;
            }
        }
        Ok(changed)
    }

    /// Runs the response hooks over `answer` (the server's result for `params`), replacing it
    /// with each enforced mutation that `fits`: whether any did; `Err` when a guard refused.
    pub(super) async fn response(
        &self,
        params: &Value,
        answer: &mut Value,
        fits: impl Fn(&Value) -> Result<(), Unfit>,
        steps: &mut Vec<GuardStep>,
    ) -> Result<bool, Refusal> {
        let mut changed = false;
        for link in self.links.iter().filter(|l| l.response) {
            let said = match &link.plugin {
                Ok(plugin) => {
                    plugin.on_response(&self.context(), params, answer).await.map_err(|e| e.to_string())
                }
                Err(missing) => Err(missing.clone()),
            };
            if let Some(new) = self.settle(link, "response", said, &fits, steps)? {
                *answer = new;
                changed = true;
            }
        }
        Ok(changed)
    }

    /// Typed `params` (a read's, a prompt's) through the request hooks: the params to send,
    /// and their JSON for the response hooks when any guard sees the answer.
    pub(super) async fn typed_request<P: Serialize + DeserializeOwned>(
        &self,
        params: P,
        steps: &mut Vec<GuardStep>,
    ) -> Result<(P, Option<Value>), Refusal> {
        if !self.on_request() && !self.on_response() {
            return Ok((params, None));
        }
        let Ok(mut value) = serde_json::to_value(&params) else { return Ok((params, None)) };
        if !self.on_request() {
            return Ok((params, Some(value)));
        }
        let fits = |new: &Value| {
            request_fits(self.kind, &self.original, new)?;
            serde_json::from_value::<P>(new.clone()).map(drop).map_err(|e| Unfit(e.to_string()))
        };
        if !self.request(&mut value, fits, steps).await? {
            return Ok((params, Some(value)));
        }
        // `fits` read it already: a rewrite that reached here parses.
        let params = serde_json::from_value(value.clone()).unwrap_or(params);
        Ok((params, Some(value)))
    }

    /// A typed answer (a call's, a read's, a prompt's result) through the response hooks, when
    /// `sent` (the params as the guards saw them) says any guard sees it.
    pub(super) async fn typed_response<R: Serialize + DeserializeOwned>(
        &self,
        sent: Option<&Value>,
        answer: R,
        steps: &mut Vec<GuardStep>,
    ) -> Result<R, Refusal> {
        let Some(sent) = sent.filter(|_| self.on_response()) else { return Ok(answer) };
        let Ok(mut value) = serde_json::to_value(&answer) else { return Ok(answer) };
        let method = self.kind.method();
        let fits = |new: &Value| {
            serde_json::from_value::<R>(new.clone())
                .map(drop)
                .map_err(|e| Unfit(format!("not a {method} result: {e}")))
        };
        match self.response(sent, &mut value, fits, steps).await? {
            true => Ok(serde_json::from_value(value).unwrap_or(answer)),
            false => Ok(answer),
        }
    }

    fn context(&self) -> HookContext<'_> {
        HookContext {
            kind: self.kind,
            server: &self.server,
            target: &self.target,
            subject: self.subject.as_deref(),
            client: self.client.as_deref(),
        }
    }

    /// What one guard's answer (or failure) does under its mode and `failOpen`: `Ok(Some)` a
    /// replacement, `Ok(None)` go on as is, `Err` refused. Every act is recorded.
    fn settle(
        &self,
        link: &Link,
        phase: &'static str,
        answer: Result<GuardAnswer, String>,
        fits: &impl Fn(&Value) -> Result<(), Unfit>,
        steps: &mut Vec<GuardStep>,
    ) -> Result<Option<Value>, Refusal> {
        let answer = answer.and_then(|a| match a {
            GuardAnswer::Mutate(new) => match fits(&new) {
                Ok(()) => Ok(GuardAnswer::Mutate(new)),
                Err(Unfit(why)) => Err(format!("guard {}: its rewrite does not fit: {why}", link.name)),
            },
            other => Ok(other),
        });
        let audit = link.mode == GuardMode::Audit;
        match answer {
            Ok(GuardAnswer::Pass) => Ok(None),
            Ok(GuardAnswer::Mutate(_)) if audit => {
                self.record(link, phase, Action::Flagged, "would rewrite", steps);
                Ok(None)
            }
            Ok(GuardAnswer::Mutate(new)) => {
                self.record(link, phase, Action::Rewritten, "rewrote", steps);
                Ok(Some(new))
            }
            Ok(GuardAnswer::Deny(_)) if audit => {
                self.record(link, phase, Action::Flagged, "would refuse", steps);
                Ok(None)
            }
            Ok(GuardAnswer::Deny(reason)) => {
                self.record(link, phase, Action::Denied, "refused", steps);
                let reason = crate::text::escape_line(reason.trim());
                let reason: String = reason.chars().take(REASON_CHARS).collect();
                let reason = if reason.is_empty() { "no reason given".to_string() } else { reason };
                Err(Refusal(format!("guard {}: {reason}", link.name)))
            }
            Err(fault) if audit || link.fail_open => {
                let why = if audit { "failed (mode audit): went on" } else { "failed (failOpen): went on" };
                self.record(link, phase, Action::Failed, why, steps);
                tracing::warn!(target: "toolport::guard", guard = %link.name, server = %self.server, "{fault}");
                Ok(None)
            }
            Err(fault) => {
                self.record(link, phase, Action::Denied, "failed, and does not fail open", steps);
                let fault = crate::text::escape_line(&fault).into_owned();
                Err(Refusal(format!("{fault} (the guard does not fail open: failOpen is false)")))
            }
        }
    }

    /// The act on the trail, the exchange's audit line and the current span: our words only.
    fn record(
        &self,
        link: &Link,
        phase: &'static str,
        action: Action,
        what: &str,
        steps: &mut Vec<GuardStep>,
    ) {
        let reason = format!("guard {} {what} the {} {phase}", link.name, self.kind.method());
        audit::record(
            &self.observer,
            Decision {
                action,
                server: &self.server,
                tool: Some(&self.original),
                rule: Some(&link.name),
                reason: &reason,
            },
        );
        tracing::info!(
            target: "toolport::guard",
            guard = %link.name,
            phase,
            did = action.as_str(),
            mode = link.mode.as_str(),
            server = %self.server,
            method = self.kind.method(),
            "guard {}", action.as_str()
        );
        steps.push(GuardStep {
            guard: link.name.clone(),
            phase: phase.to_string(),
            did: action.as_str().to_string(),
            mode: link.mode.as_str().to_string(),
        });
    }
}

/// Whether a guard's new params for a read or a prompt keep their shape: a read's `uri` a
/// non-empty string; a prompt's `name` unchanged (`target`) and its `arguments`, when given,
/// strings. A call's are checked against its tool's schema by the executor.
fn request_fits(kind: HookKind, target: &str, new: &Value) -> Result<(), Unfit> {
    match kind {
        HookKind::Call => Ok(()),
        HookKind::Read => match new.get("uri").and_then(Value::as_str) {
            Some(uri) if !uri.trim().is_empty() => Ok(()),
            _ => Err(Unfit("\"uri\" must be a non-empty string".to_string())),
        },
        HookKind::Prompt => {
            if new.get("name").and_then(Value::as_str) != Some(target) {
                return Err(Unfit(format!("it must keep \"name\": \"{target}\"")));
            }
            match new.get("arguments") {
                None | Some(Value::Null) => Ok(()),
                Some(Value::Object(map)) if map.values().all(Value::is_string) => Ok(()),
                Some(_) => Err(Unfit("\"arguments\" must be an object of strings".to_string())),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_read_or_prompt_rewrite_must_keep_its_shape() {
        assert_eq!(request_fits(HookKind::Read, "file:///a", &json!({"uri": "file:///b"})), Ok(()));
        assert_eq!(
            request_fits(HookKind::Read, "file:///a", &json!({"uri": " "})),
            Err(Unfit("\"uri\" must be a non-empty string".to_string()))
        );
        assert_eq!(
            request_fits(HookKind::Prompt, "p", &json!({"name": "p", "arguments": {"a": "b"}})),
            Ok(())
        );
        assert_eq!(
            request_fits(HookKind::Prompt, "p", &json!({"name": "q"})),
            Err(Unfit("it must keep \"name\": \"p\"".to_string()))
        );
        assert_eq!(
            request_fits(HookKind::Prompt, "p", &json!({"name": "p", "arguments": {"a": 1}})),
            Err(Unfit("\"arguments\" must be an object of strings".to_string()))
        );
    }
}
