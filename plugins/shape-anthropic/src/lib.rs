//! Built-in tool shape `anthropic`: `{name, description, input_schema}` per tool.

wit_bindgen::generate!({ world: "tool-shape", path: "../../wit/since_v0.1.0" });

use exports::toolport::plugin::shape::Guest;
use serde::Serialize;
use serde_json::value::RawValue;
use toolport::plugin::types::{Server, Tool};

/// Anthropic accepts a schema-less tool only with an object schema.
const EMPTY_OBJECT_SCHEMA: &str = r#"{"type":"object","properties":{}}"#;

#[derive(Serialize)]
struct AnthropicTool<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    input_schema: &'a RawValue,
}

struct ShapeAnthropic;

impl Guest for ShapeAnthropic {
    fn convert(_server: Server, tools: Vec<Tool>) -> Result<Vec<String>, String> {
        tools.iter().map(to_anthropic).collect()
    }
}

fn to_anthropic(tool: &Tool) -> Result<String, String> {
    let name = &tool.name;
    let text = match tool.input_schema.trim() {
        "" | "null" | "{}" => EMPTY_OBJECT_SCHEMA,
        other => other,
    };
    // Embedded raw: the schema reaches the model exactly as the server wrote it.
    let schema =
        RawValue::from_string(text.to_string()).map_err(|e| format!("tool {name}: bad inputSchema: {e}"))?;
    let out = AnthropicTool { name, description: tool.description.as_deref(), input_schema: &schema };
    serde_json::to_string(&out).map_err(|e| format!("tool {name}: {e}"))
}

export!(ShapeAnthropic);
