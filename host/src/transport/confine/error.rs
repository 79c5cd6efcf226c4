//! Why a stdio server could not be confined: a kernel feature missing or refused, a step of the
//! launcher that failed. Its own type, so the sandbox's failures do not travel as bare text; the
//! message names the step and the cause (`seccomp: …`, `landlock: …`) and is what `toolport
//! sandbox check` and a server's failed start show.

/// A sandbox step that failed, in the words users read.
#[derive(Debug, Clone, Default, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SandboxError(pub String);

crate::message_error::message_error!(SandboxError);

impl From<SandboxError> for crate::transport::ConnectError {
    fn from(error: SandboxError) -> Self {
        Self::Failed(error.0)
    }
}
