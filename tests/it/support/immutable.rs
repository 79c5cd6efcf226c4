//! A folder nothing can write to, root included (the tests run as root, for whom no permission
//! bit stops a write): `chattr +i`, undone on drop. What a read-only mount is to a pod.

use std::path::{Path, PathBuf};

/// `path` immutable until dropped.
pub struct Immutable(PathBuf);

impl Immutable {
    /// Makes `path` (a folder) immutable, and checks that it refuses a new file: otherwise a
    /// test of an unwritable folder would prove nothing.
    pub fn new(path: &Path) -> Self {
        let ok = std::process::Command::new("chattr").arg("+i").arg(path).status();
        assert!(ok.as_ref().is_ok_and(|s| s.success()), "chattr +i {}: {ok:?}", path.display());
        let frozen = Self(path.to_path_buf());
        assert!(std::fs::write(path.join("probe"), "").is_err(), "{} still takes a file", path.display());
        frozen
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}
