//! The records plugins receive and return, in toolport's own types. Their WIT forms live in
//! `bindings`; `wire` converts between the two at the boundary.

/// One tool as listed by a server, in the form plugins receive it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// The server's name for the tool (policies may rename it; calls always use this one).
    pub name: String,
    /// Display title.
    pub title: Option<String>,
    /// What the tool does.
    pub description: Option<String>,
    /// `inputSchema`; `Value::Null` when the server sent none.
    pub input_schema: serde_json::Value,
    /// `outputSchema`.
    pub output_schema: Option<serde_json::Value>,
    /// `annotations`.
    pub annotations: Option<serde_json::Value>,
}

/// A name policy's decision about one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Keep the server's name.
    Keep,
    /// Expose it under this name; `tools/call` still uses the original.
    Rename(String),
    /// Do not expose it.
    Hide,
    /// Put the server in `error` with this reason.
    Reject(String),
}
