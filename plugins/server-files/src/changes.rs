//! The tools that change files: `write_text_file`, `move_file`, `delete_file`. Each refuses a
//! read-only root before touching it (the host's read-only preopen would refuse anyway).

use std::fs;

use crate::errors::{ToolError, ToolResult};
use crate::listing::is_dir;
use crate::roots::Roots;

/// Creates or replaces a file with `content`. The parent folder must exist.
pub fn write_text_file(roots: &Roots, path: &str, content: &str) -> ToolResult {
    let file = roots.locate(path, true)?;
    file.writable()?;
    if is_dir(&file.path) {
        return Err(ToolError::failed(format!("{} is a folder", file.path.display())));
    }
    fs::write(&file.path, content)
        .map_err(|e| ToolError::io_write("write", &file.path, file.root.writable, &e))?;
    Ok(format!("wrote {} bytes to {}", content.len(), file.path.display()))
}

/// Renames a file or folder; refuses to replace an existing destination.
pub fn move_file(roots: &Roots, source: &str, destination: &str) -> ToolResult {
    let from = roots.locate(source, false)?;
    let to = roots.locate(destination, false)?;
    from.writable()?;
    to.writable()?;
    fs::symlink_metadata(&from.path).map_err(|e| ToolError::io("move", &from.path, &e))?;
    if fs::symlink_metadata(&to.path).is_ok() {
        return Err(ToolError::failed(format!("{} already exists", to.path.display())));
    }
    fs::rename(&from.path, &to.path)
        .map_err(|e| ToolError::io_write("move", &from.path, from.root.writable && to.root.writable, &e))?;
    Ok(format!("moved {} to {}", from.path.display(), to.path.display()))
}

/// Removes a file (or a symbolic link itself); folders are refused.
pub fn delete_file(roots: &Roots, path: &str) -> ToolResult {
    let file = roots.locate(path, false)?;
    file.writable()?;
    let meta = fs::symlink_metadata(&file.path).map_err(|e| ToolError::io("delete", &file.path, &e))?;
    if meta.is_dir() {
        return Err(ToolError::failed(format!(
            "{} is a folder: delete_file removes files only",
            file.path.display()
        )));
    }
    fs::remove_file(&file.path)
        .map_err(|e| ToolError::io_write("delete", &file.path, file.root.writable, &e))?;
    Ok(format!("deleted {}", file.path.display()))
}
