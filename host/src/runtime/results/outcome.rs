//! What a tool call comes back with: the result whole ([`CallOutcome`]) or why there is none
//! ([`CallError`]). A leaf every step of a call shares (the executor, output checks, large
//! results, the views), so none of them imports another for it.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

/// A call's result as a person reads it in the session and in an ACP reply: the result's text,
/// prefixed `tool error: ` when the tool reported `isError`, or the executor's message.
pub fn render_call(result: &Result<CallOutcome, CallError>) -> String {
    match result {
        Ok(outcome) if outcome.is_error => format!("tool error: {}", outcome.render_text()),
        Ok(outcome) => outcome.render_text(),
        Err(e) => e.to_string(),
    }
}

/// A tool's result with nothing dropped: every content block, `structuredContent`, `isError`,
/// `_meta`. The blocks are rmcp's own, as the server's answer was read: nothing converts them
/// to JSON and back on the way from the server to `serve`'s client.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// Every content block, as the server sent it (text, image, audio, resource, link).
    pub content: Vec<ContentBlock>,
    /// `structuredContent`, when the server sent one.
    pub structured: Option<Value>,
    /// The server's `isError`: the tool ran and failed (an LLM should see this).
    pub is_error: bool,
    /// The result's `_meta`, when the server sent one: its own keys, for the client (serve
    /// passes it on as it came).
    pub meta: Option<Map<String, Value>>,
}

impl CallOutcome {
    /// Puts what the sandbox refused a `wasm` server during a failed call in front of the
    /// server's own words (`not granted: http://…`), unless it already says so: the host's
    /// record is what a reader can trust, whatever the guest made of the refusal.
    pub(in crate::runtime) fn note_refusals(&mut self, refusals: Vec<String>) {
        if !self.is_error {
            return;
        }
        let unsaid: Vec<String> =
            refusals.into_iter().filter(|r| !self.texts().any(|t| t.contains(r.as_str()))).collect();
        for refusal in unsaid.into_iter().rev() {
            self.content.insert(0, ContentBlock::text(refusal));
        }
    }

    /// From rmcp's result type: its blocks moved, not copied.
    pub(crate) fn from_result(result: CallToolResult) -> Self {
        Self {
            content: result.content,
            structured: result.structured_content,
            is_error: result.is_error.unwrap_or(false),
            meta: result.meta.map(|meta| meta.0),
        }
    }

    /// The text of each text block, in order (the other blocks left out).
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        self.content.iter().filter_map(|block| block.as_text()).map(|text| text.text.as_str())
    }

    /// Text blocks plainly, every other block as one line of JSON; blocks separated by
    /// newlines. With no content at all, the structured result as JSON. The server wrote the
    /// text, so escape sequences and other controls come back escaped
    /// ([`crate::text::escape_text`]): a result cannot clear the screen or write the clipboard.
    pub fn render_text(&self) -> String {
        let mut parts: Vec<String> = self
            .content
            .iter()
            .map(|block| match block.as_text() {
                Some(text) => text.text.clone(),
                None => block_json(block),
            })
            .collect();
        if parts.is_empty()
            && let Some(structured) = &self.structured
        {
            parts.push(structured.to_string());
        }
        crate::text::escape_text(&parts.join("\n")).into_owned()
    }
}

/// `block` as one line of JSON, as MCP spells it (empty in the one case serde cannot write it,
/// which rmcp's types never reach: a map with keys that are not strings).
pub(crate) fn block_json(block: &ContentBlock) -> String {
    serde_json::to_string(block).unwrap_or_default()
}

/// A block's `type`, as MCP spells it (`text`, `image`, `audio`, `resource`, `resource_link`).
pub(crate) fn block_type(block: &ContentBlock) -> &'static str {
    match block {
        ContentBlock::Text(_) => "text",
        ContentBlock::Image(_) => "image",
        ContentBlock::Audio(_) => "audio",
        ContentBlock::Resource(_) => "resource",
        ContentBlock::ResourceLink(_) => "resource_link",
        _ => "content",
    }
}

/// A block's own `_meta`, whatever its kind.
pub(crate) fn block_meta(block: &ContentBlock) -> Option<&Map<String, Value>> {
    let meta = match block {
        ContentBlock::Text(text) => text.meta.as_ref(),
        ContentBlock::Image(image) => image.meta.as_ref(),
        ContentBlock::Audio(audio) => audio.meta.as_ref(),
        ContentBlock::Resource(resource) => resource.meta.as_ref(),
        ContentBlock::ResourceLink(link) => link.meta.as_ref(),
        _ => None,
    };
    meta.map(|meta| &meta.0)
}

/// Why a call did not produce a result. Callers branch on these (an agent shows
/// `UnknownTool` to the model, reconnects on `NotConnected`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// No tool of that name in the registry (the name escaped: a caller's control characters
    /// are shown, never sent on to a terminal or a log).
    #[error("Unknown MCP tool: {}", crate::text::escape_line(.0))]
    UnknownTool(String),
    /// No tool of that name on the surface while servers are not up: the reference's sentence,
    /// then the server that has the tool when that is known (`owner`: from its pins, its tool
    /// filter, or a listing seen before), else every server that is not up, each with its
    /// state. One line: the names and reasons are escaped and each reason is clipped as in
    /// the status view.
    #[error("Unknown MCP tool: {}. {}", crate::text::escape_line(.name), not_up_text(.servers, *.owner))]
    UnknownWhileDown {
        /// The name the caller used.
        name: String,
        /// Whether `servers` are the tool's own (else: every server that is not up).
        owner: bool,
        /// In definition order.
        servers: Vec<NotUp>,
    },
    /// The name was blank (a model that forgot it, or a UI that sent nothing).
    #[error("MCP tool call is missing tool name")]
    MissingName,
    /// The arguments were not a JSON object.
    #[error("Invalid MCP tool arguments: {0}")]
    InvalidArguments(String),
    /// The tool's server is not (or no longer) connected.
    #[error("MCP server {server} is not connected: {reason}")]
    NotConnected {
        /// The server that owns the tool: the one to retry.
        server: String,
        /// Why: exit status and stderr, dropped connection, …
        reason: String,
    },
    /// The tool was listed from its server's last-known listing while the server was still
    /// connecting, and the server, now up, does not list it (`listing_store.rs`).
    #[error(
        "MCP tool {} is no longer listed by server {}: it was listed from the server's last-known \
         listing, and the server did not list it when it connected; list the tools again",
        crate::text::escape_line(.name),
        crate::text::escape_line(.server)
    )]
    NoLongerListed {
        /// The name the caller used.
        name: String,
        /// The server whose last-known listing had it.
        server: String,
    },
    /// The workspace's trust holds the tool off the surface (its definition changed since it
    /// was pinned in `.toolport/tools.lock`, it is not pinned under `trust: "strict"`, or a
    /// finding at `high`): only a person's `mcp approve` brings it back.
    #[error(
        "MCP tool {name} on server {server} is held ({reason}): `toolport mcp diff {server}` shows why, \
         `toolport mcp approve {server} {tool}` accepts it"
    )]
    Held {
        /// The name the caller used.
        name: String,
        /// The server that lists it.
        server: String,
        /// The server's own name for it.
        tool: String,
        /// `changed since pinned`, `not pinned`, `finding TP003`.
        reason: String,
    },
    /// The server did not answer within its call timeout.
    #[error("MCP tool {tool} on server {server} timed out after {ms} ms")]
    Timeout {
        /// The name the caller used (the final name, not the server's own).
        tool: String,
        /// The server that did not answer (it may still be working on the call).
        server: String,
        /// The server's `timeouts.callMs`, so the message says which setting to raise.
        ms: u128,
    },
    /// The server answered with a JSON-RPC error, or something the protocol does not allow.
    #[error("MCP tool {tool} on server {server} failed: {message}")]
    Protocol {
        /// The name the caller used (the final name, not the server's own).
        tool: String,
        /// The server that answered with the error.
        server: String,
        /// The server's or the transport's message.
        message: String,
    },
    /// The call guard stopped a secret (`secret_guard`): an argument carrying another
    /// server's configured secret was not sent, or a result carrying a secret was withheld.
    /// The reason names the rule or the variable, never the value.
    #[error("MCP tool {tool} on server {server} {reason}")]
    SecretBlocked {
        /// The name the caller used (the final name, not the server's own).
        tool: String,
        /// The server the call was for.
        server: String,
        /// What was stopped and why, and the setting that decided.
        reason: String,
    },
    /// A guard plugin refused the call or its result (`runtime/calls/guards.rs`), or failed and
    /// does not fail open. `reason` starts with the guard: `guard pii: <its reason>`.
    #[error("MCP tool {tool} on server {server} was refused by {reason}")]
    GuardDenied {
        /// The name the caller used (the final name, not the server's own).
        tool: String,
        /// The server the call was for.
        server: String,
        /// The guard and its reason (escaped and clipped), or how it failed.
        reason: String,
    },
    /// The workspace's `confirm` asks about this tool and the call was not allowed: the person
    /// said no, or nobody could be asked. The server never heard of the call.
    #[error("MCP tool {tool} on server {server} was not called: {reason}")]
    NotConfirmed {
        /// The name the caller used (the final name, not the server's own).
        tool: String,
        /// The server the call was for.
        server: String,
        /// `declined: toolport asks before calling …, and …`.
        reason: String,
    },
    /// The tool's result breaks its own `outputSchema` (`structured_output`).
    #[error("MCP tool {tool} on server {server} returned an invalid result: {reason}")]
    InvalidResult {
        /// The name the caller used (the final name, not the server's own).
        tool: String,
        /// The server whose tool answered.
        server: String,
        /// Where and how: the path into `structuredContent` and the schema keyword it breaks.
        reason: String,
    },
}

/// A server that is active in the workspace but not up: what a call that found no tool says
/// of it ([`CallError::UnknownWhileDown`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotUp {
    /// The server's name.
    pub server: String,
    /// Where it stands.
    pub state: NotUpState,
}

/// Why a server is not up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotUpState {
    /// Its connect (or first listing) is still under way.
    Connecting,
    /// It failed: the status row's error (a connect timeout, an exit with its stderr, a name
    /// rule it broke, …).
    Error(String),
    /// Paused in this session (`/mcp pause`).
    Paused,
}

/// `Its server is not connected: time (connecting)` for the tool's own server(s), else
/// `Not connected: time (connecting), git (error: …), files (paused; …)`.
fn not_up_text(servers: &[NotUp], owner: bool) -> String {
    let list: Vec<String> = servers
        .iter()
        .map(|down| {
            let name = crate::text::escape_line(&down.server);
            let state = match &down.state {
                NotUpState::Connecting => "connecting".to_string(),
                NotUpState::Error(reason) => format!("error: {}", crate::status::summarize_error(reason)),
                NotUpState::Paused => format!("paused; `/mcp resume {name}` resumes it"),
            };
            format!("{name} ({state})")
        })
        .collect();
    let lead = match (owner, servers.len()) {
        (true, 1) => "Its server is not connected",
        (true, _) => "Its servers are not connected",
        (false, _) => "Not connected",
    };
    format!("{lead}: {}", list.join(", "))
}

/// Parses call arguments: blank means `{}`; anything else must be a JSON object.
pub fn parse_arguments(arguments: &str) -> Result<Map<String, Value>, CallError> {
    if arguments.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => {
            Err(CallError::InvalidArguments(format!("expected a JSON object, got {}", json_kind(&other))))
        }
        Err(e) => Err(CallError::InvalidArguments(e.to_string())),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_arguments_are_an_empty_object() {
        assert_eq!(parse_arguments("  "), Ok(Map::new()));
    }

    #[test]
    fn non_objects_are_rejected_with_a_reason() {
        assert_eq!(
            parse_arguments("[1]").err().map(|e| e.to_string()).as_deref(),
            Some("Invalid MCP tool arguments: expected a JSON object, got an array")
        );
        let err = parse_arguments("{").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.starts_with("Invalid MCP tool arguments: EOF while parsing"), "{err}");
    }

    #[test]
    fn render_keeps_every_block() {
        let outcome = CallOutcome {
            content: vec![ContentBlock::text("hello"), ContentBlock::image("AA==", "image/png")],
            structured: None,
            is_error: false,
            meta: None,
        };
        assert_eq!(
            outcome.render_text(),
            "hello\n{\"type\":\"image\",\"data\":\"AA==\",\"mimeType\":\"image/png\"}"
        );
    }

    #[test]
    fn messages_match_the_contract() {
        assert_eq!(CallError::UnknownTool("x".into()).to_string(), "Unknown MCP tool: x");
        assert_eq!(CallError::UnknownTool("x\u{0}\n".into()).to_string(), "Unknown MCP tool: x\\u{0}\\u{a}");
        assert_eq!(CallError::MissingName.to_string(), "MCP tool call is missing tool name");
    }

    #[test]
    fn a_tool_of_a_server_that_is_not_up_names_it_on_one_line() {
        let down = |server: &str, state: NotUpState| NotUp { server: server.into(), state };
        let owned = CallError::UnknownWhileDown {
            name: "get_current_time".into(),
            owner: true,
            servers: vec![down("time", NotUpState::Connecting)],
        };
        assert_eq!(
            owned.to_string(),
            "Unknown MCP tool: get_current_time. Its server is not connected: time (connecting)"
        );
        let any = CallError::UnknownWhileDown {
            name: "x\n".into(),
            owner: false,
            servers: vec![
                down("time", NotUpState::Connecting),
                down(
                    "git\u{1b}",
                    NotUpState::Error(format!("connect timed out\r\nafter 30000 ms{}", "!".repeat(200))),
                ),
                down("files", NotUpState::Paused),
            ],
        };
        let text = any.to_string();
        let clipped = format!("connect timed out  after 30000 ms{}...", "!".repeat(84));
        assert_eq!(
            text,
            format!(
                "Unknown MCP tool: x\\u{{a}}. Not connected: time (connecting), git\\u{{1b}} (error: {clipped}), \
                 files (paused; `/mcp resume files` resumes it)"
            )
        );
        assert!(!text.contains('\n') && !text.contains('\u{1b}'), "{text}");
    }
}
