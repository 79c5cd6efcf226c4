//! Guard plugins (WIT 0.1.1, world `guard`): a request before it is sent, and its answer
//! before anyone sees it, handed to a sandboxed hook that passes, rewrites or refuses it. This
//! file only runs the hook and reads its answer; where the chain sits on a call's path, and
//! what `mode` and `failOpen` make of an answer, is the runtime's (`runtime/calls/guards.rs`).

use std::sync::Arc;

use serde_json::Value;

use crate::observe::Observer;
use crate::plugin::bindings::guard::exports::toolport::plugin::hooks;
use wasmtime::Store;

use crate::plugin::bindings;
use crate::plugin::compile::load::{Loaded, Origin, Pre};
use crate::plugin::error::{Fault, PluginError};
use crate::plugin::guard::{call_span, new_store, run_in};
use crate::plugin::sandbox::store::State;

/// Which MCP request a hook is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookKind {
    /// `tools/call`.
    Call,
    /// `resources/read`.
    Read,
    /// `prompts/get`.
    Prompt,
}

impl HookKind {
    /// The request's method, as the audit trail and messages name it.
    pub fn method(self) -> &'static str {
        match self {
            Self::Call => "tools/call",
            Self::Read => "resources/read",
            Self::Prompt => "prompts/get",
        }
    }
}

/// What a hook is told about the request it sees.
#[derive(Debug, Clone, Copy)]
pub struct HookContext<'a> {
    /// Which request.
    pub kind: HookKind,
    /// The server the request goes to.
    pub server: &'a str,
    /// The tool's final name, the prompt's name, or the resource's URI.
    pub target: &'a str,
    /// The caller's subject, when serve checked one.
    pub subject: Option<&'a str>,
    /// The client's name, when it gave one.
    pub client: Option<&'a str>,
}

/// A hook's answer, its JSON parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum GuardAnswer {
    /// Let it through unchanged.
    Pass,
    /// Go on with this instead (params or a result, as the hook was given).
    Mutate(Value),
    /// Refuse, with the guard's reason.
    Deny(String),
}

/// How large a mutation may be: twice what the hook was given plus 1 MiB. A guard that answers
/// a small call with megabytes is broken, and what it returns is held by the host, outside its
/// sandbox's memory cap.
const MUTATION_SLACK: usize = 1 << 20;

/// How many warm instances a guard keeps (each a store of its own, admitted to the pool).
const MAX_WARM: usize = 8;

/// A loaded guard plugin. Cheap to clone. A hook runs in an instance a hook before it left
/// warm, when one did so without a fault (a fresh store and instance cost a guarded call more
/// than the hook: `BENCHMARKS.md`, guards); its memory cap and grants are the store's, its time
/// limit is armed for each hook. A guard may so keep what it likes between calls; one that
/// trapped, timed out or answered nonsense is never reused.
#[derive(Clone)]
pub struct GuardPlugin {
    pub(crate) plugin: Arc<Loaded>,
    /// Where each hook is counted: the observer of the host that handed it out.
    pub(crate) observer: Observer,
}

impl std::fmt::Debug for GuardPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardPlugin").field("name", &self.plugin.name).finish()
    }
}

impl GuardPlugin {
    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.plugin.name
    }

    /// Built-in or the file it was loaded from.
    pub fn origin(&self) -> &Origin {
        &self.plugin.origin
    }

    /// The request hook: `params` is the request's params (`{"name", "arguments"}` or `{"uri"}`).
    pub async fn on_request(
        &self,
        context: &HookContext<'_>,
        params: &Value,
    ) -> Result<GuardAnswer, PluginError> {
        let params = params.to_string();
        let given = params.len();
        let cx = wire_context(context);
        self.hook("on-request", given, async |store, hooks| {
            hooks.toolport_plugin_hooks().call_on_request(store, &cx, &params).await
        })
        .await
    }

    /// The response hook: `answer` is the server's result for the request `params`.
    pub async fn on_response(
        &self,
        context: &HookContext<'_>,
        params: &Value,
        answer: &Value,
    ) -> Result<GuardAnswer, PluginError> {
        let (params, answer) = (params.to_string(), answer.to_string());
        let given = answer.len();
        let cx = wire_context(context);
        self.hook("on-response", given, async |store, hooks| {
            hooks.toolport_plugin_hooks().call_on_response(store, &cx, &params, &answer).await
        })
        .await
    }

    /// Runs one hook under the call guard, in a warm instance when a call that went well left
    /// one (else a fresh one), and reads its decision: a mutation must be JSON and at most
    /// [`MUTATION_SLACK`] over twice the `given` bytes. The instance goes back warm only when the
    /// hook answered without a fault.
    async fn hook(
        &self,
        export: &'static str,
        given: usize,
        call: impl AsyncFnOnce(&mut Store<State>, &bindings::guard::Guard) -> wasmtime::Result<hooks::Decision>,
    ) -> Result<GuardAnswer, PluginError> {
        let p = &*self.plugin;
        let Pre::Guard(pre, warm) = &p.pre else {
            return Err(p.error(Fault::Load { message: "not loaded as a guard plugin".into() }));
        };
        let idle = warm.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).pop();
        let (mut store, instance) = match idle {
            Some((store, instance)) => (store, Some(instance)),
            None => (new_store(p)?, None),
        };
        let span = call_span(p, export, None);
        let ran = run_in(p, &self.observer, span, &mut store, async |store| {
            let instance = match instance {
                Some(instance) => instance,
                None => pre.instantiate_async(&mut *store).await?,
            };
            let decision = call(store, &instance).await?;
            Ok(Ok((instance, decision)))
        })
        .await?;
        let (instance, decision) = ran;
        let answer = read_decision(p, export, given, decision);
        let mut warm = warm.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if answer.is_ok() && warm.len() < MAX_WARM {
            warm.push((store, instance));
        }
        answer
    }
}

/// A hook's decision in toolport's terms: a mutation parsed, and refused over its cap.
fn read_decision(
    p: &Loaded,
    export: &'static str,
    given: usize,
    decision: hooks::Decision,
) -> Result<GuardAnswer, PluginError> {
    match decision {
        hooks::Decision::Pass => Ok(GuardAnswer::Pass),
        hooks::Decision::Deny(reason) => Ok(GuardAnswer::Deny(reason)),
        hooks::Decision::Mutate(text) => {
            let cap = given.saturating_mul(2).saturating_add(MUTATION_SLACK);
            if text.len() > cap {
                let message = format!(
                    "{export}: a mutation of {} bytes, over its cap of {cap} (twice what it was given, plus 1 MiB)",
                    text.len()
                );
                return Err(p.error(Fault::BadOutput { message }));
            }
            serde_json::from_str(&text).map(GuardAnswer::Mutate).map_err(|e| {
                p.error(Fault::BadOutput { message: format!("{export}: the mutation is not JSON: {e}") })
            })
        }
    }
}

fn wire_context(context: &HookContext<'_>) -> hooks::Context {
    hooks::Context {
        kind: match context.kind {
            HookKind::Call => hooks::RequestKind::ToolsCall,
            HookKind::Read => hooks::RequestKind::ResourcesRead,
            HookKind::Prompt => hooks::RequestKind::PromptsGet,
        },
        server: context.server.to_string(),
        target: context.target.to_string(),
        subject: context.subject.map(str::to_string),
        client: context.client.map(str::to_string),
    }
}
