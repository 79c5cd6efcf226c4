//! What can go wrong with a plugin, typed so the runtime can tell a bad config (exit 2) from a
//! plugin that misbehaved at run time (the server goes to `error`, the host carries on).
//!
//! Every message reads `<role> <plugin>: <fault>` (`name policy fault: exceeded its time limit
//! (5000 ms)`): the plugin is named exactly once, by the role the caller wanted it in, so no
//! layer above has to (or may) add a prefix of its own.

use std::path::PathBuf;

use crate::config::PluginKind;
use crate::text::clip_foreign;

/// A plugin failure: which plugin, in which role, what went wrong, and for a guest that failed
/// of itself the kinds of grant it had none of (`; it has no grants.env …`).
#[derive(Debug, thiserror::Error)]
#[error("{} {plugin}: {fault}{}", role(*.kind), hint.as_deref().map(|h| format!("; {h}")).unwrap_or_default())]
pub struct PluginError {
    /// The name it was asked for by (a built-in, or a key of the config's `plugins`).
    pub plugin: String,
    /// The kind the caller asked for, which words the role (`tool shape openai: …`) even when
    /// the plugin turns out to be of another kind.
    pub kind: PluginKind,
    /// What went wrong, worded to follow the plugin's name.
    pub fault: Fault,
    /// What the guest may have lacked (`plugin/grant_hint.rs`), only on a fault the guest
    /// raised itself: its error or its crash.
    pub hint: Option<String>,
}

impl PluginError {
    /// `fault` of `plugin`, asked for as a `kind` plugin. Every plugin error is built here, so
    /// this is where the guest's own text (its error, its panic message) is clipped: a 10 MB
    /// reason must not be held in a status row or printed whole by `mcp list --json`.
    pub(crate) fn new(plugin: &str, kind: PluginKind, fault: Fault) -> Self {
        Self { plugin: plugin.to_string(), kind, fault: fault.clipped(), hint: None }
    }

    /// Adds `hint` when the fault is one the guest raised itself: a time or memory cap, a
    /// refused destination or a config problem has a cause of its own, already named.
    pub(crate) fn with_hint(mut self, hint: Option<&str>) -> Self {
        if matches!(self.fault, Fault::Failed { .. } | Fault::Trap { .. }) {
            self.hint = hint.map(str::to_string);
        }
        self
    }
}

impl Fault {
    /// The fault with any guest-supplied text cut to [`crate::text::MAX_FOREIGN_TEXT_BYTES`].
    fn clipped(self) -> Self {
        let clip = |message: String| clip_foreign(&message).into_owned();
        match self {
            Self::Failed { message } => Self::Failed { message: clip(message) },
            Self::Trap { message } => Self::Trap { message: clip(message) },
            Self::BadOutput { message } => Self::BadOutput { message: clip(message) },
            other => other,
        }
    }
}

/// Refuses a component whose SHA-256 `digest` is not its entry's `pinned` one, naming the file
/// (or `built-in`), both digests and `repin`, the command that trusts the new one. Plugins and
/// sandboxed servers are pinned the same way and told the same words.
pub(crate) fn check_pin(
    file: impl std::fmt::Display,
    digest: &[u8; 32],
    pinned: Option<&str>,
    repin: &str,
) -> Result<(), Fault> {
    let actual = hex::encode(digest);
    match pinned {
        Some(pinned) if pinned != actual => Err(Fault::PinMismatch {
            message: format!(
                "{file} does not match its pin: sha256 {actual}, pinned {pinned} (if the new component is \
                 trusted, run `{repin}`)"
            ),
        }),
        _ => Ok(()),
    }
}

/// The words a message uses for a plugin asked for as `kind`.
fn role(kind: PluginKind) -> &'static str {
    match kind {
        PluginKind::NamePolicy => "name policy",
        PluginKind::ToolShape => "tool shape",
        PluginKind::Transport => "transport plugin",
        PluginKind::Guard => "guard",
    }
}

/// What went wrong with a plugin. The first seven are config problems (fix the config or the
/// file); the rest happen while it runs and fail one call or one connection only.
#[derive(Debug, thiserror::Error)]
pub enum Fault {
    /// No built-in and no `plugins` entry has this name.
    #[error("unknown plugin")]
    Unknown,
    /// The plugin exists but is configured for another job.
    #[error("is a {} plugin, not a {} plugin", actual.as_str(), expected.as_str())]
    WrongKind {
        /// Its configured (or built-in) kind.
        actual: PluginKind,
        /// The kind the caller needs.
        expected: PluginKind,
    },
    /// The component file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Unreadable {
        /// The configured file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The bytes are not a WebAssembly component.
    #[error("{origin} is not a WebAssembly component: {detail}")]
    NotComponent {
        /// The file, or `built-in`.
        origin: String,
        /// What it is instead, and how to make a component of it.
        detail: String,
    },
    /// Built against a `toolport:plugin` version this host cannot serve.
    #[error(
        "was built for toolport:plugin@{found} (it exports {exports}), but this toolport serves \
         toolport:plugin@{expected}: rebuild it against {}",
        crate::plugin::WIT_FOLDER
    )]
    WrongVersion {
        /// The version it exports.
        found: String,
        /// The version this host serves.
        expected: &'static str,
        /// Its exports, so the user sees what was built.
        exports: String,
    },
    /// Exports another world than its configured kind needs.
    #[error("is configured as {} but exports {exports}; expected {expected}", kind.as_str())]
    WrongWorld {
        /// The configured kind.
        kind: PluginKind,
        /// What it exports, each with the world it belongs to.
        exports: String,
        /// The export that kind needs.
        expected: String,
    },
    /// The file's SHA-256 is not the one its entry pins: it changed since it was pinned. The
    /// text names the file, both digests and the command that re-pins it.
    #[error("{message}")]
    PinMismatch {
        /// `<file> does not match its pin: sha256 <now>, pinned <pin> (…)`.
        message: String,
    },
    /// Compiling or linking failed (for example an import the sandbox does not provide).
    #[error("cannot be loaded: {message}")]
    Load {
        /// Wasmtime's reason, or the bad grant.
        message: String,
    },
    /// A granted folder could not be opened, or another sandbox setup failure.
    #[error("cannot set up its sandbox: {message}")]
    Sandbox {
        /// The folder or grant and the OS error.
        message: String,
    },
    /// The call grew linear memory past the plugin's cap.
    #[error("exceeded its memory limit ({limit_mb} MiB)")]
    MemoryLimit {
        /// The cap (`limits.memoryMb`).
        limit_mb: u64,
    },
    /// A transport kept its queue of messages for the host full past the deadline: it
    /// produces faster than the host can take them (`plugin/queue.rs`).
    #[error("exceeded its queue limit ({limit_mb} MiB)")]
    QueueLimit {
        /// The per-connection budget.
        limit_mb: u64,
    },
    /// A new store would pass a cap on live instances (`plugin/admission.rs`): the plugin that
    /// asked is told, its neighbours keep their share.
    #[error("reached {what} ({limit} live instances)")]
    InstanceLimit {
        /// Whose cap: the plugin's own, all plugins', or the host's.
        what: &'static str,
        /// The cap.
        limit: u32,
    },
    /// The guest asked for one socket or outgoing connection more than its caps allow
    /// (`plugin/socket_budget.rs`). Recorded by the host, like a denial.
    #[error("reached {what} ({limit} open sockets)")]
    SocketLimit {
        /// Whose cap: the store's own, or what all plugins together may hold.
        what: &'static str,
        /// The cap.
        limit: usize,
    },
    /// The guest asked for one host resource (a stream, pollable, socket, request) more than
    /// one store may hold (`plugin/store.rs`): a guest that subscribes or opens in a loop. Named
    /// here because wasmtime's own words ("resource table has no free keys") name no limit.
    #[error("reached its handle limit ({limit})")]
    HandleLimit {
        /// The cap.
        limit: usize,
    },
    /// The call ran past the plugin's time cap.
    #[error("exceeded its time limit ({limit_ms} ms)")]
    TimeLimit {
        /// The cap (`limits.callMs`).
        limit_ms: u64,
    },
    /// A sandboxed server computed for its whole time limit without once waiting for input
    /// or output (a busy loop after a request); it was stopped.
    #[error("kept computing for {limit_ms} ms without waiting (limits.callMs), so it was stopped")]
    BusyLimit {
        /// The cap (`limits.callMs`).
        limit_ms: u64,
    },
    /// The guest used more than its share of one core over the window (`plugin/cpu.rs`):
    /// computing most of the time and waiting only now and then, which `callMs` does not
    /// count. Stopped like a busy loop.
    #[error("used more than {percent}% of a core over {window_s} s (limits.cpuPercent), so it was stopped")]
    CpuLimit {
        /// The share (`limits.cpuPercent`).
        percent: u8,
        /// The window, in seconds.
        window_s: u64,
    },
    /// The guest trapped: a panic, an abort, an out-of-bounds access.
    #[error("crashed: {message}")]
    Trap {
        /// The panic message when the guest printed one, else the trap.
        message: String,
    },
    /// The guest returned an error of its own; its text is shown as it wrote it.
    #[error("{message}")]
    Failed {
        /// The guest's text.
        message: String,
    },
    /// The sandbox refused a destination. Recorded by the host, so this wins over whatever the
    /// guest made of the refusal: a plugin cannot hide or misstate it.
    #[error("not granted: {target}")]
    NotGranted {
        /// The first refused destination, as `scheme://host:port`.
        target: String,
    },
    /// The guest answered, but not what the contract promises.
    #[error("returned bad output: {message}")]
    BadOutput {
        /// What is wrong with it (`5 verdicts for 6 tools`).
        message: String,
    },
}
