//! One exchange through toolport as the observers see it: what was asked of which server, by
//! whom, how it ended, how long it took and how much passed.

use std::time::Duration;

use serde_json::{Map, Value};

/// What kind of exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `tools/call`.
    Call,
    /// `resources/read`.
    Read,
    /// `prompts/get`.
    Prompt,
    /// A sign-in to a server (OAuth), by a person or a machine grant.
    SignIn,
}

impl Kind {
    /// The word in the audit log, the metrics' labels and the spans.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Call => "call",
            Self::Read => "read",
            Self::Prompt => "prompt",
            Self::SignIn => "sign-in",
        }
    }
}

/// How it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Answered.
    Ok,
    /// Answered with a tool's own error (`isError: true`).
    ToolError,
    /// Not answered: refused, failed, timed out, declined or blocked.
    Error,
}

impl Outcome {
    /// The word in the audit log and the metrics' labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::ToolError => "tool-error",
            Self::Error => "error",
        }
    }
}

/// One exchange, as the code that made it describes it.
#[derive(Debug, Clone, Copy)]
pub struct Exchange<'a> {
    /// What kind.
    pub kind: Kind,
    /// Who asked: a serve client's session or token identity, when there is one.
    pub client: Option<&'a str>,
    /// The server's configured name.
    pub server: &'a str,
    /// The tool's final name, the resource's URI or the prompt's name (empty for a sign-in).
    pub name: &'a str,
    /// How it ended.
    pub outcome: Outcome,
    /// How long it took, from the request to its answer.
    pub duration: Duration,
    /// The size of what was sent (the arguments as JSON), in bytes.
    pub bytes_in: u64,
    /// The size of what came back (the result as JSON), in bytes.
    pub bytes_out: u64,
    /// The arguments, for their shape (and their values only where the operator asked).
    pub arguments: Option<&'a Map<String, Value>>,
}
