//! Why a plugin's or a `wasm` server's surroundings could not be set up: the compile cache's key
//! (its folder, its owner, its file), the sandbox's WASI context, a server component's load or
//! start. Its own type, so these do not travel as bare text; [`crate::plugin::Fault::Sandbox`] and
//! the transport carry it on.

/// A setup step that failed, in the words users read.
#[derive(Debug, Clone, Default, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SetupError(pub String);

crate::message_error::message_error!(SetupError);
