//! One server definition (`mcpServers.<name>`): its typed form and OAuth settings, the
//! transports it may name, reading it from JSON and writing it back, and whether it can be
//! started. The key spellings live in `config/store_keys.rs`, below this folder, because
//! the tool filter and the sandbox readers use them too.

pub(super) mod model;
pub(super) mod normalize;
pub(super) mod oauth_def;
pub(super) mod oauth_fields;
pub(super) mod to_json;
pub(super) mod transport_kind;
pub(super) mod validate;

pub use model::{Roots, ServerDef, Timeouts, WasmDef};
pub use oauth_def::{Grant, IdpDef, OAuthDef};
pub use transport_kind::TransportKind;
pub(crate) use transport_kind::normalize_type;
pub use validate::validate;
