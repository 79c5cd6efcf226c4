//! Where the workspace's tool pins live and how they are read (`.toolport/tools.lock`, beside
//! the workspace file), and what an approval reports: what `pins.rs` and the runtime's front
//! door share, kept apart from the supervisor so neither reaches the other through it.

use std::path::{Path, PathBuf};

use crate::config::{ConfigError, Resolved, TrustMode};
use crate::paths::TOOLS_LOCK_FILE;
use crate::trust::Lock;

/// `.toolport/tools.lock` beside `resolved`'s workspace file, if it has one.
pub(super) fn lock_path(resolved: &Resolved) -> Option<PathBuf> {
    let folder = resolved.workspace_file.as_ref()?.parent()?;
    Some(folder.join(TOOLS_LOCK_FILE))
}

/// The lock at `path`: missing is empty; unreadable or malformed is an error naming the file
/// (and the line and column).
pub(super) fn read_lock(path: &Path) -> Result<Lock, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Lock::parse(path, &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Lock::default()),
        Err(e) => Err(ConfigError(format!("{}: cannot read: {e}", path.display()))),
    }
}

/// Refuses to start over a lock that cannot be read: a malformed lock is the workspace's
/// mistake (exit 2), and carrying on would either hold every tool or trust every one.
pub(crate) fn check_lock(resolved: &Resolved) -> Result<(), ConfigError> {
    match lock_path(resolved) {
        Some(path) if resolved.settings.trust != TrustMode::Off => read_lock(&path).map(|_| ()),
        _ => Ok(()),
    }
}

/// What `mcp approve` pinned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approved {
    /// Each tool approved (the server's name for it) and why it was held.
    pub tools: Vec<(String, String)>,
    /// Whether the server's changed instructions were pinned again.
    pub instructions: bool,
}
