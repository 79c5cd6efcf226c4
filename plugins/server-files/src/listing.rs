//! `list_allowed_directories`, `list_directory` and `get_file_info`.

use std::fs;
use std::path::Path;
use std::time::SystemTime;

use crate::errors::{ToolError, ToolResult};
use crate::folder::Folder;
use crate::roots::{Root, Roots};

/// Entries `list_directory` shows at most; the rest are counted.
pub const MAX_LISTED: usize = 1000;

pub fn list_allowed_directories(roots: &Roots) -> ToolResult {
    if roots.all().is_empty() {
        return Ok("No folders are granted to this server.".to_string());
    }
    let mut text = String::from("Allowed directories:");
    for root in roots.all() {
        text.push_str(&format!("\n{} ({})", root.path.display(), access(root)));
    }
    Ok(text)
}

fn access(root: &Root) -> &'static str {
    if root.writable { "read-write" } else { "read-only" }
}

/// One line per entry, `[DIR] name` or `[FILE] name` (anything that is not a folder, as
/// server-filesystem does), sorted by name.
pub fn list_directory(roots: &Roots, path: &str) -> ToolResult {
    let dir = roots.locate(path, true)?;
    let mut entries = match Folder::open(dir.root, &dir.path).entries_whole() {
        Some(entries) => entries.into_iter().map(|(name, kind)| (name, kind.is_dir())).collect(),
        None => std_listing(&dir.path)?,
    };
    if entries.is_empty() {
        return Ok(format!("{} is empty", dir.path.display()));
    }
    entries.sort();
    let total = entries.len();
    let mut text = String::new();
    for (name, is_dir) in entries.iter().take(MAX_LISTED) {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(if *is_dir { "[DIR] " } else { "[FILE] " });
        text.push_str(name);
    }
    if total > MAX_LISTED {
        text.push_str(&format!("\n… and {} more entries", total - MAX_LISTED));
    }
    Ok(text)
}

/// `list_directory`'s entries through std, each entry's error an error of the whole listing.
fn std_listing(path: &Path) -> Result<Vec<(String, bool)>, ToolError> {
    let read = fs::read_dir(path).map_err(|e| ToolError::io("list", path, &e))?;
    let mut entries: Vec<(String, bool)> = Vec::new();
    for entry in read {
        let entry = entry.map_err(|e| ToolError::io("list", path, &e))?;
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        entries.push((entry.file_name().to_string_lossy().into_owned(), is_dir));
    }
    Ok(entries)
}

pub fn get_file_info(roots: &Roots, path: &str) -> ToolResult {
    let target = roots.locate(path, true)?;
    let link = fs::symlink_metadata(&target.path).map_err(|e| ToolError::io("inspect", &target.path, &e))?;
    let meta = fs::metadata(&target.path).map_err(|e| ToolError::io("inspect", &target.path, &e))?;
    let kind = if meta.is_dir() {
        "directory"
    } else if meta.is_file() {
        "file"
    } else {
        "other"
    };
    let mut text = format!("path: {}\ntype: {kind}", target.path.display());
    if link.file_type().is_symlink() {
        text.push_str(" (through a symbolic link)");
    }
    text.push_str(&format!("\nsize: {} bytes", meta.len()));
    for (label, time) in
        [("modified", meta.modified()), ("accessed", meta.accessed()), ("created", meta.created())]
    {
        if let Ok(time) = time {
            text.push_str(&format!("\n{label}: {}", timestamp(time)));
        }
    }
    text.push_str(&format!("\nfolder: {} ({})", target.root.path.display(), access(target.root)));
    Ok(text)
}

/// RFC 3339 in UTC, to the second.
fn timestamp(time: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(time).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Whether `path` is a folder (for the tools that refuse folders).
pub fn is_dir(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_dir())
}
