//! The MCP face: the tools, their argument schemas, and the server's info. Each tool is a thin
//! call into the module that does the work; every failure is an `isError` result, never a
//! protocol error, so the model sees why.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::errors::into_call_result;
use crate::roots::Roots;
use crate::search::ContentQuery;
use crate::{changes, listing, reading, search};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PathArgs {
    /// An absolute path under an allowed folder, or a path relative to the first one.
    pub path: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadArgs {
    /// An absolute path under an allowed folder, or a path relative to the first one.
    pub path: String,
    /// Return only the first N lines.
    pub head: Option<u64>,
    /// Return only the last N lines.
    pub tail: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchFilesArgs {
    /// The folder to search in.
    pub path: String,
    /// A glob (`*.rs`, `src/**/test_*.py`; with a `/` it is matched against the path under
    /// `path`) or, without glob characters, a case-insensitive part of the name.
    pub pattern: String,
    /// At most this many results (default 100, at most 1000).
    pub max_results: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchContentArgs {
    /// The folder to search in.
    pub path: String,
    /// The text to find in each line (a regular expression when `regex` is true).
    pub pattern: String,
    /// Treat `pattern` as a regular expression (Rust `regex` syntax).
    #[serde(default)]
    pub regex: bool,
    /// Match regardless of case.
    #[serde(default)]
    pub ignore_case: bool,
    /// Search only files whose name matches this glob or name part (e.g. `*.md`).
    pub include: Option<String>,
    /// At most this many matching lines (default 100, at most 1000).
    pub max_results: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteArgs {
    /// The file to create or replace; its folder must exist.
    pub path: String,
    /// The whole new text of the file.
    pub content: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct MoveArgs {
    /// The file or folder to move.
    pub source: String,
    /// Its new path; must not exist yet.
    pub destination: String,
}

/// The filesystem server over its roots.
#[derive(Clone)]
pub struct FilesServer {
    roots: Arc<Roots>,
    #[allow(dead_code, reason = "read by the code #[tool_handler] generates")]
    tool_router: ToolRouter<Self>,
}

impl FilesServer {
    pub fn new(roots: Roots) -> Self {
        Self { roots: Arc::new(roots), tool_router: Self::tool_router() }
    }
}

#[tool_router]
impl FilesServer {
    #[tool(
        description = "List the folders this server may use, and whether each is read-only or read-write."
    )]
    fn list_allowed_directories(&self) -> CallToolResult {
        into_call_result(listing::list_allowed_directories(&self.roots))
    }

    #[tool(description = "List a folder's entries, one per line, each marked [DIR] or [FILE].")]
    fn list_directory(&self, Parameters(args): Parameters<PathArgs>) -> CallToolResult {
        into_call_result(listing::list_directory(&self.roots, &args.path))
    }

    #[tool(
        description = "Read a text file (UTF-8). Files over 1 MiB must be read in part with `head` or `tail` (a number of lines)."
    )]
    fn read_text_file(&self, Parameters(args): Parameters<ReadArgs>) -> CallToolResult {
        into_call_result(reading::read_text_file(&self.roots, &args.path, args.head, args.tail))
    }

    #[tool(description = "Size, type and times (modified, accessed, created) of a file or folder.")]
    fn get_file_info(&self, Parameters(args): Parameters<PathArgs>) -> CallToolResult {
        into_call_result(listing::get_file_info(&self.roots, &args.path))
    }

    #[tool(
        description = "Find files and folders under a folder by name: a glob or a case-insensitive part of the name. Symbolic links are not followed."
    )]
    fn search_files(&self, Parameters(args): Parameters<SearchFilesArgs>) -> CallToolResult {
        into_call_result(search::search_files(&self.roots, &args.path, &args.pattern, args.max_results))
    }

    #[tool(
        description = "Find lines containing a text or matching a regular expression in the text files under a folder; answers `path:line: text`. Files over 1 MiB are skipped."
    )]
    fn search_content(&self, Parameters(args): Parameters<SearchContentArgs>) -> CallToolResult {
        let query = ContentQuery {
            path: &args.path,
            pattern: &args.pattern,
            regex: args.regex,
            ignore_case: args.ignore_case,
            include: args.include.as_deref(),
            max_results: args.max_results,
        };
        into_call_result(search::search_content(&self.roots, &query))
    }

    #[tool(description = "Create a text file, or replace its whole content, in a read-write folder.")]
    fn write_text_file(&self, Parameters(args): Parameters<WriteArgs>) -> CallToolResult {
        into_call_result(changes::write_text_file(&self.roots, &args.path, &args.content))
    }

    #[tool(
        description = "Move or rename a file or folder within the read-write folders. The destination must not exist."
    )]
    fn move_file(&self, Parameters(args): Parameters<MoveArgs>) -> CallToolResult {
        into_call_result(changes::move_file(&self.roots, &args.source, &args.destination))
    }

    #[tool(description = "Delete a file (not a folder) in a read-write folder.")]
    fn delete_file(&self, Parameters(args): Parameters<PathArgs>) -> CallToolResult {
        into_call_result(changes::delete_file(&self.roots, &args.path))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for FilesServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("toolport-files", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Files in the folders this server was granted (see list_allowed_directories). \
                 Paths are absolute under one of them, or relative to the first. Paths with '..' \
                 and paths outside the folders are refused; read-only folders refuse changes.",
            )
    }
}
