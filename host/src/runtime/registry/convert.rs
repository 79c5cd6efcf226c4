//! The seam between the runtime and the plugin host: the name policy and the tool shape are
//! plugins, and this is the only file of the registry that runs them (a call's guard plugins
//! run in `calls/guards.rs`).

use std::sync::Arc;

use serde_json::Value;

use crate::config::ServerDef;
use crate::plugin::{PluginError, PluginHost, ToolInfo, Verdict};

/// The plugin host, shared by every task of one runtime.
#[derive(Clone)]
pub struct Plugins {
    host: Arc<PluginHost>,
}

impl Plugins {
    /// Wraps the host.
    pub fn new(host: PluginHost) -> Self {
        Self { host: Arc::new(host) }
    }

    /// The host itself (transport plugins are opened through it).
    pub fn host(&self) -> &PluginHost {
        &self.host
    }

    /// Runs name policy `policy` over one server's tools: one verdict per tool, in order (the
    /// plugin host checks the count). The error is the host's, naming the policy once.
    pub async fn review(
        &self,
        policy: &str,
        def: &ServerDef,
        tools: &[ToolInfo],
    ) -> Result<Vec<Verdict>, PluginError> {
        self.host.name_policy(policy)?.review(def, tools).await
    }

    /// Converts one server's tools (final names) with tool shape `shape`: one JSON object per
    /// tool, in order (the plugin host checks the count). The error is the host's, naming the
    /// shape once.
    pub async fn convert(
        &self,
        shape: &str,
        def: &ServerDef,
        tools: &[ToolInfo],
    ) -> Result<Vec<Value>, PluginError> {
        if tools.is_empty() {
            return Ok(Vec::new());
        }
        self.host.tool_shape(shape)?.convert(def, tools).await
    }
}
