//! What can go wrong with a plugin, typed so the runtime can tell a bad config (exit 2) from a
//! plugin that misbehaved at run time (the server goes to `error`, the host carries on).

use std::path::PathBuf;

/// A plugin failure. Every message names the plugin at fault.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// No built-in and no `plugins` entry has this name.
    #[error("unknown plugin: {name}")]
    Unknown {
        /// The name asked for.
        name: String,
    },
    /// The plugin exists but is configured for another job.
    #[error("plugin {name} is a {actual} plugin, not a {expected} plugin")]
    WrongKind {
        /// The plugin.
        name: String,
        /// Its configured kind.
        actual: &'static str,
        /// The kind the caller needs.
        expected: &'static str,
    },
    /// The component file could not be read.
    #[error("plugin {name}: cannot read {}: {source}", path.display())]
    Unreadable {
        /// The plugin.
        name: String,
        /// The configured file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The bytes are not a WebAssembly component.
    #[error("plugin {name}: {origin} is not a WebAssembly component: {detail}")]
    NotComponent {
        /// The plugin.
        name: String,
        /// The file, or `built-in`.
        origin: String,
        /// What it is instead.
        detail: String,
    },
    /// Built against a `toolport:plugin` version this host cannot serve.
    #[error(
        "plugin {name} was built for toolport:plugin@{found} (it exports {exports}), but this toolport \
         serves toolport:plugin@{expected}: rebuild it against wit/since_v{expected}"
    )]
    WrongVersion {
        /// The plugin.
        name: String,
        /// The version it exports.
        found: String,
        /// The version this host serves.
        expected: &'static str,
        /// Its exports.
        exports: String,
    },
    /// Exports another world than its configured kind needs.
    #[error("plugin {name} is configured as {kind} but exports {exports}; expected {expected}")]
    WrongWorld {
        /// The plugin.
        name: String,
        /// The configured kind.
        kind: &'static str,
        /// What it exports.
        exports: String,
        /// What the kind needs.
        expected: String,
    },
    /// Compiling or linking failed (for example an import the sandbox does not provide).
    #[error("plugin {name} cannot be loaded: {message}")]
    Load {
        /// The plugin.
        name: String,
        /// Why.
        message: String,
    },
    /// A granted folder could not be opened, or another sandbox setup failure.
    #[error("plugin {name}: cannot set up its sandbox: {message}")]
    Sandbox {
        /// The plugin.
        name: String,
        /// Why.
        message: String,
    },
    /// The call grew linear memory past the plugin's cap.
    #[error("plugin {name} exceeded its memory limit ({limit_mb} MiB)")]
    MemoryLimit {
        /// The plugin.
        name: String,
        /// The cap.
        limit_mb: u64,
    },
    /// The call ran past the plugin's time cap.
    #[error("plugin {name} exceeded its time limit ({limit_ms} ms)")]
    TimeLimit {
        /// The plugin.
        name: String,
        /// The cap.
        limit_ms: u64,
    },
    /// The guest trapped: a panic, an abort, an out-of-bounds access.
    #[error("plugin {name} crashed: {message}")]
    Trap {
        /// The plugin.
        name: String,
        /// The panic message when the guest printed one, else the trap.
        message: String,
    },
    /// The guest returned an error of its own.
    #[error("plugin {name} failed: {message}")]
    Failed {
        /// The plugin.
        name: String,
        /// The guest's text.
        message: String,
    },
    /// The guest answered, but not what the contract promises.
    #[error("plugin {name} returned bad output: {message}")]
    BadOutput {
        /// The plugin.
        name: String,
        /// What is wrong with it.
        message: String,
    },
}

impl PluginError {
    /// The plugin the error is about.
    pub fn plugin(&self) -> &str {
        match self {
            Self::Unknown { name }
            | Self::WrongKind { name, .. }
            | Self::Unreadable { name, .. }
            | Self::NotComponent { name, .. }
            | Self::WrongVersion { name, .. }
            | Self::WrongWorld { name, .. }
            | Self::Load { name, .. }
            | Self::Sandbox { name, .. }
            | Self::MemoryLimit { name, .. }
            | Self::TimeLimit { name, .. }
            | Self::Trap { name, .. }
            | Self::Failed { name, .. }
            | Self::BadOutput { name, .. } => name,
        }
    }

    /// A problem with configuration or the component file (fix the config, exit 2) rather than
    /// something that went wrong while running it.
    pub fn is_config_error(&self) -> bool {
        matches!(
            self,
            Self::Unknown { .. }
                | Self::WrongKind { .. }
                | Self::Unreadable { .. }
                | Self::NotComponent { .. }
                | Self::WrongVersion { .. }
                | Self::WrongWorld { .. }
        )
    }
}
