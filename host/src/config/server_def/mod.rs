//! One server definition (`mcpServers.<name>`): its typed form, OAuth settings and a `stdio`
//! server's OS sandbox, the transports it may name, reading it from JSON and writing it back,
//! and whether it can be started. The key spellings live in `config/store_keys.rs`, below this
//! folder, because the tool filter and the sandbox readers use them too.

mod model;
mod native_sandbox;
mod normalize;
mod oauth_def;
mod oauth_fields;
mod to_json;
mod transport_kind;
mod validate;

pub use model::{INHERIT_ENV_KEPT, Roots, ServerDef, Timeouts, WasmDef};
pub use native_sandbox::{NativeLimits, NativeSandbox};
pub use normalize::known_revision;
pub use oauth_def::{Grant, IdpDef, OAuthDef};
pub use transport_kind::TransportKind;
pub(in crate::config) use transport_kind::normalize_type;
pub use validate::validate;
