//! The lazy surface: instead of every tool, a client sees three — `search_tools` (ranked search
//! over the registry, `runtime/tool_search.rs`), `describe_tool` (one tool's definition in the
//! workspace's shape) and `call_tool` (a tool called by name through the same executor, with
//! its progress and questions relayed as for a direct call). A model's context then holds three
//! definitions instead of hundreds. Only a view: the registry, its final names and the collision
//! rules are the same, and a real tool that happens to be called `search_tools` stays callable
//! through `call_tool`.

use std::sync::{Arc, Mutex};

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

use super::scope::Scope;
use crate::config::Surface;
use crate::runtime::{Runtime, ToolIndex};

/// The three tools' names.
pub const SEARCH: &str = "search_tools";
/// See [`SEARCH`].
pub const DESCRIBE: &str = "describe_tool";
/// See [`SEARCH`].
pub const CALL: &str = "call_tool";

/// The server the three tools are shaped as coming from (what a tool-shape plugin is told).
pub const LAZY_SERVER: &str = "toolport";

/// Hits `search_tools` returns when not told how many.
const DEFAULT_LIMIT: u64 = 5;
/// The most it returns, however many are asked for.
const MAX_LIMIT: u64 = 50;

/// The lazy surface's three tool definitions, as `tools/list` shows them.
pub fn lazy_tools() -> Vec<Tool> {
    let read_only = || ToolAnnotations::new().read_only(true).destructive(false).open_world(false);
    vec![
        Tool::new(
            SEARCH,
            "Find tools by what they do. Returns the best matches (name, server, one-line description, \
             score). Then describe_tool gives a tool's parameters and call_tool runs it.",
            schema(
                json!({
                    "query": {"type": "string", "description": "What the tool should do, in plain words"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT,
                              "description": "How many tools to return"}
                }),
                &["query"],
            ),
        )
        .annotate(read_only()),
        Tool::new(
            DESCRIBE,
            "The full definition of one tool, with its parameters' JSON schema, by the name search_tools returned.",
            schema(json!({"name": {"type": "string", "description": "The tool's name"}}), &["name"]),
        )
        .annotate(read_only()),
        Tool::new(
            CALL,
            "Call a tool by name with arguments matching its definition (see describe_tool); returns its result.",
            schema(
                json!({
                    "name": {"type": "string", "description": "The tool's name"},
                    "arguments": {"type": "object", "description": "The tool's arguments"}
                }),
                &["name"],
            ),
        ),
    ]
}

fn schema(properties: Value, required: &[&str]) -> Arc<JsonObject> {
    let schema = json!({"type": "object", "properties": properties, "required": required});
    Arc::new(schema.as_object().cloned().unwrap_or_default())
}

/// Whether a `serve` shows the lazy surface, and the search index it answers from.
pub struct Lazy {
    /// `serve --lazy` (or a library host's choice): wins over the workspace's `surface`.
    forced: Option<Surface>,
    /// The index and the tool revision it was built at.
    index: Mutex<Option<(u64, Arc<ToolIndex>)>>,
}

/// What a `tools/call` on the lazy surface comes to.
pub enum Route {
    /// Answered here (`search_tools`, `describe_tool`, or why not).
    Answered(Result<CallToolResult, McpError>),
    /// A real tool to call through the executor, as a direct call would.
    Call { name: String, arguments: Map<String, Value> },
}

impl Lazy {
    /// `forced`: the surface whatever the workspace says; `None` follows the workspace file.
    pub fn new(forced: Option<Surface>) -> Self {
        Self { forced, index: Mutex::new(None) }
    }

    /// Whether the lazy surface is shown now: the forced choice, else the workspace's (read
    /// again each time, so an edited file takes effect).
    pub fn active(&self, runtime: &Runtime) -> bool {
        self.forced.unwrap_or_else(|| runtime.surface()) == Surface::Lazy
    }

    /// The index of the runtime's tools now, rebuilt when their revision moved on (a server's
    /// `list_changed`, a reconnect, a reconcile).
    fn index(&self, runtime: &Runtime) -> Arc<ToolIndex> {
        // The revision before the records: a change in between rebuilds again next time.
        let revision = runtime.revisions().borrow().tools;
        let mut cached = self.index.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((at, index)) = cached.as_ref()
            && *at == revision
        {
            return index.clone();
        }
        let index = Arc::new(ToolIndex::build(&runtime.records()));
        tracing::debug!(tools = index.len(), revision, "lazy surface: search index built");
        *cached = Some((revision, index.clone()));
        index
    }

    /// Routes one `tools/call` of the lazy surface. A name other than the three goes to the
    /// executor as it is (a client that kept a full listing still reaches the tool). The rate
    /// limits count a call where this sends it (`rate_limit.rs`): `call_tool` as the tool it
    /// names.
    /// What `scope` may not call is neither found nor described.
    pub fn route(
        &self,
        runtime: &Runtime,
        scope: &Scope,
        name: &str,
        mut arguments: Map<String, Value>,
    ) -> Route {
        match name {
            SEARCH => Route::Answered(self.search(runtime, scope, &arguments)),
            DESCRIBE => Route::Answered(describe(runtime, scope, &arguments)),
            CALL => {
                let name = match required_name(&arguments) {
                    Ok(name) => name,
                    Err(e) => return Route::Answered(Err(e)),
                };
                match inner_arguments(arguments.remove("arguments")) {
                    Ok(arguments) => Route::Call { name, arguments },
                    Err(e) => Route::Answered(Err(e)),
                }
            }
            _ => Route::Call { name: name.to_string(), arguments },
        }
    }

    fn search(
        &self,
        runtime: &Runtime,
        scope: &Scope,
        arguments: &Map<String, Value>,
    ) -> Result<CallToolResult, McpError> {
        let query = required_string(arguments, "query")?;
        let limit = match arguments.get("limit") {
            None | Some(Value::Null) => DEFAULT_LIMIT,
            Some(value) => value.as_u64().filter(|n| *n >= 1).ok_or_else(|| {
                McpError::invalid_params(format!("{SEARCH}: \"limit\" must be a positive integer"), None)
            })?,
        };
        let limit = limit.min(MAX_LIMIT) as usize;
        let index = self.index(runtime);
        // Out of scope is filtered after ranking: asked for every hit, then the first `limit` kept.
        let hits = match scope.is_open() {
            true => index.search(&query, limit),
            false => index.search(&query, index.len()),
        };
        let in_scope =
            |name: &str| scope.is_open() || runtime.record(name).is_some_and(|r| scope.lists_tool(&r));
        let tools: Vec<Value> = hits
            .into_iter()
            .filter(|hit| in_scope(&hit.name))
            .take(limit)
            .map(|hit| {
                // Three decimals: a score is for ranking, not for reading digits.
                let score = (f64::from(hit.score) * 1000.0).round() / 1000.0;
                json!({"name": hit.name, "server": hit.server, "description": hit.description, "score": score})
            })
            .collect();
        Ok(structured(json!({ "tools": tools })))
    }
}

/// `describe_tool`: the record's shaped definition, or the executor's words for an unknown name.
fn describe(
    runtime: &Runtime,
    scope: &Scope,
    arguments: &Map<String, Value>,
) -> Result<CallToolResult, McpError> {
    let name = required_name(arguments)?;
    Ok(match runtime.record(&name).filter(|record| scope.lists_tool(record)) {
        Some(record) => structured(record.shaped.clone()),
        None => {
            let unknown = crate::runtime::CallError::UnknownTool(name);
            CallToolResult::error(vec![ContentBlock::text(unknown.to_string())])
        }
    })
}

/// A result a model reads as text and a client may read as `structuredContent`.
fn structured(value: Value) -> CallToolResult {
    let text = serde_json::to_string_pretty(&value).unwrap_or_default();
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    if value.is_object() {
        result.structured_content = Some(value);
    }
    result
}

fn required_string(arguments: &Map<String, Value>, key: &str) -> Result<String, McpError> {
    match arguments.get(key).and_then(Value::as_str).map(str::trim) {
        Some(text) if !text.is_empty() => Ok(text.to_string()),
        _ => Err(McpError::invalid_params(format!("\"{key}\" must be a non-empty string"), None)),
    }
}

/// `describe_tool`'s and `call_tool`'s `name`, exactly as sent: a name with a space or a
/// control character around it is no tool's (as for a direct call), never the tool without it.
fn required_name(arguments: &Map<String, Value>) -> Result<String, McpError> {
    match arguments.get("name").and_then(Value::as_str) {
        Some(name) if !name.trim().is_empty() => Ok(name.to_string()),
        _ => Err(McpError::invalid_params("\"name\" must be a non-empty string".to_string(), None)),
    }
}

/// `call_tool`'s `arguments`: an object, absent for `{}`, or an object written as JSON text
/// (what some models send).
fn inner_arguments(value: Option<Value>) -> Result<Map<String, Value>, McpError> {
    let invalid = || McpError::invalid_params(format!("{CALL}: \"arguments\" must be a JSON object"), None);
    match value {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(map)) => Ok(map),
        Some(Value::String(text)) if text.trim().is_empty() => Ok(Map::new()),
        Some(Value::String(text)) => match serde_json::from_str(&text) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(invalid()),
        },
        Some(_) => Err(invalid()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULT_RESERVED_TOOL_NAMES;

    #[test]
    fn three_tools_whose_names_no_reserved_name_takes() {
        let names: Vec<String> = lazy_tools().iter().map(|t| t.name.to_string()).collect();
        assert_eq!(names, [SEARCH, DESCRIBE, CALL]);
        for name in &names {
            assert!(!DEFAULT_RESERVED_TOOL_NAMES.contains(&name.as_str()), "{name} is reserved");
        }
    }

    #[test]
    fn call_tool_arguments_are_an_object_or_its_json_text() {
        let ok = |v: Option<Value>| inner_arguments(v).ok();
        assert_eq!(ok(None), Some(Map::new()));
        assert_eq!(ok(Some(json!({"a": 1}))).map(|m| m.len()), Some(1));
        assert_eq!(ok(Some(json!("{\"a\": 1}"))).map(|m| m.len()), Some(1));
        assert!(inner_arguments(Some(json!([1]))).is_err());
        assert!(inner_arguments(Some(json!("[1]"))).is_err());
    }
}
