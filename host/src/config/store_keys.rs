//! The spelling of every key of the global store, declared once: its two sections, a server
//! definition's keys (`mcpServers.<name>`) and a plugin entry's (`plugins.<name>`), whose
//! sandbox keys (`grants`, `limits`, `sha256` and what is inside them) are a `wasm` server's
//! too. The readers, the writer, the merge that keeps a user's own keys, the validation
//! messages, the unknown-key warnings and the edits all name keys through these.
//!
//! A leaf: the readers of nested parts (`tool_filter.rs`, `sandbox_fields.rs`) sit below the
//! server definition and need the same spellings.

/// The store's section of server definitions.
pub(crate) const SERVERS_SECTION: &str = "mcpServers";
/// The store's section of plugin entries.
pub(crate) const PLUGINS_SECTION: &str = "plugins";

/// `type`: the transport (`TransportKind`'s names).
pub(crate) const TYPE: &str = "type";
/// `url`: the endpoint of a network transport.
pub(crate) const URL: &str = "url";
/// `command`: the program of a `stdio` server.
pub(crate) const COMMAND: &str = "command";
/// `args`: its arguments (a `wasm` server's too).
pub(crate) const ARGS: &str = "args";
/// `env`: extra environment (a `wasm` server's too).
pub(crate) const ENV: &str = "env";
/// `headers`: extra HTTP headers.
pub(crate) const HEADERS: &str = "headers";
/// `cwd`: the child's working folder.
pub(crate) const CWD: &str = "cwd";
/// `inheritEnv`: whether the child gets toolport's whole environment.
pub(crate) const INHERIT_ENV: &str = "inheritEnv";
/// `timeouts`: see [`timeouts`].
pub(crate) const TIMEOUTS: &str = "timeouts";
/// `oauth`: see [`oauth`].
pub(crate) const OAUTH: &str = "oauth";
/// `tools`: see [`tools`].
pub(crate) const TOOLS: &str = "tools";
/// `roots`: what the server is told its roots are.
pub(crate) const ROOTS: &str = "roots";
/// `component`: a `wasm` server's component file.
pub(crate) const COMPONENT: &str = "component";
/// `builtin`: one of the `wasm` servers embedded in the binary.
pub(crate) const BUILTIN: &str = "builtin";
/// `grants`: see [`grants`] (a plugin entry's too).
pub(crate) const GRANTS: &str = "grants";
/// `limits`: see [`limits`] (a plugin entry's too).
pub(crate) const LIMITS: &str = "limits";
/// `sha256`: a component's pinned digest (a plugin entry's too).
pub(crate) const SHA256: &str = "sha256";

/// Every server's own keys, in the order the store writes them.
pub(crate) const SERVER: [&str; 12] =
    [TYPE, URL, COMMAND, ARGS, ENV, HEADERS, CWD, INHERIT_ENV, TIMEOUTS, OAUTH, TOOLS, ROOTS];

/// The keys of a `wasm` server's sandbox (a server of another type may use them for itself).
pub(crate) const WASM: [&str; 5] = [COMPONENT, BUILTIN, GRANTS, LIMITS, SHA256];

/// The objects whose unknown keys survive a merge.
pub(crate) const NESTED: [&str; 4] = [OAUTH, GRANTS, LIMITS, TOOLS];

/// A plugin entry's own keys; the rest are the sandbox keys a `wasm` server has too.
pub(crate) mod plugin {
    use super::{GRANTS, LIMITS, SHA256};

    /// `kind`: what the plugin is for (`PluginKind`'s names).
    pub(crate) const KIND: &str = "kind";
    /// `path`: its component file.
    pub(crate) const PATH: &str = "path";
    /// Every key of a plugin entry (`unknown_keys` warns about the others).
    pub(crate) const KEYS: [&str; 5] = [KIND, PATH, GRANTS, LIMITS, SHA256];
}

/// `timeouts: { connectMs, listMs, callMs }`.
pub(crate) mod timeouts {
    pub(crate) const CONNECT_MS: &str = "connectMs";
    pub(crate) const LIST_MS: &str = "listMs";
    pub(crate) const CALL_MS: &str = "callMs";
}

/// `tools: { include, exclude }`.
pub(crate) mod tools {
    pub(crate) const INCLUDE: &str = "include";
    pub(crate) const EXCLUDE: &str = "exclude";
    /// Both.
    pub(crate) const KEYS: [&str; 2] = [INCLUDE, EXCLUDE];
}

/// `grants: { hosts, env, dirs }`, a folder `{ host, guest, mode }`.
pub(crate) mod grants {
    pub(crate) const HOSTS: &str = "hosts";
    pub(crate) const ENV: &str = "env";
    pub(crate) const DIRS: &str = "dirs";
    /// The keys of `grants` (`unknown_keys` warns about the others).
    pub(crate) const KEYS: [&str; 3] = [HOSTS, ENV, DIRS];

    /// The keys of a `grants.dirs` object.
    pub(crate) mod dir {
        pub(crate) const HOST: &str = "host";
        pub(crate) const GUEST: &str = "guest";
        pub(crate) const MODE: &str = "mode";
        /// All three (`unknown_keys` warns about the others).
        pub(crate) const KEYS: [&str; 3] = [HOST, GUEST, MODE];
    }
}

/// `limits: { memoryMb, callMs, cpuPercent }`.
pub(crate) mod limits {
    pub(crate) const MEMORY_MB: &str = "memoryMb";
    pub(crate) const CALL_MS: &str = "callMs";
    pub(crate) const CPU_PERCENT: &str = "cpuPercent";
    /// All three (`unknown_keys` warns about the others).
    pub(crate) const KEYS: [&str; 3] = [MEMORY_MB, CALL_MS, CPU_PERCENT];
}

/// `oauth: {…}` and its `idp: {…}`.
pub(crate) mod oauth {
    pub(crate) const CLIENT_ID: &str = "clientId";
    pub(crate) const CLIENT_SECRET: &str = "clientSecret";
    pub(crate) const CLIENT_METADATA_URL: &str = "clientMetadataUrl";
    pub(crate) const SCOPES: &str = "scopes";
    pub(crate) const CALLBACK_PORT: &str = "callbackPort";
    pub(crate) const GRANT: &str = "grant";
    pub(crate) const PRIVATE_KEY: &str = "privateKey";
    pub(crate) const PRIVATE_KEY_JWT: &str = "privateKeyJwt";
    pub(crate) const ASSERTION: &str = "assertion";
    pub(crate) const ASSERTION_FILE: &str = "assertionFile";
    pub(crate) const ISSUER: &str = "issuer";
    pub(crate) const TOKEN_ENDPOINT: &str = "tokenEndpoint";
    pub(crate) const IDP: &str = "idp";
    /// Every key of `oauth`, in the order the store writes them.
    pub(crate) const KEYS: [&str; 13] = [
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
    pub(crate) mod idp {
        pub(crate) use super::{CLIENT_ID, CLIENT_SECRET, ISSUER, TOKEN_ENDPOINT};
        pub(crate) const ID_TOKEN: &str = "idToken";
        pub(crate) const ID_TOKEN_FILE: &str = "idTokenFile";
    }
}
