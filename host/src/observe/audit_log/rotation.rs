//! The audit log's file: appended with `O_APPEND` and mode 0600, one whole line per write;
//! rotated past a size (`calls.jsonl` → `calls.jsonl.1` → … → `calls.jsonl.<kept>`, the
//! oldest dropped), so the log never holds more than `(kept + 1) × rotate_at` bytes.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::Context;

/// The file this process appends to, kept open between lines: a line costs a `stat` of the
/// name and a `write`, not a directory check, an `open` and a `close` on every call's path.
struct Open {
    path: PathBuf,
    file: File,
    /// Device and inode when opened: another process that rotated the log moved this file
    /// away, and the name then holds another.
    id: (u64, u64),
}

/// One file's appender: the file it has open. The audit writer keeps one per file it writes
/// (`observe/writer.rs`), so the log and the trail each stay open between lines.
#[derive(Default)]
pub(crate) struct Appender {
    open: Option<Open>,
}

impl Appender {
    /// Appends `lines` (whole lines, each with its newline) to `file` in one `write`,
    /// rotating first when the file reached `rotate_at` bytes and keeping `kept` rotated
    /// files. Another process may rotate at the same moment: then at worst one rotated file
    /// is lost, never a line half-written (appends go to whichever file the name held when
    /// it was last checked).
    pub(crate) fn append(
        &mut self,
        file: &Path,
        lines: &[u8],
        rotate_at: u64,
        kept: usize,
    ) -> anyhow::Result<()> {
        let named = std::fs::metadata(file).ok();
        let named = match named {
            Some(m) if m.len() >= rotate_at => {
                rotate(file, kept);
                None
            }
            other => other.map(|m| id_of(&m)),
        };
        let reusable = matches!((&self.open, named), (Some(o), Some(id)) if o.path == file && o.id == id);
        if !reusable {
            self.open = Some(open_private(file)?);
        }
        let Some(current) = self.open.as_mut() else { anyhow::bail!("no audit log open") };
        current.file.write_all(lines).with_context(|| format!("appending to {}", file.display()))?;
        Ok(())
    }
}

/// The appender of lines written without the writer's thread (the system refused one): one
/// writer at a time in this process, so a rotation and an append of two threads never cross.
static WRITING: Mutex<Appender> = Mutex::new(Appender { open: None });

/// [`Appender::append`] through the process's shared appender.
pub(crate) fn append_lines(file: &Path, lines: &[u8], rotate_at: u64, kept: usize) -> anyhow::Result<()> {
    WRITING.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).append(file, lines, rotate_at, kept)
}

/// Appends `line` (without its newline) to `file`, rotating first when the file reached
/// `rotate_at` bytes and keeping `kept` rotated files.
#[cfg(test)]
fn append(file: &Path, line: &str, rotate_at: u64, kept: usize) -> anyhow::Result<()> {
    append_lines(file, format!("{line}\n").as_bytes(), rotate_at, kept)
}

/// Opens (creating it and its folder) `file` for appending, private to the user.
fn open_private(file: &Path) -> anyhow::Result<Open> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let opened = options.open(file).with_context(|| format!("opening {}", file.display()))?;
    let id = opened.metadata().map(|m| id_of(&m)).with_context(|| format!("reading {}", file.display()))?;
    Ok(Open { path: file.to_path_buf(), file: opened, id })
}

/// A file's device and inode (on other systems: its creation time, which tells a file that
/// replaced another under the same name as well).
fn id_of(meta: &std::fs::Metadata) -> (u64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let created = meta.created().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
        (0, created.map_or(0, |d| d.as_nanos() as u64))
    }
}

/// Shifts `<file>.<n>` to `<file>.<n+1>` from the oldest down, dropping `<file>.<kept>`, and
/// moves `file` to `<file>.1`. A step that fails (a file already gone) is skipped.
fn rotate(file: &Path, kept: usize) {
    if kept == 0 {
        let _ = std::fs::remove_file(file);
        return;
    }
    let _ = std::fs::remove_file(numbered(file, kept));
    for n in (1..kept).rev() {
        let _ = std::fs::rename(numbered(file, n), numbered(file, n + 1));
    }
    let _ = std::fs::rename(file, numbered(file, 1));
}

/// `<file>.<n>`: the `n`th rotated file, 1 the newest.
pub fn numbered(file: &Path, n: usize) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_size_the_file_moves_aside_and_only_kept_files_stay() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("audit/calls.jsonl");
        // Lines of 10 bytes with their newline, rotated past 25: three lines a file.
        for i in 0..20 {
            append(&file, &format!("line-{i:03}"), 25, 2)?;
        }
        let read = |p: PathBuf| std::fs::read_to_string(p).unwrap_or_default();
        assert_eq!(read(file.clone()), "line-018\nline-019\n");
        assert_eq!(read(numbered(&file, 1)), "line-015\nline-016\nline-017\n");
        assert_eq!(read(numbered(&file, 2)), "line-012\nline-013\nline-014\n");
        assert!(!numbered(&file, 3).exists());
        let names = std::fs::read_dir(dir.path().join("audit"))?.count();
        assert_eq!(names, 3);
        Ok(())
    }

    /// The file is kept open between lines, yet a line always goes to the file the name holds:
    /// after another process moved the log aside (its rotation) or someone removed it.
    #[test]
    fn a_line_follows_the_name_when_another_moved_or_removed_the_file() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("calls.jsonl");
        append(&file, "first", 1024, 2)?;
        std::fs::rename(&file, numbered(&file, 1))?;
        append(&file, "second", 1024, 2)?;
        std::fs::remove_file(&file)?;
        append(&file, "third", 1024, 2)?;
        assert_eq!(std::fs::read_to_string(numbered(&file, 1))?, "first\n");
        assert_eq!(std::fs::read_to_string(&file)?, "third\n");
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn the_log_is_private() -> anyhow::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("calls.jsonl");
        append(&file, "{}", 1024, 1)?;
        assert_eq!(std::fs::metadata(&file)?.permissions().mode() & 0o777, 0o600);
        // A rotated file keeps its mode; the new one is created private too.
        append(&file, &"x".repeat(2000), 1024, 1)?;
        append(&file, "{}", 1024, 1)?;
        assert_eq!(std::fs::metadata(numbered(&file, 1))?.permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(&file)?.permissions().mode() & 0o777, 0o600);
        Ok(())
    }
}
