//! Transport plugins: one long-running `run` call per connection, pumping whole JSON-RPC
//! messages between host-owned queues (`mailbox`) and the plugin's socket (see `wit/README.md`
//! for why a pump over resources and not `send`/`receive` calls). `transport::PluginTransport`
//! drives this as an rmcp transport; this is the host half of the contract.
//!
//! Each connection gets a sandbox of its own: the plugin's grants widened by exactly the origin
//! of the server it serves. A transport may reach its server's `url` (scheme, host, port) and
//! nothing else unless `grants.hosts` says so, and serving server A never lets it reach B.

use std::sync::Arc;

use tokio::sync::mpsc::UnboundedReceiver;

use crate::config::{ServerDef, origin_of};
use crate::plugin::compile::load::{Loaded, Pre};
use crate::plugin::error::{Fault, PluginError};
use crate::plugin::guard::classify;
use crate::plugin::messages::mailbox::{Inbox, Outbox};
use crate::plugin::messages::queue::QueueSender;
use crate::plugin::sandbox::limits::arm_yield_only;
use crate::plugin::sandbox::store::State;
use crate::plugin::wire;

/// A loaded transport plugin, ready to open connections. Cheap to clone: the compiled
/// component and the pre-linked instance are shared; each connection builds its own store.
#[derive(Clone)]
pub(crate) struct TransportPlugin {
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

    /// Runs one connection for `server` until the plugin returns. Messages sent on the sender
    /// paired with `inbox` reach the plugin; what it sends arrives on `outbox`'s receiver,
    /// within the connection's byte budget (a flood fails the connection: `queue`).
    /// Dropping that sender closes the inbox, which asks the plugin to finish. One store per
    /// connection: the memory cap holds for its lifetime. There is no time cap on the pump (it
    /// lives as long as the connection) but it yields every epoch tick, so dropping this future
    /// stops even a plugin that never returns, and a pump that keeps a core busy is stopped at
    /// its share of one (`limits.cpuPercent`).
    pub async fn run(
        &self,
        server: &ServerDef,
        inbox: UnboundedReceiver<String>,
        outbox: QueueSender,
    ) -> Result<(), PluginError> {
        let p = &*self.plugin;
        let Pre::Transport(pre) = &p.pre else {
            return Err(p.error(Fault::Load { message: "not loaded as a transport plugin".into() }));
        };
        let sandbox = p
            .sandbox
            .with_origin(server.url.as_deref().and_then(origin_of))
            .map_err(|e| p.error(Fault::Sandbox { message: e.0 }))?;
        let wit_server = wire::server(server, true);
        let mut store = State::store(p.engine, &p.name, &p.admission, &sandbox, p.limits.memory_mb)
            .map_err(|fault| p.error(fault))?;
        let meter = arm_yield_only(&mut store, &p.limits);
        let outcome = meter
            .wrap(async {
                let inbox = store.data_mut().table().push(Inbox::new(inbox))?;
                let outbox = store.data_mut().table().push(Outbox::new(outbox))?;
                let instance = pre.instantiate_async(&mut store).await?;
                instance.toolport_plugin_connection().call_run(&mut store, &wit_server, inbox, outbox).await
            })
            .await;
        let result = classify(p, &store, Ok(outcome));
        // The host's own record wins over whatever the plugin made of the refusal.
        if let Some(target) = sandbox.denials().first() {
            return Err(p.error(Fault::NotGranted { target }));
        }
        if let Some(fault) = store.data().socket_refusal() {
            return Err(p.error(fault));
        }
        result?.map_err(|message| p.guest_error(Fault::Failed { message }, store.data()))
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use crate::config::{Grants, Limits, PluginDef, PluginKind};
    use crate::plugin::{PLUGIN_BUILD_DIR, PluginHost};

    use super::*;

    #[tokio::test]
    async fn a_transport_plugin_pumps_both_ways_and_returns_when_the_inbox_closes() {
        let def = PluginDef {
            name: "echo".into(),
            kind: PluginKind::Transport,
            path: PathBuf::from(PLUGIN_BUILD_DIR).join("fixture_echo_transport.wasm"),
            grants: Grants::default(),
            limits: Limits::default(),
            sha256: None,
        };
        let host = PluginHost::new(None, &[def]).unwrap_or_else(|e| panic!("{e:#}"));
        let transport = host.transport("echo").unwrap_or_else(|e| panic!("{e}"));
        let (to_plugin, inbox) = tokio::sync::mpsc::unbounded_channel();
        let (outbox, mut from_plugin) = crate::plugin::queue();
        let server =
            ServerDef { name: "echo-server".into(), command: Some("demo".into()), ..ServerDef::default() };
        let pump = tokio::spawn(async move { transport.run(&server, inbox, outbox).await });
        for i in 0..3 {
            let msg = format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#);
            to_plugin.send(msg.clone()).unwrap_or_else(|e| panic!("{e}"));
            let back = tokio::time::timeout(Duration::from_secs(10), from_plugin.recv()).await;
            assert_eq!(back.ok().flatten().as_deref(), Some(msg.as_str()));
        }
        drop(to_plugin);
        let ended = tokio::time::timeout(Duration::from_secs(10), pump).await;
        assert!(matches!(ended, Ok(Ok(Ok(())))), "{ended:?}");
    }
}
