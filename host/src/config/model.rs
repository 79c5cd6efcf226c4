//! The typed view of the config layers. The files themselves are edited as JSON documents
//! (so unknown keys and key order survive every write); these types are what the rest of
//! toolport reads.

use std::path::PathBuf;
use std::time::Duration;

use super::tool_filter::ToolFilter;

/// Default time to connect and initialize a server: long enough for `npx` to start a package.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_millis(30_000);
/// Default time for the whole `tools/list` walk (all pages).
pub const DEFAULT_LIST_TIMEOUT: Duration = Duration::from_millis(30_000);
/// Default time for one `tools/call`: tools may do real work (builds, searches).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_millis(60_000);

/// What a secret value (an `env` or `headers` value) is shown as wherever it must not appear:
/// `mcp get` output and the server record of a plugin that only looks at tools. One constant,
/// so every place that hides a value hides it the same recognisable way.
pub const MASK: &str = "***";

/// The built-in tool names an MCP server may never take (reference-behaviour A).
pub const DEFAULT_RESERVED_TOOL_NAMES: [&str; 4] = ["bash", "read_file", "write_file", "apply_patch"];

/// How a server is reached, after normalisation and validation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TransportKind {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
    /// The legacy HTTP+SSE transport (served by the built-in `transport-sse` plugin).
    Sse,
    /// The standard streamable HTTP transport (`http` is an alias).
    StreamableHttp,
    /// A transport plugin, named by the server's `type`.
    Plugin(String),
    /// A `wasi:cli/command` component run in the host's sandbox, speaking MCP on its stdio.
    Wasm,
}

impl TransportKind {
    /// The normalised `type` string.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Stdio => "stdio",
            Self::Sse => "sse",
            Self::StreamableHttp => "streamable_http",
            Self::Plugin(name) => name,
            Self::Wasm => "wasm",
        }
    }
}

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
    /// `tools: { include, exclude }`: which of the server's own tools reach the pipeline
    /// (applied before the name policy; empty keeps every tool).
    pub tools: ToolFilter,
    /// `roots`: what the server is told when it asks for the client's roots (`roots/list`).
    pub roots: Roots,
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

/// The OAuth grant a server's definition asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Grant {
    /// A person signs in in a browser (`toolport mcp login`), authorization code + PKCE.
    #[default]
    AuthorizationCode,
    /// Machine to machine: the client's own secret or key, no person, no login step.
    ClientCredentials,
    /// Workload identity federation (RFC 7523, SEP-1933): a token the platform issued to this
    /// workload (`assertion` or `assertionFile`) is exchanged for an access token.
    JwtBearer,
    /// Enterprise-managed authorization (SEP-990): the person's ID token from the company's
    /// identity provider (`idp`) is exchanged there for an ID-JAG, and that at the server's
    /// authorization server for an access token. No consent screen, no login step.
    Enterprise,
}

impl Grant {
    /// The value as the definition spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AuthorizationCode => "authorization_code",
            Self::ClientCredentials => "client_credentials",
            Self::JwtBearer => "jwt_bearer",
            Self::Enterprise => "enterprise",
        }
    }
}

/// `oauth: { clientId, clientSecret, clientMetadataUrl, scopes, callbackPort, grant,
/// privateKey, privateKeyJwt, assertion, assertionFile, issuer, tokenEndpoint, idp }`, values as written (`${VAR}` is expanded when connecting, so a
/// secret need not sit in the store). Debug output shows secrets as [`MASK`].
#[derive(Clone, PartialEq, Eq, Default)]
pub struct OAuthDef {
    /// A client registered with the authorization server beforehand (else a client ID
    /// metadata document, else dynamic registration).
    pub client_id: Option<String>,
    /// The pre-registered client's secret (`client_secret_basic` / `_post`, or the
    /// client-credentials grant's secret).
    pub client_secret: Option<String>,
    /// An HTTPS URL of this client's metadata document (SEP-991), used as its client id where
    /// the authorization server supports that.
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for, overriding the server's challenge and `scopes_supported`.
    pub scopes: Option<Vec<String>>,
    /// A fixed port for the loopback redirect (for clients registered with one redirect URI).
    pub callback_port: Option<u16>,
    /// Which grant to use.
    pub grant: Grant,
    /// PEM text of the key that signs `private_key_jwt` assertions (client credentials).
    pub private_key: Option<String>,
    /// The signing algorithm for `private_key_jwt` (`RS256`, `ES256`, …).
    pub private_key_jwt: Option<String>,
    /// The workload's JWT for the `jwt_bearer` grant (usually `${VAR}`).
    pub assertion: Option<String>,
    /// A file holding the workload's JWT, read on every connect (platforms rotate it there:
    /// a Kubernetes projected service-account token, a CI job's OIDC token).
    pub assertion_file: Option<String>,
    /// The authorization server the `jwt_bearer` grant trusts with the workload's token, its
    /// issuer identifier as its metadata says it (required for that grant, read as written:
    /// the server must not choose where the token goes, as it does not choose the enterprise
    /// grant's IdP).
    pub issuer: Option<String>,
    /// That authorization server's token endpoint, for one whose metadata names an endpoint on
    /// another origin; else the endpoint is taken from the issuer's metadata, on its origin.
    pub token_endpoint: Option<String>,
    /// The enterprise identity provider of the `enterprise` grant.
    pub idp: Option<IdpDef>,
}

/// `oauth.idp: { issuer, tokenEndpoint, clientId, clientSecret, idToken, idTokenFile }`: the
/// company's identity provider, approved by whoever wrote the definition (it is not
/// discovered from the server, which must not choose where the person's ID token goes).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct IdpDef {
    /// The IdP's issuer identifier, exactly as its metadata says.
    pub issuer: Option<String>,
    /// Its token endpoint; discovered from the issuer's metadata when absent.
    pub token_endpoint: Option<String>,
    /// toolport's client id at the IdP.
    pub client_id: Option<String>,
    /// That client's secret (HTTP Basic), if it is confidential.
    pub client_secret: Option<String>,
    /// The person's OIDC ID token from the IdP (usually `${VAR}`, set by the company's SSO tool).
    pub id_token: Option<String>,
    /// A file holding that ID token, read on every connect.
    pub id_token_file: Option<String>,
}

impl std::fmt::Debug for IdpDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let masked = |v: &Option<String>| v.as_ref().map(|_| MASK);
        f.debug_struct("IdpDef")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &masked(&self.client_secret))
            .field("id_token", &masked(&self.id_token))
            .field("id_token_file", &self.id_token_file)
            .finish()
    }
}

impl std::fmt::Debug for OAuthDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let masked = |v: &Option<String>| v.as_ref().map(|_| MASK);
        f.debug_struct("OAuthDef")
            .field("client_id", &self.client_id)
            .field("client_secret", &masked(&self.client_secret))
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("callback_port", &self.callback_port)
            .field("grant", &self.grant)
            .field("private_key", &masked(&self.private_key))
            .field("private_key_jwt", &self.private_key_jwt)
            .field("assertion", &masked(&self.assertion))
            .field("assertion_file", &self.assertion_file)
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("idp", &self.idp)
            .finish()
    }
}

/// The three kinds of plugin (DESIGN §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PluginKind {
    /// Moves JSON-RPC messages for servers whose `type` names it.
    Transport,
    /// Reviews (keeps, renames, hides, rejects) a server's tool names.
    NamePolicy,
    /// Converts tools to the shape an LLM sees.
    ToolShape,
}

impl PluginKind {
    /// The `kind` string used in config and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Transport => "transport",
            Self::NamePolicy => "name-policy",
            Self::ToolShape => "tool-shape",
        }
    }

    /// The kind a `kind` string (which is also its WIT world's name) names.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Transport, Self::NamePolicy, Self::ToolShape].into_iter().find(|k| k.as_str() == text)
    }
}

/// What a plugin or a sandboxed server may touch beyond nothing (DESIGN §5: closed by default).
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
        }
    }
}

/// One server after resolving the three layers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedServer {
    /// The definition.
    pub def: ServerDef,
    /// Enabled by the workspace (or injected by an ACP client).
    pub enabled: bool,
    /// Paused in this session.
    pub paused: bool,
    /// The validated transport, or the validation message (reference-behaviour A).
    pub transport: Result<TransportKind, String>,
}

impl ResolvedServer {
    /// Enabled, not paused and valid: the runtime should connect it.
    pub fn active(&self) -> bool {
        self.enabled && !self.paused && self.transport.is_ok()
    }
}

/// Everything a runtime needs to start, whatever layers it came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Resolved {
    /// Defined servers, in definition order.
    pub servers: Vec<ResolvedServer>,
    /// Names the workspace enables, in its order.
    pub enabled: Vec<String>,
    /// Names paused in this session.
    pub paused: Vec<String>,
    /// Enabled names with no definition: they show as `missing`.
    pub unknown_enabled: Vec<String>,
    /// Workspace settings (policy, shape, reserved names).
    pub settings: WorkspaceSettings,
    /// The store's plugin entries.
    pub plugins: Vec<PluginDef>,
    /// The workspace file the settings came from, named in errors about them; `None` when
    /// there is none (an ACP client's own servers).
    pub workspace_file: Option<PathBuf>,
}

/// The global store as read from `<home>/mcp.json`: server definitions and plugin entries in
/// file order. Loading never writes; edits go through `config/write.rs`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GlobalStore {
    /// The file it was read from (named in every error about it).
    pub path: PathBuf,
    /// `mcpServers`, normalised, in file order (blank names dropped; first of a duplicate wins).
    pub servers: Vec<ServerDef>,
    /// `plugins`, in file order, paths resolved against the store's folder.
    pub plugins: Vec<PluginDef>,
}

impl GlobalStore {
    /// The definition named exactly `name` (names are case-sensitive).
    pub fn server(&self, name: &str) -> Option<&ServerDef> {
        self.servers.iter().find(|s| s.name == name)
    }
}
