//! The only way toolport changes a config file, its own or another agent's ([`edit_text`],
//! used by the binary's `cli/clients/` for their JSON, JSONC and TOML). Every edit:
//! 1. takes an exclusive lock on a sibling lock file (`mcp.json.lock`, `workspace.json.lock`),
//!    so concurrent toolport processes queue instead of losing each other's changes
//!    (another program's file is locked in toolport's home instead, see [`LockAt`]);
//! 2. re-reads the file under the lock and edits it as a JSON document (`preserve_order`), so
//!    unknown keys and key order survive (a foreign file: as text, by its format's editor);
//! 3. refuses to touch a malformed file (the error names line and column; the bytes stay);
//! 4. writes a temporary file in the same folder, copies the old permissions (a file of
//!    secrets: owner-only, see [`Perms`]), fsyncs, renames.
//!
//! A caller that must hold the lock across several steps (an OAuth refresh: load, token
//! request, save) takes a [`FileLock`] and edits through it.
//!
//! A store that is a symlink (a dotfiles repository linking `~/.toolport/mcp.json`) is edited
//! at the link's target: lock, temporary file and rename all happen beside the target, so the
//! link stays a link and the real file never goes stale.
//!
//! The workspace file goes through a `cap_std::fs::Dir` on the workspace root (see
//! [`crate::config::workspace`]), so a `.toolport` symlink cannot redirect the write.

use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context as _;
use fs4::fs_std::FileExt as _;
use serde_json::{Map, Value};
use tempfile::NamedTempFile;

use crate::config::error::{ConfigError, EditError};
use crate::config::store::parse_json;
use crate::config::workspace::{io_error, open_workspace_dir, read_in};
use crate::paths::{WORKSPACE_DIR, WORKSPACE_FILE};

/// A JSON document's top-level object, as edits see it.
pub type Doc = Map<String, Value>;

/// Most symlinks followed to find a store's real file: Linux's own limit for one path
/// (`MAXSYMLINKS`), so a loop fails here the way `open` would fail on it.
const MAX_SYMLINK_HOPS: usize = 40;

/// Runs `edit` on the store at `path` under its lock and writes the result atomically if the
/// edit changed anything. A missing store starts as `{}` (and the home folder is created).
pub fn edit_store<T>(
    path: &Path,
    edit: impl FnOnce(&mut Doc) -> Result<T, EditError>,
) -> Result<T, EditError> {
    FileLock::acquire(path, LockAt::Beside)?.edit_doc(Perms::Keep, edit)
}

/// Where the lock file of an edit lives.
#[derive(Debug, Clone, Copy)]
pub enum LockAt<'a> {
    /// `<file>.lock` beside the file: toolport's own files.
    Beside,
    /// `<file>.lock` beside a file of the workspace's `.toolport/` (`tools.lock`), a folder
    /// meant to be committed: its `.gitignore` is completed to name the lock file first.
    BesideInWorkspace,
    /// In this folder, named after the file's real path: another program's file (a client's
    /// config in `$HOME` or a project), where a lock file beside it would be litter, or get
    /// committed with the project.
    In(&'a Path),
}

/// The one write path under [`edit_store`], open to a file of any format (other agents'
/// JSON, JSONC and TOML in the binary's `cli/clients/`). Under the lock, `edit` gets the file's real path and
/// its text as it is now (`None`: missing) and returns the new bytes, or `None` to leave it
/// alone; new bytes equal to the old are not written either. Parent folders are created.
pub fn edit_text<T>(
    path: &Path,
    lock_at: LockAt<'_>,
    edit: impl FnOnce(&Path, Option<&str>) -> Result<(Option<Vec<u8>>, T), EditError>,
) -> Result<T, EditError> {
    FileLock::acquire(path, lock_at)?.edit_text(Perms::Keep, edit)
}

/// What a write leaves as the file's permissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Perms {
    /// The old file's; a new file gets tempfile's 0600 (it may hold tokens in headers and env).
    Keep,
    /// Owner read and write at most, whatever the old file or the umask allowed: a file of
    /// secrets (`credentials.json`). An old file's group and other bits are dropped even when
    /// the edit changes nothing, so a file someone loosened is tightened by the next write.
    OwnerOnly,
}

/// An exclusive lock on a file's lock file, held until dropped: one edit's in [`edit_text`],
/// or a caller's across several steps (`auth/store.rs` holds one across an OAuth refresh:
/// the load, the token request and the save). Every edit through it re-reads the file.
///
/// `flock` locks belong to an open file, not to a process: a second `FileLock` on the same
/// file waits for the first even in the same process, so a holder must edit through its own
/// lock ([`FileLock::edit_text`]) and never take another for the same file.
#[derive(Debug)]
pub struct FileLock {
    /// The real file (the end of its symlinks): what edits read and replace.
    target: PathBuf,
    /// Open and locked; closing it (on drop) releases the lock.
    _lock: fs::File,
}

impl FileLock {
    /// Blocks until the lock on `path` is ours. The folders of the file and of the lock are
    /// created.
    pub fn acquire(path: &Path, lock_at: LockAt<'_>) -> Result<Self, EditError> {
        let target = link_target(path)?;
        fs::create_dir_all(folder(&target))
            .with_context(|| format!("cannot create {}", folder(&target).display()))?;
        let lock_path = match lock_at {
            LockAt::Beside => sibling_lock(&target),
            LockAt::BesideInWorkspace => {
                super::workspace_ignore::ensure_at(folder(&target));
                sibling_lock(&target)
            }
            LockAt::In(locks) => {
                fs::create_dir_all(locks).with_context(|| format!("cannot create {}", locks.display()))?;
                locks.join(hashed_lock_name(&target))
            }
        };
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .with_context(|| format!("cannot open the lock file {}", lock_path.display()))?;
        lock.lock_exclusive().with_context(|| format!("cannot lock {}", lock_path.display()))?;
        Ok(Self { target, _lock: lock })
    }

    /// [`edit_text`] under this lock: `edit` gets the real path and the text as it is now.
    pub fn edit_text<T>(
        &self,
        perms: Perms,
        edit: impl FnOnce(&Path, Option<&str>) -> Result<(Option<Vec<u8>>, T), EditError>,
    ) -> Result<T, EditError> {
        let path = self.target.as_path();
        let dir = folder(path);
        let (text, old_perms) = match fs::read_to_string(path) {
            Ok(text) => (Some(text), fs::metadata(path).ok().map(|m| m.permissions())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, None),
            Err(e) => return Err(ConfigError(format!("{}: cannot read: {e}", path.display())).into()),
        };
        let new_perms = match perms {
            Perms::Keep => old_perms.clone(),
            Perms::OwnerOnly => owner_only(old_perms.as_ref()),
        };
        let (bytes, out) = edit(path, text.as_deref())?;
        match bytes.filter(|b| text.as_deref().map(str::as_bytes) != Some(b.as_slice())) {
            Some(bytes) => {
                let mut tmp = NamedTempFile::new_in(dir)
                    .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
                // Before the secrets go in, so they are never readable by others, not even briefly.
                if let Some(p) = new_perms {
                    tmp.as_file()
                        .set_permissions(p)
                        .with_context(|| format!("cannot set the permissions of {}", path.display()))?;
                }
                tmp.write_all(&bytes)
                    .with_context(|| format!("cannot write a temporary file in {}", dir.display()))?;
                tmp.as_file().sync_all().context("cannot fsync the temporary file")?;
                tmp.persist(path)
                    .map_err(|e| anyhow::anyhow!("cannot replace {}: {}", path.display(), e.error))?;
                sync_dir(dir);
            }
            // Nothing to write, but a loosened file of secrets is still tightened.
            None if perms == Perms::OwnerOnly && text.is_some() && new_perms != old_perms => {
                if let Some(p) = new_perms {
                    fs::set_permissions(path, p)
                        .with_context(|| format!("cannot set the permissions of {}", path.display()))?;
                }
            }
            None => {}
        }
        Ok(out)
    }

    /// [`edit_store`] under this lock: the file as a JSON object (a missing file is `{}`).
    pub fn edit_doc<T>(
        &self,
        perms: Perms,
        edit: impl FnOnce(&mut Doc) -> Result<T, EditError>,
    ) -> Result<T, EditError> {
        self.edit_text(perms, |path, text| {
            let mut doc = top_object(path, text)?;
            let before = doc.clone();
            let out = edit(&mut doc)?;
            Ok((if doc != before { Some(render(&doc)) } else { None }, out))
        })
    }
}

/// The folder a file's temporary file and rename happen in.
fn folder(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// 0600 for a new file; an old file's mode without its group and other bits (an owner's own
/// stricter choice, such as 0400, stays).
#[cfg(unix)]
fn owner_only(old: Option<&fs::Permissions>) -> Option<fs::Permissions> {
    use std::os::unix::fs::PermissionsExt as _;
    Some(fs::Permissions::from_mode(old.map_or(0o600, |p| p.mode() & 0o600)))
}

/// Elsewhere permissions are not mode bits: the old file's are kept, a new one gets tempfile's.
#[cfg(not(unix))]
fn owner_only(old: Option<&fs::Permissions>) -> Option<fs::Permissions> {
    old.cloned()
}

/// Runs `edit` on `<root>/.toolport/workspace.json` under its lock, through a capability on the
/// root. The folder and file are only created when the edit changes something.
pub fn edit_workspace<T>(
    root: &Path,
    mut edit: impl FnMut(&mut Doc) -> Result<T, EditError>,
) -> Result<T, EditError> {
    let path = root.join(WORKSPACE_DIR).join(WORKSPACE_FILE);
    let dir = match open_workspace_dir(root, false)? {
        Some(d) => d,
        None => {
            // Nothing there yet: only create `.toolport/` when the edit would write something.
            let mut probe = Doc::new();
            let out = edit(&mut probe)?;
            if probe.is_empty() {
                return Ok(out);
            }
            open_workspace_dir(root, true)?
                .ok_or_else(|| ConfigError(format!("cannot create {}", root.join(WORKSPACE_DIR).display())))?
        }
    };
    if let Err(e) = super::workspace_ignore::ensure(&dir) {
        tracing::debug!("cannot complete {}: {e}", root.join(WORKSPACE_DIR).join(".gitignore").display());
    }
    let lock_name = format!("{WORKSPACE_FILE}.lock");
    let lock = dir
        .open_with(&lock_name, cap_std::fs::OpenOptions::new().create(true).truncate(false).write(true))
        .map_err(|e| io_error(root, &root.join(WORKSPACE_DIR).join(&lock_name), e))?
        .into_std();
    lock.lock_exclusive().with_context(|| format!("cannot lock {}", path.display()))?;

    let text = read_in(&dir, root)?;
    let mut doc = top_object(&path, text.as_deref())?;
    let before = doc.clone();
    let out = edit(&mut doc)?;
    if doc != before {
        let perms = dir.metadata(WORKSPACE_FILE).ok().map(|m| m.permissions());
        let tmp_name = temp_name(WORKSPACE_FILE);
        let result = (|| -> std::io::Result<()> {
            let mut f =
                dir.open_with(&tmp_name, cap_std::fs::OpenOptions::new().write(true).create_new(true))?;
            f.write_all(&render(&doc))?;
            if let Some(p) = perms {
                f.set_permissions(p)?;
            }
            f.sync_all()?;
            dir.rename(&tmp_name, &dir, WORKSPACE_FILE)
        })();
        if let Err(e) = result {
            let _ = dir.remove_file(&tmp_name);
            return Err(io_error(root, &path, e).into());
        }
    }
    Ok(out)
}

/// The file a write to `path` must replace: `path` itself, or the end of its chain of
/// symlinks (which may not exist yet: a dangling link is where the new store goes). Relative
/// targets are read against the link's own folder, as the kernel reads them.
fn link_target(path: &Path) -> Result<PathBuf, ConfigError> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_SYMLINK_HOPS {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let next = fs::read_link(&current).map_err(|e| {
                    ConfigError(format!("{}: cannot read the symlink: {e}", current.display()))
                })?;
                current = match current.parent() {
                    Some(parent) if next.is_relative() => parent.join(next),
                    _ => next,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(ConfigError(format!("{}: more than {MAX_SYMLINK_HOPS} symlinks to follow (a loop?)", path.display())))
}

fn top_object(path: &Path, text: Option<&str>) -> Result<Doc, ConfigError> {
    match text {
        None => Ok(Doc::new()),
        Some(t) => match parse_json(path, t)? {
            Value::Object(m) => Ok(m),
            _ => Err(ConfigError(format!("{}: the top level must be a JSON object", path.display()))),
        },
    }
}

/// Two-space pretty JSON with a final newline, the way people hand-write these files.
fn render(doc: &Doc) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(doc).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// `<file name>.<first 16 hex digits of the sha256 of the full path>.lock`: readable, and
/// distinct for two `mcp.json` files of different clients.
fn hashed_lock_name(path: &Path) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(path.as_os_str().as_encoded_bytes());
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    format!("{name}.{}.lock", &hex::encode(digest)[..16])
}

fn sibling_lock(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".lock");
    path.with_file_name(name)
}

fn temp_name(base: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(".{base}.{}.{}.tmp", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// Makes the rename durable; best-effort, since not every filesystem lets a folder be fsynced.
fn sync_dir(dir: &Path) {
    if let Ok(d) = fs::File::open(dir)
        && let Err(e) = d.sync_all()
    {
        tracing::debug!(dir = %dir.display(), "fsync of the folder failed: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unchanged_edit_writes_nothing() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let path = tmp.path().join("mcp.json");
        edit_store(&path, |_| Ok(()))?;
        assert!(!path.exists());
        Ok(())
    }

    #[test]
    fn keeps_unknown_keys_order_and_permissions() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let path = tmp.path().join("mcp.json");
        fs::write(&path, r#"{"z":1,"mcpServers":{"a":{"command":"x","x-extra":true}},"a":2}"#)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o640))?;
        }
        edit_store(&path, |doc| {
            doc.insert("added".into(), Value::Bool(true));
            Ok(())
        })?;
        let text = fs::read_to_string(&path)?;
        let v: Value = serde_json::from_str(&text)?;
        let keys: Vec<_> = v.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
        assert_eq!(keys, ["z", "mcpServers", "a", "added"]);
        assert_eq!(v["mcpServers"]["a"]["x-extra"], Value::Bool(true));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(fs::metadata(&path)?.permissions().mode() & 0o777, 0o640);
        }
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_store_is_written_through_to_its_target() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let dotfiles = tmp.path().join("dotfiles");
        fs::create_dir(&dotfiles)?;
        fs::write(dotfiles.join("mcp.json"), r#"{"keep":1}"#)?;
        let home = tmp.path().join("home");
        fs::create_dir(&home)?;
        // A chain with a relative hop: home/mcp.json -> home/via.json -> ../dotfiles/mcp.json.
        std::os::unix::fs::symlink("../dotfiles/mcp.json", home.join("via.json"))?;
        std::os::unix::fs::symlink(home.join("via.json"), home.join("mcp.json"))?;
        edit_store(&home.join("mcp.json"), |doc| {
            doc.insert("added".into(), Value::Bool(true));
            Ok(())
        })?;
        assert!(fs::symlink_metadata(home.join("mcp.json"))?.file_type().is_symlink());
        assert!(fs::symlink_metadata(home.join("via.json"))?.file_type().is_symlink());
        let v: Value = serde_json::from_str(&fs::read_to_string(dotfiles.join("mcp.json"))?)?;
        assert_eq!(v, serde_json::json!({"keep": 1, "added": true}));
        assert!(dotfiles.join("mcp.json.lock").exists(), "the lock sits beside the target");
        assert!(!home.join("mcp.json.lock").exists());
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn a_dangling_link_creates_its_target_and_a_loop_is_refused() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let link = tmp.path().join("mcp.json");
        std::os::unix::fs::symlink("real.json", &link)?;
        edit_store(&link, |doc| {
            doc.insert("x".into(), Value::Null);
            Ok(())
        })?;
        assert!(fs::symlink_metadata(&link)?.file_type().is_symlink());
        assert_eq!(fs::read_to_string(tmp.path().join("real.json"))?, "{\n  \"x\": null\n}\n");
        let looped = tmp.path().join("loop.json");
        std::os::unix::fs::symlink("loop.json", &looped)?;
        let err = edit_store(&looped, |_| Ok(())).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.ends_with("loop.json: more than 40 symlinks to follow (a loop?)"), "{err}");
        Ok(())
    }

    #[test]
    fn a_foreign_file_is_locked_elsewhere_and_the_same_text_is_not_rewritten() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let (path, locks) = (tmp.path().join("client/config.toml"), tmp.path().join("locks"));
        edit_text(&path, LockAt::In(&locks), |_, text| {
            assert_eq!(text, None);
            Ok((Some(b"a = 1\n".to_vec()), ()))
        })?;
        let modified = fs::metadata(&path)?.modified()?;
        edit_text(&path, LockAt::In(&locks), |_, text| Ok((text.map(|t| t.as_bytes().to_vec()), ())))?;
        assert_eq!(fs::metadata(&path)?.modified()?, modified, "the same bytes are not written again");
        assert_eq!(fs::read_to_string(&path)?, "a = 1\n");
        assert!(!tmp.path().join("client/config.toml.lock").exists());
        let names: Vec<_> = fs::read_dir(&locks)?.filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
        assert_eq!(names.len(), 1);
        assert!(names[0].to_string_lossy().starts_with("config.toml."), "{names:?}");
        Ok(())
    }

    #[test]
    fn malformed_file_is_not_overwritten() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let path = tmp.path().join("mcp.json");
        fs::write(&path, "{\"mcpServers\": {\n")?;
        let err = edit_store(&path, |doc| {
            doc.insert("x".into(), Value::Null);
            Ok(())
        });
        assert!(matches!(err, Err(EditError::Config(_))));
        assert_eq!(fs::read_to_string(&path)?, "{\"mcpServers\": {\n");
        Ok(())
    }
}
