//! Reading a file again only when it changed: a file's [`Stamp`] (length, modification time,
//! inode) taken before it is read keys what was parsed from it, so an unchanged file is not
//! read and parsed again. The workspace's tool pins (3 MB of JSON at 10,000 tools, read on
//! every rebuild) and `credentials.json` (read for every HTTP request a signed-in server gets)
//! go through it.
//!
//! Only a stamp older than [`RACY`] when it was taken is trusted, so a second write within one
//! tick of the file system's clock, of the same length, is never missed (git's "racily clean"
//! rule). A file replaced by a rename (toolport's own writers, editors) is another inode.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// A write this recent may share its modification time with the next one.
const RACY: Duration = Duration::from_secs(2);

/// What was last parsed from each file, with the stamp the file had.
pub struct Parsed<T> {
    by_path: Mutex<Option<HashMap<PathBuf, (Stamp, T)>>>,
}

impl<T: Clone> Parsed<T> {
    pub const fn new() -> Self {
        Self { by_path: Mutex::new(None) }
    }

    /// What was parsed from `path` when the file is as it was then; `None` when it changed,
    /// was never parsed, or has no usable stamp (a missing file included). One `stat`.
    pub fn unchanged(&self, path: &Path) -> Option<T> {
        let stamp = Stamp::now_of(path)?;
        let by_path = self.by_path.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match by_path.as_ref()?.get(path) {
            Some((known, value)) if *known == stamp => Some(value.clone()),
            _ => None,
        }
    }

    /// `read()` of `path` (which reads and parses it, and handles its absence), unless the
    /// file is unchanged since the last time: then what that read gave.
    pub fn read_through<E>(&self, path: &Path, read: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        let stamp = Stamp::now_of(path);
        let mut by_path = self.by_path.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let by_path = by_path.get_or_insert_with(HashMap::new);
        if let Some(stamp) = stamp
            && let Some((known, value)) = by_path.get(path)
            && *known == stamp
        {
            return Ok(value.clone());
        }
        let value = read()?;
        match stamp.filter(Stamp::settled) {
            Some(stamp) => {
                by_path.insert(path.to_path_buf(), (stamp, value.clone()));
            }
            None => {
                by_path.remove(path);
            }
        }
        Ok(value)
    }
}

impl<T: Clone> Default for Parsed<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// What changes when a file is written: replaced by a rename it is another inode; written in
/// place, its length or modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: SystemTime,
    inode: (u64, u64),
}

impl Stamp {
    /// The stamp of the file at `path` now; `None` when it cannot be read or the file system
    /// keeps no modification time.
    fn now_of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
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

/// Tests: moves `path`'s modification time `ago` into the past (past [`RACY`], its stamp is
/// trusted, as a file written a while ago is).
#[cfg(test)]
pub(crate) fn backdate(path: &Path, ago: Duration) {
    let file = std::fs::File::options().write(true).open(path).unwrap_or_else(|e| panic!("open: {e}"));
    file.set_modified(SystemTime::now() - ago).unwrap_or_else(|e| panic!("set_modified: {e}"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unchanged_file_is_answered_from_its_last_read_and_a_replaced_or_fresh_one_is_not() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let path = dir.path().join("credentials.json");
        let parsed: Parsed<String> = Parsed::new();
        let read = || std::fs::read_to_string(&path);
        assert!(parsed.unchanged(&path).is_none(), "missing: nothing kept");

        std::fs::write(&path, "one").unwrap_or_else(|e| panic!("write: {e}"));
        assert_eq!(parsed.read_through(&path, read).ok().as_deref(), Some("one"));
        assert_eq!(parsed.unchanged(&path), None, "written just now: not trusted yet");

        backdate(&path, Duration::from_secs(60));
        assert_eq!(parsed.read_through(&path, read).ok().as_deref(), Some("one"));
        assert_eq!(parsed.unchanged(&path).as_deref(), Some("one"));
        assert_eq!(
            parsed.read_through(&path, || Err(std::io::Error::other("not read"))).ok().as_deref(),
            Some("one")
        );

        // Replaced by a rename, as toolport's writers do: another inode, read again.
        let next = dir.path().join("next");
        std::fs::write(&next, "two").unwrap_or_else(|e| panic!("write: {e}"));
        backdate(&next, Duration::from_secs(60));
        std::fs::rename(&next, &path).unwrap_or_else(|e| panic!("rename: {e}"));
        assert_eq!(parsed.unchanged(&path), None);
        assert_eq!(parsed.read_through(&path, read).ok().as_deref(), Some("two"));

        std::fs::remove_file(&path).unwrap_or_else(|e| panic!("remove: {e}"));
        assert_eq!(parsed.unchanged(&path), None, "removed");
    }
}
