//! Name-policy plugins: a verdict per tool (keep, rename, hide, reject).

use std::sync::Arc;

use super::error::PluginError;
use super::limits::{arm_deadline, classify, outer_timeout};
use super::load::{Loaded, Pre};
use super::store::State;
use super::{ToolInfo, Verdict, wire};
use crate::config::ServerDef;

/// A loaded name-policy plugin. Cheap to clone; every call runs in a fresh store.
#[derive(Clone)]
pub struct NamePolicy {
    pub(crate) plugin: Arc<Loaded>,
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
    pub fn origin(&self) -> &super::Origin {
        &self.plugin.origin
    }

    /// One verdict per tool of `server`, in order.
    pub async fn review(&self, server: &ServerDef, tools: &[ToolInfo]) -> Result<Vec<Verdict>, PluginError> {
        let p = &*self.plugin;
        let name = p.name.clone();
        let Pre::Policy(pre) = &p.pre else {
            return Err(PluginError::Load { name, message: "not loaded as a name-policy plugin".into() });
        };
        let wit_server = wire::server(server, false);
        let wit_tools: Vec<_> = tools.iter().map(wire::tool).collect();
        let mut store = State::store(p.engine, &name, &p.sandbox, p.limits.memory_mb)
            .map_err(|message| PluginError::Sandbox { name: name.clone(), message })?;
        arm_deadline(&mut store, &p.limits);
        let outcome = tokio::time::timeout(outer_timeout(&p.limits), async {
            let instance = pre.instantiate_async(&mut store).await?;
            instance.toolport_plugin_policy().call_review(&mut store, &wit_server, &wit_tools).await
        })
        .await;
        let verdicts = classify(&name, &p.limits, &store, outcome)?;
        if verdicts.len() != tools.len() {
            return Err(PluginError::BadOutput {
                name,
                message: format!("{} verdicts for {} tools", verdicts.len(), tools.len()),
            });
        }
        Ok(verdicts.into_iter().map(Verdict::from).collect())
    }
}
