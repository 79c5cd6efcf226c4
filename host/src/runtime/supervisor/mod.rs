//! The supervisor: the one owner of the runtime's state. It connects servers, rebuilds the
//! registry through the pipeline, and keeps both true while the runtime runs (a server that
//! dies or sends `list_changed`, a retry, a reconcile after a config change).
//!
//! Everything that connects, closes or rebuilds holds the `ops` lock, so those steps never
//! interleave; calls never take it, so a slow reconnect never delays a tool call.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use anyhow::Context as _;
use futures::StreamExt as _;
use futures::future::join_all;
use futures::stream::FuturesUnordered;
use rmcp::model::Tool;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::catalog::catalog_list;
use super::catalog::merged::{Catalog, ServerCatalog};
use super::connection::{Connection, Event};
use super::options::RuntimeOptions;
use super::progress::{self, Progress};
use super::questions::server_requests::Answers;
use super::registry::convert::Plugins;
use super::registry::pipeline::{self, LiveServer};
use super::registry::record::ToolRecord;
use super::registry::surface::Registry;
use super::results::large_results;
use super::results::structured_output::OutputChecks;
use super::state::{Gone, Link, Slot, live_catalog};
use crate::config::{Resolved, ResolvedServer, Surface};
use crate::plugin::PluginHost;

/// How long shutdown waits for an operation in progress before closing anyway.
const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The runtime's state and the operations that change it.
pub struct Supervisor {
    pub(super) plugins: Plugins,
    pub(super) options: RuntimeOptions,
    state: Mutex<State>,
    ops: tokio::sync::Mutex<()>,
    /// Connection events (and the executor's evidence of a dead server) arrive here.
    pub(super) events: mpsc::UnboundedSender<Event>,
    /// What every connection answers servers' questions with (elicitation, sampling, roots).
    pub(super) answers: Arc<Answers>,
    generation: AtomicU64,
    /// Each listed tool's compiled `outputSchema`, kept across rebuilds.
    output_checks: OutputChecks,
    /// Bumped whenever what a client of the runtime sees changes (`serve`'s `list_changed`).
    revision: watch::Sender<Revision>,
    /// What the last [`Revision`] was taken of.
    published: Mutex<(Vec<ToolRecord>, Catalog, Surface)>,
    /// `true` once every server the start connects has connected or failed.
    settled: watch::Sender<bool>,
    /// When the start began (a listing waits for servers at most a fixed time after it).
    pub(super) started: tokio::time::Instant,
    /// Cancelled by shutdown: a background start stops connecting.
    stop: CancellationToken,
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
}

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
        let weak = Arc::downgrade(&supervisor);
        tokio::spawn(async move {
            let Some(supervisor) = weak.upgrade() else { return };
            {
                let _ops = supervisor.ops.lock().await;
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
        let slots = resolved.servers.iter().cloned().map(Slot::new).collect();
        let answers = Arc::new(
            Answers::new(options.elicitor.clone(), options.sampler.clone(), options.workspace_root.clone())
                .with_credentials(options.credentials.clone(), options.sign_in),
        );
        let supervisor = Arc::new(Supervisor {
            plugins: Plugins::new(plugins),
            options,
            state: Mutex::new(State {
                resolved,
                slots,
                registry: Registry::default(),
                gone: Gone::default(),
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
        });
        tokio::spawn(event_loop(Arc::downgrade(&supervisor), rx));
        supervisor
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

    /// The state, for reading a consistent snapshot.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind; keep serving it.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Reconnects only `name` (closing its old session first), then re-checks every server in
    /// definition order. The others keep their sessions.
    pub async fn retry(&self, name: &str) -> anyhow::Result<()> {
        let _ops = self.ops.lock().await;
        let old = {
            let mut state = self.lock();
            let slot = state
                .slots
                .iter_mut()
                .find(|s| s.name() == name)
                .with_context(|| format!("Unknown MCP server: {name}"))?;
            if !slot.resolved.enabled {
                anyhow::bail!("MCP server is not enabled in this workspace: {name}");
            }
            if slot.resolved.paused {
                anyhow::bail!("MCP server is paused in this session: {name}");
            }
            let old = slot.conn().cloned();
            slot.link = Link::Idle;
            slot.checked = None;
            old
        };
        if let Some(conn) = old {
            conn.close().await;
        }
        self.connect(&[name.to_string()]).await;
        // Until the server is back, a call of one of its tools still hears why it went away
        // (not `Unknown MCP tool`); once it is, that record is stale.
        {
            let mut state = self.lock();
            let back = state.slots.iter().any(|s| s.name() == name && s.conn().is_some());
            if back {
                state.gone.forget(name);
            }
        }
        self.rebuild().await;
        Ok(())
    }

    /// Applies a new resolution: closes servers no longer active, connects only the newly
    /// active or changed ones, leaves the rest untouched, and rebuilds in the new order.
    pub async fn reconcile(&self, resolved: Resolved) {
        let _ops = self.ops.lock().await;
        let (to_close, to_connect) = {
            let mut state = self.lock();
            let mut old: Vec<Slot> = std::mem::take(&mut state.slots);
            let mut to_connect = Vec::new();
            let mut slots = Vec::with_capacity(resolved.servers.len());
            for server in &resolved.servers {
                let kept =
                    old.iter().position(|s| unchanged(&s.resolved, server)).map(|i| old.swap_remove(i));
                match kept {
                    Some(mut slot) => {
                        slot.resolved = server.clone();
                        slots.push(slot);
                    }
                    None => {
                        if server.active() {
                            to_connect.push(server.def.name.clone());
                        }
                        state.gone.forget(&server.def.name);
                        slots.push(Slot::new(server.clone()));
                    }
                }
            }
            let to_close: Vec<Arc<Connection>> = old.iter().filter_map(|s| s.conn().cloned()).collect();
            for slot in &old {
                state.gone.forget(slot.name());
            }
            state.slots = slots;
            state.resolved = resolved;
            (to_close, to_connect)
        };
        join_all(to_close.iter().map(|c| c.close())).await;
        self.connect(&to_connect).await;
        self.rebuild().await;
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

    /// Connects the named active servers concurrently, each under its own timeouts, and
    /// records each outcome in its slot. Callers hold `ops`.
    async fn connect(&self, names: &[String]) {
        let targets = self.targets(names);
        if targets.is_empty() {
            return;
        }
        let progress = Progress::new(self.options.progress);
        let attempts = targets.iter().map(|(name, server)| self.attempt(&progress, name, server));
        let outcomes = join_all(attempts).await;
        progress.finish();
        for ((name, _), (outcome, catalog)) in targets.iter().zip(outcomes) {
            self.install(name, outcome, catalog);
        }
    }

    /// [`Supervisor::connect`], recording each outcome and rebuilding as soon as it arrives
    /// rather than after the slowest. Callers hold `ops`.
    async fn connect_each(&self, names: &[String]) {
        let targets = self.targets(names);
        let progress = Progress::new(self.options.progress);
        let shown = &progress;
        let mut attempts: FuturesUnordered<_> = targets
            .iter()
            .map(|(name, server)| async move { (name, self.attempt(shown, name, server).await) })
            .collect();
        while let Some((name, (outcome, catalog))) = attempts.next().await {
            self.install(name, outcome, catalog);
            self.rebuild().await;
            // Wakes whoever waits for a tool's owner (`decided`), though nothing settled yet.
            self.settled.send_modify(|_| {});
        }
        drop(attempts);
        progress.finish();
    }

    /// The named servers that are active, with their resolutions.
    fn targets(&self, names: &[String]) -> Vec<(String, ResolvedServer)> {
        let state = self.lock();
        state
            .slots
            .iter()
            .filter(|s| s.resolved.active() && names.iter().any(|n| n == s.name()))
            .map(|s| (s.name().to_string(), s.resolved.clone()))
            .collect()
    }

    /// One server's connect, list and catalog listing, drawn on `progress`.
    async fn attempt(&self, progress: &Progress, name: &str, server: &ResolvedServer) -> Attempt {
        let bar = progress.server(name);
        let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        let events = self.events.clone();
        let answers = self.answers.clone();
        let outcome = open(server, self.plugins.host(), generation, events, answers).await;
        progress::done(bar, name, &outcome.as_ref().map(|(_, tools)| tools.len()).map_err(Clone::clone));
        // Resources and prompts after the tools, so the spinner's outcome is the tools'; a
        // failure here is only a warning (`catalog_list`).
        let catalog = match &outcome {
            Ok((conn, _)) => catalog_list::list_catalog(name, conn, server.def.timeouts.list).await,
            Err(_) => ServerCatalog::default(),
        };
        (outcome, catalog)
    }

    /// Records one connect's outcome in `name`'s slot (if it is still defined).
    fn install(
        &self,
        name: &str,
        outcome: Result<(Arc<Connection>, Vec<Tool>), String>,
        catalog: ServerCatalog,
    ) {
        let mut state = self.lock();
        if let Some(slot) = state.slots.iter_mut().find(|s| s.name() == name) {
            slot.checked = None;
            slot.catalog = catalog;
            slot.link = match outcome {
                Ok((conn, tools)) => Link::Live { conn, tools },
                Err(reason) => Link::Failed(reason),
            };
        }
    }

    /// Runs the pipeline over every live server and installs the result. Callers hold `ops`.
    async fn rebuild(&self) {
        let (settings, live) = {
            let state = self.lock();
            let live = state
                .slots
                .iter()
                .enumerate()
                .filter_map(|(index, slot)| match &slot.link {
                    Link::Live { conn, tools } => Some(LiveServer {
                        index,
                        def: slot.resolved.def.clone(),
                        conn: conn.clone(),
                        tools: tools.clone(),
                    }),
                    _ => None,
                })
                .collect();
            (state.resolved.settings.clone(), live)
        };
        let outcome =
            pipeline::run(&self.plugins, &settings, &self.options.builtin_tools, &self.output_checks, live)
                .await;
        let mut state = self.lock();
        for (index, generation, checked) in outcome.checked {
            if let Some(slot) = state.slots.get_mut(index)
                && slot.holds(generation)
            {
                slot.checked = Some(checked);
            }
        }
        state.registry = outcome.registry;
        drop(state);
        self.publish();
    }

    /// Every change of the surface from now on, as [`Revision`]s.
    pub fn revisions(&self) -> watch::Receiver<Revision> {
        self.revision.subscribe()
    }

    /// Compares the surface with what the last revision was taken of and bumps the parts
    /// that differ. Called after every step that can change it.
    fn publish(&self) {
        let (tools, surface) = {
            let state = self.lock();
            (state.registry.records().to_vec(), state.resolved.settings.surface)
        };
        let catalog = live_catalog(&self.lock().slots);
        let mut published = self.published.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut next = *self.revision.borrow();
        let (old_tools, old_catalog, old_surface) = &*published;
        // The workspace's `surface` switching between full and lazy changes what `serve` lists.
        if *old_tools != tools || *old_surface != surface {
            next.tools += 1;
        }
        if old_catalog.resources != catalog.resources || old_catalog.templates != catalog.templates {
            next.resources += 1;
        }
        if old_catalog.prompts != catalog.prompts {
            next.prompts += 1;
        }
        *published = (tools, catalog, surface);
        if next != *self.revision.borrow() {
            self.revision.send_replace(next);
        }
    }

    async fn handle(&self, event: Event) {
        let _ops = self.ops.lock().await;
        match event {
            Event::Died { server, generation, reason } => {
                {
                    let mut state = self.lock();
                    let State { slots, registry, gone, .. } = &mut *state;
                    let Some(slot) = slots.iter_mut().find(|s| s.name() == server) else { return };
                    if !slot.holds(generation) {
                        return;
                    }
                    gone.record(registry, &server, &reason);
                    slot.link = Link::Failed(reason);
                    slot.checked = None;
                }
                self.rebuild().await;
            }
            Event::ListChanged { server, generation } => {
                let (conn, timeout) = {
                    let state = self.lock();
                    let Some(slot) = state.slots.iter().find(|s| s.name() == server) else { return };
                    match slot.conn() {
                        Some(c) if c.generation == generation => (c.clone(), slot.resolved.def.timeouts.list),
                        _ => return,
                    }
                };
                let listed = conn.list(timeout).await;
                {
                    let mut state = self.lock();
                    let Some(slot) = state.slots.iter_mut().find(|s| s.name() == server) else { return };
                    if !slot.holds(generation) {
                        return;
                    }
                    match listed {
                        Ok(tools) => slot.link = Link::Live { conn, tools },
                        Err(reason) => {
                            tracing::warn!(server = %server, "re-listing after list_changed failed: {reason}");
                            slot.link = Link::Failed(reason);
                            slot.checked = None;
                        }
                    }
                }
                self.rebuild().await;
            }
            Event::ResourcesChanged { server, generation } => {
                let Some((conn, timeout)) = self.live_conn(&server, generation) else { return };
                let (resources, templates) = catalog_list::list_resources(&server, &conn, timeout).await;
                let mut state = self.lock();
                if let Some(slot) = state.slots.iter_mut().find(|s| s.name() == server)
                    && slot.holds(generation)
                {
                    slot.catalog.resources = resources;
                    slot.catalog.templates = templates;
                }
                drop(state);
                self.publish();
            }
            Event::PromptsChanged { server, generation } => {
                let Some((conn, timeout)) = self.live_conn(&server, generation) else { return };
                let prompts = catalog_list::list_prompts(&server, &conn, timeout).await;
                let mut state = self.lock();
                if let Some(slot) = state.slots.iter_mut().find(|s| s.name() == server)
                    && slot.holds(generation)
                {
                    slot.catalog.prompts = prompts;
                }
                drop(state);
                self.publish();
            }
        }
    }

    /// `server`'s connection if `generation` is still its live one, with its list timeout:
    /// a resources or prompts `list_changed` re-lists only that server, and only that part
    /// (its tools, and so the registry, are untouched). A failed re-list keeps the server
    /// connected with that list empty, as at connect.
    fn live_conn(&self, server: &str, generation: u64) -> Option<(Arc<Connection>, std::time::Duration)> {
        let state = self.lock();
        let slot = state.slots.iter().find(|s| s.name() == server)?;
        let conn = slot.conn().filter(|c| c.generation == generation)?;
        Some((conn.clone(), slot.resolved.def.timeouts.list))
    }
}

/// A server keeps its session across a reconcile only when it was and stays active with the
/// very same definition.
fn unchanged(old: &ResolvedServer, new: &ResolvedServer) -> bool {
    old.def == new.def && old.transport == new.transport && old.active() && new.active()
}

/// Expands `${VAR}` from the host environment at connect time, then connects and lists.
async fn open(
    server: &ResolvedServer,
    plugins: &PluginHost,
    generation: u64,
    events: mpsc::UnboundedSender<Event>,
    answers: Arc<Answers>,
) -> Result<(Arc<Connection>, Vec<Tool>), String> {
    let kind = server.transport.as_ref().map_err(Clone::clone)?;
    let def = server.def.expanded(|name| std::env::var(name).ok()).map_err(|e| e.0)?;
    Connection::open(&def, kind, plugins, generation, events, answers).await
}

/// What one connect attempt ends with: the session and its tools (or why not), and its catalog.
type Attempt = (Result<(Arc<Connection>, Vec<Tool>), String>, ServerCatalog);

/// Applies connection events until the runtime is dropped.
async fn event_loop(supervisor: Weak<Supervisor>, mut rx: mpsc::UnboundedReceiver<Event>) {
    while let Some(event) = rx.recv().await {
        let Some(supervisor) = supervisor.upgrade() else { return };
        supervisor.handle(event).await;
    }
}
