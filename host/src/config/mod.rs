//! Placeholder: the config layer (issue 2).

/// A configuration problem: bad file, bad field, bad definition. Exits 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);
