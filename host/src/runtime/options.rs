//! How a host starts the runtime: everything that is not configuration (which lives in the
//! resolved config) but a choice of the embedding program.

use std::path::PathBuf;

/// A host's choices for one runtime. `Default` is what a library user wants: no built-in tools
/// of its own, no spinners, plugins compiled in memory.
#[derive(Debug, Clone, Default)]
pub struct RuntimeOptions {
    /// The embedding agent's own tool names: reserved like the workspace's reserved names, so
    /// no MCP tool can shadow a built-in.
    pub builtin_tools: Vec<String>,
    /// Show per-server spinners while connecting (only when stderr is a terminal).
    pub progress: bool,
    /// Where compiled plugins are cached between runs (`<home>/cache`). `None` compiles every
    /// plugin in memory on each start, which costs tens of milliseconds per plugin.
    pub cache_dir: Option<PathBuf>,
}
