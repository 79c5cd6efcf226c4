//! The `confirm` tool: input asked the 2026-07-28 way (SEP-2322), an input-required result
//! with an elicitation and a sealed `requestState` per round, then the answer.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequest,
    ElicitRequestParams, InputRequest, InputRequiredResult,
};
use serde_json::{Value, json};

use super::DemoServer;

/// Most input-required rounds `confirm` may be told to ask (beyond any client's limit).
const MAX_CONFIRM_ROUNDS: u64 = 100;

/// What `confirm` keeps in its `requestState` between rounds.
#[derive(serde::Serialize, serde::Deserialize, Default)]
struct ConfirmState {
    /// Rounds asked so far.
    round: u64,
    /// The JSON-RPC id of each request so far (a retry must be a new request).
    ids: Vec<String>,
}

impl DemoServer {
    /// `confirm`: asks `rounds` times (an elicitation each time), then answers with the last
    /// answer and the ids of every request it saw.
    pub(super) fn confirm(
        &self,
        request: &CallToolRequestParams,
        id: String,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.clone().unwrap_or_default();
        let rounds = args.get("rounds").and_then(Value::as_u64).unwrap_or(1).min(MAX_CONFIRM_ROUNDS);
        let mut state = match &request.request_state {
            None => ConfirmState::default(),
            Some(sealed) => self
                .state
                .open_json::<ConfirmState>(sealed)
                .map_err(|e| McpError::invalid_params(format!("requestState rejected: {e}"), None))?,
        };
        state.ids.push(id);
        if state.round < rounds {
            state.round += 1;
            let schema = serde_json::from_value(json!({
                "type": "object",
                "properties": {
                    "size": {"type": "string", "title": "Size", "oneOf": [
                        {"const": "s", "title": "Small"}, {"const": "m", "title": "Medium"}, {"const": "l", "title": "Large"}
                    ], "default": "m"},
                    "colour": {"type": "string", "enum": ["red", "blue"], "default": "blue"},
                    "count": {"type": "integer", "minimum": 1, "maximum": 9, "default": 2},
                    "gift": {"type": "boolean", "default": false}
                },
                "required": ["size"]
            }))
            .map_err(|e| McpError::internal_error(format!("confirm's schema: {e}"), None))?;
            let ask = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: format!("Confirm the order (round {} of {rounds})", state.round),
                requested_schema: schema,
            });
            let sealed = self
                .state
                .seal_json(&state)
                .map_err(|e| McpError::internal_error(format!("cannot seal the state: {e}"), None))?;
            let requests = [("details".to_string(), InputRequest::Elicitation(ask))].into_iter().collect();
            return Ok(InputRequiredResult::new(Some(requests), Some(sealed)).into());
        }
        let answer =
            request.input_responses.as_ref().and_then(|r| r.get("details")).cloned().unwrap_or_default();
        let text = match answer.get("action").and_then(Value::as_str) {
            Some("accept") => format!("confirmed {}", answer.get("content").cloned().unwrap_or_default()),
            Some(other) => format!("not confirmed: {other}"),
            None => "nothing asked".to_string(),
        };
        let text = format!("{text}; rounds {}; request ids {}", state.round, state.ids.join(","));
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}
