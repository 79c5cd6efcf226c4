//! The config layer: the global store (who each server is), the workspace file (which ones
//! this repository enables) and session pauses, resolved into what a runtime starts from.
//!
//! Reading never writes. Every change goes through [`write`]: locked, re-read under the lock,
//! edited as a JSON document (unknown keys and order kept), replaced atomically.

mod bundles;
mod confirm_setting;
mod edit;
mod error;
mod expand;
mod fields;
mod guard_fields;
mod guards;
mod host_pattern;
mod model;
mod resolve;
mod sandbox_fields;
mod server_def;
mod store;
mod store_keys;
mod tool_filter;
mod unknown_keys;
mod workspace;

pub use bundles::Bundle;
pub use confirm_setting::{ConfirmSetting, ToolGlobs};
pub use edit::add_args::{ADD_USAGE, AddRequest, SandboxChoice, parse_add_args};
pub use edit::edits::{add_server, disable_server, enable_server, put_server, remove_server};
pub use edit::grant_edit::{grant_sandbox, revoke_sandbox};
pub use edit::grant_input::same_path;
pub use edit::grant_items::{GrantChange, GrantItem, GrantOutcome, GrantRequest};
pub use edit::pin::{Pinned, pin_component};
pub use edit::plugin_edit::{
    PluginRequest, PluginUsers, SURFACE_KEY, WorkspacePluginKey, add_plugin, plugin_entry, remove_plugin,
    set_workspace_plugin, set_workspace_surface,
};
pub use edit::sandbox_entry::SandboxEntry;
pub use edit::server_field::{ServerField, set_server_field};
pub use edit::store_defaults::set_default_sandbox;
// The write path for other agents' config files (the binary's `cli/clients/`, through
// `toolport::edit`): same lock, re-read and rename; a lock held across several edits, for a
// file of secrets (`auth/`).
pub(crate) use edit::write::{FileLock, Perms};
pub use edit::write::{LockAt, edit_text};
pub use error::{ConfigError, EditError};
#[cfg(fuzzing)]
pub use expand::expand_vars;
pub use expand::{ExpandedIn, ExpandedVar};
pub use guards::{GuardMode, GuardPhase, GuardScope, GuardUse, chain as guard_chain};
pub(crate) use host_pattern::{HostMatch, HostPattern, origin_of};
pub use model::*;
pub use resolve::{Resolved, ResolvedServer, guard_misfits, load_resolved, missing_rows, resolve};
pub(crate) use sandbox_fields::expand_home;
pub use server_def::{
    Grant, INHERIT_ENV_KEPT, IdpDef, NativeLimits, NativeSandbox, OAuthDef, Roots, ServerDef, Timeouts,
    TransportKind, WasmDef, validate,
};
pub use store::{GlobalStore, parse_json};
pub use tool_filter::{BadGlob, ToolFilter};
/// The workspace root's check of a file written there for another program (`install`).
pub use workspace::refuse_links_out;
