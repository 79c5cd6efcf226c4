//! Exit statuses and the error that carries one: what every command returns through, kept
//! in a leaf so the commands and `main` do not import each other for it.

use toolport::edit::EditError;

/// Exit status for bad usage or bad configuration.
pub const EXIT_USAGE: u8 = 2;
/// Exit status for a command that failed at run time.
pub const EXIT_FAILURE: u8 = 1;
/// An error that already knows its exit status. Anything else that reaches `main` exits 1,
/// unless a [`toolport::ConfigError`] is in its chain (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ExitError {
    /// The exit status.
    pub code: u8,
    /// What is printed to stderr.
    pub message: String,
}

impl ExitError {
    /// A run-time failure (exit 1).
    pub fn failure(message: impl Into<String>) -> Self {
        Self { code: EXIT_FAILURE, message: message.into() }
    }
    /// Bad usage or configuration (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Self { code: EXIT_USAGE, message: message.into() }
    }
}

/// Config problems keep their type (exit 2); refusals become run-time failures (exit 1).
pub fn edit_error(e: EditError) -> anyhow::Error {
    match e {
        EditError::Config(c) => c.into(),
        other => ExitError::failure(other.to_string()).into(),
    }
}
