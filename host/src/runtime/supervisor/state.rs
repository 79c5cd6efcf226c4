//! The supervisor's state: what every file of `supervisor/` works on, in a leaf of its own so
//! none of them imports the facade that composes them. [`Supervisor`] holds the state behind
//! its one lock ([`State`]), the `ops` lock every connect, close and rebuild takes, and what
//! the surface's [`Revision`] is counted from; the files beside this one add the operations
//! (`pins.rs` below `rebuild.rs`, below `connect.rs`, below `reconcile.rs`, `approve.rs` and
//! `on_event.rs`), and `mod.rs` starts it.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::config::{Resolved, Surface};
use crate::runtime::catalog::merged::Catalog;
use crate::runtime::event::Event;
use crate::runtime::listing_store::ListingStore;
use crate::runtime::options::RuntimeOptions;
use crate::runtime::questions::server_requests::Answers;
use crate::runtime::registry::convert::Plugins;
use crate::runtime::registry::record::ToolRecord;
use crate::runtime::registry::surface::Registry;
use crate::runtime::results::structured_output::OutputChecks;
use crate::runtime::state::{FromHistory, Gone, Slot};
use crate::trust::Lock;
use crate::trust::secrets::SecretBook;

/// The runtime's state and the operations that change it.
pub struct Supervisor {
    pub(in crate::runtime) plugins: Plugins,
    pub(in crate::runtime) options: RuntimeOptions,
    pub(super) state: Mutex<State>,
    pub(super) ops: tokio::sync::Mutex<()>,
    /// Connection events (and the executor's evidence of a dead server) arrive here.
    pub(in crate::runtime) events: mpsc::UnboundedSender<Event>,
    /// What every connection answers servers' questions with (elicitation, sampling, roots).
    pub(in crate::runtime) answers: Arc<Answers>,
    pub(super) generation: AtomicU64,
    /// Each listed tool's compiled `outputSchema`, kept across rebuilds.
    pub(super) output_checks: OutputChecks,
    /// Bumped whenever what a client of the runtime sees changes (`serve`'s `list_changed`).
    pub(super) revision: watch::Sender<Revision>,
    /// What the last [`Revision`] was taken of.
    pub(super) published: Mutex<(Vec<Arc<ToolRecord>>, Catalog, Surface)>,
    /// `true` once every server the start connects has connected or failed.
    pub(super) settled: watch::Sender<bool>,
    /// When the start began (a listing waits for servers at most a fixed time after it).
    pub(in crate::runtime) started: tokio::time::Instant,
    /// Cancelled by shutdown: a background start stops connecting.
    pub(super) stop: CancellationToken,
    /// The tool pins as last read (or, without a workspace file, as kept in memory), with
    /// `unsaved` laid over them.
    pub(super) pins: Mutex<Lock>,
    /// First sights the lock could not be written with (`pins.rs`): kept for the runtime's
    /// life, so a change of such a tool while it runs is still held.
    pub(super) unsaved: Mutex<Lock>,
    /// Where each server's listing is recorded as it is listed live (`listing_store.rs`).
    pub(in crate::runtime) listings: Option<ListingStore>,
    /// `true` once the surface holds the last-known listings of the servers still connecting
    /// (at once when there are none): what a listing waits for ([`Supervisor::listable`]).
    pub(super) primed: AtomicBool,
}

/// How often each part of the surface has changed since the runtime started: a client that
/// remembers the last one it saw knows which lists to fetch again. Only real changes count (a
/// rebuild that produced the same tools bumps nothing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Revision {
    /// The tools (names, schemas, anything a `tools/list` shows).
    pub tools: u64,
    /// The resources and resource templates.
    pub resources: u64,
    /// The prompts.
    pub prompts: u64,
}

/// What the supervisor knows, behind one lock.
pub struct State {
    /// The resolution the runtime was last started or reconciled with.
    pub resolved: Resolved,
    /// One per defined server, in definition order.
    pub slots: Vec<Slot>,
    /// The surface, replaced whole by each rebuild.
    pub registry: Registry,
    /// Tools of servers that went away, so a call can say why.
    pub gone: Gone,
    /// Tools listed from last-known listings, so a call of one its server no longer lists can
    /// say so.
    pub from_history: FromHistory,
    /// Every defined server's configured secrets (`trust::secrets`), read once per resolution
    /// rather than on every call: each call's guard asks for them, and reading them expands
    /// every definition's variables.
    pub(super) secrets: OnceLock<Arc<SecretBook>>,
}

impl State {
    /// The configured secrets of every server of [`State::resolved`], as the host's
    /// environment gives their variables.
    pub fn secret_book(&self) -> Arc<SecretBook> {
        let book = self.secrets.get_or_init(|| {
            let defs = self.resolved.servers.iter().map(|s| &s.def);
            Arc::new(SecretBook::of(defs, |name| std::env::var(name).ok()))
        });
        Arc::clone(book)
    }

    /// Takes up a new resolution (the secrets are read again when next asked for).
    pub fn set_resolved(&mut self, resolved: Resolved) {
        self.resolved = resolved;
        self.secrets = OnceLock::new();
    }
}

impl Supervisor {
    /// The state, for reading a consistent snapshot.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind; keep serving it.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
