//! Why a plugin's or a `wasm` server's surroundings could not be set up: the compile cache's key
//! (its folder, its owner, its file), the sandbox's WASI context, a server component's load or
//! start. Its own type, so these do not travel as bare text; [`crate::plugin::Fault::Sandbox`] and
//! the transport carry it on.

/// A setup step that failed, in the words users read.
#[derive(Debug, Clone, Default, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SetupError(pub String);

/// A helper's message (it names what failed already) becomes the error as it is.
impl From<String> for SetupError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for SetupError {
    fn from(message: &str) -> Self {
        Self(message.to_string())
    }
}

/// For the callers that keep the message as text.
impl From<SetupError> for String {
    fn from(error: SetupError) -> Self {
        error.0
    }
}

/// The message as users read it (tests compare it).
impl std::ops::Deref for SetupError {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<&str> for SetupError {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}
