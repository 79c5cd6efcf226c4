//! The typed view of the config layers' plugin, sandbox and workspace parts. The files
//! themselves are edited as JSON documents (so unknown keys and key order survive every
//! write); these types are what the rest of toolport reads. A server's definition has its own
//! folder (`server_def/`), the global store and the resolved layers sit with their readers
//! (`store.rs`, `resolve.rs`).

use std::path::PathBuf;

/// What a secret value (an `env` or `headers` value) is shown as wherever it must not appear:
/// `mcp get` output and the server record of a plugin that only looks at tools. One constant,
/// so every place that hides a value hides it the same recognisable way.
pub const MASK: &str = "***";

/// The built-in tool names an MCP server may never take (the original tool's four).
pub const DEFAULT_RESERVED_TOOL_NAMES: [&str; 4] = ["bash", "read_file", "write_file", "apply_patch"];

/// The four kinds of plugin (see wit/README.md, "Worlds").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PluginKind {
    /// Moves JSON-RPC messages for servers whose `type` names it.
    Transport,
    /// Reviews (keeps, renames, hides, rejects) a server's tool names.
    NamePolicy,
    /// Converts tools to the shape an LLM sees.
    ToolShape,
    /// Checks, and may rewrite, calls, reads and prompts and their answers (WIT 0.1.1).
    Guard,
}

impl PluginKind {
    /// The `kind` string used in config and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Transport => "transport",
            Self::NamePolicy => "name-policy",
            Self::ToolShape => "tool-shape",
            Self::Guard => "guard",
        }
    }

    /// The kind a `kind` string (which is also its WIT world's name) names.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Transport, Self::NamePolicy, Self::ToolShape, Self::Guard]
            .into_iter()
            .find(|k| k.as_str() == text)
    }
}

/// What a plugin or a sandboxed server may touch beyond nothing (closed by default).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Grants {
    /// `scheme://host:port` patterns; `*` for a port or a leading host label.
    pub hosts: Vec<String>,
    /// Environment variable names copied in from the host.
    pub env: Vec<String>,
    /// Folders preopened for the guest (read-only unless a server's entry says `rw`).
    pub dirs: Vec<DirGrant>,
}

/// One `grants.dirs` entry: `"PATH"` or `{ "host": PATH, "guest": "/notes", "mode": "ro" | "rw" }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirGrant {
    /// `host` as written (`~/notes`, `data`, `/srv/x`), what the file keeps.
    pub written: String,
    /// The host folder: `~` expanded, resolved against the folder of the file that names it.
    pub host: PathBuf,
    /// `guest` as written: where the guest sees it (else at the host folder's own path).
    pub guest: Option<String>,
    /// `mode: "rw"` (servers only): the guest may create, change and remove files in it.
    pub writable: bool,
}

impl DirGrant {
    /// Where the guest sees the folder.
    pub fn guest_path(&self) -> String {
        self.guest.clone().unwrap_or_else(|| self.host.display().to_string())
    }

    /// `ro` or `rw`, as the file and the views spell it.
    pub fn mode(&self) -> &'static str {
        if self.writable { "rw" } else { "ro" }
    }
}

/// Default linear-memory cap per plugin instance.
pub const DEFAULT_PLUGIN_MEMORY_MB: u64 = 64;
/// Default time per plugin call.
pub const DEFAULT_PLUGIN_CALL_MS: u64 = 5_000;
/// Default share of one core a guest (plugin or sandboxed server) may use over a minute. A
/// server that works hard but waits for its next request, its files or its network stays far
/// below it; 80 % of a minute (48 s) still holds a whole default `callMs` stretch of a server
/// (30 s) and bursts after a quiet spell. What it stops is a guest that keeps a core busy by
/// waiting a moment now and then, which the busy-time rule of `callMs` cannot see.
pub const DEFAULT_CPU_PERCENT: u8 = 80;

/// Resource caps per plugin call (transports: per connection for memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Linear memory cap, MiB.
    pub memory_mb: u64,
    /// Wall-clock cap per call, milliseconds.
    pub call_ms: u64,
    /// `cpuPercent`: the share of one core (1–100) the guest may use over a sliding minute,
    /// counted while it computes, across waits (a server's `callMs` is reset by every wait).
    pub cpu_percent: u8,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            memory_mb: DEFAULT_PLUGIN_MEMORY_MB,
            call_ms: DEFAULT_PLUGIN_CALL_MS,
            cpu_percent: DEFAULT_CPU_PERCENT,
        }
    }
}

/// One entry of the store's `plugins` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginDef {
    /// The key in `plugins`.
    pub name: String,
    /// What it is for.
    pub kind: PluginKind,
    /// The component file, resolved against the folder of the file that names it.
    pub path: PathBuf,
    /// What it may reach.
    pub grants: Grants,
    /// Memory and time caps.
    pub limits: Limits,
    /// `sha256`: the component's pinned digest (lower-case hex); a mismatch refuses to load it.
    pub sha256: Option<String>,
}

/// The store's `defaults`: what the edits that add a server (`mcp add`, `/mcp add`, `mcp import`,
/// `mcp add-json`) write into it when the person did not say. They change what is written, not
/// how an existing definition is read, so a server added before a default changed keeps what it
/// was added with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StoreDefaults {
    /// `defaults.sandbox`: every `stdio` server added is written with `"sandbox": true` (default
    /// off: the OS sandbox is an opt-in until every machine toolport runs on can give it).
    pub sandbox: bool,
}

/// The per-workspace settings (`<root>/.toolport/workspace.json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceSettings {
    /// `enabledMcpServers`: trimmed, blanks and duplicates removed, order kept.
    pub enabled: Vec<String>,
    /// `namePolicy`: a plugin name, or `None` for no policy.
    pub name_policy: Option<String>,
    /// `toolShape`: a plugin name; default `openai`.
    pub tool_shape: String,
    /// `reservedToolNames`; default `bash`, `read_file`, `write_file`, `apply_patch`.
    pub reserved_tool_names: Vec<String>,
    /// `maxResultTokens`: a call result longer than this (in `tokens::TOKENIZER` tokens) is
    /// stored whole under `<home>/results/` and the model gets its beginning and a note;
    /// default [`DEFAULT_MAX_RESULT_TOKENS`].
    pub max_result_tokens: usize,
    /// `maxResultsFolderBytes`: the most `<home>/results/` keeps (the oldest results go
    /// first); default 512 MiB.
    pub max_results_folder_bytes: u64,
    /// `surface`: what `serve` shows a model; default every tool.
    pub surface: Surface,
    /// `secrets`: what the call guard does with secrets in arguments and results.
    pub secrets: Secrets,
    /// `confirm`: which tool calls toolport asks a person about before sending them; default
    /// the tools annotated destructive.
    pub confirm: super::confirm_setting::ConfirmSetting,
    /// `trust`: how `.toolport/tools.lock` pins the servers' tool definitions; default `pin`.
    pub trust: TrustMode,
    /// `audit`: whether calls get audit lines, with their arguments' values or only their
    /// shape, and on stderr too; default a line each, shape only, file only.
    pub audit: AuditChoice,
    /// `bundles`: the slices of the surface `serve --http` also serves at `/mcp/<bundle>`.
    pub bundles: std::collections::BTreeMap<String, super::Bundle>,
    /// `guards`: the guard plugins every active server's calls, reads and prompts pass, in
    /// order, before each server's own (`ServerDef::guards`).
    pub guards: Vec<super::GuardUse>,
}

/// The workspace's `audit` setting (`"audit": {"enabled": …, "values": …, "stderr": …}` in
/// `.toolport/workspace.json`), read here with the other settings and carried on each
/// exchange to the observers (`observe::Exchange`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditChoice {
    /// `enabled` (default true): whether the exchange gets an audit line at all. Off, it still
    /// counts in the metrics.
    pub enabled: bool,
    /// `values` (default false): the arguments' values go into the line, not only their shape
    /// (after the secret guard and the secret scanner: a secret never does).
    pub values: bool,
    /// `stderr` (default false): the line is also handed to the host's printer (the binary's
    /// stderr), as `serve --audit-stderr` does for every line.
    pub stderr: bool,
}

impl Default for AuditChoice {
    fn default() -> Self {
        Self { enabled: true, values: false, stderr: false }
    }
}

/// What the workspace's `trust` asks of the tool pins in `.toolport/tools.lock`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TrustMode {
    /// First sight records a tool's definition; a later change holds the tool (the default).
    #[default]
    Pin,
    /// No lock read or written, nothing held.
    Off,
    /// As `pin`, and a tool the lock does not name is held too: nothing is recorded by itself.
    Strict,
}

impl TrustMode {
    /// The spelling of `workspace.json`'s `trust`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pin => "pin",
            Self::Off => "off",
            Self::Strict => "strict",
        }
    }

    /// Reads `workspace.json`'s spelling; `None` for anything else.
    pub fn parse(text: &str) -> Option<TrustMode> {
        [Self::Pin, Self::Off, Self::Strict].into_iter().find(|m| m.as_str() == text.trim())
    }
}

/// What the call guard does with a secret it finds (`secrets` in `workspace.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretsMode {
    /// Replace it by `***` and say so in a note.
    Redact,
    /// Refuse: an argument's call is not sent, a result is withheld.
    Block,
    /// Let it through.
    Off,
}

impl SecretsMode {
    /// The spelling in `workspace.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Redact => "redact",
            Self::Block => "block",
            Self::Off => "off",
        }
    }

    /// The mode spelled `text`, if any.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Redact, Self::Block, Self::Off].into_iter().find(|m| m.as_str() == text)
    }
}

/// `secrets`: a mode per direction. `"redact"`, `"block"` or `"off"` sets both;
/// `{ "arguments": …, "results": … }` each (a missing one keeps its default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Secrets {
    /// Arguments on their way to a server: by default a secret configured for another server
    /// blocks the call (secrets of the shapes the patterns know pass: a model may well hand a
    /// key to the server it is for).
    pub arguments: SecretsMode,
    /// Results on their way back: by default what the patterns or a configured secret match
    /// is replaced by `***`.
    pub results: SecretsMode,
}

impl Default for Secrets {
    fn default() -> Self {
        Self { arguments: SecretsMode::Block, results: SecretsMode::Redact }
    }
}

/// What `toolport serve` lists as its tools: every tool of the surface, or three tools that
/// search, describe and call them (a model's context then holds three definitions, not
/// hundreds). Either way the registry, its names and its collision rules are the same: lazy is
/// only a view of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Surface {
    /// Every tool under its final name (the default).
    #[default]
    Full,
    /// `search_tools`, `describe_tool` and `call_tool` only.
    Lazy,
}

impl Surface {
    /// The spelling of `workspace.json`'s `surface`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Lazy => "lazy",
        }
    }

    /// Reads `workspace.json`'s spelling; `None` for anything else.
    pub fn parse(text: &str) -> Option<Surface> {
        match text.trim() {
            "full" => Some(Self::Full),
            "lazy" => Some(Self::Lazy),
            _ => None,
        }
    }
}

/// The default `maxResultTokens`: a long file or page fits, a 30 MB log does not.
pub const DEFAULT_MAX_RESULT_TOKENS: usize = 25_000;

impl Default for WorkspaceSettings {
    fn default() -> Self {
        Self {
            enabled: Vec::new(),
            name_policy: None,
            tool_shape: "openai".to_string(),
            reserved_tool_names: DEFAULT_RESERVED_TOOL_NAMES.iter().map(|s| s.to_string()).collect(),
            max_result_tokens: DEFAULT_MAX_RESULT_TOKENS,
            max_results_folder_bytes: crate::results_store::DEFAULT_MAX_BYTES,
            surface: Surface::Full,
            secrets: Secrets::default(),
            confirm: Default::default(),
            trust: TrustMode::Pin,
            audit: Default::default(),
            bundles: Default::default(),
            guards: Vec::new(),
        }
    }
}
