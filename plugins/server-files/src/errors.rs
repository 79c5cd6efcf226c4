//! Tool errors as the text of an `isError` result. A refusal (the sandbox said no, or would
//! have) starts with `refused: `, so clients and the host's tests can tell it from a failure.

use std::io;
use std::path::Path;

use rmcp::model::{CallToolResult, ContentBlock};

#[derive(Debug)]
pub struct ToolError(String);

/// A tool's text on success, or why it failed.
pub type ToolResult = Result<String, ToolError>;

impl ToolError {
    pub fn refused(message: impl std::fmt::Display) -> Self {
        Self(format!("refused: {message}"))
    }

    pub fn failed(message: impl Into<String>) -> Self {
        Self(message.into())
    }

    pub fn read_only(path: &Path) -> Self {
        Self::refused(format!("{} is in a read-only folder", path.display()))
    }

    /// An error reading `path` (`action` is the verb: "read", "list", …).
    pub fn io(action: &str, path: &Path, error: &io::Error) -> Self {
        let shown = path.display();
        match error.kind() {
            io::ErrorKind::NotFound => Self(format!("cannot {action} {shown}: no such file or folder")),
            io::ErrorKind::PermissionDenied if cfg!(target_os = "wasi") => Self::refused(format!(
                "cannot {action} {shown}: not permitted by the sandbox, which refuses paths that lead \
                 outside the allowed folders (for example through a symbolic link): {error}"
            )),
            _ => Self(format!("cannot {action} {shown}: {error}")),
        }
    }

    /// An error changing `path`, in a root that is `writable` or not: in a read-only root the
    /// OS error is the sandbox's read-only preopen, and says so.
    pub fn io_write(action: &str, path: &Path, writable: bool, error: &io::Error) -> Self {
        let read_only =
            matches!(error.kind(), io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem);
        if read_only && !writable || error.kind() == io::ErrorKind::ReadOnlyFilesystem {
            Self::read_only(path)
        } else {
            Self::io(action, path, error)
        }
    }

    #[cfg(test)]
    pub fn text(&self) -> String {
        self.0.clone()
    }
}

/// The MCP result of a tool: text content, `isError` on failure.
pub fn into_call_result(result: ToolResult) -> CallToolResult {
    match result {
        Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Err(ToolError(text)) => CallToolResult::error(vec![ContentBlock::text(text)]),
    }
}
