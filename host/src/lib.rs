//! toolport: turns MCP servers into a live, checked tool surface for coding agents.
//!
//! The pipeline every tool takes: the config layers (global store, workspace enablement,
//! session pauses) resolve into a [`Resolved`]; [`Runtime::start`] connects each
//! active server, lists its tools, applies the name policy and the host's collision rules,
//! shapes the tools with a tool-shape plugin, and serves the surface ([`Runtime::tools`],
//! [`Runtime::records`]) and the executor ([`Runtime::call`]). The `toolport` binary, the
//! interactive [`Session`], the ACP agent ([`serve_acp`]) and the MCP server for agents
//! ([`Gateway`], `toolport serve`) are clients of this API; see
//! `ARCHITECTURE.md` for the map of the modules behind it.
//!
//! ```no_run
//! # async fn run() -> anyhow::Result<()> {
//! let paths = toolport::Paths::discover(None, None)?;
//! let resolved = toolport::load_resolved(&paths, &Default::default())?;
//! let options = toolport::RuntimeOptions::for_paths(&paths, paths.workspace_root.clone());
//! let runtime = toolport::Runtime::start(resolved, options).await?;
//! println!("{}", toolport::render_status(&runtime.status(), None));
//! let outcome = runtime.call("echo", r#"{"message": "hi"}"#).await?;
//! println!("{}", outcome.render_text());
//! runtime.shutdown().await;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod acp;
mod auth;
mod browser;
mod cause;
mod config;
mod file_stamp;
mod fix_command;
mod gateway;
mod http_layer;
mod message_error;
mod notice;
mod observe;
mod paths;
mod plugin;
mod policy;
mod redact;
mod results_store;
mod runtime;
mod serve;
mod session;
mod status;
mod text;
mod tokens;
mod transport;
mod trust;

// The runtime: start it, read the surface and the status, call tools.
/// Raises the soft limit on open files to the hard one: what a binary calls at start, since
/// plugins together may hold half of that limit in sockets (the rest stays the host's).
pub use observe::traces::{Traces, start as start_traces};
pub use plugin::raise_fd_limit;
/// Per-caller authorization of `serve` by a Cedar policy file (`serve --policy`, `policy check`).
pub use policy::{
    Action as PolicyAction, Decision, Hints, POLICY_FILE, Policy, PolicyError, Principal,
    Target as PolicyTarget, pinned_hints,
};
pub use runtime::{
    CallContext, CallError, CallOutcome, CallProgress, NotUp, NotUpState, Revision, Runtime, RuntimeOptions,
    ToolOwners, ToolRecord, check_pins_kept, render_call,
};
/// Connect progress as events, for a host that shows it (the binary's spinners).
pub use runtime::{ConnectEvent, ProgressSink};
/// What the surface costs in tokens, per server and per tool (`tools --tokens`).
pub use runtime::{ServerCost, TokenCosts, ToolCost};
// Servers' questions: the elicitation form an embedding host answers (default: decline),
// sampling (default: refused, "this host has no model"), the bound on SEP-2322 input rounds.
pub use runtime::{
    Choice, ConfirmAnswer, Confirmation, DeclineAll, Elicitation, ElicitationAnswer, ElicitationKind,
    ElicitationModes, Elicitor, Field, FieldKind, Form, MAX_INPUT_ROUNDS, NO_MODEL, Sampler, confirm_form,
};
// Resources and prompts: the merged catalog, a read, a `prompts/get`.
/// Waits briefly until every call abandoned by its caller has had its `notifications/cancelled`
/// written: what a binary awaits before ending server processes on a signal.
pub use runtime::settle_cancellations;
pub use runtime::{Catalog, CatalogError, Offered, PromptOutcome, ResourceRead};
// The lazy surface's search: BM25 over a registry snapshot (what `search_tools` answers from).
pub use runtime::{ToolHit, ToolIndex};
pub use status::{
    HeldTool, ServerState, ServerStatus, Trailer, render as render_status, render_json as render_status_json,
};
/// Ends every stdio server process group still alive (SIGTERM, a grace, SIGKILL): what a
/// binary calls before it exits or when it is signalled, so no server or helper outlives it.
pub use transport::end_server_processes;
/// On SIGINT or SIGTERM: every server group SIGTERMed at once, a short grace, SIGKILL, each
/// server reaped; and on a second signal, SIGKILL to them all without waiting.
pub use transport::{end_server_processes_promptly, kill_server_processes};

// Where the files live, and what they resolve into.
/// OAuth sign-in for the CLI and embedding hosts.
pub use auth::{Completion as SignInCompletion, CredentialsFile, SignedIn, no_login, not_remote};
pub use config::{
    ConfigError, ConfirmSetting, DirGrant, EditError, GlobalStore, Grant, Grants, IdpDef, Limits,
    NativeLimits, NativeSandbox, OAuthDef, PluginDef, PluginKind, Resolved, ResolvedServer, Roots, ServerDef,
    StoreDefaults, Surface, Timeouts, ToolFilter, ToolGlobs, TransportKind, TrustMode, WasmDef,
    WorkspaceSettings, load_resolved, resolve, validate,
};
pub use notice::NoticePrinter;
// Where the host records what passes through (its `Observer`, in `RuntimeOptions`): the audit
// log of every call, read, prompt and sign-in (issue 29), the trail of trust decisions, the
// notices; and the workspace's `audit` setting.
pub use config::AuditChoice;
pub use observe::Observer;
pub use observe::audit_log::{AuditLine, AuditLog, AuditPrinter};
pub use paths::Paths;
pub use transport::login;

// Entry points built on the runtime: the interactive session and the ACP agent.
pub use acp::{AcpLimits, AcpOptions, serve as serve_acp};
// `toolport serve`: the surface as one MCP server (stdio, or streamable HTTP at `/mcp`).
pub use gateway::{
    ConfigWatch, Gateway, HttpAuth, HttpOptions, OidcOptions, RateLimit, SessionKey, SessionKeyError,
};
pub use serve::{Caller, LAZY_SERVER, lazy_tools};
pub use session::{Reply, Session};
// `toolport scan`: offline checks of what servers' definitions say (issue 28).
/// The token that stops [`Gateway::serve_http`] (tokio-util's, as rmcp takes it).
pub use tokio_util::sync::CancellationToken;
pub use trust::audit::{Action as AuditAction, AuditTrail, TrailEntry};
pub use trust::{
    Finding, ListedTool, Rule, RulesError, ServerDefinitions, Severity, Span, rules as scan_rules,
    scan as scan_definitions,
};

// Plugins, for hosts and plugin authors who load and run components directly.
pub use plugin::PACKAGE as WIT_PACKAGE;
pub use plugin::{
    CacheOutcome, Fault, Inspection, NamePolicy, Origin, PluginError, PluginHost, PluginLogLine,
    PluginSummary, ToolInfo, ToolShape, Verdict, WIT_VERSION, inspect, sandbox_uses,
};

/// The binary's support surface: what the `toolport` command line, its tour and its demo
/// server use from the library beyond the API above — the config files' edits (toolport's own,
/// and the locked writes of other agents' files), the text, redaction and token helpers of its
/// views, what its terminal code needs — and what this repository's own tests, benchmarks and
/// fuzz targets reach for. Unstable and not an API: it changes with the binary, without notice.
#[doc(hidden)]
pub mod cli_support {
    pub use crate::transport::{
        CheckReport as SandboxCheck, LAUNCHER_ARG as SANDBOX_LAUNCHER_ARG, SandboxEnded, check_sandbox,
        launch_sandboxed,
    };
    // Changing the files: locked, atomic edits that keep unknown keys (what `mcp add` and `/mcp`
    // do), and the `mcp add` argument grammar they share.
    pub use crate::config::{
        ADD_USAGE, AddRequest, SandboxChoice, add_server, disable_server, enable_server, parse_add_args,
        put_server, remove_server,
    };
    // The store's `defaults` for servers added from now on (`mcp default`), edited the same way.
    pub use crate::config::set_default_sandbox;
    // One field of a server definition set or unset (`mcp set`, `mcp unset`), edited the same way.
    pub use crate::config::{SERVER_FIELD_KEYS, ServerField, set_server_field};
    // The store's plugin entries and the workspace's plugin choices (`plugin add|remove`,
    // `workspace set|unset`), edited the same way.
    pub use crate::config::{
        PluginRequest, PluginUsers, SURFACE_KEY, WorkspacePluginKey, add_plugin, plugin_entry, remove_plugin,
        set_workspace_plugin, set_workspace_surface,
    };
    // A sandboxed entry's grants and pin (`mcp|plugin grant|revoke|pin`), edited the same way.
    /// What a secret value is shown as.
    pub use crate::config::MASK as SECRET_MASK;
    pub use crate::config::{
        GrantChange, GrantItem, GrantOutcome, GrantRequest, Pinned, SandboxEntry, grant_sandbox,
        pin_component, revoke_sandbox,
    };
    /// A config file's JSON read with the file named in its error, and two paths compared as
    /// the files they name.
    pub use crate::config::{parse_json, same_path};

    // The terminal code that lives in the binary (issue 47): other agents' config files
    // written under the same lock and link rules as toolport's own (`install`, `mcp import`),
    // a server's page opened in a browser (URL elicitation), and the session line editor's
    // completion from what the session knows.
    pub use crate::browser::{Shown as BrowserShown, open as open_in_browser};
    pub use crate::config::{LockAt, edit_text, refuse_links_out};
    pub use crate::session::complete::{Known, complete};

    /// Foreign text made safe for a terminal: what every text view of the binary uses.
    pub use crate::text::{escape_line, escape_text};
    /// Token counts under the one tokenizer every figure uses (`o200k_base`).
    pub use crate::tokens::count as count_tokens;

    /// A failure's innermost cause as one line, clipped and redacted (`toolport status`'s "cannot
    /// reach" message).
    pub use crate::cause::deepest_cause;
    /// URL secrets (query values, userinfo) masked: the binary's printed errors; with the
    /// authorization code a library logs, its log writer.
    pub use crate::redact::{redact_log, redact_urls};

    /// The audit log's file under a home, its rotated files (`<file>.<n>`, 1 the newest) and
    /// how many are kept: what `toolport audit tail` reads.
    pub use crate::observe::audit_log::{KEPT as AUDIT_LOG_KEPT, file_in as audit_log_file, rotated_file};
    /// A tool's pin as `.toolport/tools.lock` keeps it (its digest): for the checks' benchmark.
    pub use crate::trust::Pin as ToolPin;
    /// The trail of trust decisions read back, one server's newest first, and a line of it as
    /// `mcp get` shows it.
    pub use crate::trust::audit::{entry_line as decision_line, recent as recent_decisions};
    /// The secret scanner (`trust/secrets`), for its benchmark: a text's secrets, and the
    /// text with them replaced by `***`.
    pub use crate::trust::secrets::{redact as redact_secrets, scan as scan_secrets};

    /// Where the build left the guest components (built-ins and test fixtures) and the
    /// built-ins' embedded bytes: for this repository's own tests and benchmarks.
    pub use crate::plugin::{PLUGIN_BUILD_DIR, builtin_bytes};
}

/// The pure parsers, for the fuzz targets in `fuzz/` (cargo-fuzz builds with `--cfg fuzzing`).
#[cfg(fuzzing)]
pub mod fuzzing {
    pub use crate::config::{expand_vars, missing_rows};
    pub use crate::session::command::{parse as parse_session_line, parse_mcp};
}
