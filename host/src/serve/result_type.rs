//! `resultType: "complete"` on the results serve passes on (SEP-2322: a 2026-07-28 server MUST
//! send it; the Python SDK's `mcp.Client` rejects a result without it). rmcp's constructors
//! set it, but a server's `resources/read`, `prompts/get` and `completion/complete` results
//! come through whole, and a server that speaks 2025-11-25 sends none: its absent field means
//! complete (MCP), so that is what serve says. A call's result is rebuilt from the runtime's
//! outcome and is marked the same way. rmcp strips the field again for a 2025-11-25 client
//! ([`rmcp::model::ServerResult::strip_result_type_for_legacy_peer`]); a type that means
//! something else (`input_required`, `task`) is kept.
//!
//! Why here and not once around the whole handler: rmcp's `StreamableHttpService` takes a
//! `ServerHandler`, not any `Service`, so a wrapper would have to restate every method of it.
//! [`super::front`]'s `forward` is the one way a server's answer reaches the client.

use rmcp::model::{CallToolResult, CompleteResult, GetPromptResult, ReadResourceResult, ResultType};

/// A result as serve answers it: its `resultType` set where the server left it out.
pub trait Complete {
    fn completed(self) -> Self;
}

macro_rules! complete {
    ($($result:ty),*) => {$(
        impl Complete for $result {
            fn completed(mut self) -> Self {
                self.result_type.get_or_insert(ResultType::COMPLETE);
                self
            }
        }
    )*};
}

complete!(CallToolResult, CompleteResult, GetPromptResult, ReadResourceResult);

/// The answer to `logging/setLevel` and `resources/subscribe`: rmcp writes it.
impl Complete for () {
    fn completed(self) -> Self {}
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_result_without_a_type_is_complete_and_a_typed_one_is_kept() {
        // What a 2025-11-25 server's answer deserializes to.
        let from_legacy: CallToolResult =
            serde_json::from_value(json!({"content": [], "_meta": {"k": 1}})).unwrap_or_default();
        assert_eq!(from_legacy.result_type, None);
        assert_eq!(
            serde_json::to_value(from_legacy.completed()).ok(),
            Some(json!({"resultType": "complete", "content": [], "_meta": {"k": 1}}))
        );
        let mut read = ReadResourceResult::new(Vec::new());
        read.result_type = None;
        assert_eq!(read.completed().result_type, Some(ResultType::COMPLETE));
        let mut task = CallToolResult::success(Vec::new());
        task.result_type = Some(ResultType::TASK);
        assert_eq!(task.completed().result_type, Some(ResultType::TASK));
    }
}
