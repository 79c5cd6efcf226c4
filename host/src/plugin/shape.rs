//! Tool-shape plugins: tools in, one JSON object per tool out.

use std::sync::Arc;

use serde_json::Value;

use super::error::PluginError;
use super::limits::{arm_deadline, classify, outer_timeout};
use super::load::{Loaded, Pre};
use super::store::State;
use super::{ToolInfo, wire};
use crate::config::ServerDef;

/// A loaded tool-shape plugin. Cheap to clone; every call runs in a fresh store.
#[derive(Clone)]
pub struct ToolShape {
    pub(crate) plugin: Arc<Loaded>,
}

impl std::fmt::Debug for ToolShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolShape").field("name", &self.plugin.name).finish()
    }
}

impl ToolShape {
    /// The plugin's name (`openai`, `anthropic`, or a configured one).
    pub fn name(&self) -> &str {
        &self.plugin.name
    }

    /// Built-in or the file it was loaded from.
    pub fn origin(&self) -> &super::Origin {
        &self.plugin.origin
    }

    /// Converts `tools` of `server`: one JSON value per tool, in order.
    pub async fn convert(&self, server: &ServerDef, tools: &[ToolInfo]) -> Result<Vec<Value>, PluginError> {
        let p = &*self.plugin;
        let name = p.name.clone();
        let Pre::Shape(pre) = &p.pre else {
            return Err(PluginError::Load { name, message: "not loaded as a tool-shape plugin".into() });
        };
        let wit_server = wire::server(server, false);
        let wit_tools: Vec<_> = tools.iter().map(wire::tool).collect();
        let mut store = State::store(p.engine, &name, &p.sandbox, p.limits.memory_mb)
            .map_err(|message| PluginError::Sandbox { name: name.clone(), message })?;
        arm_deadline(&mut store, &p.limits);
        let outcome = tokio::time::timeout(outer_timeout(&p.limits), async {
            let instance = pre.instantiate_async(&mut store).await?;
            instance.toolport_plugin_shape().call_convert(&mut store, &wit_server, &wit_tools).await
        })
        .await;
        let texts = classify(&name, &p.limits, &store, outcome)?
            .map_err(|message| PluginError::Failed { name: name.clone(), message })?;
        if texts.len() != tools.len() {
            return Err(PluginError::BadOutput {
                name,
                message: format!("{} results for {} tools", texts.len(), tools.len()),
            });
        }
        texts
            .iter()
            .zip(tools)
            .map(|(text, tool)| {
                serde_json::from_str(text).map_err(|e| PluginError::BadOutput {
                    name: name.clone(),
                    message: format!("tool {}: not JSON: {e}", tool.name),
                })
            })
            .collect()
    }
}
