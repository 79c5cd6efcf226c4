//! `search_files` (names) and `search_content` (lines in files), both bounded: at most
//! `maxResults` results, [`walk::MAX_VISITED`](crate::walk::MAX_VISITED) entries, and for content
//! only text files up to [`MAX_SCANNED_FILE`], [`MAX_SCANNED_TOTAL`] in all.

use std::borrow::Cow;
use std::fs;
use std::ops::ControlFlow;

use memchr::memmem;
use regex::{Regex, RegexBuilder};

use crate::errors::{ToolError, ToolResult};
use crate::folder::OpenFile;
use crate::glob::NamePattern;
use crate::listing::is_dir;
use crate::roots::Roots;
use crate::walk::{Entry, walk};

pub const DEFAULT_RESULTS: u32 = 100;
pub const MAX_RESULTS: u32 = 1000;
/// Larger files are skipped by `search_content` (and counted).
pub const MAX_SCANNED_FILE: u64 = 1024 * 1024;
/// The most file content one `search_content` reads.
pub const MAX_SCANNED_TOTAL: u64 = 64 * 1024 * 1024;
/// A matching line is cut to this many characters.
const MAX_LINE: usize = 240;

fn limit(max_results: Option<u32>) -> usize {
    max_results.unwrap_or(DEFAULT_RESULTS).clamp(1, MAX_RESULTS) as usize
}

fn search_root<'a>(roots: &'a Roots, path: &str) -> Result<crate::roots::Resolved<'a>, ToolError> {
    let dir = roots.locate(path, true)?;
    if !is_dir(&dir.path) {
        // The error names what is wrong with the path (missing, refused, or not a folder).
        return Err(match fs::metadata(&dir.path) {
            Err(e) => ToolError::io("search", &dir.path, &e),
            Ok(_) => ToolError::failed(format!("{} is not a folder", dir.path.display())),
        });
    }
    Ok(dir)
}

/// Paths under `path` whose name (or, for a pattern with `/`, relative path) matches.
pub fn search_files(roots: &Roots, path: &str, pattern: &str, max_results: Option<u32>) -> ToolResult {
    let pattern = NamePattern::parse(pattern).map_err(ToolError::failed)?;
    let dir = search_root(roots, path)?;
    let limit = limit(max_results);
    let mut found = Vec::new();
    let stats = walk(dir.root, &dir.path, |entry| {
        if pattern.matches(&relative(&pattern, entry), entry.name) {
            let suffix = if entry.kind.is_dir() { "/" } else { "" };
            found.push(format!("{}{suffix}", entry.path().display()));
            if found.len() >= limit {
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    });
    let mut text = results(&found, limit);
    text.push_str(&stats.note());
    Ok(text)
}

enum Matcher {
    /// Lower-cased when `ignore_case`.
    Substring {
        needle: String,
        ignore_case: bool,
        /// For a case-sensitive needle without U+FFFD: the needle's bytes, searched for in a
        /// whole file before its lines are (see [`Matcher::may_match`]).
        whole: Option<Box<memmem::Finder<'static>>>,
    },
    Regex(Regex),
}

impl Matcher {
    fn new(pattern: &str, regex: bool, ignore_case: bool) -> Result<Self, ToolError> {
        if pattern.is_empty() {
            return Err(ToolError::failed("the pattern is empty"));
        }
        if regex {
            return RegexBuilder::new(pattern)
                .case_insensitive(ignore_case)
                // Bounds the compiled program: a client's pattern cannot take the memory.
                .size_limit(1 << 20)
                .build()
                .map(Self::Regex)
                .map_err(|e| ToolError::failed(format!("invalid regex: {e}")));
        }
        let needle = if ignore_case { pattern.to_lowercase() } else { pattern.to_string() };
        let whole = (!ignore_case && !needle.contains('\u{FFFD}'))
            .then(|| Box::new(memmem::Finder::new(needle.as_bytes()).into_owned()));
        Ok(Self::Substring { needle, ignore_case, whole })
    }

    fn matches(&self, line: &str) -> bool {
        match self {
            Self::Substring { needle, ignore_case: false, .. } => line.contains(needle.as_str()),
            Self::Substring { needle, ignore_case: true, .. } => {
                line.to_lowercase().contains(needle.as_str())
            }
            Self::Regex(regex) => regex.is_match(line),
        }
    }

    /// Whether some line of the file `bytes` may match: `false` only when none can, so a file
    /// without the needle is passed over in one search of its bytes instead of a search per
    /// line (most files of a search; in the component, where the per-line search has no SIMD,
    /// most of the time spent on them). Exact for a case-sensitive substring: a line is a
    /// piece of the file's lossy text, which keeps every valid character where it was, so a
    /// needle (valid UTF-8 with no U+FFFD, the one character the lossy text adds) found in a
    /// line is in the bytes. Ignoring case or a regex (`^`, `$`, classes spanning a line
    /// break) may match a line differently from the whole: those go line by line.
    fn may_match(&self, bytes: &[u8]) -> bool {
        match self {
            Self::Substring { whole: Some(finder), .. } => finder.find(bytes).is_some(),
            _ => true,
        }
    }
}

pub struct ContentQuery<'a> {
    pub path: &'a str,
    pub pattern: &'a str,
    pub regex: bool,
    pub ignore_case: bool,
    pub include: Option<&'a str>,
    pub max_results: Option<u32>,
}

/// Lines matching a substring or regex in the text files under `path`, as `path:line: text`.
pub fn search_content(roots: &Roots, query: &ContentQuery<'_>) -> ToolResult {
    let matcher = Matcher::new(query.pattern, query.regex, query.ignore_case)?;
    let include = query.include.map(NamePattern::parse).transpose().map_err(ToolError::failed)?;
    let dir = search_root(roots, query.path)?;
    let limit = limit(query.max_results);
    let mut found = Vec::new();
    let (mut scanned, mut too_big, mut budget_hit) = (0u64, 0usize, false);
    let stats = walk(dir.root, &dir.path, |entry| {
        if !entry.kind.is_file()
            || include.as_ref().is_some_and(|p| !p.matches(&relative(p, entry), entry.name))
        {
            return ControlFlow::Continue(());
        }
        // Opened first, its size taken from the open file; one that cannot be opened is still
        // looked at by path, so it counts as too big or against the budget as before.
        let file = entry.folder.open_file(entry.name);
        let len = file.as_ref().and_then(OpenFile::size).or_else(|| entry.folder.file_len(entry.name));
        let Some(len) = len else { return ControlFlow::Continue(()) };
        if len > MAX_SCANNED_FILE {
            too_big += 1;
            return ControlFlow::Continue(());
        }
        if scanned + len > MAX_SCANNED_TOTAL {
            budget_hit = true;
            return ControlFlow::Break(());
        }
        scanned += len;
        let Some(bytes) = file.and_then(|f| f.read(len)) else { return ControlFlow::Continue(()) };
        // The needle first: a file without it is passed over in one scan, binary or not.
        if !matcher.may_match(&bytes) || bytes.contains(&0) {
            return ControlFlow::Continue(());
        }
        let text = String::from_utf8_lossy(&bytes);
        for (number, line) in text.lines().enumerate() {
            if matcher.matches(line) {
                found.push(format!("{}:{}: {}", entry.path().display(), number + 1, clip(line)));
                if found.len() >= limit {
                    return ControlFlow::Break(());
                }
            }
        }
        ControlFlow::Continue(())
    });
    let mut text = results(&found, limit);
    if budget_hit {
        text.push_str(&format!("\n(stopped after reading {} MiB of files)", MAX_SCANNED_TOTAL >> 20));
    }
    if too_big > 0 {
        text.push_str(&format!("\n({too_big} files over {} MiB were skipped)", MAX_SCANNED_FILE >> 20));
    }
    text.push_str(&stats.note());
    Ok(text)
}

/// The entry's relative path when `pattern` reads it; otherwise nothing is made.
fn relative<'a>(pattern: &NamePattern, entry: &'a Entry<'_>) -> Cow<'a, str> {
    if pattern.needs_relative() { entry.relative() } else { Cow::Borrowed("") }
}

fn clip(line: &str) -> String {
    let line = line.trim_end();
    match line.char_indices().nth(MAX_LINE) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// The matches one per line (or `No matches found`), and a note when they reached `limit`.
fn results(found: &[String], limit: usize) -> String {
    let mut text = if found.is_empty() { "No matches found".to_string() } else { found.join("\n") };
    if found.len() >= limit {
        text.push_str(&format!("\n(stopped at {limit} results: narrow the pattern or raise maxResults)"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether some line of `bytes` matches, as `search_content` reads a file's lines.
    fn some_line(matcher: &Matcher, bytes: &[u8]) -> bool {
        String::from_utf8_lossy(bytes).lines().any(|line| matcher.matches(line))
    }

    #[test]
    fn a_file_passed_over_whole_has_no_matching_line() {
        let files: [&[u8]; 8] = [
            b"one\ntwo needle three\n",
            b"no match here\nat all\n",
            b"need\nle split by a line break\n",
            b"bad \xff byte before the needle\r\n",
            b"\xe2needle after a cut-off character",
            b"\xf0\x9fneedle after a cut-off emoji",
            b"",
            b"needle",
        ];
        for (pattern, ignore_case) in [
            ("needle", false),
            ("NEEDLE", true),
            ("le\u{FFFD}", false),
            ("\u{FFFD} byte", false),
            ("\r", false),
        ] {
            let matcher = Matcher::new(pattern, false, ignore_case).unwrap_or_else(|e| panic!("{e:?}"));
            for bytes in files {
                if some_line(&matcher, bytes) {
                    assert!(matcher.may_match(bytes), "{pattern:?} in {:?}", String::from_utf8_lossy(bytes));
                }
            }
        }
        let needle = Matcher::new("needle", false, false).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(!needle.may_match(b"no match here\nat all\n"), "passed over");
        assert!(!needle.may_match(b"need\nle"), "passed over: no line holds it whole");
        let replaced = Matcher::new("\u{FFFD} byte", false, false).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(replaced.may_match(b"no replacement in these bytes"), "U+FFFD: line by line");
        let regex = Matcher::new("^needle$", true, false).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(
            regex.may_match(b"x\nneedle\n") && some_line(&regex, b"x\nneedle\n"),
            "a regex: line by line"
        );
    }
}
