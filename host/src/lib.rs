//! toolport: turns MCP servers into a live, checked tool surface for coding agents.
//!
//! The pipeline every tool takes: the config layers (global store, workspace enablement,
//! session pauses) resolve into a [`Resolved`]; [`Runtime::start`] connects each
//! active server, lists its tools, applies the name policy and the host's collision rules,
//! shapes the tools with a tool-shape plugin, and serves the surface ([`Runtime::tools`],
//! [`Runtime::records`]) and the executor ([`Runtime::call`]). The `toolport` binary, the
//! interactive [`Session`], the ACP agent ([`serving::serve_acp`]) and the MCP server for agents
//! ([`serving::Gateway`], `toolport serve`) are clients of this API; see
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
//!
//! The root holds what this example and `host/examples/embed.rs` need; the rest is grouped by
//! the task a host does: [`store`] (what the definition files hold), [`edit`] (changing them),
//! [`questions`] (servers' questions to the user), [`serving`] (toolport as an MCP server and an
//! ACP agent), [`signin`], [`authz`], [`scan`], [`plugins`], [`sandbox`] (the launcher a binary
//! running sandboxed servers must call), [`audit`] and [`display`].
#![deny(missing_docs)]
// A type in a public signature is exported where a host can name it.
#![deny(unnameable_types)]

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

// The embedder's core: where the files live and what they resolve into; the runtime (start it,
// read the surface and the status, call tools, read resources and prompts); the interactive
// session; and the process hygiene a binary owes its servers. Everything else a host may need
// is in the task modules below, each named for what the host is doing.
pub use config::{ConfigError, Resolved, ResolvedServer, load_resolved};
/// Whose call it is (serve numbers each client call), in a [`CallContext`].
pub use observe::Caller;
pub use observe::Observer;
pub use paths::Paths;
/// Raises the soft limit on open files to the hard one: what a binary calls at start, since
/// plugins together may hold half of that limit in sockets (the rest stays the host's).
pub use plugin::raise_fd_limit;
/// Waits briefly until every call abandoned by its caller has had its `notifications/cancelled`
/// written: what a binary awaits before ending server processes on a signal.
pub use runtime::settle_cancellations;
pub use runtime::{
    CallContext, CallError, CallOutcome, CallProgress, NotUp, NotUpState, Revision, Runtime, RuntimeOptions,
    ToolOwners, ToolRecord,
};
/// Connect progress as events, for a host that shows it (the binary's spinners), and why a
/// connect failed.
pub use runtime::{ConnectEvent, ProgressSink};
pub use transport::ConnectError;
// Resources and prompts: the merged catalog, a read, a `prompts/get`.
pub use runtime::{Catalog, CatalogError, Offered, PromptOutcome, ResourceRead, ServerCatalog};
pub use session::complete::Known;
pub use session::{Reply, Session};
pub use status::{
    HeldTool, ServerState, ServerStatus, Trailer, render as render_status, render_json as render_status_json,
};
/// Ends every stdio server process group still alive (SIGTERM, a grace, SIGKILL): what a
/// binary calls before it exits or when it is signalled, so no server or helper outlives it.
pub use transport::end_server_processes;
/// On SIGINT or SIGTERM: every server group SIGTERMed at once, a short grace, SIGKILL, each
/// server reaped; and on a second signal, SIGKILL to them all without waiting.
pub use transport::{end_server_processes_promptly, kill_server_processes};

pub mod store {
    //! What the definition files hold: the global store's servers, plugins and defaults, a
    //! workspace's settings, and the checks that turn them into a [`Resolved`](crate::Resolved)
    //! (`resolve`, `validate`, and `check_pins_kept` for a surface that must not change).
    pub use crate::config::{
        AuditChoice, ConfirmSetting, DirGrant, GlobalStore, Grant, Grants, IdpDef, Limits, NativeLimits,
        NativeSandbox, OAuthDef, PluginDef, PluginKind, Roots, ServerDef, StoreDefaults, Surface, Timeouts,
        ToolFilter, ToolGlobs, TransportKind, TrustMode, WasmDef, WorkspaceSettings, resolve, validate,
    };
    /// What the files' parts are made of: bundles, the `secrets` setting, a variable expanded
    /// into a definition and where, a tool glob that does not parse.
    pub use crate::config::{BadGlob, Bundle, ExpandedIn, ExpandedVar, Secrets, SecretsMode};
    /// The `guards` lists: which guard plugins a request passes, and how; the warnings about
    /// entries that name no guard plugin.
    pub use crate::config::{GuardMode, GuardPhase, GuardScope, GuardUse, guard_chain, guard_misfits};
    pub use crate::runtime::{Approved, check_pins_kept};
}

pub mod edit {
    //! Changing the files: locked, atomic edits that keep unknown keys and the files'
    //! permissions. A server added, replaced, enabled, disabled or removed and one field set
    //! (`mcp add|set|unset`, `/mcp`, with the `mcp add` argument grammar they share); the
    //! store's defaults; plugin entries and a workspace's plugin choices (`plugin add|remove`,
    //! `workspace set|unset`); a sandboxed entry's grants and pin. And the same lock and link
    //! rules for other agents' config files (`install`, `mcp import`): [`LockAt`], [`edit_text`],
    //! [`refuse_links_out`].
    pub use crate::config::{
        AddRequest, EditError, SandboxChoice, ServerField, add_server, disable_server, enable_server,
        parse_add_args, put_server, remove_server, set_default_sandbox, set_server_field,
    };
    pub use crate::config::{
        GrantChange, GrantItem, GrantOutcome, GrantRequest, Pinned, SandboxEntry, grant_sandbox,
        pin_component, revoke_sandbox,
    };
    /// A config file's JSON read with the file named in its error, and two paths compared as
    /// the files they name.
    pub use crate::config::{LockAt, edit_text, parse_json, refuse_links_out, same_path};
    pub use crate::config::{
        PluginRequest, PluginUsers, SURFACE_KEY, WorkspacePluginKey, add_plugin, plugin_entry, remove_plugin,
        set_workspace_plugin, set_workspace_surface,
    };
}

pub mod questions {
    //! Servers' questions to the user: the elicitation form an embedding host answers through
    //! its [`Elicitor`] (default: decline), the confirmation toolport asks before a guarded
    //! call, sampling through a [`Sampler`] (default: refused, "this host has no model"), the
    //! bound on SEP-2322 input rounds; and a URL elicitation's page opened in a browser.
    pub use crate::browser::{Shown as BrowserShown, open as open_in_browser};
    pub use crate::runtime::{
        Choice, ConfirmAnswer, Confirmation, Elicitation, ElicitationAnswer, ElicitationKind,
        ElicitationModes, Elicitor, Field, FieldKind, Form, MAX_INPUT_ROUNDS, Sampler,
    };
}

pub mod serving {
    //! toolport as a server for agents: the surface as one MCP server ([`Gateway`], `toolport
    //! serve`, over stdio or streamable HTTP at `/mcp`) with its HTTP options, its lazy surface
    //! (`search_tools` over a BM25 [`ToolIndex`]), and the ACP agent ([`serve_acp`]).
    pub use crate::acp::{AcpLimits, AcpOptions, serve as serve_acp};
    pub use crate::gateway::{
        ConfigWatch, Gateway, HttpAuth, HttpOptions, OidcOptions, Per, Purpose, RateLimit, SessionKey,
        SessionKeyError,
    };
    pub use crate::runtime::{ToolHit, ToolIndex};
    pub use crate::serve::{LAZY_SERVER, lazy_tools};
    /// The token that stops [`Gateway::serve_http`] (tokio-util's, as rmcp takes it).
    pub use tokio_util::sync::CancellationToken;
}

pub mod signin {
    //! OAuth sign-in to remote servers ([`login`]), and where the credentials are kept.
    pub use crate::auth::store::{AccessToken, ServerCredentials, SignedIn as SignInState};
    pub use crate::auth::{Completion, CredentialsFile, ProofKey, SignedIn, no_login, not_remote};
    pub use crate::transport::login;
}

pub mod authz {
    //! Per-caller authorization of `toolport serve` by a Cedar policy file (`serve --policy`,
    //! `policy check`).
    pub use crate::policy::{
        Action, Decision, Hints, POLICY_FILE, Policy, PolicyError, Principal, Target, pinned_hints,
    };
}

pub mod scan {
    //! `toolport scan`: offline checks of what servers' definitions say (issue 28).
    pub use crate::trust::{
        Finding, ListedTool, Rule, RulesError, ServerDefinitions, Severity, Span, rules, scan as definitions,
    };
}

pub mod plugins {
    //! Plugins, for hosts and plugin authors who load and run components directly: the
    //! [`PluginHost`], a component inspected, and the WIT package and version it is built against.
    pub use crate::plugin::PACKAGE as WIT_PACKAGE;
    pub use crate::plugin::{
        CacheOutcome, Fault, GuardAnswer, GuardPlugin, HookContext, HookKind, Inspection, NamePolicy, Origin,
        PluginError, PluginHost, PluginLogLine, PluginSummary, SetupError, ToolInfo, ToolShape, Verdict,
        WIT_FOLDER, WIT_VERSION, builtin_bytes, inspect, sandbox_uses,
    };
}

pub mod sandbox {
    //! The native sandbox's launcher. A binary that embeds toolport and runs sandboxed servers
    //! must hand its own command line to [`launch`] when the first argument is [`LAUNCHER_ARG`]:
    //! the sandboxed server is started as the binary itself with that argument. And [`check`],
    //! what this machine's kernel allows (`toolport sandbox check`).
    pub use crate::transport::{
        CheckReport, LAUNCHER_ARG, SandboxEnded as Ended, SandboxError, check_sandbox as check,
        launch_sandboxed as launch,
    };
}

pub mod audit {
    //! What the host records (through its [`Observer`](crate::Observer), in
    //! [`RuntimeOptions`](crate::RuntimeOptions)): the audit log of every call, read, prompt and
    //! sign-in (issue 29) with its files and rotation, the trail of trust decisions read back,
    //! the notices, and the OTLP traces.
    pub use crate::notice::NoticePrinter;
    /// What a guard plugin did to an exchange, as its audit line lists it.
    pub use crate::observe::GuardStep;
    /// Why an observer's meter could not be built ([`Observer::with_metrics`](crate::Observer::with_metrics)).
    pub use crate::observe::ObserveError;
    /// The audit log's file under a home, its rotated files (`<file>.<n>`, 1 the newest) and
    /// how many are kept: what `toolport audit tail` reads.
    pub use crate::observe::audit_log::{
        AuditLine, AuditLog, AuditPrinter, KEPT as LOG_KEPT, file_in as log_file, rotated_file,
    };
    pub use crate::observe::traces::{Traces, start as start_traces};
    /// One exchange as the observer is handed it ([`Observer::finished`](crate::Observer::finished)).
    pub use crate::observe::{Exchange, Kind as ExchangeKind, Outcome as ExchangeOutcome};
    /// The trail of trust decisions read back, one server's newest first, and a line of it as
    /// `mcp get` shows it.
    pub use crate::trust::audit::{
        Action, AuditTrail, TrailEntry, entry_line as decision_line, recent as recent_decisions,
    };
}

pub mod display {
    //! Text a host shows: foreign text made safe for a terminal, URL secrets masked, a failure's
    //! innermost cause, a call rendered, and token counts under the one tokenizer every figure
    //! uses (`o200k_base`), per server and per tool (`tools --tokens`).
    /// A failure's innermost cause as one line, clipped and redacted (`toolport status`'s
    /// "cannot reach" message).
    pub use crate::cause::deepest_cause;
    /// What a secret value is shown as.
    pub use crate::config::MASK as SECRET_MASK;
    /// URL secrets (query values, userinfo) masked: the binary's printed errors; with the
    /// authorization code a library logs, its log writer.
    pub use crate::redact::{redact_log, redact_urls};
    pub use crate::runtime::{ServerCost, TokenCosts, ToolCost};
    pub use crate::text::{escape_line, escape_text};
    pub use crate::tokens::count as count_tokens;
    /// The secret scanner (gitleaks' rules and high-entropy tokens): a text's secrets, and the
    /// text with them (and any more the host found) replaced by `***`.
    pub use crate::trust::secrets::{Hit as SecretHit, redact as redact_secrets, scan as scan_secrets};
}

/// What this repository's own tests, benchmarks and fuzz targets reach for, and no embedder
/// should. Unstable and not an API: it changes with them, without notice.
#[doc(hidden)]
pub mod test_support {
    /// Where the build left the guest components (built-ins and test fixtures).
    pub use crate::plugin::PLUGIN_BUILD_DIR;
    /// A tool's pin as `.toolport/tools.lock` keeps it (its digest): for the checks' benchmark.
    pub use crate::trust::Pin as ToolPin;
}

/// The pure parsers, for the fuzz targets in `fuzz/` (cargo-fuzz builds with `--cfg fuzzing`).
#[cfg(fuzzing)]
pub mod fuzzing {
    pub use crate::config::{expand_vars, missing_rows};
    pub use crate::session::command::{parse as parse_session_line, parse_mcp};
}
