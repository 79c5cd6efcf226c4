//! Why a read or a prompt produced nothing (`catalog_calls`), in the words every view shares,
//! and in a word of ours for the audit log.

/// Why a read or a prompt produced nothing. Messages follow the tools' (`Unknown MCP tool: …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    /// No connected server offers a prompt of that name.
    #[error("Unknown MCP prompt: {0}")]
    UnknownPrompt(String),
    /// The prompt name was blank.
    #[error("MCP prompt request is missing prompt name")]
    MissingName,
    /// The resource URI was blank.
    #[error("MCP resource read is missing the resource URI")]
    MissingUri,
    /// The prompt arguments were not a JSON object of strings.
    #[error("Invalid MCP prompt arguments: {0}")]
    InvalidArguments(String),
    /// No server of that name is defined.
    #[error("Unknown MCP server: {0}")]
    UnknownServer(String),
    /// The server is defined but this workspace does not enable it.
    #[error("MCP server is not enabled in this workspace: {0}")]
    NotEnabled(String),
    /// The server is paused in this session.
    #[error("MCP server is paused in this session: {0}")]
    Paused(String),
    /// The server is not (or no longer) connected.
    #[error("MCP server {server} is not connected: {reason}")]
    NotConnected {
        /// The server: the one to retry.
        server: String,
        /// Why, as its status row says.
        reason: String,
    },
    /// The server did not answer within its call timeout.
    #[error("MCP {subject} on server {server} timed out after {ms} ms")]
    Timeout {
        /// `resource <uri>` or `prompt <name>`.
        subject: String,
        /// The server that did not answer.
        server: String,
        /// Its `timeouts.callMs`.
        ms: u128,
    },
    /// The answer carried a secret and the workspace's `secrets.results` is `block`
    /// (`reply_guard.rs`): the reason names the rules, never the value.
    #[error("MCP {subject} on server {server} {reason}")]
    SecretBlocked {
        /// `resource <uri>` or `prompt <name>`.
        subject: String,
        /// The server that answered.
        server: String,
        /// What was withheld and why, and the setting that decided.
        reason: String,
    },
    /// A guard plugin refused the request or its answer (`guards.rs`), or failed and does not
    /// fail open. `reason` starts with the guard: `guard pii: <its reason>`.
    #[error("MCP {subject} on server {server} was refused by {reason}")]
    GuardDenied {
        /// `resource <uri>` or `prompt <name>`.
        subject: String,
        /// The server it was for.
        server: String,
        /// The guard and its reason (escaped and clipped), or how it failed.
        reason: String,
    },
    /// The server answered with an error.
    #[error("MCP {subject} on server {server} failed: {message}")]
    Protocol {
        /// `resource <uri>` or `prompt <name>`.
        subject: String,
        /// The server that refused.
        server: String,
        /// Its message.
        message: String,
    },
}

impl CatalogError {
    /// The failure in a word of ours, for the audit log: never the message, which may quote a
    /// value or a server's words.
    pub(crate) fn class(&self) -> &'static str {
        match self {
            Self::UnknownPrompt(_) => "unknown-prompt",
            Self::MissingName | Self::MissingUri => "missing-name",
            Self::InvalidArguments(_) => "invalid-arguments",
            Self::UnknownServer(_) => "unknown-server",
            Self::NotEnabled(_) => "not-enabled",
            Self::Paused(_) => "paused",
            Self::NotConnected { .. } => "not-connected",
            Self::Timeout { .. } => "timeout",
            Self::Protocol { .. } => "protocol",
            Self::SecretBlocked { .. } => "blocked",
            Self::GuardDenied { .. } => "guard-denied",
        }
    }
}
