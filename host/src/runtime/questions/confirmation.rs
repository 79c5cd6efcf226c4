//! A call toolport asks a person to allow before sending it (the workspace's `confirm`,
//! `trust/confirm_rule.rs`). The host asks, never the server: the server has not seen the call
//! yet and cannot approve its own. What the person is shown is ours: the tool, its server and
//! the arguments, escaped and clipped, so a hostile argument cannot redraw the question.

use serde_json::{Map, Value};

use super::related::Caller;
use crate::text::{escape_line, floor_char_boundary};

/// Most bytes of the arguments' JSON shown in a question: enough to recognise a path, a query
/// or an id; a large body is cut rather than pushing the question off the screen.
const SHOWN_ARGUMENT_BYTES: usize = 1024;

/// One call waiting for a person's yes.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirmation {
    /// The tool's server (its configured name).
    pub server: String,
    /// The tool's final name, as the caller called it.
    pub tool: String,
    /// The arguments as they would be sent.
    pub arguments: Map<String, Value>,
    /// Which tools the rule asks about, completing "toolport asks before calling …".
    pub reason: &'static str,
    /// Whose call it is, when the host named its callers (`related`): a host with several
    /// clients asks that one, or no one.
    pub caller: Option<Caller>,
}

/// What came of asking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfirmAnswer {
    /// The person said yes (or the host's explicit opt-in did, like `call --yes`).
    Allow,
    /// The person said no.
    Decline,
    /// The person dismissed the question.
    Cancel,
    /// Nobody could be asked: why, completing "… and …" (no terminal, a client without
    /// elicitation).
    Unasked(String),
}

impl Confirmation {
    /// The tool and its server, escaped: `tool delete_note of MCP server notes`.
    pub fn subject(&self) -> String {
        format!("tool {} of MCP server {}", escape_line(&self.tool), escape_line(&self.server))
    }

    /// The arguments as one line of JSON, escaped, cut after [`SHOWN_ARGUMENT_BYTES`].
    pub fn arguments_shown(&self) -> String {
        let json = Value::Object(self.arguments.clone()).to_string();
        let shown = match json.len() > SHOWN_ARGUMENT_BYTES {
            true => {
                let cut = floor_char_boundary(&json, SHOWN_ARGUMENT_BYTES);
                format!("{}… ({} more bytes)", &json[..cut], json.len() - cut)
            }
            false => json,
        };
        escape_line(&shown).into_owned()
    }

    /// The whole question in one line, as a form's message or a log line shows it.
    pub fn question(&self) -> String {
        format!(
            "toolport asks before calling {}: allow the call of {} with the arguments {}?",
            self.reason,
            self.subject(),
            self.arguments_shown()
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn asked(arguments: Value) -> Confirmation {
        let Value::Object(arguments) = arguments else { panic!("an object") };
        Confirmation {
            server: "notes\u{1b}[2J".into(),
            tool: "delete_note".into(),
            arguments,
            reason: "destructive tools",
            caller: None,
        }
    }

    #[test]
    fn the_question_names_tool_server_and_arguments_escaped() {
        assert_eq!(
            asked(json!({"id": "a\u{202e}b"})).question(),
            "toolport asks before calling destructive tools: allow the call of tool delete_note of MCP server \
             notes\\u{1b}[2J with the arguments {\"id\":\"a\\u{202e}b\"}?"
        );
    }

    #[test]
    fn long_arguments_are_cut() {
        let shown = asked(json!({"body": "é".repeat(2000)})).arguments_shown();
        assert!(shown.starts_with("{\"body\":\"éé"), "{shown}");
        assert!(shown.ends_with("… (2988 more bytes)"), "{shown}");
        assert!(shown.len() < SHOWN_ARGUMENT_BYTES + 40);
    }
}
