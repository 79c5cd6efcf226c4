//! `read_text_file`: a whole file up to [`READ_CAP`], or its first or last lines.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use crate::errors::{ToolError, ToolResult};
use crate::folder;
use crate::roots::Roots;

/// The most text one call returns (a model's context is the real limit; this keeps one call
/// from filling it, or the host's memory).
pub const READ_CAP: u64 = 1024 * 1024;

pub fn read_text_file(roots: &Roots, path: &str, head: Option<u64>, tail: Option<u64>) -> ToolResult {
    let file = roots.locate(path, true)?;
    let path = file.path.as_path();
    let meta = fs::metadata(path).map_err(|e| ToolError::io("read", path, &e))?;
    if meta.is_dir() {
        return Err(ToolError::failed(format!("{} is a folder: use list_directory", path.display())));
    }
    match (head, tail) {
        (Some(_), Some(_)) => Err(ToolError::failed("give head or tail, not both")),
        (Some(lines), None) => read_head(path, lines),
        (None, Some(lines)) => read_tail(path, lines, meta.len()),
        (None, None) if meta.len() > READ_CAP => Err(ToolError::failed(format!(
            "{} is {} bytes, more than the {} this tool returns at once: read part of it with head or tail",
            path.display(),
            meta.len(),
            cap_text()
        ))),
        (None, None) => {
            if let Some(bytes) = folder::read_capped(file.root, path, meta.len(), READ_CAP) {
                return text(path, bytes);
            }
            // Room for the whole file and one byte more: std then reads it in one call and
            // learns the end with a second, where an empty buffer starts at 32 bytes.
            let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(READ_CAP) + 1).unwrap_or(0));
            File::open(path)
                .and_then(|f| f.take(READ_CAP).read_to_end(&mut bytes))
                .map_err(|e| ToolError::io("read", path, &e))?;
            text(path, bytes)
        }
    }
}

fn cap_text() -> String {
    format!("{} MiB", READ_CAP / (1024 * 1024))
}

fn read_head(path: &Path, lines: u64) -> ToolResult {
    let file = File::open(path).map_err(|e| ToolError::io("read", path, &e))?;
    let mut reader = BufReader::new(file.take(READ_CAP));
    let mut bytes = Vec::new();
    for _ in 0..lines {
        let n = reader.read_until(b'\n', &mut bytes).map_err(|e| ToolError::io("read", path, &e))?;
        if n == 0 {
            break;
        }
    }
    let full = bytes.len() as u64 >= READ_CAP;
    let mut out = text(path, bytes)?;
    if full {
        out.push_str(&format!("\n[stopped at the {} cap]", cap_text()));
    }
    Ok(out)
}

fn read_tail(path: &Path, lines: u64, len: u64) -> ToolResult {
    let mut file = File::open(path).map_err(|e| ToolError::io("read", path, &e))?;
    let start = len.saturating_sub(READ_CAP);
    file.seek(SeekFrom::Start(start)).map_err(|e| ToolError::io("read", path, &e))?;
    let mut bytes = Vec::new();
    file.take(READ_CAP).read_to_end(&mut bytes).map_err(|e| ToolError::io("read", path, &e))?;
    // A trailing newline ends the last line; it does not start another.
    let body_end = if bytes.last() == Some(&b'\n') { bytes.len() - 1 } else { bytes.len() };
    let mut from = None;
    let mut found = 0u64;
    for (i, b) in bytes[..body_end].iter().enumerate().rev() {
        if *b == b'\n' {
            found += 1;
            if found == lines {
                from = Some(i + 1);
                break;
            }
        }
    }
    let mut clipped = false;
    let from = match from {
        Some(from) => from,
        None if lines == 0 => body_end,
        // Fewer lines than asked: all of them, less a line cut by the window's start.
        None if start > 0 => {
            clipped = true;
            bytes.iter().position(|b| *b == b'\n').map_or(bytes.len(), |i| i + 1)
        }
        None => 0,
    };
    let mut out = text(path, bytes[from..].to_vec())?;
    if clipped {
        out.insert_str(0, &format!("[only the lines in the last {} are shown]\n", cap_text()));
    }
    Ok(out)
}

/// The bytes as text: UTF-8 (invalid sequences replaced), refused when they look binary.
fn text(path: &Path, bytes: Vec<u8>) -> ToolResult {
    if bytes.contains(&0) {
        return Err(ToolError::failed(format!(
            "{} is not a text file (it contains NUL bytes)",
            path.display()
        )));
    }
    Ok(String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}
