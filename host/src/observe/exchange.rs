//! One exchange through toolport as the observers see it: what was asked of which server, by
//! whom, how it ended, how long it took and how much passed.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::config::AuditChoice;

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
    /// Not sent: the caller may not use it (`serve`'s policy, or outside its bundle).
    Denied,
}

impl Outcome {
    /// The word in the audit log and the metrics' labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::ToolError => "tool-error",
            Self::Error => "error",
            Self::Denied => "denied",
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
    /// Why it was not answered, in a word of ours (`timeout`, `held`, `blocked`, …): never a
    /// value or a server's message. `None` when it was answered.
    pub error: Option<&'a str>,
    /// The ids of the policies that decided (`serve`'s policy file: the `permit`s that let it
    /// through, or the `forbid`s that denied it); empty without a policy.
    pub policies: &'a [String],
    /// What the workspace's `audit` setting asks of this exchange's audit line.
    pub audit: AuditChoice,
    /// What each guard plugin that acted on it did (a pass is not listed).
    pub guards: &'a [GuardStep],
}

/// One guard plugin's act on an exchange, for its audit line: which guard, on which half, did
/// what. Never the guard's reason or what it rewrote: those may quote a value.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GuardStep {
    /// The guard plugin's name.
    pub guard: String,
    /// `request` or `response`.
    pub phase: String,
    /// `denied`, `rewritten`, `flagged` (a deny or rewrite under `mode: audit`), or `failed`
    /// (it trapped, timed out, was missing or answered what does not fit).
    pub did: String,
    /// `enforce` or `audit`.
    pub mode: String,
}

impl<'a> Exchange<'a> {
    /// A sign-in to `server` that took `duration`, failed when `error` names why (a word of
    /// ours). Sign-ins carry no workspace setting: they are logged under the defaults.
    pub fn sign_in(server: &'a str, duration: Duration, error: Option<&'static str>) -> Exchange<'a> {
        Exchange {
            kind: Kind::SignIn,
            client: None,
            server,
            name: "",
            outcome: if error.is_some() { Outcome::Error } else { Outcome::Ok },
            duration,
            bytes_in: 0,
            bytes_out: 0,
            arguments: None,
            error,
            policies: &[],
            guards: &[],
            audit: AuditChoice::default(),
        }
    }
}

/// The length of `value` serialized as JSON, counted without keeping the text: the bytes of an
/// exchange, measured on what the code already holds.
pub fn json_size(value: &impl serde::Serialize) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => 0,
    }
}
