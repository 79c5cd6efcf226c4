//! The `session/update` notifications the agent sends: its message chunks and the command
//! list. A leaf, so the agent and the questions it relays (`elicit`) both write them.

use agent_client_protocol_schema::v1::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, ContentBlock, ContentChunk,
    SessionNotification, SessionUpdate, TextContent, UnstructuredCommandInput,
};
use serde_json::Value;

use super::rpc::notification;
use super::session::COMMANDS;

const SESSION_UPDATE: &str = "session/update";

/// A `session/update` agent message with `text`.
pub(super) fn message_chunk(session_id: &str, text: String) -> Value {
    let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(text)));
    notification(
        SESSION_UPDATE,
        SessionNotification::new(session_id.to_string(), SessionUpdate::AgentMessageChunk(chunk)),
    )
}

pub(super) fn commands_update(session_id: &str) -> Value {
    let commands = COMMANDS
        .iter()
        .map(|(name, description, hint)| {
            let command = AvailableCommand::new(*name, *description);
            match hint {
                Some(h) => {
                    command.input(AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(*h)))
                }
                None => command,
            }
        })
        .collect();
    notification(
        SESSION_UPDATE,
        SessionNotification::new(
            session_id.to_string(),
            SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands)),
        ),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn updates_are_session_update_notifications() {
        let v = message_chunk("s1", "hello".into());
        assert_eq!(v["method"], "session/update");
        assert_eq!(v["params"]["sessionId"], "s1");
        assert_eq!(v["params"]["update"]["sessionUpdate"], "agent_message_chunk");
        assert_eq!(v["params"]["update"]["content"], json!({"type": "text", "text": "hello"}));
        let v = commands_update("s1");
        assert_eq!(v["params"]["update"]["sessionUpdate"], "available_commands_update");
        assert_eq!(v["params"]["update"]["availableCommands"][0]["name"], "mcp");
        assert_eq!(v["params"]["update"]["availableCommands"][2]["input"], json!({"hint": "<tool> [json]"}));
    }
}
