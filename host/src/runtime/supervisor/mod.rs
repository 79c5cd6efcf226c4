//! The supervisor: the one owner of the runtime's state. It connects servers, rebuilds the
//! registry through the pipeline, and keeps both true while the runtime runs (a server that
//! dies or sends `list_changed`, a retry, a reconcile after a config change).
//!
//! Everything that connects, closes or rebuilds holds the `ops` lock, so those steps never
//! interleave; calls never take it, so a slow reconnect never delays a tool call.
//!
//! Its files stack, each using only those below it, and this one composes them (no file
//! imports it, and none calls one above it):
//! - `state.rs`: [`Supervisor`] and its [`State`], what every other file works on;
//! - `lock_file.rs` (where the pins live and how they are read) under `pins.rs` (the tool pins
//!   read before a rebuild and written after it);
//! - `rebuild.rs`: the pipeline over every server, the surface and its [`Revision`];
//! - `connect.rs`: connecting servers and recording each outcome;
//! - `reconcile.rs` (a retry, a new resolution), `approve.rs` (`mcp approve`, `mcp diff`) and
//!   `on_event.rs` (a connection's events);
//! - this file: the start, the waits for it, and shutdown.

mod approve;
mod connect;
mod lock_file;
mod on_event;
mod pins;
mod rebuild;
mod reconcile;
mod state;

pub use lock_file::Approved;
pub(crate) use lock_file::check_lock;
pub use lock_file::check_pins_kept;
pub use state::{Revision, State, Supervisor};

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use futures::future::join_all;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::catalog::merged::Catalog;
use super::connection::Connection;
use super::event::Event;
use super::listing_store::ListingStore;
use super::options::RuntimeOptions;
use super::questions::server_requests::Answers;
use super::registry::convert::Plugins;
use super::registry::surface::Registry;
use super::results::large_results;
use super::results::structured_output::OutputChecks;
use super::state::{FromHistory, Gone, Link, Slot};
use crate::config::{Resolved, Surface};
use crate::plugin::PluginHost;
use crate::trust::Lock;

/// How long shutdown waits for an operation in progress before closing anyway.
const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

impl Supervisor {
    /// Connects every active server concurrently and builds the registry; the event loop runs
    /// until the returned supervisor is dropped.
    pub async fn start(resolved: Resolved, plugins: PluginHost, options: RuntimeOptions) -> Arc<Supervisor> {
        let supervisor = Self::new(resolved, plugins, options);
        {
            let _ops = supervisor.ops.lock().await;
            let all = supervisor.not_yet_connected();
            supervisor.connect(&all).await;
            supervisor.rebuild().await;
        }
        supervisor.primed.store(true, Ordering::SeqCst);
        supervisor.settled.send_replace(true);
        supervisor
    }

    /// [`Supervisor::start`] without waiting: returns at once with nothing connected, then
    /// connects every active server concurrently in the background and rebuilds the registry
    /// as each one's outcome arrives (in definition order every time, so the surface ends the
    /// same as after [`Supervisor::start`]; each step is a new [`Revision`]). A hung server
    /// then delays only its own tools. [`Supervisor::settled`] says when every one is done.
    pub fn start_in_background(
        resolved: Resolved,
        plugins: PluginHost,
        options: RuntimeOptions,
    ) -> Arc<Supervisor> {
        let supervisor = Self::new(resolved, plugins, options);
        supervisor.load_known_listings();
        let weak = Arc::downgrade(&supervisor);
        tokio::spawn(async move {
            let Some(supervisor) = weak.upgrade() else { return };
            {
                let _ops = supervisor.ops.lock().await;
                // The last-known listings first, through the whole pipeline, so a first
                // listing can be answered with them while the servers connect.
                if supervisor.lock().slots.iter().any(|s| s.known.is_some()) {
                    supervisor.rebuild().await;
                }
                supervisor.primed.store(true, Ordering::SeqCst);
                supervisor.settled.send_modify(|_| {});
                // A reconcile that came first connected what it changed: only the rest here.
                let all = supervisor.not_yet_connected();
                let connecting = async {
                    supervisor.connect_each(&all).await;
                    supervisor.rebuild().await;
                };
                // Shutdown ends the connects still under way (dropping one stops its process).
                tokio::select! {
                    () = connecting => {}
                    () = supervisor.stop.cancelled() => return,
                }
            }
            supervisor.settled.send_replace(true);
        });
        supervisor
    }

    fn new(resolved: Resolved, plugins: PluginHost, options: RuntimeOptions) -> Arc<Supervisor> {
        let (events, rx) = mpsc::unbounded_channel();
        let listings = options.listings_dir.clone().map(ListingStore::new);
        let slots = resolved.servers.iter().cloned().map(Slot::new).collect();
        let answers = Arc::new(
            Answers::new(options.elicitor.clone(), options.sampler.clone(), options.workspace_root.clone())
                .with_credentials(options.credentials.clone(), options.sign_in)
                .with_observer(options.observer.clone()),
        );
        let supervisor = Arc::new(Supervisor {
            plugins: Plugins::new(plugins),
            options,
            state: Mutex::new(State {
                resolved,
                slots,
                registry: Registry::default(),
                gone: Gone::default(),
                from_history: FromHistory::default(),
                secrets: OnceLock::new(),
            }),
            ops: tokio::sync::Mutex::new(()),
            events,
            answers,
            generation: AtomicU64::new(0),
            output_checks: OutputChecks::default(),
            revision: watch::channel(Revision::default()).0,
            published: Mutex::new((Vec::new(), Catalog::default(), Surface::default())),
            settled: watch::channel(false).0,
            stop: CancellationToken::new(),
            started: tokio::time::Instant::now(),
            pins: Mutex::new(Lock::default()),
            unsaved: Mutex::new(Lock::default()),
            listings,
            primed: AtomicBool::new(false),
        });
        tokio::spawn(event_loop(Arc::downgrade(&supervisor), rx));
        supervisor
    }

    /// Each active server's last-known listing, when the host starts from them (`serve`).
    fn load_known_listings(&self) {
        let Some(store) = self.listings.as_ref().filter(|_| self.options.from_known_listings) else { return };
        let mut state = self.lock();
        for slot in state.slots.iter_mut().filter(|s| s.resolved.active()) {
            slot.known = store.load(&slot.resolved.def);
        }
    }

    /// Returns once a listing can be answered without leaving out a server still coming up:
    /// every active server has connected or failed, or is still connecting with its
    /// last-known listing on the surface. `serve` bounds it (`--list-wait`).
    pub async fn listable(&self) {
        let mut changes = self.settled.subscribe();
        loop {
            let settled = *changes.borrow_and_update();
            if settled || (self.primed.load(Ordering::SeqCst) && self.lock().slots.iter().all(listed_now)) {
                return;
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
    }

    /// Returns once the last-known listings are on the surface (at once when there are
    /// none): `serve` waits for it before it answers anyone, so a client's first view already
    /// holds them, and no `list_changed` tells it of them as of a change.
    pub async fn primed(&self) {
        let mut changes = self.settled.subscribe();
        loop {
            changes.borrow_and_update();
            if self.primed.load(Ordering::SeqCst) || changes.changed().await.is_err() {
                return;
            }
        }
    }

    /// Returns once `server` is no longer connecting (up and checked, failed, or no longer
    /// defined), or after `bound`: what a call of a tool listed from its last-known listing
    /// waits for. `true` when it is no longer connecting.
    pub async fn wait_for_server(&self, server: &str, bound: std::time::Duration) -> bool {
        let mut changes = self.settled.subscribe();
        let connecting = |supervisor: &Self| {
            supervisor.lock().slots.iter().any(|s| s.name() == server && s.still_connecting())
        };
        let waiting = async {
            loop {
                changes.borrow_and_update();
                if !connecting(self) {
                    return;
                }
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::time::timeout(bound, waiting).await.is_ok()
    }

    /// The servers no connect has been tried for yet (all of them at start).
    fn not_yet_connected(&self) -> Vec<String> {
        let state = self.lock();
        state.slots.iter().filter(|s| matches!(s.link, Link::Idle)).map(|s| s.name().to_string()).collect()
    }

    /// Returns once the server that owns `tool` on the surface is decided, or the start's
    /// connects are all done. Each server's tools depend only on itself and the servers defined
    /// before it (its filter, the name policy and the shape see one server; a name two servers
    /// share goes to the first-defined), so once every active server before the owner has
    /// connected or failed and the owner's rebuilt tools include `tool`, no server still
    /// connecting can change which one a call of `tool` goes to: the same as after connecting
    /// all. What `toolport call` waits for.
    pub async fn decided(&self, tool: &str) {
        let mut settled = self.settled.subscribe();
        loop {
            if *settled.borrow_and_update() || self.owner_decided(tool) {
                return;
            }
            if settled.changed().await.is_err() {
                return;
            }
        }
    }

    /// See [`Supervisor::decided`]. A live server whose `checked` is `None` has not been
    /// through a rebuild yet (the registry does not reflect it): not decided.
    fn owner_decided(&self, tool: &str) -> bool {
        let state = self.lock();
        let Some((record, _)) = state.registry.route(tool) else { return false };
        let Some(at) = state.slots.iter().position(|s| s.name() == record.server) else { return false };
        let built = |s: &Slot| match &s.link {
            Link::Idle => false,
            Link::Failed(_) => true,
            Link::Live { .. } => s.checked.is_some(),
        };
        built(&state.slots[at]) && state.slots[..at].iter().all(|s| !s.resolved.active() || built(s))
    }

    /// Whether the start's connects are all done (connected or failed), as it changes.
    pub fn settled(&self) -> watch::Receiver<bool> {
        self.settled.subscribe()
    }

    /// What bounds a call's result now (`large_results`).
    pub(super) fn result_limits(&self) -> large_results::Limits {
        let state = self.lock();
        let settings = &state.resolved.settings;
        large_results::Limits {
            dir: self.options.results_dir.clone(),
            max_tokens: settings.max_result_tokens,
            max_bytes: settings.max_results_folder_bytes,
        }
    }

    /// Closes every session and stops every child process. Waits at most [`SHUTDOWN_WAIT`]
    /// for an operation in progress (a retry, a reconcile) to finish first: a stuck one must
    /// not keep `/quit` or the end of a command from closing what is open.
    pub async fn shutdown(&self) {
        self.stop.cancel();
        let _ops = tokio::time::timeout(SHUTDOWN_WAIT, self.ops.lock()).await.ok();
        let conns: Vec<Arc<Connection>> = {
            let mut state = self.lock();
            state.registry = Registry::default();
            state
                .slots
                .iter_mut()
                .filter_map(|s| match std::mem::replace(&mut s.link, Link::Idle) {
                    Link::Live { conn, .. } => Some(conn),
                    _ => None,
                })
                .collect()
        };
        join_all(conns.iter().map(|c| c.close())).await;
    }

    /// Every change of the surface from now on, as [`Revision`]s.
    pub fn revisions(&self) -> watch::Receiver<Revision> {
        self.revision.subscribe()
    }

    /// Bumps every part of the revision: what a caller may see changed outside the runtime
    /// (a new policy), so every client lists again.
    pub fn bump_all(&self) {
        self.revision.send_modify(|r| {
            r.tools += 1;
            r.resources += 1;
            r.prompts += 1;
        });
    }
}

/// Applies connection events until the runtime is dropped.
async fn event_loop(supervisor: Weak<Supervisor>, mut rx: mpsc::UnboundedReceiver<Event>) {
    while let Some(event) = rx.recv().await {
        let Some(supervisor) = supervisor.upgrade() else { return };
        supervisor.handle(event).await;
    }
}

/// Whether `slot`'s tools are on the surface as a listing answered now should show them:
/// inactive, failed, up and checked, or still connecting with a last-known listing.
fn listed_now(slot: &Slot) -> bool {
    !slot.still_connecting() || slot.known.is_some()
}
