//! Why a stdio server could not be confined: a kernel feature missing or refused, a step of the
//! launcher that failed. Its own type, so the sandbox's failures do not travel as bare text; the
//! message names the step and the cause (`seccomp: …`, `landlock: …`) and is what `toolport
//! sandbox check` and a server's failed start show.

/// A sandbox step that failed, in the words users read.
#[derive(Debug, Clone, Default, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SandboxError(pub String);

/// A helper's message (it names the step already) becomes the error as it is.
impl From<String> for SandboxError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for SandboxError {
    fn from(message: &str) -> Self {
        Self(message.to_string())
    }
}

impl From<SandboxError> for crate::transport::ConnectError {
    fn from(error: SandboxError) -> Self {
        Self::Failed(error.0)
    }
}

/// For the callers that keep the message as text (a test's `Result<(), String>`).
impl From<SandboxError> for String {
    fn from(error: SandboxError) -> Self {
        error.0
    }
}

/// The message as users read it (tests compare it).
impl std::ops::Deref for SandboxError {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}
