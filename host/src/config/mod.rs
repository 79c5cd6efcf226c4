//! The config layer: the global store (who each server is), the workspace file (which ones
//! this repository enables) and session pauses, resolved into what a runtime starts from.
//!
//! Reading never writes. Every change goes through [`write`]: locked, re-read under the lock,
//! edited as a JSON document (unknown keys and order kept), replaced atomically.

mod add_args;
mod edit;
mod error;
mod expand;
mod fields;
mod grant_edit;
mod grant_input;
mod host_pattern;
mod model;
mod normalize;
mod plugin_edit;
mod resolve;
mod sandbox_fields;
mod store;
mod tool_filter;
mod unknown_keys;
mod validate;
mod workspace;
mod write;

pub use add_args::{ADD_USAGE, AddRequest, parse_add_args};
pub use edit::{add_server, disable_server, enable_server, remove_server};
pub use error::{ConfigError, EditError};
#[cfg(fuzzing)]
pub use expand::expand_vars;
pub use grant_edit::{
    GrantChange, GrantItem, GrantOutcome, GrantRequest, Pinned, SandboxEntry, grant_sandbox, pin_component,
    revoke_sandbox,
};
pub use grant_input::same_path;
pub(crate) use host_pattern::{HostMatch, HostPattern, origin_of};
pub use model::*;
pub use plugin_edit::{
    PluginRequest, PluginUsers, SURFACE_KEY, WorkspacePluginKey, add_plugin, plugin_entry, remove_plugin,
    set_workspace_plugin, set_workspace_surface,
};
pub use resolve::{load_resolved, missing_rows, resolve};
pub(crate) use sandbox_fields::expand_home;
pub use store::parse_json;
pub use tool_filter::ToolFilter;
pub use validate::validate;
/// The workspace root's check of a file written there for another program (`install`).
pub(crate) use workspace::refuse_links_out;
/// The write path for other agents' config files (`clients/`): same lock, re-read and rename;
/// a lock held across several edits, for a file of secrets (`auth/`).
pub(crate) use write::{FileLock, LockAt, Perms, edit_text};
