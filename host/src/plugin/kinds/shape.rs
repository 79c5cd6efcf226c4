//! Tool-shape plugins: tools in, one JSON object per tool out.

use std::sync::Arc;

use serde_json::Value;

use crate::config::ServerDef;
use crate::observe::Observer;
use crate::plugin::compile::load::{Loaded, Origin, Pre};
use crate::plugin::error::{Fault, PluginError};
use crate::plugin::guard::{PerTool, call_per_tool};
use crate::plugin::model::ToolInfo;
use crate::plugin::wire;

/// A loaded tool-shape plugin. Cheap to clone; every call runs in a fresh store.
#[derive(Clone)]
pub struct ToolShape {
    pub(crate) plugin: Arc<Loaded>,
    /// Where each call is counted: the observer of the host that handed it out.
    pub(crate) observer: Observer,
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
    pub fn origin(&self) -> &Origin {
        &self.plugin.origin
    }

    /// Converts `tools` of `server`: one JSON value per tool, in order.
    pub async fn convert(&self, server: &ServerDef, tools: &[ToolInfo]) -> Result<Vec<Value>, PluginError> {
        let p = &*self.plugin;
        let Pre::Shape(pre) = &p.pre else {
            return Err(p.error(Fault::Load { message: "not loaded as a tool-shape plugin".into() }));
        };
        let wit_server = wire::server(server, false);
        let wit_tools: Vec<_> = tools.iter().map(wire::tool).collect();
        let expect = PerTool { tools: tools.len(), noun: "results", export: "convert" };
        let texts = call_per_tool(p, &self.observer, expect, async |store| {
            let instance = pre.instantiate_async(&mut *store).await?;
            instance.toolport_plugin_shape().call_convert(store, &wit_server, &wit_tools).await
        })
        .await?;
        // The guest's text is parsed here, once, so the rest of the host only sees values.
        texts
            .iter()
            .zip(tools)
            .map(|(text, tool)| {
                serde_json::from_str(text).map_err(|e| {
                    p.error(Fault::BadOutput { message: format!("tool {}: not JSON: {e}", tool.name) })
                })
            })
            .collect()
    }
}
