//! The config layer: the global store (who each server is), the workspace file (which ones
//! this repository enables) and session pauses, resolved into what a runtime starts from.
//!
//! Reading never writes. Every change goes through [`write`]: locked, re-read under the lock,
//! edited as a JSON document (unknown keys and order kept), replaced atomically.

mod add_args;
mod edit;
mod expand;
mod model;
mod normalize;
mod resolve;
mod store;
mod validate;
mod workspace;
pub mod write;

pub use add_args::{ADD_USAGE, AddRequest, parse_add_args};
pub use edit::{EditError, add_server, disable_server, enable_server, remove_server};
pub use expand::expand_vars;
pub use model::*;
pub use normalize::{BUILTIN_TRANSPORTS, normalize_type};
pub use resolve::{MISSING_SERVER_ERROR, load_resolved, missing_rows, offline_status, resolve};
pub use store::parse_json;
pub use validate::validate;
pub use workspace::dedup_names;

/// A configuration problem: bad file, bad field, bad definition. Exits 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);
