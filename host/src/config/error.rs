//! The config layer's errors, in a leaf module so every file of the layer can use them without
//! importing the layer's front door (and so without an import cycle).

/// A configuration problem: bad file, bad field, bad definition. Exits 2.
#[derive(Debug, Clone, Default, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// A private helper's message (it names the field already) becomes the error as it is.
impl From<String> for ConfigError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for ConfigError {
    fn from(message: &str) -> Self {
        Self(message.to_string())
    }
}

/// The message as users read it (tests compare it, callers add to it).
impl std::ops::Deref for ConfigError {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<String> for ConfigError {
    fn eq(&self, other: &String) -> bool {
        self.0 == *other
    }
}

impl PartialEq<&str> for ConfigError {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// For the callers that add a usage line or a prefix to the message and keep it as text.
impl From<ConfigError> for String {
    fn from(error: ConfigError) -> Self {
        error.0
    }
}

/// Why an edit was refused. `Config` is bad configuration or input (exit 2); the rest are
/// run-time refusals (exit 1).
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// A malformed file, a wrong-typed field, an invalid definition.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `add` of a name the store already has.
    #[error("MCP server already exists: {0}")]
    AlreadyExists(String),
    /// A name the store does not define.
    #[error("Unknown MCP server: {0}")]
    Unknown(String),
    /// `disable` of a name the workspace does not enable.
    #[error("MCP server is not enabled in this workspace: {0}")]
    NotEnabled(String),
    /// `revoke` of something the entry does not have granted; the message says what it has.
    #[error("{0}")]
    NotGranted(String),
    /// The file system said no (lock, temp file, rename).
    #[error("{0:#}")]
    Io(#[from] anyhow::Error),
}
