//! The tool record: one tool carried from `tools/list` to the registry, in the spirit of
//! codex's `ToolInfo { server, tool, … }`. Every view of the surface (the shaped JSON, the
//! route of a call, another shape, completion) is read from these records, so there is one
//! list to keep true instead of parallel vectors zipped by index.

use rmcp::model::Tool;
use serde_json::Value;

use crate::plugin::ToolInfo;
use crate::runtime::results::structured_output::OutputCheck;

/// One tool on the surface.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRecord {
    /// The server that lists it.
    pub server: String,
    /// The server's own name for it: what `tools/call` sends.
    pub original: String,
    /// The name on the surface, after the name policy and the collision rules.
    pub name: String,
    /// The tool exactly as the server listed it (schemas, annotations and icons intact).
    pub tool: Tool,
    /// The tool in the workspace's shape (`Value::Null` until the shape plugin has run).
    pub shaped: Value,
    /// Its `outputSchema`, compiled when the tool reached the registry: what each call's
    /// `structuredContent` is checked against. `None` without a schema, or with one that did
    /// not compile (warned about then).
    pub(crate) output: Option<OutputCheck>,
}

impl ToolRecord {
    /// A record for `tool` of `server` under its own name, not yet shaped.
    pub(crate) fn listed(server: &str, tool: Tool) -> Self {
        let name = tool.name.to_string();
        Self {
            server: server.to_string(),
            original: name.clone(),
            name,
            tool,
            shaped: Value::Null,
            output: None,
        }
    }

    /// The tool as plugins see it, under its final name.
    pub fn info(&self) -> ToolInfo {
        ToolInfo { name: self.name.clone(), ..tool_info(&self.tool) }
    }
}

/// A listed tool in the plugins' form: `inputSchema` and the rest passed through intact.
pub(crate) fn tool_info(tool: &Tool) -> ToolInfo {
    ToolInfo {
        name: tool.name.to_string(),
        title: tool.title.clone(),
        description: tool.description.as_ref().map(|d| d.to_string()),
        input_schema: Value::Object(tool.input_schema.as_ref().clone()),
        output_schema: tool.output_schema.as_ref().map(|s| Value::Object(s.as_ref().clone())),
        annotations: tool.annotations.as_ref().and_then(|a| serde_json::to_value(a).ok()),
    }
}
