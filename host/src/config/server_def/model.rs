//! The typed server definition (`mcpServers.<name>`), normalised: how to start or reach the
//! server, its timeouts, tool filter and roots setting, a `wasm` server's sandbox and a `stdio`
//! server's OS sandbox (`native_sandbox.rs`). Values are as written; `normalize.rs` reads them
//! from JSON and `to_json.rs` writes them back.

use std::path::PathBuf;
use std::time::Duration;

use super::native_sandbox::NativeSandbox;
use super::oauth_def::OAuthDef;
use crate::config::model::{DEFAULT_CPU_PERCENT, Grants, Limits};
use crate::config::tool_filter::ToolFilter;

/// Default time to connect and initialize a server: long enough for `npx` to start a package.
/// What a child started with `"inheritEnv": false` keeps of toolport's environment: enough
/// to find programs, a home, a locale and a terminal type, and nothing that may hold a
/// secret (tokens live in variables of every other name). A sandboxed server starts from the
/// same, with a private `HOME`.
pub const INHERIT_ENV_KEPT: [&str; 4] = ["PATH", "HOME", "LANG", "TERM"];
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_millis(30_000);
/// Default time for the whole `tools/list` walk (all pages).
pub const DEFAULT_LIST_TIMEOUT: Duration = Duration::from_millis(30_000);
/// Default time for one `tools/call`: tools may do real work (builds, searches).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_millis(60_000);

/// Per-server timeouts (`timeouts: { connectMs, listMs, callMs }`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Connect + initialize.
    pub connect: Duration,
    /// The whole `tools/list` walk.
    pub list: Duration,
    /// One `tools/call`.
    pub call: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self { connect: DEFAULT_CONNECT_TIMEOUT, list: DEFAULT_LIST_TIMEOUT, call: DEFAULT_CALL_TIMEOUT }
    }
}

/// One server definition from the global store (or from an ACP client), normalised.
/// Values are as written: `${VAR}` is expanded only when connecting.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ServerDef {
    /// The key in `mcpServers`, trimmed.
    pub name: String,
    /// Normalised `type` (`stdio`, `sse`, `streamable_http`, or a plugin name); `None` if absent.
    pub transport: Option<String>,
    /// Endpoint for network transports.
    pub url: Option<String>,
    /// Program for `stdio`.
    pub command: Option<String>,
    /// Arguments, exactly as given (never de-duplicated).
    pub args: Vec<String>,
    /// Extra environment for the child, in file order.
    pub env: Vec<(String, String)>,
    /// Extra HTTP headers, in file order.
    pub headers: Vec<(String, String)>,
    /// Working folder for the child process.
    pub cwd: Option<String>,
    /// `inheritEnv` as written: `Some(false)` starts the child with only PATH, HOME, LANG,
    /// TERM and `env`, instead of toolport's whole environment (the default, `None`).
    pub inherit_env: Option<bool>,
    /// Connect, list and call timeouts.
    pub timeouts: Timeouts,
    /// `oauth: {…}`: how toolport signs in to a remote server. Absent is not "no OAuth": a
    /// server that answers 401 with a challenge gets OAuth with the defaults.
    pub oauth: Option<OAuthDef>,
    /// `type: wasm`: the component and its sandbox (`args` and `env` above are its own).
    pub wasm: Option<WasmDef>,
    /// `"sandbox": true` (or `{ … }`) on a `stdio` server: it is started under the OS sandbox,
    /// with `grants` and `limits` read from the definition. `None`: not sandboxed (absent or
    /// `false`; a definition of another type is refused when it says `true`).
    pub sandbox: Option<NativeSandbox>,
    /// `tools: { include, exclude }`: which of the server's own tools reach the pipeline
    /// (applied before the name policy; empty keeps every tool).
    pub tools: ToolFilter,
    /// `roots`: what the server is told when it asks for the client's roots (`roots/list`).
    pub roots: Roots,
    /// `protocolVersion`: the one MCP revision toolport speaks with this server (one rmcp
    /// knows, checked when read), instead of `server/discover` first and `initialize` as the
    /// fallback. For a server that speaks both eras but does more in a session: the
    /// conformance suite's reference server asks its questions only there.
    pub protocol_version: Option<String>,
    /// `guards`: the guard plugins this server's calls, reads and prompts pass, in order, after
    /// the workspace's.
    pub guards: Vec<crate::config::GuardUse>,
}

/// A server's `roots` setting. Servers that act on roots (npm `server-filesystem`) replace their
/// own directory arguments with them, so the workspace root cannot simply go to every server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Roots {
    /// `"workspace"` (the default): the workspace root, the one root.
    #[default]
    Workspace,
    /// `"none"`: the roots capability is not advertised to this server at all, so it keeps
    /// what its own arguments say.
    None,
    /// `"client"`: under `serve`, the roots of the client in front (when it offers any);
    /// everywhere else, and with a client that offers none, the workspace root.
    Client,
    /// A list of folders as written: absolute, `~/…` (the home folder), or relative to the
    /// workspace root (resolved when a server asks, so a changed root moves them too).
    Paths(Vec<String>),
}

impl Roots {
    /// The keyword of a setting that has one (`None` for a list of paths).
    pub fn keyword(&self) -> Option<&'static str> {
        match self {
            Self::Workspace => Some("workspace"),
            Self::None => Some("none"),
            Self::Client => Some("client"),
            Self::Paths(_) => None,
        }
    }

    /// The setting a keyword names.
    pub fn from_keyword(word: &str) -> Option<Self> {
        match word {
            "workspace" => Some(Self::Workspace),
            "none" => Some(Self::None),
            "client" => Some(Self::Client),
            _ => None,
        }
    }
}

/// A sandboxed server's component, grants and limits (`type: "wasm"`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WasmDef {
    /// `component` as written (a path, relative to the file that names it).
    pub component: Option<String>,
    /// That path resolved against the folder of the file it came from (`~` expanded).
    pub component_path: Option<PathBuf>,
    /// `builtin`: one of the servers embedded in the binary (`files`, `fetch`).
    pub builtin: Option<String>,
    /// What it may reach beyond nothing.
    pub grants: Grants,
    /// Memory, and computing time after a request.
    pub limits: Limits,
    /// `sha256`: the component's pinned digest (lower-case hex); a mismatch refuses to load it.
    pub sha256: Option<String>,
}

/// Default linear-memory cap of a sandboxed server: a long-running program with caches and
/// an interpreter's heap (componentize-py's CPython) needs more than a plugin's call.
pub const DEFAULT_SERVER_MEMORY_MB: u64 = 128;
/// Default computing time a sandboxed server may spend after a request before it is stopped.
pub const DEFAULT_SERVER_CALL_MS: u64 = 30_000;

impl Limits {
    /// The defaults of a sandboxed server.
    pub fn for_server() -> Self {
        Self {
            memory_mb: DEFAULT_SERVER_MEMORY_MB,
            call_ms: DEFAULT_SERVER_CALL_MS,
            cpu_percent: DEFAULT_CPU_PERCENT,
        }
    }
}
