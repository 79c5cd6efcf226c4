//! The config layer: the global store (who each server is), the workspace file (which ones
//! this repository enables) and session pauses, resolved into what a runtime starts from.

mod model;

pub use model::*;

/// A configuration problem: bad file, bad field, bad definition. Exits 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);
