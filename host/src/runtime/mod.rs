//! The live runtime (DESIGN §1): connects every active server concurrently, checks and
//! converts their tools in definition order, routes calls, and keeps the view honest while it
//! runs (crashes, `list_changed`, retry, config changes).
//!
//! An embedding host calls [`Runtime::start`] and gets the tool surface ([`Runtime::tools`])
//! and an executor ([`Runtime::call`]); the CLI, the session and ACP are clients of the same API.

mod connection;
mod convert;
mod executor;
mod names;
mod pipeline;
mod progress;
mod state;

pub use convert::PluginHost;
pub use executor::{CallError, CallOutcome, parse_arguments};

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use anyhow::Context as _;
use futures::future::join_all;
use rmcp::model::CallToolRequestParams;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::config::{Resolved, ResolvedServer, load_resolved, missing_rows};
use crate::paths::Paths;
use crate::status::{ServerState, ServerStatus};
use connection::{Connection, Event, is_transport_failure, service_error};
use convert::{Plugins, tool_info};
use state::{Gone, Link, Registry, Slot};

/// How a host starts the runtime.
#[derive(Debug, Clone, Default)]
pub struct RuntimeOptions {
    /// The embedding agent's own tool names: reserved like the workspace's reserved names, so
    /// no MCP tool can shadow a built-in.
    pub builtin_tools: Vec<String>,
    /// Show per-server spinners while connecting (only when stderr is a terminal).
    pub progress: bool,
}

/// The live runtime. Cheap to clone; every clone is the same runtime.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

struct Inner {
    plugins: Plugins,
    options: RuntimeOptions,
    state: Mutex<State>,
    /// Serializes everything that connects, closes or rebuilds; calls never take it.
    ops: tokio::sync::Mutex<()>,
    events: mpsc::UnboundedSender<Event>,
    generation: AtomicU64,
}

struct State {
    resolved: Resolved,
    slots: Vec<Slot>,
    registry: Registry,
    gone: Gone,
}

impl Runtime {
    /// Starts every active server concurrently and builds the registry. Never fails as a
    /// whole: a server that cannot connect, list or pass the checks ends in `error`.
    pub async fn start(resolved: Resolved, plugins: PluginHost, options: RuntimeOptions) -> Runtime {
        let (events, rx) = mpsc::unbounded_channel();
        let slots = resolved.servers.iter().cloned().map(Slot::new).collect();
        let inner = Arc::new(Inner {
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
            generation: AtomicU64::new(0),
        });
        tokio::spawn(event_loop(Arc::downgrade(&inner), rx));
        {
            let _ops = inner.ops.lock().await;
            let all: Vec<String> = inner.lock().slots.iter().map(|s| s.name().to_string()).collect();
            inner.connect(&all).await;
            inner.rebuild().await;
        }
        Runtime { inner }
    }

    /// [`start_from_paths`] as an associated function, for callers that prefer `Runtime::…`.
    pub async fn start_from_paths(
        paths: &Paths,
        paused: &BTreeSet<String>,
        options: RuntimeOptions,
    ) -> anyhow::Result<Runtime> {
        start_from_paths(paths, paused, options).await
    }

    /// The final tool names in the registry, in surface order (completion, listings).
    pub fn tool_names(&self) -> Vec<String> {
        let state = self.inner.lock();
        state.registry.entries.iter().flat_map(|(_, tools)| tools.iter().map(|t| t.name.clone())).collect()
    }

    /// One row per defined server in definition order, then the `missing` rows.
    pub fn status(&self) -> Vec<ServerStatus> {
        let state = self.inner.lock();
        let mut rows: Vec<ServerStatus> = state.slots.iter().map(Slot::status).collect();
        rows.extend(missing_rows(&state.resolved));
        rows
    }

    /// `Warning: MCP unavailable: <name> (<error>)` for every server in `error` or `missing`.
    pub fn warnings(&self) -> Vec<String> {
        self.status()
            .into_iter()
            .filter(|s| matches!(s.state, ServerState::Error | ServerState::Missing))
            .map(|s| {
                let error = s.error.unwrap_or_default().replace(['\r', '\n'], " ");
                format!("Warning: MCP unavailable: {} ({})", s.name, error)
            })
            .collect()
    }

    /// The tool surface in the workspace's shape (default OpenAI function tools).
    pub fn tools(&self) -> Vec<Value> {
        self.inner.lock().registry.surface.clone()
    }

    /// The same tools converted by another tool-shape plugin (e.g. `anthropic`).
    pub async fn tools_in_shape(&self, shape: &str) -> anyhow::Result<Vec<Value>> {
        let entries = self.inner.lock().registry.entries.clone();
        let mut out = Vec::new();
        for (def, tools) in &entries {
            let converted =
                self.inner.plugins.convert(shape, def, tools).await.map_err(anyhow::Error::msg)?;
            out.extend(converted);
        }
        Ok(out)
    }

    /// Calls a tool by its final name. `arguments` is JSON text; blank means `{}`.
    pub async fn call(&self, name: &str, arguments: &str) -> Result<CallOutcome, CallError> {
        let name = name.trim();
        if name.is_empty() {
            return Err(CallError::MissingName);
        }
        let route = {
            let state = self.inner.lock();
            match state.registry.routes.get(name) {
                Some(route) => route.clone(),
                None => {
                    return Err(match state.gone.lookup(name) {
                        Some((server, reason)) => {
                            CallError::NotConnected { server: server.clone(), reason: reason.clone() }
                        }
                        None => CallError::UnknownTool(name.to_string()),
                    });
                }
            }
        };
        let args = parse_arguments(arguments)?;
        let params = CallToolRequestParams::new(route.original.clone()).with_arguments(args);
        match tokio::time::timeout(route.call_timeout, route.conn.peer.call_tool(params)).await {
            Err(_) => Err(CallError::Timeout {
                tool: name.to_string(),
                server: route.server,
                ms: route.call_timeout.as_millis(),
            }),
            Ok(Ok(result)) => Ok(CallOutcome::from_result(result)),
            Ok(Err(e)) if is_transport_failure(&e) => {
                let reason = match route.conn.death_reason().await {
                    Some(reason) => reason,
                    None => {
                        // The session has not noticed yet (an HTTP server that went away is
                        // only seen on the next request): the failed call is the evidence.
                        let reason = service_error(&e);
                        let _ = self.inner.events.send(Event::Died {
                            server: route.server.clone(),
                            generation: route.conn.generation,
                            reason: reason.clone(),
                        });
                        reason
                    }
                };
                Err(CallError::NotConnected { server: route.server, reason })
            }
            Ok(Err(e)) => Err(CallError::Protocol {
                tool: name.to_string(),
                server: route.server,
                message: service_error(&e),
            }),
        }
    }

    /// Reconnects only `name` (closing its old session first), then re-checks every server in
    /// definition order. The others keep their sessions.
    pub async fn retry(&self, name: &str) -> anyhow::Result<()> {
        let _ops = self.inner.ops.lock().await;
        let old = {
            let mut state = self.inner.lock();
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
            state.gone.forget(name);
            old
        };
        if let Some(conn) = old {
            conn.close().await;
        }
        self.inner.connect(&[name.to_string()]).await;
        self.inner.rebuild().await;
        Ok(())
    }

    /// Applies a new resolution (after enable/disable/pause/resume/add/remove): closes servers
    /// no longer active, connects only the newly active or changed ones, leaves the rest
    /// untouched, and rebuilds the registry in the new definition order.
    pub async fn reconcile(&self, resolved: Resolved) {
        let _ops = self.inner.ops.lock().await;
        let (to_close, to_connect) = {
            let mut state = self.inner.lock();
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
        self.inner.connect(&to_connect).await;
        self.inner.rebuild().await;
    }

    /// Closes every session and stops every child process.
    pub async fn shutdown(&self) {
        let _ops = self.inner.ops.lock().await;
        let conns: Vec<Arc<Connection>> = {
            let mut state = self.inner.lock();
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
}

/// A server keeps its session across a reconcile only when it was and stays active with the
/// very same definition.
fn unchanged(old: &ResolvedServer, new: &ResolvedServer) -> bool {
    old.def == new.def && old.transport == new.transport && old.active() && new.active()
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind; keep serving it.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Connects the named active servers concurrently, each under its own timeouts, and
    /// records each outcome in its slot. Callers hold `ops`.
    async fn connect(&self, names: &[String]) {
        let targets: Vec<(String, ResolvedServer)> = {
            let state = self.lock();
            state
                .slots
                .iter()
                .filter(|s| s.resolved.active() && names.iter().any(|n| n == s.name()))
                .map(|s| (s.name().to_string(), s.resolved.clone()))
                .collect()
        };
        if targets.is_empty() {
            return;
        }
        let progress = progress::Progress::new(self.options.progress);
        let attempts = targets.iter().map(|(name, server)| {
            let bar = progress.server(name);
            let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
            let events = self.events.clone();
            async move {
                let outcome = open(server, self.plugins.host(), generation, events).await;
                progress::done(
                    bar,
                    name,
                    &outcome.as_ref().map(|(_, tools)| tools.len()).map_err(Clone::clone),
                );
                outcome
            }
        });
        let outcomes = join_all(attempts).await;
        progress.finish();
        let mut state = self.lock();
        for ((name, _), outcome) in targets.iter().zip(outcomes) {
            if let Some(slot) = state.slots.iter_mut().find(|s| s.name() == name) {
                slot.checked = None;
                slot.link = match outcome {
                    Ok((conn, tools)) => Link::Live { conn, tools },
                    Err(reason) => Link::Failed(reason),
                };
            }
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
                    Link::Live { conn, tools } => Some(pipeline::LiveServer {
                        index,
                        def: slot.resolved.def.clone(),
                        conn: conn.clone(),
                        tools: tools.iter().map(tool_info).collect(),
                    }),
                    _ => None,
                })
                .collect();
            (state.resolved.settings.clone(), live)
        };
        let outcome = pipeline::run(&self.plugins, &settings, &self.options.builtin_tools, live).await;
        let mut state = self.lock();
        for (index, generation, checked) in outcome.checked {
            if let Some(slot) = state.slots.get_mut(index)
                && slot.holds(generation)
            {
                slot.checked = Some(checked);
            }
        }
        state.registry = outcome.registry;
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
        }
    }
}

/// Expands `${VAR}` from the host environment at connect time, then connects and lists.
async fn open(
    server: &ResolvedServer,
    plugins: &PluginHost,
    generation: u64,
    events: mpsc::UnboundedSender<Event>,
) -> Result<(Arc<Connection>, Vec<rmcp::model::Tool>), String> {
    let kind = server.transport.as_ref().map_err(Clone::clone)?;
    let def = server.def.expanded(|name| std::env::var(name).ok()).map_err(|e| e.0)?;
    Connection::open(&def, kind, plugins, generation, events).await
}

/// Applies connection events until the runtime is dropped.
async fn event_loop(inner: Weak<Inner>, mut rx: mpsc::UnboundedReceiver<Event>) {
    while let Some(event) = rx.recv().await {
        let Some(inner) = inner.upgrade() else { return };
        inner.handle(event).await;
    }
}

/// Builds a runtime from the config files under `paths`, with the plugin cache in the home
/// folder: what `mcp list`, `tools`, `call` and the session start from.
pub async fn start_from_paths(
    paths: &Paths,
    paused: &BTreeSet<String>,
    options: RuntimeOptions,
) -> anyhow::Result<Runtime> {
    let resolved = load_resolved(paths, paused)?;
    let plugins = PluginHost::new(Some(paths.cache_dir()), &resolved.plugins)?;
    Ok(Runtime::start(resolved, plugins, options).await)
}
