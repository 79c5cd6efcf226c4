//! The audit log's file: appended with `O_APPEND` and mode 0600, one whole line per write;
//! rotated past a size (`calls.jsonl` → `calls.jsonl.1` → … → `calls.jsonl.<kept>`, the
//! oldest dropped), so the log never holds more than `(kept + 1) × rotate_at` bytes.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::Context;

/// One writer at a time in this process: a rotation and an append of two threads must not
/// cross. Another process may rotate at the same moment: then at worst one rotated file is
/// lost, never a line half-written (appends go to whichever file the name holds when opened).
static WRITING: Mutex<()> = Mutex::new(());

/// Appends `line` (without its newline) to `file`, rotating first when the file reached
/// `rotate_at` bytes and keeping `kept` rotated files.
pub fn append(file: &Path, line: &str, rotate_at: u64, kept: usize) -> anyhow::Result<()> {
    let _one = WRITING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    if std::fs::metadata(file).is_ok_and(|m| m.len() >= rotate_at) {
        rotate(file, kept);
    }
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut out = options.open(file).with_context(|| format!("opening {}", file.display()))?;
    let mut whole = String::with_capacity(line.len() + 1);
    whole.push_str(line);
    whole.push('\n');
    out.write_all(whole.as_bytes()).with_context(|| format!("appending to {}", file.display()))?;
    Ok(())
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
