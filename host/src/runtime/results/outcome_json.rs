//! A call's result as MCP's `CallToolResult` JSON, the one form that `call --json`, ACP's
//! `_toolport/tools/call` and `serve` give: a program reading it sees what the server sent,
//! nothing dropped (every content block, `structuredContent` and `_meta` when there were
//! any, `isError`).

use serde_json::{Map, Value};

use super::outcome::CallOutcome;

impl CallOutcome {
    /// `{"content": [...], "structuredContent": ..., "isError": bool, "_meta": {...}}`;
    /// `structuredContent` and `_meta` are left out when the server sent none, as MCP itself
    /// does.
    pub fn to_json(&self) -> Value {
        let mut result = Map::new();
        result.insert("content".into(), Value::Array(self.content.clone()));
        if let Some(structured) = &self.structured {
            result.insert("structuredContent".into(), structured.clone());
        }
        result.insert("isError".into(), Value::Bool(self.is_error));
        if let Some(meta) = &self.meta {
            result.insert("_meta".into(), Value::Object(meta.clone()));
        }
        Value::Object(result)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_part_of_the_result_is_kept() {
        let outcome = CallOutcome {
            content: vec![json!({"type": "text", "text": "5"})],
            structured: Some(json!({"sum": 5})),
            is_error: false,
            meta: json!({"example.com/trace": "t-1"}).as_object().cloned(),
        };
        assert_eq!(
            outcome.to_json().to_string(),
            r#"{"content":[{"type":"text","text":"5"}],"structuredContent":{"sum":5},"isError":false,"_meta":{"example.com/trace":"t-1"}}"#
        );
        let plain = CallOutcome { content: Vec::new(), structured: None, is_error: true, meta: None };
        assert_eq!(plain.to_json(), json!({"content": [], "isError": true}));
    }
}
