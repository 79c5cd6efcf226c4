//! `.toolport/.gitignore`: the workspace folder is meant to be committed (`workspace.json`,
//! `tools.lock`), but the lock files the edits take beside them (`workspace.json.lock`,
//! `tools.lock.lock`) are each machine's own, and a `git add .toolport` must not pick them up.
//! The file is written when the folder gets its first lock file, and completed when a lock file
//! is made there and a line is missing: lines are only ever appended, so a user's own rules
//! stay as they are, and the file is replaced by a rename, never half-written.

use std::io::{self, Write as _};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

use crate::paths::{TOOLS_LOCK_FILE, WORKSPACE_FILE};

/// The ignore file's name in `.toolport/`.
const GITIGNORE: &str = ".gitignore";
/// The comment written above the lines of a new file.
const HEADER: &str =
    "# toolport's lock files: each machine's own (the rest of .toolport/ is meant to be committed)";

/// The lines `.toolport/.gitignore` must have: one per lock file toolport makes there.
pub fn ignored_lines() -> [String; 2] {
    [format!("{TOOLS_LOCK_FILE}.lock"), format!("{WORKSPACE_FILE}.lock")]
}

/// [`ensure`] on the folder at `folder` (the workspace's `.toolport/`). A failure is logged
/// (at debug: a folder that cannot be written fails the lock file next, with its own words),
/// never the edit's: the lock works without the ignore file.
pub fn ensure_at(folder: &Path) {
    let outcome = Dir::open_ambient_dir(folder, ambient_authority()).and_then(|dir| ensure(&dir));
    if let Err(e) = outcome {
        tracing::debug!("cannot complete {}: {e}", folder.join(GITIGNORE).display());
    }
}

/// Appends to `dir`'s `.gitignore` the lines of [`ignored_lines`] it lacks (creating it with a
/// comment when missing), by writing a temporary file beside it and renaming it over. A
/// `.gitignore` that is a symlink is left alone: replacing it would break the link.
pub fn ensure(dir: &Dir) -> io::Result<()> {
    let (old, perms) = match dir.symlink_metadata(GITIGNORE) {
        Ok(meta) if meta.is_symlink() => return Ok(()),
        Ok(meta) => (Some(dir.read_to_string(GITIGNORE)?), Some(meta.permissions())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => (None, None),
        Err(e) => return Err(e),
    };
    let Some(text) = completed(old.as_deref()) else { return Ok(()) };
    let tmp = temp_name();
    let written = (|| {
        let mut file = dir.open_with(&tmp, OpenOptions::new().write(true).create_new(true))?;
        file.write_all(text.as_bytes())?;
        if let Some(perms) = perms {
            file.set_permissions(perms)?;
        }
        file.sync_all()?;
        dir.rename(&tmp, dir, GITIGNORE)
    })();
    if written.is_err() {
        let _ = dir.remove_file(&tmp);
    }
    written
}

/// A temporary name beside the file, distinct per process and per write.
fn temp_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(".{GITIGNORE}.{}.{}.tmp", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// `old` with the missing lines appended (a new file starts with [`HEADER`]); `None` when
/// nothing is missing. A line counts as there when a line of the file, trimmed, is exactly it.
fn completed(old: Option<&str>) -> Option<String> {
    let have = |line: &str| old.is_some_and(|o| o.lines().any(|l| l.trim() == line));
    let missing: Vec<String> = ignored_lines().into_iter().filter(|l| !have(l)).collect();
    if missing.is_empty() {
        return None;
    }
    let mut text = match old {
        Some(old) if old.is_empty() || old.ends_with('\n') => old.to_string(),
        Some(old) => format!("{old}\n"),
        None => format!("{HEADER}\n"),
    };
    for line in missing {
        text.push_str(&line);
        text.push('\n');
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_names_both_lock_files_under_a_comment() {
        assert_eq!(
            completed(None).as_deref(),
            Some(format!("{HEADER}\ntools.lock.lock\nworkspace.json.lock\n").as_str())
        );
    }

    #[test]
    fn a_users_file_keeps_its_lines_and_gets_only_the_missing_ones() {
        assert_eq!(
            completed(Some("secret.env\n  tools.lock.lock  ")).as_deref(),
            Some("secret.env\n  tools.lock.lock  \nworkspace.json.lock\n")
        );
        assert_eq!(completed(Some("a\ntools.lock.lock\nworkspace.json.lock\n")), None);
    }

    #[test]
    fn ensure_appends_once_and_leaves_a_symlink_alone() -> io::Result<()> {
        let temp = tempfile::tempdir()?;
        let dir = Dir::open_ambient_dir(temp.path(), ambient_authority())?;
        std::fs::write(temp.path().join(GITIGNORE), "mine\n")?;
        ensure(&dir)?;
        ensure(&dir)?;
        let text = std::fs::read_to_string(temp.path().join(GITIGNORE))?;
        assert_eq!(text, "mine\ntools.lock.lock\nworkspace.json.lock\n");
        let names: Vec<String> = std::fs::read_dir(temp.path())?
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect();
        assert_eq!(names, [GITIGNORE], "no temporary file is left");

        let linked = tempfile::tempdir()?;
        std::os::unix::fs::symlink(temp.path().join(GITIGNORE), linked.path().join(GITIGNORE))?;
        std::fs::write(temp.path().join(GITIGNORE), "mine\n")?;
        ensure(&Dir::open_ambient_dir(linked.path(), ambient_authority())?)?;
        assert_eq!(std::fs::read_to_string(temp.path().join(GITIGNORE))?, "mine\n");
        Ok(())
    }
}
