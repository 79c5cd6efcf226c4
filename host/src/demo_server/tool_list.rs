//! The demo server's tools: the list its options make (prefix, generated and extra tools,
//! header tools, tools that break their `outputSchema`, `late`) and the answers of the simple
//! ones.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde_json::{Value, json};

use super::DemoServer;

/// Default size of the `big` tool's text.
const DEFAULT_BIG_BYTES: usize = 64 * 1024;
/// Largest `big` result, so a typo cannot exhaust the machine (and under the 64 MiB a stdio
/// message may be, with JSON's escapes).
const MAX_BIG_BYTES: usize = 48 * 1024 * 1024;

/// The `--big-lines` text of `size` bytes.
fn big_lines(size: usize) -> String {
    let mut text = String::with_capacity(size + 64);
    let mut i = 0usize;
    while text.len() < size {
        text.push_str(&format!("{i:08} the quick brown fox jumps over the lazy dog\n"));
        i += 1;
    }
    text.truncate(size);
    text
}

/// The `outputSchema` of the `--bad-structured` tools that have a valid one.
fn count_schema() -> JsonObject {
    object(json!({"count": {"type": "integer"}, "unit": {"type": "string"}}), &["count"])
}

impl DemoServer {
    fn name(&self, base: &str) -> String {
        format!("{}{base}", self.args.prefix)
    }

    pub(super) fn tools(&self) -> Vec<Tool> {
        let mut tools = vec![
            tool(
                &self.name("echo"),
                "Returns its message",
                object(json!({"message": {"type": "string"}}), &["message"]),
            ),
            tool(
                &self.name("add"),
                "Adds two numbers",
                object(json!({"a": {"type": "number"}, "b": {"type": "number"}}), &["a", "b"]),
            ),
            tool(
                &self.name("sleep"),
                "Waits ms milliseconds, then answers",
                object(json!({"ms": {"type": "integer", "minimum": 0}}), &["ms"]),
            ),
            tool(
                &self.name("fail"),
                "Always returns an error result (isError)",
                object(json!({"message": {"type": "string"}}), &[]),
            ),
            tool(
                &self.name("big"),
                "Returns a large text (size bytes)",
                object(json!({"size": {"type": "integer", "minimum": 0}}), &[]),
            ),
            tool(&self.name("pid"), "Returns this server's process id", object(json!({}), &[])),
        ];
        if self.args.confirm {
            tools.push(tool(
                &self.name("confirm"),
                "Asks for an order's details through input-required results (SEP-2322), rounds times",
                object(json!({"rounds": {"type": "integer", "minimum": 0}}), &[]),
            ));
        }
        for i in 1..=self.args.tools {
            tools.push(tool(
                &self.name(&format!("tool_{i}")),
                &format!("Generated tool number {i}"),
                object(json!({}), &[]),
            ));
        }
        for name in &self.args.extra_tool {
            tools.push(tool(name, "Extra tool", object(json!({}), &[])));
        }
        if self.args.header_tools {
            let headed =
                |header: &str| object(json!({"region": {"type": "string", "x-mcp-header": header}}), &[]);
            tools.push(tool(&self.name("headed"), "Mirrors region into Mcp-Param-Region", headed("Region")));
            tools.push(tool(&self.name("misheaded"), "Its x-mcp-header is empty", headed("")));
        }
        if self.args.bad_structured {
            let counted = |name: &str, description: &str, output: JsonObject| {
                tool(&self.name(name), description, object(json!({}), &[]))
                    .with_raw_output_schema(Arc::new(output))
            };
            tools.push(counted("mismatch", "Returns a count that is not an integer", count_schema()));
            tools.push(counted("unstructured", "Returns no structuredContent", count_schema()));
            tools.push(counted("refused", "Fails (isError) without structuredContent", count_schema()));
            let invalid = object(json!({"count": {"type": "whole number"}}), &[]);
            tools.push(counted("bad_schema", "Has an outputSchema that is not valid", invalid));
            let mut remote = JsonObject::new();
            remote.insert("$ref".into(), json!("http://127.0.0.1:9/never-fetched.json"));
            tools.push(counted("remote_schema", "Has an outputSchema that refers to a URL", remote));
        }
        if self.changed.load(Ordering::SeqCst) {
            tools.push(tool(&self.name("late"), "Appeared after list_changed", object(json!({}), &[])));
        }
        tools
    }

    pub(super) fn answer(&self, base: &str, args: &JsonObject) -> Result<CallToolResult, McpError> {
        Ok(match base {
            "echo" => {
                let message = args.get("message").and_then(Value::as_str).unwrap_or_default();
                CallToolResult::success(vec![ContentBlock::text(message)])
            }
            "add" => {
                let a = number(args, "a")?;
                let b = number(args, "b")?;
                let mut result = CallToolResult::success(vec![ContentBlock::text((a + b).to_string())]);
                result.structured_content = Some(json!({ "sum": a + b }));
                result
            }
            "fail" => {
                let message = args.get("message").and_then(Value::as_str).unwrap_or("demo failure");
                CallToolResult::error(vec![ContentBlock::text(message)])
            }
            "big" => {
                let size = args.get("size").and_then(Value::as_u64).map_or(DEFAULT_BIG_BYTES, |s| s as usize);
                let size = size.min(MAX_BIG_BYTES);
                let text = if self.args.big_lines { big_lines(size) } else { "x".repeat(size) };
                CallToolResult::success(vec![ContentBlock::text(text)])
            }
            "pid" => CallToolResult::success(vec![ContentBlock::text(std::process::id().to_string())]),
            "late" => CallToolResult::success(vec![ContentBlock::text("late")]),
            "mismatch" | "bad_schema" | "remote_schema" if self.args.bad_structured => {
                let mut result = CallToolResult::success(vec![ContentBlock::text("five apples")]);
                result.structured_content = Some(json!({"count": "five", "unit": "apple"}));
                result
            }
            "unstructured" if self.args.bad_structured => {
                CallToolResult::success(vec![ContentBlock::text("5 apples, unstructured")])
            }
            "refused" if self.args.bad_structured => {
                CallToolResult::error(vec![ContentBlock::text("no apples today")])
            }
            generated if generated.starts_with("tool_") => {
                CallToolResult::success(vec![ContentBlock::text(format!("{generated} called"))])
            }
            other => return Err(McpError::invalid_params(format!("unknown tool: {other}"), None)),
        })
    }
}

fn tool(name: &str, description: &str, schema: JsonObject) -> Tool {
    Tool::new(name.to_string(), description.to_string(), Arc::new(schema))
}

fn object(properties: Value, required: &[&str]) -> JsonObject {
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), properties);
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    schema
}

fn number(args: &JsonObject, key: &str) -> Result<f64, McpError> {
    args.get(key)
        .and_then(Value::as_f64)
        .ok_or_else(|| McpError::invalid_params(format!("`{key}` must be a number"), None))
}
