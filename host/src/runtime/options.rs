//! How a host starts the runtime: everything that is not configuration (which lives in the
//! resolved config) but a choice of the embedding program.

use std::path::PathBuf;
use std::sync::Arc;

use super::progress::ProgressSink;
use super::questions::elicitation::Elicitor;
use super::questions::sampling::Sampler;
use crate::observe::Observer;
use crate::paths::Paths;

/// A host's choices for one runtime. `Default` is what a library user wants: no built-in tools
/// of its own, no progress reports, plugins compiled in memory, every elicitation declined, sampling
/// refused, no root, nothing recorded on file.
#[derive(Clone, Default)]
pub struct RuntimeOptions {
    /// The embedding agent's own tool names: reserved like the workspace's reserved names, so
    /// no MCP tool can shadow a built-in.
    pub builtin_tools: Vec<String>,
    /// Who is told of each server's connect as it starts and ends (the binary draws
    /// spinners from it). `None`: nobody.
    pub progress: Option<Arc<dyn ProgressSink>>,
    /// Where compiled plugins are cached between runs (`<home>/cache`; the built-ins then use
    /// the user's shared cache, see `PluginHost::new`). `None` compiles every plugin in memory
    /// on each start, which costs tens of milliseconds per plugin.
    pub cache_dir: Option<PathBuf>,
    /// Who answers the servers' elicitations (form and URL mode, and the input requests of
    /// SEP-2322). `None` declines every one and advertises no elicitation.
    pub elicitor: Option<Arc<dyn Elicitor>>,
    /// Who answers `sampling/createMessage`. `None` refuses with "this host has no model".
    pub sampler: Option<Arc<dyn Sampler>>,
    /// The workspace root, the one root `roots/list` answers (an absolute folder).
    pub workspace_root: Option<PathBuf>,
    /// `<home>/credentials.json`, where OAuth tokens live. `None`: a server that asks for a
    /// sign-in stays at "authorization required" (an embedding host that signs in itself).
    pub credentials: Option<PathBuf>,
    /// A person is at hand to sign in (the interactive session): a server asking for more
    /// scope (`403 insufficient_scope`) gets the browser sign-in at once. Otherwise (`serve`,
    /// `call`, `mcp list`, ACP, a library) no browser ever opens by itself: the call fails with
    /// "authorization required: run toolport mcp login NAME", and that login asks for the scope.
    pub sign_in: bool,
    /// `<home>/results/`, where a call result over the workspace's `maxResultTokens` is kept
    /// whole while the caller gets its beginning and a note (`large_results.rs`). The note and
    /// the errors name it `<home>/results`, whatever folder this is: its absolute path is not
    /// the caller's business. `None` passes every result on whole, however large (an
    /// embedding host that bounds results itself).
    pub results_dir: Option<PathBuf>,
    /// `<home>/listings/`, where each server's last-known listing is kept: recorded whenever
    /// a server is listed live (`listing_store.rs`). `None` records nothing (the demo, a
    /// library that keeps no history).
    pub listings_dir: Option<PathBuf>,
    /// Start from the last-known listings in `listings_dir` (`serve`): a server still
    /// connecting lists its tools as last listed, every host rule applied, and a call of one
    /// waits for the server.
    pub from_known_listings: bool,
    /// Another place that knows which servers list a tool (a listing kept from an earlier
    /// run), asked only when a call names no tool on the surface: with the tool's pins and
    /// its servers' tool filters, it lets "Unknown MCP tool" name the tool's server and why
    /// that server is not up. `None`: those two alone.
    pub tool_owners: Option<Arc<dyn ToolOwners>>,
    /// Where what passes through is recorded: the audit log, the trail of trust decisions,
    /// the notices for the person (a sign-in address, serve's reconnects). The default writes
    /// no file and makes notices `tracing` events.
    pub observer: Observer,
}

impl RuntimeOptions {
    /// These options with `observer` recording what passes through.
    pub fn with_observer(mut self, observer: Observer) -> Self {
        self.observer = observer;
        self
    }
}

impl RuntimeOptions {
    /// The options of a host that keeps its files in `paths`' home, with `workspace_root` as
    /// the one root: compiled plugins cached in `<home>/cache`, OAuth tokens in
    /// `<home>/credentials.json`, large results kept in `<home>/results/`. Every other choice
    /// is [`Default`]'s until a setter below changes it. Every entry point starts from this,
    /// so none forgets a folder.
    pub fn for_paths(paths: &Paths, workspace_root: impl Into<PathBuf>) -> Self {
        Self::default().with_paths(paths, workspace_root)
    }

    /// These options with the folders [`RuntimeOptions::for_paths`] fills: what an entry point
    /// given a host's other choices applies (the session, an ACP session's own `cwd`).
    pub fn with_paths(mut self, paths: &Paths, workspace_root: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(paths.cache_dir());
        self.credentials = Some(paths.credentials());
        self.results_dir = Some(paths.results_dir());
        self.workspace_root = Some(workspace_root.into());
        self
    }

    /// Each server's listing recorded in `<home>/listings/` when it is listed live
    /// ([`RuntimeOptions::listings_dir`]).
    pub fn with_listings(mut self, paths: &Paths) -> Self {
        self.listings_dir = Some(paths.listings_dir());
        self
    }

    /// Start from the listings last recorded ([`RuntimeOptions::from_known_listings`]).
    pub fn from_known_listings(mut self) -> Self {
        self.from_known_listings = true;
        self
    }

    /// Connect progress reported to `sink` ([`RuntimeOptions::progress`]).
    pub fn with_progress(mut self, sink: Option<Arc<dyn ProgressSink>>) -> Self {
        self.progress = sink;
        self
    }

    /// The servers' elicitations answered by `elicitor` ([`RuntimeOptions::elicitor`]).
    pub fn with_elicitor(mut self, elicitor: Arc<dyn Elicitor>) -> Self {
        self.elicitor = Some(elicitor);
        self
    }

    /// Whether a person is at hand to sign in ([`RuntimeOptions::sign_in`]).
    pub fn with_sign_in(mut self, sign_in: bool) -> Self {
        self.sign_in = sign_in;
        self
    }
}

/// Which servers list a tool under a final name, from what a host kept (a last-known listing):
/// one source of the owner a call of a tool whose server is not up is told about. Any
/// `Fn(&str) -> Vec<String>` is one.
pub trait ToolOwners: Send + Sync {
    /// The servers (by name) known to list `tool`, in any order; empty when none is known.
    fn owners_of(&self, tool: &str) -> Vec<String>;
}

impl<F: Fn(&str) -> Vec<String> + Send + Sync> ToolOwners for F {
    fn owners_of(&self, tool: &str) -> Vec<String> {
        self(tool)
    }
}

impl std::fmt::Debug for RuntimeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeOptions")
            .field("builtin_tools", &self.builtin_tools)
            .field("progress", &self.progress.is_some())
            .field("cache_dir", &self.cache_dir)
            .field("elicitor", &self.elicitor.as_ref().map(|e| e.modes()))
            .field("sampler", &self.sampler.is_some())
            .field("workspace_root", &self.workspace_root)
            .field("credentials", &self.credentials)
            .field("sign_in", &self.sign_in)
            .field("results_dir", &self.results_dir)
            .field("tool_owners", &self.tool_owners.is_some())
            .field("listings_dir", &self.listings_dir)
            .field("from_known_listings", &self.from_known_listings)
            .field("observer", &self.observer)
            .finish()
    }
}
