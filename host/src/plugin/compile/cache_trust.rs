//! Whether the compiled cache may be used at all, and the key that authenticates its entries.
//!
//! Loading an entry is an `unsafe` deserialize of machine code, so the host uses a cache only
//! when no one but the user can have put bytes there: the folder must be the user's own and
//! writable by no one else (created 0700), and every entry carries an HMAC-SHA256 under a key
//! that lives *outside* the folder (`<home>/cache.key`, 0600), so a folder that was copied,
//! shared or written by another program still cannot hand the host an entry the host did not
//! write. When any check fails the host compiles in memory and says why, once.

use std::fs::{DirBuilder, File};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};

use crate::plugin::SetupError;

/// Bytes of the MAC key: the HMAC-SHA256 output size; a longer key adds nothing.
pub(in crate::plugin) const KEY_LEN: usize = 32;

/// The secret that authenticates this user's cache entries.
pub(in crate::plugin) struct Key(pub(in crate::plugin) [u8; KEY_LEN]);

/// A secret is never printed, not even in a debug dump of the cache.
impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(***)")
    }
}

/// Where the key of the cache in `dir` lives: beside the folder, never in it (`<home>/cache`
/// → `<home>/cache.key`), so whoever can replace the folder still cannot read or replace it.
pub(in crate::plugin) fn key_path(dir: &Path) -> PathBuf {
    let name = dir.file_name().map_or_else(|| "cache".into(), |n| n.to_string_lossy().into_owned());
    dir.with_file_name(format!("{name}.key"))
}

/// Makes sure `dir` is a folder only the user can write (creating it 0700) and loads the key,
/// creating it on first use. The error says which check failed, for the one warning.
pub(in crate::plugin) fn open(dir: &Path) -> Result<Key, SetupError> {
    private_dir(dir)?;
    let path = key_path(dir);
    match read_key(&path)? {
        Some(key) => Ok(key),
        None => create_key(&path),
    }
}

/// Opens `path` without following a symbolic link (a link is `ELOOP`, an error like any
/// other) and without blocking on a FIFO planted in its place.
pub(in crate::plugin) fn open_no_follow(path: &Path) -> std::io::Result<File> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    Ok(File::from(rustix::fs::open(path, flags, Mode::empty())?))
}

fn private_dir(dir: &Path) -> Result<(), SetupError> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| SetupError(format!("cannot create {}: {e}", parent.display())))?;
    }
    match DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => return Err(SetupError(format!("cannot create {}: {e}", dir.display()))),
    }
    let meta =
        std::fs::metadata(dir).map_err(|e| SetupError(format!("cannot inspect {}: {e}", dir.display())))?;
    if !meta.is_dir() {
        return Err(SetupError(format!("{} is not a folder", dir.display())));
    }
    owned_by_user(dir, &meta)?;
    if meta.mode() & 0o022 != 0 {
        return Err(SetupError(format!(
            "{} can be written by other users (mode {:o}); run `chmod go-w` on it",
            dir.display(),
            meta.mode() & 0o777
        )));
    }
    Ok(())
}

fn owned_by_user(path: &Path, meta: &std::fs::Metadata) -> Result<(), SetupError> {
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(SetupError(format!(
            "{} is owned by uid {}, not by you (uid {me})",
            path.display(),
            meta.uid()
        )));
    }
    Ok(())
}

/// The key at `path`; `None` when there is none yet. A key that is a link, not a regular
/// file, someone else's, readable by others or of the wrong length is refused: anyone who can
/// read it can forge entries.
fn read_key(path: &Path) -> Result<Option<Key>, SetupError> {
    let mut file = match open_no_follow(path) {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(SetupError(format!("cannot open {}: {e}", path.display()))),
    };
    let meta = file.metadata().map_err(|e| SetupError(format!("cannot inspect {}: {e}", path.display())))?;
    if !meta.is_file() {
        return Err(SetupError(format!("{} is not a regular file", path.display())));
    }
    owned_by_user(path, &meta)?;
    if meta.mode() & 0o077 != 0 {
        return Err(SetupError(format!(
            "{} can be read or written by other users (mode {:o}); delete it to get a new one",
            path.display(),
            meta.mode() & 0o777
        )));
    }
    // One byte more than a key, to tell a long file from a key.
    let mut bytes = Vec::with_capacity(KEY_LEN + 1);
    (&mut file)
        .take(KEY_LEN as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| SetupError(format!("cannot read {}: {e}", path.display())))?;
    let key: [u8; KEY_LEN] = bytes.try_into().map_err(|_| {
        SetupError(format!("{} is not a cache key; delete it to get a new one", path.display()))
    })?;
    Ok(Some(Key(key)))
}

/// Writes a fresh random key to `path` (0600, the temporary file's mode) in one step: it
/// appears complete or not at all. When another toolport created it first, that key wins.
fn create_key(path: &Path) -> Result<Key, SetupError> {
    let mut key = [0u8; KEY_LEN];
    getrandom::fill(&mut key).map_err(|e| SetupError(format!("no randomness for a cache key: {e}")))?;
    let parent = path.parent().unwrap_or(Path::new("."));
    let write = || -> std::io::Result<tempfile::NamedTempFile> {
        let mut tmp = tempfile::NamedTempFile::new_in(parent)?;
        tmp.write_all(&key)?;
        tmp.as_file().sync_all()?;
        Ok(tmp)
    };
    let tmp = write().map_err(|e| SetupError(format!("cannot write {}: {e}", path.display())))?;
    match tmp.persist_noclobber(path) {
        Ok(_) => Ok(Key(key)),
        Err(e) if e.error.kind() == ErrorKind::AlreadyExists => read_key(path)?
            .ok_or_else(|| SetupError(format!("{} vanished while being created", path.display()))),
        Err(e) => Err(SetupError(format!("cannot write {}: {}", path.display(), e.error))),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).map(|m| m.mode() & 0o777).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_new_cache_is_private_and_its_key_lives_beside_it() {
        let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dir = home.path().join("cache");
        let first = open(&dir).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(mode(&dir), 0o700);
        let key = home.path().join("cache.key");
        assert_eq!(key_path(&dir), key);
        assert_eq!(mode(&key), 0o600);
        let again = open(&dir).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(first.0, again.0, "the key is made once");
    }

    #[test]
    fn a_writable_folder_or_a_readable_key_is_refused() {
        let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dir = home.path().join("cache");
        open(&dir).unwrap_or_else(|e| panic!("{e}"));
        let set = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m));
        set(&dir, 0o777).unwrap_or_else(|e| panic!("{e}"));
        let err = open(&dir).err().unwrap_or_default();
        assert!(err.contains("can be written by other users (mode 777)"), "{err}");
        set(&dir, 0o755).unwrap_or_else(|e| panic!("{e}"));
        assert!(open(&dir).is_ok(), "a folder others can only read is fine");
        set(&home.path().join("cache.key"), 0o644).unwrap_or_else(|e| panic!("{e}"));
        let err = open(&dir).err().unwrap_or_default();
        assert!(err.contains("can be read or written by other users (mode 644)"), "{err}");
    }
}
