//! The spelling of every key of the global store, declared once: its sections, a server
//! definition's keys (`mcpServers.<name>`) and a plugin entry's (`plugins.<name>`), whose
//! sandbox keys (`grants`, `limits`, `sha256` and what is inside them) are a `wasm` server's
//! too (and `grants` and `limits` a sandboxed `stdio` server's), and the store's `defaults`.
//! The readers, the writer, the merge that keeps a user's own keys, the validation messages,
//! the unknown-key warnings and the edits all name keys through these.
//!
//! A leaf: the readers of nested parts (`tool_filter.rs`, `sandbox_fields.rs`) sit below the
//! server definition and need the same spellings.

/// The store's section of server definitions.
pub(in crate::config) const SERVERS_SECTION: &str = "mcpServers";
/// The store's section of plugin entries.
pub(in crate::config) const PLUGINS_SECTION: &str = "plugins";
/// The store's `defaults`: see [`defaults`].
pub(in crate::config) const DEFAULTS_SECTION: &str = "defaults";

/// `type`: the transport (`TransportKind`'s names).
pub(in crate::config) const TYPE: &str = "type";
/// `url`: the endpoint of a network transport.
pub(in crate::config) const URL: &str = "url";
/// `command`: the program of a `stdio` server.
pub(in crate::config) const COMMAND: &str = "command";
/// `args`: its arguments (a `wasm` server's too).
pub(in crate::config) const ARGS: &str = "args";
/// `env`: extra environment (a `wasm` server's too).
pub(in crate::config) const ENV: &str = "env";
/// `headers`: extra HTTP headers.
pub(in crate::config) const HEADERS: &str = "headers";
/// `cwd`: the child's working folder.
pub(in crate::config) const CWD: &str = "cwd";
/// `inheritEnv`: whether the child gets toolport's whole environment.
pub(in crate::config) const INHERIT_ENV: &str = "inheritEnv";
/// `timeouts`: see [`timeouts`].
pub(in crate::config) const TIMEOUTS: &str = "timeouts";
/// `oauth`: see [`oauth`].
pub(in crate::config) const OAUTH: &str = "oauth";
/// `tools`: see [`tools`].
pub(in crate::config) const TOOLS: &str = "tools";
/// `roots`: what the server is told its roots are.
pub(in crate::config) const ROOTS: &str = "roots";
/// `protocolVersion`: the one MCP revision toolport speaks with the server.
pub(in crate::config) const PROTOCOL_VERSION: &str = "protocolVersion";
/// `component`: a `wasm` server's component file.
pub(in crate::config) const COMPONENT: &str = "component";
/// `builtin`: one of the `wasm` servers embedded in the binary.
pub(in crate::config) const BUILTIN: &str = "builtin";
/// `grants`: see [`grants`] (a plugin entry's too).
pub(in crate::config) const GRANTS: &str = "grants";
/// `limits`: see [`limits`] (a plugin entry's too).
pub(in crate::config) const LIMITS: &str = "limits";
/// `sha256`: a component's pinned digest (a plugin entry's too).
pub(in crate::config) const SHA256: &str = "sha256";
/// `sandbox`: a `stdio` server started under the OS sandbox; see [`sandbox`].
pub(in crate::config) const SANDBOX: &str = "sandbox";
/// `guards`: the guard plugins a server's requests pass; see [`guard`]. The workspace file's
/// key of the same name is spelled here too.
pub(in crate::config) const GUARDS: &str = "guards";

/// Every server's own keys, in the order the store writes them.
pub(in crate::config) const SERVER: [&str; 15] = [
    TYPE,
    URL,
    COMMAND,
    ARGS,
    ENV,
    HEADERS,
    CWD,
    INHERIT_ENV,
    TIMEOUTS,
    OAUTH,
    TOOLS,
    ROOTS,
    PROTOCOL_VERSION,
    SANDBOX,
    GUARDS,
];

/// The keys of a `wasm` server's sandbox (a server of another type may use them for itself).
pub(in crate::config) const WASM: [&str; 5] = [COMPONENT, BUILTIN, GRANTS, LIMITS, SHA256];

/// The keys a `stdio` server's OS sandbox reads besides `sandbox` itself, when it is on. Off,
/// they are the server's own (kept, and warned about: they would do nothing).
pub(in crate::config) const NATIVE: [&str; 2] = [GRANTS, LIMITS];

/// The objects whose unknown keys survive a merge.
pub(in crate::config) const NESTED: [&str; 5] = [OAUTH, GRANTS, LIMITS, TOOLS, SANDBOX];

/// `sandbox: { required }`, the options of a `stdio` server's OS sandbox (`true` is `{}`).
pub(in crate::config) mod sandbox {
    /// `required: false`: where the machine cannot sandbox, start the server unconfined.
    pub(in crate::config) const REQUIRED: &str = "required";
    /// Every option (`unknown_keys` warns about the others).
    pub(in crate::config) const KEYS: [&str; 1] = [REQUIRED];
}

/// `defaults: { sandbox }`, the store's choices for servers added from now on.
pub(in crate::config) mod defaults {
    /// `sandbox: true`: every `stdio` server added is written with `"sandbox": true`.
    pub(in crate::config) const SANDBOX: &str = "sandbox";
    /// Every key (`unknown_keys` warns about the others).
    pub(in crate::config) const KEYS: [&str; 1] = [SANDBOX];
}

/// A plugin entry's own keys; the rest are the sandbox keys a `wasm` server has too.
pub(in crate::config) mod plugin {
    use super::{GRANTS, LIMITS, SHA256};

    /// `kind`: what the plugin is for (`PluginKind`'s names).
    pub(in crate::config) const KIND: &str = "kind";
    /// `path`: its component file.
    pub(in crate::config) const PATH: &str = "path";
    /// Every key of a plugin entry (`unknown_keys` warns about the others).
    pub(in crate::config) const KEYS: [&str; 5] = [KIND, PATH, GRANTS, LIMITS, SHA256];
}

/// One entry of `guards` (a server's or the workspace's): a plugin's name, or
/// `{ plugin, tools, phase, mode, failOpen }`.
pub(in crate::config) mod guard {
    /// `plugin`: the guard plugin's name (a `plugins` entry of kind `guard`).
    pub(in crate::config) const PLUGIN: &str = "plugin";
    /// `tools`: globs on the names a request is for.
    pub(in crate::config) const TOOLS: &str = "tools";
    /// `phase`: `request`, `response` or `both`.
    pub(in crate::config) const PHASE: &str = "phase";
    /// `mode`: `enforce` or `audit`.
    pub(in crate::config) const MODE: &str = "mode";
    /// `failOpen`: what a guard that fails (or is missing) does to the request.
    pub(in crate::config) const FAIL_OPEN: &str = "failOpen";
    /// Every key of an entry, in the order toolport writes them (`unknown_keys` warns about
    /// the others).
    pub(in crate::config) const KEYS: [&str; 5] = [PLUGIN, TOOLS, PHASE, MODE, FAIL_OPEN];
}

/// `timeouts: { connectMs, listMs, callMs }`.
pub(in crate::config) mod timeouts {
    pub(in crate::config) const CONNECT_MS: &str = "connectMs";
    pub(in crate::config) const LIST_MS: &str = "listMs";
    pub(in crate::config) const CALL_MS: &str = "callMs";
}

/// `tools: { include, exclude }`.
pub(in crate::config) mod tools {
    pub(in crate::config) const INCLUDE: &str = "include";
    pub(in crate::config) const EXCLUDE: &str = "exclude";
    /// Both.
    pub(in crate::config) const KEYS: [&str; 2] = [INCLUDE, EXCLUDE];
}

/// `grants: { hosts, env, dirs }`, a folder `{ host, guest, mode }`.
pub(in crate::config) mod grants {
    pub(in crate::config) const HOSTS: &str = "hosts";
    pub(in crate::config) const ENV: &str = "env";
    pub(in crate::config) const DIRS: &str = "dirs";
    /// The keys of `grants` (`unknown_keys` warns about the others).
    pub(in crate::config) const KEYS: [&str; 3] = [HOSTS, ENV, DIRS];

    /// The keys of a `grants.dirs` object.
    pub(in crate::config) mod dir {
        pub(in crate::config) const HOST: &str = "host";
        pub(in crate::config) const GUEST: &str = "guest";
        pub(in crate::config) const MODE: &str = "mode";
        /// All three (`unknown_keys` warns about the others).
        pub(in crate::config) const KEYS: [&str; 3] = [HOST, GUEST, MODE];
    }
}

/// `limits: { memoryMb, callMs, cpuPercent }` of a plugin or a `wasm` server, and
/// `limits: { memoryMb, processes, openFiles }` of a sandboxed `stdio` server.
pub(in crate::config) mod limits {
    pub(in crate::config) const MEMORY_MB: &str = "memoryMb";
    pub(in crate::config) const CALL_MS: &str = "callMs";
    pub(in crate::config) const CPU_PERCENT: &str = "cpuPercent";
    pub(in crate::config) const PROCESSES: &str = "processes";
    pub(in crate::config) const OPEN_FILES: &str = "openFiles";
    /// A guest's three (`unknown_keys` warns about the others).
    pub(in crate::config) const KEYS: [&str; 3] = [MEMORY_MB, CALL_MS, CPU_PERCENT];
    /// A sandboxed `stdio` server's three (`unknown_keys` warns about the others).
    pub(in crate::config) const NATIVE_KEYS: [&str; 3] = [MEMORY_MB, PROCESSES, OPEN_FILES];
}

/// `oauth: {…}` and its `idp: {…}`.
pub(in crate::config) mod oauth {
    pub(in crate::config) const CLIENT_ID: &str = "clientId";
    pub(in crate::config) const CLIENT_SECRET: &str = "clientSecret";
    pub(in crate::config) const CLIENT_METADATA_URL: &str = "clientMetadataUrl";
    pub(in crate::config) const SCOPES: &str = "scopes";
    pub(in crate::config) const CALLBACK_PORT: &str = "callbackPort";
    pub(in crate::config) const GRANT: &str = "grant";
    pub(in crate::config) const PRIVATE_KEY: &str = "privateKey";
    pub(in crate::config) const PRIVATE_KEY_JWT: &str = "privateKeyJwt";
    pub(in crate::config) const ASSERTION: &str = "assertion";
    pub(in crate::config) const ASSERTION_FILE: &str = "assertionFile";
    pub(in crate::config) const ISSUER: &str = "issuer";
    pub(in crate::config) const TOKEN_ENDPOINT: &str = "tokenEndpoint";
    pub(in crate::config) const IDP: &str = "idp";
    /// Every key of `oauth`, in the order the store writes them.
    pub(in crate::config) const KEYS: [&str; 13] = [
        CLIENT_ID,
        CLIENT_SECRET,
        CLIENT_METADATA_URL,
        SCOPES,
        CALLBACK_PORT,
        GRANT,
        PRIVATE_KEY,
        PRIVATE_KEY_JWT,
        ASSERTION,
        ASSERTION_FILE,
        ISSUER,
        TOKEN_ENDPOINT,
        IDP,
    ];

    /// `oauth.idp: { issuer, tokenEndpoint, clientId, clientSecret, idToken, idTokenFile }`.
    pub(in crate::config) mod idp {
        pub(in crate::config) use super::{CLIENT_ID, CLIENT_SECRET, ISSUER, TOKEN_ENDPOINT};
        pub(in crate::config) const ID_TOKEN: &str = "idToken";
        pub(in crate::config) const ID_TOKEN_FILE: &str = "idTokenFile";
    }
}
