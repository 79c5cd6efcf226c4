//! Guard plugins (WIT 0.1.1, world `guard`): a request before it is sent, and its answer
//! before anyone sees it, handed to a sandboxed hook that passes, rewrites or refuses it. This
//! file only runs the hook and reads its answer; where the chain sits on a call's path, and
//! what `mode` and `failOpen` make of an answer, is the runtime's (`runtime/calls/guards.rs`).

use std::sync::Arc;

use serde_json::Value;

use crate::observe::Observer;
use crate::plugin::bindings::guard::exports::toolport::plugin::hooks;
use crate::plugin::compile::load::{Loaded, Origin, Pre};
use crate::plugin::error::{Fault, PluginError};
use crate::plugin::guard::{call_once, call_span};

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

/// A loaded guard plugin. Cheap to clone; every hook runs in a fresh store, so no call sees
/// what another left behind.
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
        let params_text = params.to_string();
        let given = params_text.len();
        self.hook(
            "on-request",
            given,
            async |store, pre, cx| {
                let instance = pre.instantiate_async(&mut *store).await?;
                instance.toolport_plugin_hooks().call_on_request(store, &cx, &params_text).await
            },
            context,
        )
        .await
    }

    /// The response hook: `answer` is the server's result for the request `params`.
    pub async fn on_response(
        &self,
        context: &HookContext<'_>,
        params: &Value,
        answer: &Value,
    ) -> Result<GuardAnswer, PluginError> {
        let params_text = params.to_string();
        let answer_text = answer.to_string();
        let given = answer_text.len();
        self.hook(
            "on-response",
            given,
            async |store, pre, cx| {
                let instance = pre.instantiate_async(&mut *store).await?;
                instance
                    .toolport_plugin_hooks()
                    .call_on_response(store, &cx, &params_text, &answer_text)
                    .await
            },
            context,
        )
        .await
    }

    /// Runs one hook under the call guard and reads its decision: a mutation must be JSON and
    /// at most [`MUTATION_SLACK`] over twice the `given` bytes.
    async fn hook(
        &self,
        export: &'static str,
        given: usize,
        call: impl AsyncFnOnce(
            &mut wasmtime::Store<crate::plugin::sandbox::store::State>,
            &crate::plugin::bindings::guard::GuardPre<crate::plugin::sandbox::store::State>,
            hooks::Context,
        ) -> wasmtime::Result<hooks::Decision>,
        context: &HookContext<'_>,
    ) -> Result<GuardAnswer, PluginError> {
        let p = &*self.plugin;
        let Pre::Guard(pre) = &p.pre else {
            return Err(p.error(Fault::Load { message: "not loaded as a guard plugin".into() }));
        };
        let cx = wire_context(context);
        let span = call_span(p, export, None);
        let decision =
            call_once(p, &self.observer, span, async |store| call(store, pre, cx).await.map(Ok)).await?;
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
