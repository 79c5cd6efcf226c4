//! A bounded walk of a folder tree for the search tools: symbolic links are listed but never
//! followed (no loops, no way out of a root), and the walk stops after [`MAX_VISITED`] entries
//! so one call cannot scan a whole disk.

use std::fs;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

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

/// One entry: its full path, its path relative to the walk's start (`/`-separated), its name.
pub struct Entry<'a> {
    pub path: &'a Path,
    pub relative: &'a str,
    pub name: &'a str,
    pub file_type: fs::FileType,
}

/// Visits every entry under `start` depth first, names in order, until `visit` breaks.
pub fn walk(start: &Path, mut visit: impl FnMut(&Entry<'_>) -> ControlFlow<()>) -> WalkStats {
    let mut stats = WalkStats::default();
    let mut stack: Vec<(PathBuf, String)> = vec![(start.to_path_buf(), String::new())];
    while let Some((dir, relative)) = stack.pop() {
        let Ok(read) = fs::read_dir(&dir) else {
            stats.unreadable += 1;
            continue;
        };
        let mut entries: Vec<(String, fs::FileType)> = read
            .filter_map(Result::ok)
            .filter_map(|e| Some((e.file_name().to_string_lossy().into_owned(), e.file_type().ok()?)))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut subdirs = Vec::new();
        for (name, file_type) in entries {
            if stats.visited >= MAX_VISITED {
                stats.exhausted = true;
                return stats;
            }
            stats.visited += 1;
            let path = dir.join(&name);
            let rel = if relative.is_empty() { name.clone() } else { format!("{relative}/{name}") };
            let entry = Entry { path: &path, relative: &rel, name: &name, file_type };
            if visit(&entry).is_break() {
                return stats;
            }
            if file_type.is_dir() {
                subdirs.push((path, rel));
            }
        }
        stack.extend(subdirs.into_iter().rev());
    }
    stats
}
