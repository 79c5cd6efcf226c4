//! A call's result as MCP's `CallToolResult` JSON, the one form that `call --json`, ACP's
//! `_toolport/tools/call` and `serve` give: a program reading it sees what the server sent,
//! nothing dropped (every content block, `structuredContent` and `_meta` when there were
//! any, `isError`).

use rmcp::model::{CallToolResult, MetaObject};
use serde_json::{Map, Value};

use super::outcome::CallOutcome;

impl CallOutcome {
    /// `{"content": [...], "structuredContent": ..., "isError": bool, "_meta": {...}}`;
    /// `structuredContent` and `_meta` are left out when the server sent none, as MCP itself
    /// does.
    pub fn to_json(&self) -> Value {
        let mut result = Map::new();
        let content = self.content.iter().filter_map(|block| serde_json::to_value(block).ok()).collect();
        result.insert("content".into(), Value::Array(content));
        if let Some(structured) = &self.structured {
            result.insert("structuredContent".into(), structured.clone());
        }
        result.insert("isError".into(), Value::Bool(self.is_error));
        if let Some(meta) = &self.meta {
            result.insert("_meta".into(), Value::Object(meta.clone()));
        }
        Value::Object(result)
    }

    /// The same result as rmcp's type, for `serve` to answer with: the blocks moved as they
    /// came, never written as JSON and read back. `resultType` is left for the caller to set.
    pub fn into_result(self) -> CallToolResult {
        let mut result = CallToolResult::success(self.content);
        result.result_type = None;
        result.structured_content = self.structured;
        result.is_error = Some(self.is_error);
        result.meta = self.meta.map(MetaObject);
        result
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::ContentBlock;
    use serde_json::json;

    use super::*;

    #[test]
    fn every_part_of_the_result_is_kept() {
        let outcome = CallOutcome {
            content: vec![ContentBlock::text("5")],
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

    /// `into_result` is what reading `to_json` back as rmcp's type gives, without the copy.
    #[test]
    fn the_result_for_serve_is_the_json_read_back() -> Result<(), serde_json::Error> {
        let blocks = json!([
            {"type": "text", "text": "5", "_meta": {"k": 1}},
            {"type": "resource_link", "uri": "toolport://results/1", "name": "r"},
        ]);
        let outcomes = [
            CallOutcome {
                content: serde_json::from_value(blocks)?,
                structured: Some(json!({"sum": 5})),
                is_error: false,
                meta: json!({"example.com/trace": "t-1"}).as_object().cloned(),
            },
            CallOutcome { content: Vec::new(), structured: Some(Value::Null), is_error: true, meta: None },
        ];
        for outcome in outcomes {
            let read_back: CallToolResult = serde_json::from_value(outcome.to_json())?;
            assert_eq!(outcome.into_result(), read_back);
        }
        Ok(())
    }
}
