//! What a connection tells the runtime after it started: the one message the handler, the
//! list_changed subscription, the watcher and a failed call send the supervisor.

/// What a connection tells the runtime after it started.
#[derive(Debug)]
pub enum Event {
    /// The server sent `notifications/tools/list_changed`.
    ListChanged {
        /// Whose tools changed: only that server is re-listed.
        server: String,
        /// Which connection of that server (a retried server has a new one).
        generation: u64,
    },
    /// The server sent `notifications/resources/list_changed`: only its resources and
    /// resource templates are listed again (its tools and prompts stay as they are).
    ResourcesChanged {
        /// Whose resources changed.
        server: String,
        /// Which connection of that server.
        generation: u64,
    },
    /// The server sent `notifications/prompts/list_changed`: only its prompts are listed again.
    PromptsChanged {
        /// Whose prompts changed.
        server: String,
        /// Which connection of that server.
        generation: u64,
    },
    /// The process exited or the connection dropped.
    Died {
        /// Who went away: only that server goes to `error`.
        server: String,
        /// Which connection.
        generation: u64,
        /// Exit status and stderr, or what dropped.
        reason: String,
    },
}
