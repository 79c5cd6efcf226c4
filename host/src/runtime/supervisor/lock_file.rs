//! Where the workspace's tool pins live and how they are read (`.toolport/tools.lock`, beside
//! the workspace file), and what an approval reports: what `pins.rs` and the runtime's front
//! door share, kept apart from the supervisor so neither reaches the other through it.

use std::path::{Path, PathBuf};

use crate::config::{ConfigError, FileLock, LockAt, Resolved, TrustMode};
use crate::file_stamp::Parsed;
use crate::paths::TOOLS_LOCK_FILE;
use crate::trust::Lock;

/// `.toolport/tools.lock` beside `resolved`'s workspace file, if it has one.
pub(super) fn lock_path(resolved: &Resolved) -> Option<PathBuf> {
    let folder = resolved.workspace_file.as_ref()?.parent()?;
    Some(folder.join(TOOLS_LOCK_FILE))
}

/// The lock at `path`: missing is empty; unreadable or malformed is an error naming the file
/// (and the line and column).
///
/// Every rebuild and every reconcile reads the lock, and at 10,000 tools it is 3 MB of JSON
/// (a fifth of a rebuild's work): an unchanged file is not parsed again (`file_stamp`).
pub(super) fn read_lock(path: &Path) -> Result<Lock, ConfigError> {
    static PARSED: Parsed<Lock> = Parsed::new();
    PARSED.read_through(path, || match std::fs::read_to_string(path) {
        Ok(text) => Lock::parse(path, &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Lock::default()),
        Err(e) => Err(ConfigError(format!("{}: cannot read: {e}", path.display()))),
    })
}

/// Refuses to start over a lock that cannot be read: a malformed lock is the workspace's
/// mistake (exit 2), and carrying on would either hold every tool or trust every one.
pub(crate) fn check_lock(resolved: &Resolved) -> Result<(), ConfigError> {
    match lock_path(resolved) {
        Some(path) if resolved.settings.trust != TrustMode::Off => read_lock(&path).map(|_| ()),
        _ => Ok(()),
    }
}

/// Whether the first sights `trust: "pin"` records can be written to `resolved`'s lock, as a
/// write would: its file lock taken, a temporary file made beside it, the lock itself opened
/// for writing. When they cannot, each start sees every tool for the first time, so a tool
/// that changed between two starts is trusted as new: `serve` refuses to start then (unless
/// `--allow-unpinned`). `strict` and `off` record nothing by themselves, so a read-only lock
/// costs them nothing; neither does a workspace without a workspace file (pins in memory by
/// design).
pub fn check_pins_kept(resolved: &Resolved) -> Result<(), ConfigError> {
    let Some(path) = lock_path(resolved).filter(|p| p.parent().is_some_and(Path::is_dir)) else {
        return Ok(());
    };
    if resolved.settings.trust != TrustMode::Pin {
        return Ok(());
    }
    let folder = path.parent().unwrap_or(&path);
    let probe = || -> Result<(), String> {
        let _lock = FileLock::acquire(&path, LockAt::BesideInWorkspace).map_err(|e| format!("{e:#}"))?;
        tempfile::NamedTempFile::new_in(folder).map_err(|e| {
            format!("cannot create a temporary file in {}: {}", folder.display(), without_path(&e))
        })?;
        if path.exists() {
            std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .map_err(|e| format!("cannot open {} for writing: {}", path.display(), without_path(&e)))?;
        }
        Ok(())
    };
    probe().map_err(|why| {
        ConfigError(format!(
            "cannot keep the tool pins: {why}. Every start would see every tool for the first time, \
             so a tool changed between two starts would be served. Make {} writable, or start serve \
             with --allow-unpinned (first sights kept in memory while it runs)",
            folder.display()
        ))
    })
}

/// An I/O error as the OS says it (tempfile's own adds a random file name).
fn without_path(e: &std::io::Error) -> std::io::Error {
    e.raw_os_error().map_or_else(|| std::io::Error::from(e.kind()), std::io::Error::from_raw_os_error)
}

/// What `mcp approve` pinned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approved {
    /// Each tool approved (the server's name for it) and why it was held.
    pub tools: Vec<(String, String)>,
    /// Whether the server's changed instructions were pinned again.
    pub instructions: bool,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn lock_text(tool: &str) -> String {
        let mut lock = Lock::default();
        let pin = crate::trust::Pin::of_tool(
            &serde_json::from_value(serde_json::json!({"name": tool, "inputSchema": {}}))
                .unwrap_or_else(|e| panic!("not a tool: {e}")),
            &[],
        );
        lock.servers.entry("demo".into()).or_default().tools.insert(tool.into(), pin);
        lock.render()
    }

    fn tools(lock: &Lock) -> Vec<String> {
        lock.servers.values().flat_map(|s| s.tools.keys().cloned()).collect()
    }

    #[test]
    fn an_unchanged_lock_is_parsed_once_and_every_write_is_seen() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let path = dir.path().join("tools.lock");
        assert_eq!(read_lock(&path).map(|l| tools(&l)).ok(), Some(vec![]), "missing: empty");

        std::fs::write(&path, lock_text("aaaa")).unwrap_or_else(|e| panic!("write: {e}"));
        crate::file_stamp::backdate(&path, Duration::from_secs(60));
        assert_eq!(read_lock(&path).map(|l| tools(&l)).ok(), Some(vec!["aaaa".to_string()]));

        // The same length written in place, just now: a new modification time, seen.
        std::fs::write(&path, lock_text("bbbb")).unwrap_or_else(|e| panic!("write: {e}"));
        assert_eq!(read_lock(&path).map(|l| tools(&l)).ok(), Some(vec!["bbbb".to_string()]));
        // A stamp this recent is not trusted (file_stamp's tests): a second write is read.
        std::fs::write(&path, lock_text("cccc")).unwrap_or_else(|e| panic!("write: {e}"));
        assert_eq!(read_lock(&path).map(|l| tools(&l)).ok(), Some(vec!["cccc".to_string()]));

        // Replaced by a rename with the very same length and time: another inode, seen.
        crate::file_stamp::backdate(&path, Duration::from_secs(60));
        assert_eq!(read_lock(&path).map(|l| tools(&l)).ok(), Some(vec!["cccc".to_string()]));
        let meta = std::fs::metadata(&path).unwrap_or_else(|e| panic!("metadata: {e}"));
        let other = dir.path().join("tools.lock.new");
        std::fs::write(&other, lock_text("dddd")).unwrap_or_else(|e| panic!("write: {e}"));
        let file = std::fs::File::options().write(true).open(&other).unwrap_or_else(|e| panic!("open: {e}"));
        file.set_modified(meta.modified().unwrap_or_else(|e| panic!("mtime: {e}")))
            .unwrap_or_else(|e| panic!("set_modified: {e}"));
        drop(file);
        std::fs::rename(&other, &path).unwrap_or_else(|e| panic!("rename: {e}"));
        assert_eq!(read_lock(&path).map(|l| tools(&l)).ok(), Some(vec!["dddd".to_string()]));

        // Malformed is still the error it was; gone is empty again.
        std::fs::write(&path, "{").unwrap_or_else(|e| panic!("write: {e}"));
        assert!(read_lock(&path).is_err());
        std::fs::remove_file(&path).unwrap_or_else(|e| panic!("remove: {e}"));
        assert_eq!(read_lock(&path).map(|l| tools(&l)).ok(), Some(vec![]));
    }
}
