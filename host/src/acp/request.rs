//! ACP messages read once, where they arrive: a method name and its `params` become a
//! [`Request`] or a [`Notice`], and nothing past this file looks at raw JSON. A request that
//! cannot be read gets its JSON-RPC error here, with the contract's code and message
//! (`-32601 Method not found: …`, `-32602 cwd is required`, `sessionId is required`,
//! `invalid session/prompt: …`); whether a named session exists is the agent's question.

use agent_client_protocol_schema::v1::{ContentBlock, Error, PromptRequest};
use serde_json::Value;

use super::params::{SessionParams, session_params};
use super::rpc::{invalid_params, method_not_found};

/// A request this agent serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// `initialize`; its params carry nothing this agent varies on.
    Initialize,
    /// `authenticate`: no methods are advertised, so there is nothing to check.
    Authenticate,
    /// `session/new`.
    NewSession(SessionParams),
    /// `session/load`: re-create the session `id` with the servers sent now.
    LoadSession {
        /// The client's session id, reused as ours.
        id: String,
        /// What the client asks for.
        params: SessionParams,
    },
    /// `session/prompt`.
    Prompt {
        /// The session the prompt is for.
        session: String,
        /// The prompt's text blocks joined by newlines; other blocks are ignored (toolport runs
        /// commands, it has nothing to do with an image).
        text: String,
    },
    /// `_toolport/tools/list`.
    ToolsList {
        /// The session whose tool surface to list.
        session: String,
        /// A tool-shape plugin to convert to, instead of the session's own shape.
        shape: Option<String>,
    },
    /// `_toolport/tools/call`.
    ToolsCall {
        /// The session whose executor runs the call.
        session: String,
        /// The final tool name (blank is left to the executor, which has the message for it).
        name: String,
        /// The arguments as JSON text; blank means `{}` (the executor decides).
        arguments: String,
    },
}

impl Request {
    /// Reads a request's method and params.
    pub fn parse(method: &str, params: Value) -> Result<Self, Error> {
        match method {
            "initialize" => Ok(Self::Initialize),
            "authenticate" => Ok(Self::Authenticate),
            "session/new" => Ok(Self::NewSession(session_params(&params).map_err(invalid_params)?)),
            "session/load" => {
                let id = session_id(&params).map_err(invalid_params)?;
                let params = session_params(&params).map_err(invalid_params)?;
                Ok(Self::LoadSession { id, params })
            }
            "session/prompt" => prompt(params),
            "_toolport/tools/list" => Ok(Self::ToolsList {
                session: session_id(&params).map_err(invalid_params)?,
                shape: params.get("shape").and_then(Value::as_str).map(str::to_string),
            }),
            "_toolport/tools/call" => Ok(Self::ToolsCall {
                session: session_id(&params).map_err(invalid_params)?,
                name: params.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                arguments: match params.get("arguments") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                },
            }),
            other => Err(method_not_found(other)),
        }
    }

    /// The session whose `session/cancel` stops this request, for the requests that can be
    /// cancelled.
    pub fn cancellable_session(&self) -> Option<&str> {
        match self {
            Self::Prompt { session, .. } | Self::ToolsCall { session, .. } => Some(session),
            _ => None,
        }
    }
}

/// A notification this agent acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// `session/cancel`: stop what `session` is running.
    Cancel {
        /// The session to cancel.
        session: String,
    },
}

impl Notice {
    /// Reads a notification; the error says why it is ignored (JSON-RPC never answers one).
    pub fn parse(method: &str, params: &Value) -> Result<Self, String> {
        match method {
            "session/cancel" => Ok(Self::Cancel { session: session_id(params)? }),
            other => Err(format!("unknown notification {other}")),
        }
    }
}

/// The `sessionId` a request names.
fn session_id(params: &Value) -> Result<String, String> {
    match params.get("sessionId") {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        _ => Err("sessionId is required".into()),
    }
}

/// `session/prompt` through the schema crate's own type: its shape is the spec's, with no
/// second form to accept.
fn prompt(params: Value) -> Result<Request, Error> {
    let request: PromptRequest =
        serde_json::from_value(params).map_err(|e| invalid_params(format!("invalid session/prompt: {e}")))?;
    let text: Vec<&str> = request
        .prompt
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    Ok(Request::Prompt { session: request.session_id.to_string(), text: text.join("\n") })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;

    fn error(method: &str, params: Value) -> (i32, String) {
        match Request::parse(method, params) {
            Ok(request) => panic!("parsed: {request:?}"),
            Err(e) => (e.code.into(), e.message),
        }
    }

    #[test]
    fn unknown_methods_are_not_found() {
        assert_eq!(
            error("session/frobnicate", json!({})),
            (-32601, "Method not found: session/frobnicate".into())
        );
    }

    #[test]
    fn bad_params_are_invalid_with_the_contract_message() {
        assert_eq!(error("session/new", json!({"mcpServers": []})), (-32602, "cwd is required".into()));
        assert_eq!(
            error("session/new", json!({"cwd": "rel"})),
            (-32602, "cwd must be an absolute path".into())
        );
        assert_eq!(error("session/load", json!({"cwd": "/w"})), (-32602, "sessionId is required".into()));
        assert_eq!(error("session/load", json!({"sessionId": "s"})), (-32602, "cwd is required".into()));
        assert_eq!(
            error("_toolport/tools/list", json!({"sessionId": " "})),
            (-32602, "sessionId is required".into())
        );
        assert_eq!(error("_toolport/tools/call", Value::Null), (-32602, "sessionId is required".into()));
        let (code, message) = error("session/prompt", json!({"prompt": []}));
        assert_eq!(code, -32602);
        assert!(message.starts_with("invalid session/prompt: "), "{message}");
    }

    #[test]
    fn requests_are_typed() -> Result<(), Error> {
        assert_eq!(Request::parse("initialize", Value::Null)?, Request::Initialize);
        assert_eq!(
            Request::parse("session/load", json!({"sessionId": "s", "cwd": "/w"}))?,
            Request::LoadSession {
                id: "s".into(),
                params: SessionParams { cwd: PathBuf::from("/w"), servers: vec![] }
            }
        );
        let prompt = json!({"sessionId": "s", "prompt": [
            {"type": "text", "text": "/call echo"},
            {"type": "image", "data": "", "mimeType": "image/png"},
            {"type": "text", "text": "{}"},
        ]});
        let request = Request::parse("session/prompt", prompt)?;
        assert_eq!(request, Request::Prompt { session: "s".into(), text: "/call echo\n{}".into() });
        assert_eq!(request.cancellable_session(), Some("s"));
        assert_eq!(
            Request::parse("_toolport/tools/list", json!({"sessionId": "s", "shape": "anthropic"}))?,
            Request::ToolsList { session: "s".into(), shape: Some("anthropic".into()) }
        );
        Ok(())
    }

    #[test]
    fn call_arguments_are_json_text() -> Result<(), Error> {
        let arguments = |value: Value| -> Result<String, Error> {
            match Request::parse(
                "_toolport/tools/call",
                json!({"sessionId": "s", "name": "echo", "arguments": value}),
            )? {
                Request::ToolsCall { arguments, .. } => Ok(arguments),
                other => panic!("not a call: {other:?}"),
            }
        };
        assert_eq!(arguments(Value::Null)?, "");
        assert_eq!(arguments(json!("{\"a\": 1}"))?, "{\"a\": 1}");
        assert_eq!(arguments(json!({"a": 1}))?, "{\"a\":1}");
        assert_eq!(
            Request::parse("_toolport/tools/call", json!({"sessionId": "s"}))?,
            Request::ToolsCall { session: "s".into(), name: String::new(), arguments: String::new() }
        );
        Ok(())
    }

    #[test]
    fn notices() {
        assert_eq!(
            Notice::parse("session/cancel", &json!({"sessionId": "s"})),
            Ok(Notice::Cancel { session: "s".into() })
        );
        assert_eq!(Notice::parse("session/cancel", &json!({})), Err("sessionId is required".into()));
        assert_eq!(Notice::parse("x/y", &Value::Null), Err("unknown notification x/y".into()));
    }
}
