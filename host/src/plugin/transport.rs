//! Transport plugins: one long-running `run` call per connection, pumping whole JSON-RPC
//! messages between host-owned queues and the plugin's socket (see `wit/README.md` for why a
//! pump over resources and not `send`/`receive` calls). The runtime adapter that speaks MCP
//! over these queues comes with the transport issue; this is the host half of the contract.

use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, error::TryRecvError};
use wasmtime::component::Resource;
use wasmtime_wasi::p2::{DynPollable, Pollable, subscribe};

use super::bindings::transport::toolport::plugin::channel::{Host, HostInbox, HostOutbox, Received};
use super::error::PluginError;
use super::limits::{arm_yield_only, classify};
use super::load::{Loaded, Pre};
use super::store::State;
use super::wire;
use crate::config::ServerDef;

/// Messages from the host to the plugin (host → server direction).
pub struct Inbox {
    rx: UnboundedReceiver<String>,
    /// A message taken off the queue while waiting for readiness, handed out by `try-recv`.
    pending: Option<String>,
    closed: bool,
}

/// Messages from the plugin to the host (server → host direction).
pub struct Outbox {
    tx: UnboundedSender<String>,
}

#[wasmtime_wasi::async_trait]
impl Pollable for Inbox {
    async fn ready(&mut self) {
        if self.pending.is_some() || self.closed {
            return;
        }
        match self.rx.recv().await {
            Some(message) => self.pending = Some(message),
            None => self.closed = true,
        }
    }
}

impl HostInbox for State {
    fn subscribe(&mut self, inbox: Resource<Inbox>) -> wasmtime::Result<Resource<DynPollable>> {
        subscribe(self.table(), inbox)
    }

    fn try_recv(&mut self, inbox: Resource<Inbox>) -> wasmtime::Result<Received> {
        let inbox = self.table().get_mut(&inbox)?;
        if let Some(message) = inbox.pending.take() {
            return Ok(Received::Message(message));
        }
        Ok(match inbox.rx.try_recv() {
            Ok(message) => Received::Message(message),
            Err(TryRecvError::Empty) if !inbox.closed => Received::Empty,
            Err(_) => {
                inbox.closed = true;
                Received::Closed
            }
        })
    }

    fn drop(&mut self, inbox: Resource<Inbox>) -> wasmtime::Result<()> {
        self.table().delete(inbox)?;
        Ok(())
    }
}

impl HostOutbox for State {
    fn send(&mut self, outbox: Resource<Outbox>, message: String) -> wasmtime::Result<Result<(), String>> {
        let outbox = self.table().get(&outbox)?;
        Ok(outbox.tx.send(message).map_err(|_| "the host closed the connection".to_string()))
    }

    fn drop(&mut self, outbox: Resource<Outbox>) -> wasmtime::Result<()> {
        self.table().delete(outbox)?;
        Ok(())
    }
}

impl Host for State {}

/// A loaded transport plugin.
#[derive(Clone)]
pub struct TransportPlugin {
    pub(crate) plugin: Arc<Loaded>,
}

impl std::fmt::Debug for TransportPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransportPlugin").field("name", &self.plugin.name).finish()
    }
}

impl TransportPlugin {
    /// The plugin's name (the server `type` that selects it).
    pub fn name(&self) -> &str {
        &self.plugin.name
    }

    /// Runs one connection for `server` until the plugin returns: messages sent on the sender
    /// paired with `inbox` reach the plugin; what it sends arrives on `outbox`'s receiver.
    /// Dropping that sender closes the inbox, which asks the plugin to finish. One store per
    /// connection: the memory cap holds for its lifetime; there is no time cap on the pump.
    pub async fn run(
        &self,
        server: &ServerDef,
        inbox: UnboundedReceiver<String>,
        outbox: UnboundedSender<String>,
    ) -> Result<(), PluginError> {
        let p = &*self.plugin;
        let name = p.name.clone();
        let Pre::Transport(pre) = &p.pre else {
            return Err(PluginError::Load { name, message: "not loaded as a transport plugin".into() });
        };
        let wit_server = wire::server(server, true);
        let mut store = State::store(p.engine, &name, &p.sandbox, p.limits.memory_mb)
            .map_err(|message| PluginError::Sandbox { name: name.clone(), message })?;
        arm_yield_only(&mut store);
        let outcome = async {
            let inbox = store.data_mut().table().push(Inbox { rx: inbox, pending: None, closed: false })?;
            let outbox = store.data_mut().table().push(Outbox { tx: outbox })?;
            let instance = pre.instantiate_async(&mut store).await?;
            instance.toolport_plugin_connection().call_run(&mut store, &wit_server, inbox, outbox).await
        }
        .await;
        let result = classify(&name, &p.limits, &store, Ok(outcome));
        // The host's own record wins over whatever the plugin made of the refusal.
        if let Some(target) = p.sandbox.denials().first() {
            return Err(PluginError::Failed { name, message: format!("not granted: {target}") });
        }
        result?.map_err(|message| PluginError::Failed { name, message })
    }
}
