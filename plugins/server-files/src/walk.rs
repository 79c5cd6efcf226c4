//! A bounded walk of a folder tree for the search tools: symbolic links are listed but never
//! followed (no loops, no way out of a root), and the walk stops after [`MAX_VISITED`] entries
//! so one call cannot scan a whole disk.

use std::borrow::Cow;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use crate::folder::{Folder, Kind};
use crate::roots::Root;

pub const MAX_VISITED: usize = 100_000;

/// What a walk saw besides the entries it handed out.
#[derive(Debug, Default)]
pub struct WalkStats {
    pub visited: usize,
    /// Folders that could not be read (permissions, the sandbox, removed meanwhile).
    pub unreadable: usize,
    /// Stopped at [`MAX_VISITED`].
    pub exhausted: bool,
}

impl WalkStats {
    /// A note for the end of a tool's text, or nothing.
    pub fn note(&self) -> String {
        let mut note = String::new();
        if self.exhausted {
            note.push_str(&format!(
                "\n(stopped after looking at {MAX_VISITED} entries: search a smaller folder)"
            ));
        }
        if self.unreadable > 0 {
            note.push_str(&format!("\n({} folders could not be read)", self.unreadable));
        }
        note
    }
}

/// One entry: its name, its kind (a symbolic link is neither a folder nor a file), and the
/// folder it is in (to read it through); its full path and its path relative to the walk's
/// start are made when asked, as most entries of a search are looked at by name and kind only.
pub struct Entry<'a> {
    dir: &'a Path,
    /// The folder's path relative to the walk's start (empty for the start).
    parent: &'a str,
    pub name: &'a str,
    pub kind: Kind,
    pub folder: &'a Folder,
}

impl Entry<'_> {
    /// The entry's full path.
    pub fn path(&self) -> PathBuf {
        self.dir.join(self.name)
    }

    /// The entry's path relative to the walk's start, `/`-separated.
    pub fn relative(&self) -> Cow<'_, str> {
        if self.parent.is_empty() {
            Cow::Borrowed(self.name)
        } else {
            Cow::Owned(format!("{}/{}", self.parent, self.name))
        }
    }
}

/// Visits every entry under `start` (a folder under `root`) depth first, names in order, until
/// `visit` breaks.
pub fn walk(root: &Root, start: &Path, mut visit: impl FnMut(&Entry<'_>) -> ControlFlow<()>) -> WalkStats {
    let mut stats = WalkStats::default();
    let mut stack: Vec<(PathBuf, String)> = vec![(start.to_path_buf(), String::new())];
    while let Some((dir, relative)) = stack.pop() {
        let folder = Folder::open(root, &dir);
        let Ok(mut entries) = folder.entries() else {
            stats.unreadable += 1;
            continue;
        };
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut subdirs = Vec::new();
        for (name, kind) in entries {
            if stats.visited >= MAX_VISITED {
                stats.exhausted = true;
                return stats;
            }
            stats.visited += 1;
            let entry = Entry { dir: &dir, parent: &relative, name: &name, kind, folder: &folder };
            if visit(&entry).is_break() {
                return stats;
            }
            if kind.is_dir() {
                subdirs.push((entry.path(), entry.relative().into_owned()));
            }
        }
        stack.extend(subdirs.into_iter().rev());
    }
    stats
}
