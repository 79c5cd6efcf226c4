//! Where the workspace's tool pins live and how they are read (`.toolport/tools.lock`, beside
//! the workspace file), and what an approval reports: what `pins.rs` and the runtime's front
//! door share, kept apart from the supervisor so neither reaches the other through it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, SystemTime};

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
///
/// Every rebuild and every reconcile reads the lock, and at 10,000 tools it is 3 MB of JSON
/// (a fifth of a rebuild's work): a file whose [`Stamp`] is the one last parsed is not read
/// again. Only a stamp older than [`RACY`] when it was read is trusted, so a second write
/// within one tick of the file system's clock, of the same length, is never missed (git's
/// "racily clean" rule).
pub(super) fn read_lock(path: &Path) -> Result<Lock, ConfigError> {
    let stamp = match std::fs::metadata(path) {
        Ok(meta) => Stamp::of(&meta),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Lock::default()),
        Err(e) => return Err(ConfigError(format!("{}: cannot read: {e}", path.display()))),
    };
    let mut parsed = PARSED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(stamp) = stamp
        && let Some((known, lock)) = parsed.get(path)
        && *known == stamp
    {
        return Ok(lock.clone());
    }
    let lock = match std::fs::read_to_string(path) {
        Ok(text) => Lock::parse(path, &text)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Lock::default(),
        Err(e) => return Err(ConfigError(format!("{}: cannot read: {e}", path.display()))),
    };
    match stamp.filter(Stamp::settled) {
        Some(stamp) => {
            parsed.insert(path.to_path_buf(), (stamp, lock.clone()));
        }
        None => {
            parsed.remove(path);
        }
    }
    Ok(lock)
}

/// A write this recent may share its modification time with the next one.
const RACY: Duration = Duration::from_secs(2);

/// The last lock parsed per file, with the stamp it had.
static PARSED: LazyLock<Mutex<HashMap<PathBuf, (Stamp, Lock)>>> = LazyLock::new(Default::default);

/// What changes when a file is written: replaced by a rename (toolport's own writer, editors)
/// it is another inode; written in place, its length or modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: SystemTime,
    inode: (u64, u64),
}

impl Stamp {
    /// `None` where the file system keeps no modification time.
    fn of(meta: &std::fs::Metadata) -> Option<Stamp> {
        #[cfg(unix)]
        let inode = {
            use std::os::unix::fs::MetadataExt as _;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let inode = (0, 0);
        Some(Stamp { len: meta.len(), modified: meta.modified().ok()?, inode })
    }

    /// Whether the file was last written long enough ago for the stamp to tell a later write.
    fn settled(&self) -> bool {
        SystemTime::now().duration_since(self.modified).is_ok_and(|age| age > RACY)
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

#[cfg(test)]
mod tests {
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

    fn set_modified(path: &Path, ago: Duration) {
        let file = std::fs::File::options().write(true).open(path).unwrap_or_else(|e| panic!("open: {e}"));
        file.set_modified(SystemTime::now() - ago).unwrap_or_else(|e| panic!("set_modified: {e}"));
    }

    #[test]
    fn an_unchanged_lock_is_parsed_once_and_every_write_is_seen() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let path = dir.path().join("tools.lock");
        assert_eq!(read_lock(&path).map(|l| tools(&l)).ok(), Some(vec![]), "missing: empty");

        std::fs::write(&path, lock_text("aaaa")).unwrap_or_else(|e| panic!("write: {e}"));
        set_modified(&path, Duration::from_secs(60));
        assert_eq!(read_lock(&path).map(|l| tools(&l)).ok(), Some(vec!["aaaa".to_string()]));
        assert!(PARSED.lock().map(|p| p.contains_key(&path)).unwrap_or(false), "a settled stamp is kept");

        // The same length written in place, just now: a new modification time, seen.
        std::fs::write(&path, lock_text("bbbb")).unwrap_or_else(|e| panic!("write: {e}"));
        assert_eq!(read_lock(&path).map(|l| tools(&l)).ok(), Some(vec!["bbbb".to_string()]));
        assert!(
            !PARSED.lock().map(|p| p.contains_key(&path)).unwrap_or(true),
            "a stamp this recent is not trusted: a second write in the same tick is read"
        );
        std::fs::write(&path, lock_text("cccc")).unwrap_or_else(|e| panic!("write: {e}"));
        assert_eq!(read_lock(&path).map(|l| tools(&l)).ok(), Some(vec!["cccc".to_string()]));

        // Replaced by a rename with the very same length and time: another inode, seen.
        set_modified(&path, Duration::from_secs(60));
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
