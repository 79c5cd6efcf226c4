//! The folder of results too large for a model's context (`<home>/results/`; the book's
//! `docs/src/configure/calls.md`, "Large results"): each one kept whole under a random id, so the
//! model can be handed the beginning and a way to the rest. Files are written atomically (a
//! temporary file in the folder, then a rename), so a reader never sees half a result; the folder
//! is kept under a byte bound by removing the oldest results first. Ids are 128 random bits in hex
//! and are checked before they name a file: a URI a client made up cannot reach outside the folder.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context as _, Result};

/// How a stored result is named to an MCP client: `toolport://results/<id>`.
pub const URI_PREFIX: &str = "toolport://results/";
/// The folder's default bound: 512 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 512 * 1024 * 1024;
/// Random bytes in an id (32 hex digits): unguessable, so a stored result is found only by
/// whoever was handed its id.
const ID_BYTES: usize = 16;
/// A temporary file this old is a write that never finished (the writer died): pruned too.
const STALE_TEMP: Duration = Duration::from_secs(3600);
/// What every temporary file's name starts with (never a valid id's first character).
const TEMP_PREFIX: &str = ".partial-";

/// What a stored file holds, which fixes its extension and the MIME type it is served as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredKind {
    /// A text block's text, byte for byte as the server sent it: `<id>.txt`.
    Text,
    /// Any other content block (an image's or audio's base64, an embedded resource) as its
    /// JSON: `<id>.json`.
    Json,
}

impl StoredKind {
    const ALL: [StoredKind; 2] = [StoredKind::Text, StoredKind::Json];

    fn extension(self) -> &'static str {
        match self {
            Self::Text => "txt",
            Self::Json => "json",
        }
    }

    /// The MIME type `resources/read` and the resource link give it.
    pub fn mime_type(self) -> &'static str {
        match self {
            Self::Text => "text/plain",
            Self::Json => "application/json",
        }
    }
}

/// One result in the folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    /// 32 lower-case hex digits.
    pub id: String,
    /// The file, `<dir>/<id>.txt` or `<dir>/<id>.json`.
    pub path: PathBuf,
    /// What the file holds.
    pub kind: StoredKind,
    /// Its size.
    pub bytes: u64,
}

impl Stored {
    /// `toolport://results/<id>`.
    pub fn uri(&self) -> String {
        format!("{URI_PREFIX}{}", self.id)
    }
}

/// Why a stored result cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Not 32 lower-case hex digits: nothing this host ever handed out.
    #[error("not a stored result id: {0:?}")]
    BadId(String),
    /// A well-formed id with no file: never stored here, or removed to keep the bound.
    #[error("no stored result {id} in {dir} (results are removed oldest first to keep the folder small)")]
    Missing {
        /// The id asked for.
        id: String,
        /// The folder looked in.
        dir: PathBuf,
    },
    /// The file is there but could not be read.
    #[error("cannot read the stored result {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// The bounded folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultsStore {
    dir: PathBuf,
    max_bytes: u64,
}

impl ResultsStore {
    /// The folder `dir`, holding at most `max_bytes` (beyond the newest result, see
    /// [`ResultsStore::put`]).
    pub fn new(dir: impl Into<PathBuf>, max_bytes: u64) -> Self {
        Self { dir: dir.into(), max_bytes }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stores `bytes` under a new id, then removes the oldest other results until the folder
    /// is within its bound. The new result itself is never removed, even when it alone is
    /// over the bound: the model was just told where it is.
    pub fn put(&self, bytes: &[u8], kind: StoredKind) -> Result<Stored> {
        private_dir(&self.dir)?;
        let id = new_id()?;
        let path = self.dir.join(format!("{id}.{}", kind.extension()));
        let mut builder = tempfile::Builder::new();
        // tempfile's default too; said here because the rename keeps it and it is the promise.
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600));
        let mut temp = builder
            .prefix(TEMP_PREFIX)
            .tempfile_in(&self.dir)
            .with_context(|| format!("cannot create a file in {}", self.dir.display()))?;
        temp.write_all(bytes).with_context(|| format!("cannot write {}", temp.path().display()))?;
        temp.as_file().sync_all().with_context(|| format!("cannot write {}", temp.path().display()))?;
        temp.persist(&path).with_context(|| format!("cannot move the result to {}", path.display()))?;
        self.prune(&path);
        Ok(Stored { id, path, kind, bytes: bytes.len() as u64 })
    }

    /// The stored result `id` (as [`Stored::id`] or the whole `toolport://results/<id>`).
    pub fn read(&self, id: &str) -> Result<(String, StoredKind), ReadError> {
        let id = id.strip_prefix(URI_PREFIX).unwrap_or(id);
        if !is_id(id) {
            return Err(ReadError::BadId(id.to_string()));
        }
        for kind in StoredKind::ALL {
            let path = self.dir.join(format!("{id}.{}", kind.extension()));
            match std::fs::read_to_string(&path) {
                Ok(text) => return Ok((text, kind)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => return Err(ReadError::Io { path, source }),
            }
        }
        Err(ReadError::Missing { id: id.to_string(), dir: self.dir.clone() })
    }

    /// Removes the oldest results (by modification time) until the folder holds at most the
    /// bound, never `keep`; the results it keeps are made 0600 where they were not. Another
    /// process pruning at the same time is harmless: a file already gone is skipped. Failures
    /// are logged, not returned: the result is stored.
    fn prune(&self, keep: &Path) {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) => {
                tracing::warn!("cannot list {} to keep it small: {e}", self.dir.display());
                return;
            }
        };
        let now = SystemTime::now();
        let mut files: Vec<(SystemTime, PathBuf, u64)> = Vec::new();
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            if !meta.is_file() {
                continue;
            }
            if name.starts_with(TEMP_PREFIX) {
                // Someone else's write in progress counts only once it is old enough to be dead.
                if now.duration_since(modified).is_ok_and(|age| age > STALE_TEMP) {
                    remove(&entry.path());
                }
                continue;
            }
            if is_result_name(&name) {
                private_file(&entry.path(), &meta);
                files.push((modified, entry.path(), meta.len()));
            }
        }
        let mut total: u64 = files.iter().map(|(_, _, len)| len).sum();
        files.sort();
        for (_, path, len) in files {
            if total <= self.max_bytes {
                break;
            }
            if path != keep {
                remove(&path);
                total = total.saturating_sub(len);
            }
        }
    }
}

fn remove(path: &Path) {
    match std::fs::remove_file(path) {
        Ok(()) => tracing::debug!("removed the stored result {}", path.display()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!("cannot remove {}: {e}", path.display()),
    }
}

/// The folder, readable only by its owner: results can hold whatever a tool read. Created
/// 0700; one that already exists with another mode (made by hand, by an older toolport, or
/// under a loose umask) is made 0700 when it is ours, and refused when it is not: its owner
/// could read every result and replace any before it is served. Checked on every store, so a
/// folder loosened later is tightened again. As the compiled cache's folder
/// (`plugin/cache_trust.rs`), a link is followed: a folder moved to another disk keeps
/// working.
fn private_dir(dir: &Path) -> Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
        let meta = std::fs::metadata(dir).with_context(|| format!("cannot inspect {}", dir.display()))?;
        if !meta.is_dir() {
            anyhow::bail!("{} is not a folder", dir.display());
        }
        let me = rustix::process::geteuid().as_raw();
        if meta.uid() != me {
            anyhow::bail!("{} is owned by uid {}, not by you (uid {me})", dir.display(), meta.uid());
        }
        let mode = meta.mode() & 0o777;
        if mode != 0o700 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .with_context(|| format!("cannot make {} private (mode {mode:o})", dir.display()))?;
            tracing::info!("made {} private (mode {mode:o} → 700)", dir.display());
        }
    }
    Ok(())
}

/// A result file readable by others (copied in, or loosened by hand) made 0600 again, as
/// every file this store writes is. Failures are logged: the result is still where it is.
fn private_file(path: &Path, meta: &std::fs::Metadata) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = meta.permissions().mode() & 0o777;
        if mode != 0o600 {
            match std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)) {
                Ok(()) => tracing::info!("made {} private (mode {mode:o} → 600)", path.display()),
                Err(e) => tracing::warn!("cannot make {} private (mode {mode:o}): {e}", path.display()),
            }
        }
    }
    #[cfg(not(unix))]
    let _ = (path, meta);
}

/// 32 lower-case hex digits from the OS's randomness.
fn new_id() -> Result<String> {
    let mut bytes = [0u8; ID_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness for a result id: {e}"))?;
    Ok(hex::encode(bytes))
}

/// Exactly what [`new_id`] makes: nothing else names a file.
fn is_id(id: &str) -> bool {
    id.len() == ID_BYTES * 2 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `<id>.txt` or `<id>.json`: the only files pruning counts or removes.
fn is_result_name(name: &str) -> bool {
    StoredKind::ALL.iter().any(|kind| {
        name.strip_suffix(kind.extension()).and_then(|rest| rest.strip_suffix('.')).is_some_and(is_id)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn age(path: &Path, seconds_ago: u64) -> anyhow::Result<()> {
        let file = std::fs::File::options().write(true).open(path)?;
        file.set_modified(SystemTime::now() - Duration::from_secs(seconds_ago))?;
        Ok(())
    }

    #[test]
    fn ids_are_random_hex_and_the_file_is_what_was_put() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let store = ResultsStore::new(tmp.path().join("results"), DEFAULT_MAX_BYTES);
        let a = store.put("héllo\r\n\u{0}".as_bytes(), StoredKind::Text)?;
        let b = store.put(b"{}", StoredKind::Json)?;
        assert!(is_id(&a.id) && is_id(&b.id) && a.id != b.id, "{a:?} {b:?}");
        assert_eq!(a.path, tmp.path().join("results").join(format!("{}.txt", a.id)));
        assert_eq!(std::fs::read(&a.path)?, "héllo\r\n\u{0}".as_bytes());
        assert_eq!(a.uri(), format!("toolport://results/{}", a.id));
        assert_eq!(store.read(&a.uri())?, ("héllo\r\n\u{0}".to_string(), StoredKind::Text));
        assert_eq!(store.read(&b.id)?, ("{}".to_string(), StoredKind::Json));
        let leftovers: Vec<_> = std::fs::read_dir(tmp.path().join("results"))?
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(TEMP_PREFIX))
            .collect();
        assert!(leftovers.is_empty(), "a temporary file was left: {leftovers:?}");
        Ok(())
    }

    #[test]
    fn only_an_id_this_store_makes_names_a_file() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let dir = tmp.path().join("results");
        std::fs::create_dir_all(&dir)?;
        std::fs::write(tmp.path().join("secret.txt"), "secret")?;
        let store = ResultsStore::new(&dir, DEFAULT_MAX_BYTES);
        let hex = "0123456789abcdef0123456789abcdef";
        for bad in [
            "../secret",
            "..%2Fsecret",
            "",
            "/etc/passwd",
            &hex.to_uppercase(),
            &hex[..31],
            &format!("{hex}0"),
        ] {
            assert!(matches!(store.read(bad), Err(ReadError::BadId(_))), "{bad:?} was not refused");
        }
        let traversal = format!("{}../secret", &hex[..23]);
        assert_eq!(traversal.len(), 32);
        assert!(matches!(store.read(&traversal), Err(ReadError::BadId(_))));
        let missing = store.read(hex).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(missing.starts_with(&format!("no stored result {hex} in {}", dir.display())), "{missing}");
        Ok(())
    }

    #[test]
    fn the_oldest_results_go_first_and_the_newest_always_stays() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let dir = tmp.path().join("results");
        let store = ResultsStore::new(&dir, 250);
        let first = store.put(&[b'a'; 100], StoredKind::Text)?;
        age(&first.path, 30)?;
        let second = store.put(&[b'b'; 100], StoredKind::Text)?;
        age(&second.path, 20)?;
        // 300 bytes > 250: the oldest goes.
        let third = store.put(&[b'c'; 100], StoredKind::Json)?;
        assert!(!first.path.exists() && second.path.exists() && third.path.exists());
        age(&third.path, 10)?;
        // Alone over the bound: everything older goes, the new one stays.
        let huge = store.put(&[b'd'; 400], StoredKind::Text)?;
        assert!(!second.path.exists() && !third.path.exists() && huge.path.exists());
        // Files that are not results are neither counted nor removed.
        std::fs::write(dir.join("notes.md"), [b'x'; 1000])?;
        let last = store.put(&[b'e'; 10], StoredKind::Text)?;
        assert!(dir.join("notes.md").exists() && last.path.exists() && !huge.path.exists());
        Ok(())
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::metadata(path).map(|m| m.permissions().mode() & 0o777).unwrap_or_default()
    }

    #[cfg(unix)]
    #[test]
    fn a_loose_folder_of_ours_is_tightened_and_someone_elses_refused() -> anyhow::Result<()> {
        use std::os::unix::fs::PermissionsExt as _;
        let tmp = tempfile::tempdir()?;
        let dir = tmp.path().join("results");
        std::fs::create_dir(&dir)?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))?;
        let store = ResultsStore::new(&dir, DEFAULT_MAX_BYTES);
        let first = store.put(b"one", StoredKind::Text)?;
        assert_eq!((mode(&dir), mode(&first.path)), (0o700, 0o600));
        std::fs::set_permissions(&first.path, std::fs::Permissions::from_mode(0o644))?;
        let second = store.put(b"two", StoredKind::Json)?;
        assert_eq!((mode(&first.path), mode(&second.path)), (0o600, 0o600));
        // Someone else's folder (only root can make one here): refused, nothing written.
        if rustix::process::geteuid().is_root() {
            let theirs = tmp.path().join("theirs");
            std::fs::create_dir(&theirs)?;
            std::os::unix::fs::chown(&theirs, Some(65534), None)?;
            let err = ResultsStore::new(&theirs, DEFAULT_MAX_BYTES).put(b"x", StoredKind::Text);
            let err = err.err().map(|e| e.to_string()).unwrap_or_default();
            assert_eq!(err, format!("{} is owned by uid 65534, not by you (uid 0)", theirs.display()));
            assert!(std::fs::read_dir(&theirs)?.next().is_none());
        }
        Ok(())
    }

    #[test]
    fn a_stale_temporary_file_is_removed_a_fresh_one_kept() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let dir = tmp.path().join("results");
        std::fs::create_dir_all(&dir)?;
        let stale = dir.join(format!("{TEMP_PREFIX}old"));
        let fresh = dir.join(format!("{TEMP_PREFIX}new"));
        std::fs::write(&stale, "x")?;
        std::fs::write(&fresh, "x")?;
        age(&stale, 2 * 3600)?;
        ResultsStore::new(&dir, DEFAULT_MAX_BYTES).put(b"r", StoredKind::Text)?;
        assert!(!stale.exists() && fresh.exists());
        Ok(())
    }
}
