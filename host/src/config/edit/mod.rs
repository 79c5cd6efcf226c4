//! Every change to the files: one locked, atomic write path (`write`) and the edits built on
//! it — servers added, enabled and removed (`edits`, `add_args`), grants and plugins changed
//! (`grant_edit`, `grant_input`, `plugin_edit`). Nothing outside this folder writes, so reading
//! the config never writes.

pub(super) mod add_args;
pub(super) mod edits;
pub(super) mod grant_edit;
pub(super) mod grant_input;
pub(super) mod plugin_edit;
pub(super) mod write;
