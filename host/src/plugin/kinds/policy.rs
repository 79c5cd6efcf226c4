//! Name-policy plugins: a verdict per tool (keep, rename, hide, reject).

use std::sync::Arc;

use crate::config::ServerDef;
use crate::observe::Observer;
use crate::plugin::compile::load::{Loaded, Origin, Pre};
use crate::plugin::error::{Fault, PluginError};
use crate::plugin::guard::{PerTool, call_per_tool};
use crate::plugin::model::{ToolInfo, Verdict};
use crate::plugin::wire;

/// A loaded name-policy plugin. Cheap to clone; every call runs in a fresh store.
#[derive(Clone)]
pub struct NamePolicy {
    pub(crate) plugin: Arc<Loaded>,
    /// Where each call is counted: the observer of the host that handed it out.
    pub(crate) observer: Observer,
}

impl std::fmt::Debug for NamePolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamePolicy").field("name", &self.plugin.name).finish()
    }
}

impl NamePolicy {
    /// The plugin's name (`namespace`, or a configured one).
    pub fn name(&self) -> &str {
        &self.plugin.name
    }

    /// Built-in or the file it was loaded from.
    pub fn origin(&self) -> &Origin {
        &self.plugin.origin
    }

    /// One verdict per tool of `server`, in order.
    pub async fn review(&self, server: &ServerDef, tools: &[ToolInfo]) -> Result<Vec<Verdict>, PluginError> {
        let p = &*self.plugin;
        let Pre::Policy(pre) = &p.pre else {
            return Err(p.error(Fault::Load { message: "not loaded as a name-policy plugin".into() }));
        };
        let wit_server = wire::server(server, false);
        let wit_tools: Vec<_> = tools.iter().map(wire::tool).collect();
        let expect = PerTool { tools: tools.len(), noun: "verdicts", export: "review" };
        let verdicts = call_per_tool(p, &self.observer, expect, async |store| {
            let instance = pre.instantiate_async(&mut *store).await?;
            let verdicts =
                instance.toolport_plugin_policy().call_review(store, &wit_server, &wit_tools).await?;
            // `review` has no error case of its own.
            Ok(Ok(verdicts))
        })
        .await?;
        Ok(verdicts.into_iter().map(Verdict::from).collect())
    }
}
