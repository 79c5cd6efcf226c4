//! The audit log: one JSON line per exchange (call, read, prompt, sign-in) under
//! `<home>/audit/` — when, who asked, which server and tool, how it ended, how long it took, how
//! many bytes passed, and the arguments' *shape* (keys and JSON types), never their values
//! unless the workspace asked for them (`audit.values`). The host names the file (an
//! [`AuditLog`] in its `Observer`); the library never prints, so a copy on stderr goes through
//! the host's printer, when the operator asked for one (`serve --audit-stderr`, `audit.stderr`).
//!
//! Written by the observer's writer thread with the trail of decisions: 0600, `O_APPEND`, whole
//! lines per write, rotated past [`ROTATE_AT`] into [`KEPT`] numbered files. A log that cannot
//! be written is a `warn` event, never a failure of the exchange.

mod line;
pub(super) mod rotation;
mod shape;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use line::AuditLine;
pub(crate) use rotation::append_lines;
pub use rotation::numbered as rotated_file;

/// A log past this size moves to `<file>.1` before the next line: about 20,000 calls of a
/// few arguments each per file, small enough for `audit tail` to read whole.
pub const ROTATE_AT: u64 = 8 * 1024 * 1024;

/// How many rotated files are kept (`<file>.1` … `<file>.4`): with the live one, the log
/// holds at most 40 MiB, bounded whatever runs through the gateway.
pub const KEPT: usize = 4;

/// A host's way of showing a line on its own stderr (the library never prints).
pub type AuditPrinter = Arc<dyn Fn(&str) + Send + Sync>;

/// Where the host keeps the audit log, and how it shows lines on stderr.
#[derive(Clone, Default)]
pub struct AuditLog {
    /// The log file (`<home>/audit/calls.jsonl` for the binary); `None`: no file.
    pub file: Option<PathBuf>,
    /// Where a line goes when it is also shown (`None`: never shown).
    pub printer: Option<AuditPrinter>,
    /// Every line is shown (`serve --audit-stderr`), not only those of a workspace whose
    /// `audit.stderr` is on.
    pub stderr: bool,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("file", &self.file)
            .field("printer", &self.printer.is_some())
            .field("stderr", &self.stderr)
            .finish()
    }
}

/// `<home>/audit/calls.jsonl`: where the binary keeps the log, beside `decisions.jsonl`.
pub fn file_in(home: &Path) -> PathBuf {
    home.join("audit").join("calls.jsonl")
}
