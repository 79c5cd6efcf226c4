//! Every change to the files: one locked, atomic write path (`write`) and the edits built on
//! it — servers added, replaced, enabled and removed (`edits`, `add_args`), one field of a server set
//! or unset (`server_field`), one entry's sandbox edited
//! under the lock (`sandbox_entry`: its grants in `grant_edit`, `grant_items` and
//! `grant_input`, its pin in `pin`), the store's `defaults` set (`store_defaults`), and plugins
//! changed (`plugin_edit`); `workspace_ignore` keeps
//! `.toolport/.gitignore` naming the lock files made there. Nothing outside this
//! folder writes, so reading the config never writes.

pub(super) mod add_args;
pub(super) mod edits;
pub(super) mod grant_edit;
pub(super) mod grant_input;
pub(super) mod grant_items;
pub(super) mod pin;
pub(super) mod plugin_edit;
pub(super) mod sandbox_entry;
pub(super) mod server_field;
pub(super) mod store_defaults;
pub(super) mod workspace_ignore;
pub(super) mod write;
