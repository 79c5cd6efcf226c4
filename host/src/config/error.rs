//! The config layer's errors, in a leaf module so every file of the layer can use them without
//! importing the layer's front door (and so without an import cycle).

/// A configuration problem: bad file, bad field, bad definition. Exits 2.
#[derive(Debug, Clone, Default, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

crate::message_error::message_error!(ConfigError);

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
