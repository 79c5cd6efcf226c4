//! A guard's helpers. The hooks get the request's params and the server's answer as JSON text
//! and answer a [`Decision`], whose mutation is JSON text again; these parse the one and build
//! the other, so a guard works on `serde_json::Value`s throughout.

use serde_json::Value;

use crate::json::{json_text, parse_json};
use crate::world::{Decision, RequestKind};

/// A hook's `params` as JSON: `{"name", "arguments"}` for a call or a prompt, `{"uri"}` for a
/// read (the host always sends an object; the error is for a guard's own tests).
pub fn params_json(params: &str) -> Result<Value, String> {
    parse_json("params", params)
}

/// `on-response`'s `answer` as JSON: a call's result `{"content", "structuredContent",
/// "isError"}`, a read's `{"contents"}`, a prompt's `{"description", "messages"}`.
pub fn answer_json(answer: &str) -> Result<Value, String> {
    parse_json("answer", answer)
}

impl Decision {
    /// Go on with `value` instead of what the hook was given. It must keep the shape: a call's
    /// new arguments are checked against the tool's input schema, and a mutation that does not
    /// fit, or is over twice what the hook was given plus 1 MiB, counts as the guard failing.
    pub fn mutate(value: &Value) -> Self {
        Self::Mutate(json_text(value))
    }

    /// Refuse, with a reason the model and the person both see.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self::Deny(reason.into())
    }
}

impl RequestKind {
    /// The MCP method of the request: `tools/call`, `resources/read` or `prompts/get` (for log
    /// lines and reasons that name what was refused).
    pub fn method(self) -> &'static str {
        match self {
            Self::ToolsCall => "tools/call",
            Self::ResourcesRead => "resources/read",
            Self::PromptsGet => "prompts/get",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_carry_json_text_and_reasons() {
        let params = params_json(r#"{"name":"query","arguments":{"sql":"select 1"}}"#)
            .unwrap_or_else(|e| panic!("{e}"));
        match Decision::mutate(&params) {
            Decision::Mutate(text) => assert_eq!(text, r#"{"name":"query","arguments":{"sql":"select 1"}}"#),
            other => panic!("{other:?}"),
        }
        assert!(matches!(Decision::deny("no"), Decision::Deny(reason) if reason == "no"));
        let err = answer_json("{").err().unwrap_or_default();
        assert!(err.starts_with("answer is not valid JSON: "), "{err}");
        assert_eq!(RequestKind::ResourcesRead.method(), "resources/read");
    }
}
