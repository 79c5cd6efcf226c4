//! The options of `toolport demo-server`: each one makes an awkward case on purpose.

/// Options of `toolport demo-server`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DemoServerArgs {
    /// Adds N generated tools (`tool_1` … `tool_N`).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub tools: usize,
    /// Prefixes every tool name (to make collisions between servers).
    #[arg(long, value_name = "P", default_value = "")]
    pub prefix: String,
    /// Waits this long before answering `initialize`.
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub delay_ms: u64,
    /// Returns `tools/list` in pages of N tools, linked by `nextCursor` (0: one page).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub page_size: usize,
    /// Exits (status 3) right after answering the N-th tool call.
    #[arg(long, value_name = "N")]
    pub crash_after: Option<usize>,
    /// After this long, adds a tool `late` and sends `notifications/tools/list_changed`.
    #[arg(long, value_name = "MS")]
    pub notify_after_ms: Option<u64>,
    /// Adds a tool with exactly this name, unprefixed (repeatable; blank and duplicate names
    /// allowed, to exercise the host's name checks).
    #[arg(long, value_name = "NAME")]
    pub extra_tool: Vec<String>,
    /// Misbehaves: every `tools/list` page points to the same `nextCursor` (`loop`), forever.
    #[arg(long)]
    pub repeat_cursor: bool,
    /// Offers N text resources `demo://item/1` … `demo://item/N`, in `--page-size` pages.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub resources: usize,
    /// Misbehaves: declares resources but answers `resources/list` with an error.
    #[arg(long)]
    pub broken_resources: bool,
    /// Appends `started sleep MS` to FILE when a `sleep` starts, and `cancelled sleep MS` when
    /// the client cancels it (`notifications/cancelled`): what a test reads to see both.
    #[arg(long, value_name = "FILE")]
    pub call_log: Option<std::path::PathBuf>,
    /// Serves streamable HTTP at `http://ADDR/mcp` instead of stdio (both revisions, as rmcp's
    /// server transport speaks them), printing `listening on http://…/mcp` once bound; port 0
    /// picks a free one.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// Adds tools that break their own `outputSchema`: `mismatch` (`count` is a string, the
    /// schema says integer), `unstructured` (no `structuredContent` at all), `refused`
    /// (`isError` with nothing structured), and two whose schema cannot be compiled:
    /// `bad_schema` (invalid) and `remote_schema` (a `$ref` to a URL).
    #[arg(long)]
    pub bad_structured: bool,
    /// Adds tools with `x-mcp-header` annotations (SEP-2243): `headed` (a valid `Region`
    /// header) and `misheaded` (an empty one, which a 2026-07-28 client must leave out).
    #[arg(long)]
    pub header_tools: bool,
    /// Adds the tool `confirm`, which asks for input with SEP-2322 input-required results
    /// (on 2026-07-28 sessions; rmcp refuses them on older ones).
    #[arg(long)]
    pub confirm: bool,
    /// `big` returns numbered lines instead of `x`s: line i (from 0) is `{i:08} the quick brown
    /// fox jumps over the lazy dog\n`, the whole cut at `size` bytes. Deterministic, so a test
    /// can make the same text and compare bytes.
    #[arg(long)]
    pub big_lines: bool,
    /// Puts this JSON object as `_meta` on every tool result and `resources/read` result: what
    /// a client behind a host must receive as the server sent it.
    #[arg(long, value_name = "JSON")]
    pub result_meta: Option<String>,
}
