//! The plugin-transport adapter: an rmcp client [`Transport`] backed by one connection of a
//! transport plugin (`sse`, or a server whose `type` names a plugin).
//!
//! The plugin runs its one long `run` call on a task of its own, in a store of its own, under
//! its memory cap; the adapter only moves JSON text through two queues, so a request being
//! written never waits for a response being read (full duplex, `wit/README.md`). The plugin's
//! queue to the host has a byte budget (`plugin/queue.rs`): the host holds a bounded amount
//! per connection, and a plugin that floods it fails with its queue limit. When the
//! plugin returns, traps or hits a limit, its queue closes, rmcp sees the connection end, and
//! [`Pump::ended`] says why in the plugin's own words, so only this server goes to `error`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::service::{RunningService, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{ClientHandler, RoleClient};
use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;

use super::connect_error::ConnectError;
use super::lifecycle::{Start, StartError, retry_lifecycle};
use crate::config::ServerDef;
use crate::plugin::{MAX_MESSAGE_BYTES, PluginHost, QueueReceiver};

/// How long a closed connection's plugin gets to notice the closed inbox and return before its
/// task is stopped. A well-behaved pump returns within one poll (microseconds); a spinning one
/// burns a core until cut off, so the grace stays short.
const CLOSE_GRACE: Duration = Duration::from_millis(500);
/// How long a failed handshake waits for the plugin to say why: its message (`not granted: …`,
/// a trap, a refused connection) explains more than rmcp's "connection closed".
const FAILURE_REPORT_WAIT: Duration = Duration::from_millis(1_000);

// A server cannot send through a plugin what it could not send over stdio, nor the reverse.
const _: () = assert!(MAX_MESSAGE_BYTES == super::stdio::MAX_STDIO_MESSAGE_BYTES);

/// How a plugin's `run` ended: `None` when it returned because the host closed its inbox
/// (nothing to report), else the plugin's own reason.
type Ending = Option<String>;

/// Why a plugin connection ended, shared by the transport and whoever watches the session.
#[derive(Clone, Debug)]
pub struct Pump {
    ended: watch::Receiver<Option<Ending>>,
    plugin: Arc<str>,
}

impl Pump {
    /// Waits until the plugin's `run` has finished and returns why, e.g. `transport plugin tcp:
    /// not granted: tcp://10.0.0.1:22` or `transport plugin tcp: crashed: …`. For the session's
    /// watcher, which asks only when the connection ended from the plugin's side.
    pub async fn ended(&self) -> String {
        self.failure()
            .await
            .unwrap_or_else(|| format!("transport plugin {} closed the connection", self.plugin))
    }

    /// Waits until the plugin's `run` has finished; its reason unless the host closed it.
    async fn failure(&self) -> Option<String> {
        let mut ended = self.ended.clone();
        match ended.wait_for(Option::is_some).await {
            Ok(ending) => ending.clone().flatten(),
            Err(_) => Some("the transport plugin's task went away".to_string()),
        }
    }

    /// The reason if the plugin has already finished by itself.
    pub fn ended_now(&self) -> Option<String> {
        self.ended.borrow().clone().flatten()
    }
}

/// The built-in plugin that serves `type: sse` (the `transport-sse` crate).
pub const SSE_PLUGIN: &str = "sse";

/// Connects `def` through transport plugin `plugin` (already `${VAR}`-expanded, so header
/// values reach the plugin ready to send) and starts the lifecycle (`server/discover`, else
/// `initialize`). A handshake that fails because
/// the plugin gave up reports the plugin's message.
pub async fn connect<H: ClientHandler>(
    plugins: &PluginHost,
    plugin: &str,
    def: &ServerDef,
    start: Start<H>,
) -> Result<(RunningService<RoleClient, H>, Pump), StartError> {
    let transport = PluginTransport::open(plugins, plugin, def)?;
    let pump = transport.pump.clone();
    match start.serve(transport).await {
        Ok(service) => Ok((service, pump)),
        Err(e) if retry_lifecycle(&e).is_some() => Err(StartError::from_init(&e, def)),
        // rmcp gave up first (and dropped the transport) unless the plugin had a reason.
        Err(e) => match tokio::time::timeout(FAILURE_REPORT_WAIT, pump.failure()).await {
            Ok(Some(reason)) => Err(StartError::other(reason)),
            _ => Err(ConnectError::from_cause(&e, def).into()),
        },
    }
}

/// One plugin connection seen as an rmcp transport. Dropping it closes the plugin's inbox and,
/// after [`CLOSE_GRACE`], stops the plugin's task whatever the plugin is doing.
pub struct PluginTransport {
    to_plugin: Option<mpsc::UnboundedSender<String>>,
    from_plugin: QueueReceiver,
    pump: Pump,
    task: AbortHandle,
    plugin: Arc<str>,
    /// Set once the host has closed the inbox: the plugin's `ok` is then an answer, not news.
    host_closed: Arc<AtomicBool>,
    /// Messages from the plugin that were dropped as not JSON-RPC.
    not_json_rpc: NotJsonRpc,
}

/// Counts the plugin's messages that were not JSON-RPC and logs only a few of them: the first
/// with its parse error, then the running count each time it reaches another power of ten,
/// and the total when the connection closes. One transport sent 167,130 of them in 10 s (32.7
/// MB of warnings); this way a million cost seven lines.
#[derive(Debug, Default)]
struct NotJsonRpc {
    count: u64,
}

impl NotJsonRpc {
    fn note(&mut self, plugin: &str, error: &serde_json::Error) {
        self.count += 1;
        if self.count == 1 {
            tracing::warn!(plugin, "dropped a message that is not JSON-RPC: {error}");
        } else if 10u64.pow(self.count.ilog10()) == self.count {
            tracing::warn!(plugin, "dropped {} messages that are not JSON-RPC so far", self.count);
        }
    }

    /// The total, logged once at close when more than the first was dropped.
    fn report(&self, plugin: &str) {
        if self.count > 1 {
            tracing::warn!(plugin, "dropped {} messages that are not JSON-RPC in all", self.count);
        }
    }
}

/// A message could not go to the plugin: it has finished (the reason is its own message).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PumpError(String);

impl PluginTransport {
    /// Starts the plugin's pump for `def` on a task of its own.
    pub fn open(plugins: &PluginHost, plugin: &str, def: &ServerDef) -> Result<Self, ConnectError> {
        let transport = plugins.transport(plugin).map_err(|e| e.to_string())?;
        let (to_plugin, inbox) = mpsc::unbounded_channel();
        let (outbox, from_plugin) = crate::plugin::queue();
        let (ended_tx, ended) = watch::channel(None);
        let def = def.clone();
        let name: Arc<str> = plugin.into();
        let server = def.name.clone();
        let host_closed = Arc::new(AtomicBool::new(false));
        let closed = Arc::clone(&host_closed);
        let task = tokio::spawn(async move {
            let ending = match transport.run(&def, inbox, outbox).await {
                Ok(()) if closed.load(Ordering::SeqCst) => None,
                Ok(()) => Some(format!("transport plugin {} closed the connection", transport.name())),
                Err(e) => Some(e.to_string()),
            };
            tracing::debug!(server = %server, "transport plugin finished: {ending:?}");
            let _ = ended_tx.send(Some(ending));
        });
        Ok(Self {
            to_plugin: Some(to_plugin),
            from_plugin,
            pump: Pump { ended, plugin: Arc::clone(&name) },
            task: task.abort_handle(),
            plugin: name,
            host_closed,
            not_json_rpc: NotJsonRpc::default(),
        })
    }

    /// Why sending failed: the plugin's reason when it has finished.
    fn gone(&self) -> PumpError {
        PumpError(
            self.pump
                .ended_now()
                .unwrap_or_else(|| format!("transport plugin {} is not running", self.plugin)),
        )
    }
}

impl Transport<RoleClient> for PluginTransport {
    type Error = PumpError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = match serde_json::to_string(&item) {
            Ok(text) => match &self.to_plugin {
                Some(tx) => tx.send(text).map_err(|_| self.gone()),
                None => Err(self.gone()),
            },
            Err(e) => Err(PumpError(format!("cannot encode a message: {e}"))),
        };
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let text = self.from_plugin.recv().await?;
            match serde_json::from_str(&text) {
                Ok(message) => return Some(message),
                // One bad message must not end the session; the server's log says more.
                Err(e) => self.not_json_rpc.note(&self.plugin, &e),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.host_closed.store(true, Ordering::SeqCst);
        self.to_plugin.take();
        Ok(())
    }
}

impl Drop for PluginTransport {
    fn drop(&mut self) {
        self.not_json_rpc.report(&self.plugin);
        // Closing the inbox asks the pump to return; the abort is for pumps that do not listen.
        self.host_closed.store(true, Ordering::SeqCst);
        self.to_plugin.take();
        if self.task.is_finished() {
            return;
        }
        let task = self.task.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    tokio::time::sleep(CLOSE_GRACE).await;
                    task.abort();
                });
            }
            Err(_) => task.abort(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use rmcp::model::{ClientJsonRpcMessage, ClientNotification, InitializedNotification};

    use super::*;
    use crate::config::{Grants, Limits, PluginDef, PluginKind};

    fn hostile() -> PluginHost {
        let def = PluginDef {
            name: "hostile".into(),
            kind: PluginKind::Transport,
            path: PathBuf::from(crate::plugin::PLUGIN_BUILD_DIR).join("fixture_transport_hostile.wasm"),
            grants: Grants::default(),
            limits: Limits::default(),
            sha256: None,
        };
        PluginHost::new(None, &[def]).unwrap_or_else(|e| panic!("{e:#}"))
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_pump_that_ignores_the_closed_inbox_is_stopped_after_the_grace() {
        let def =
            ServerDef { name: "spin".into(), url: Some("tcp://127.0.0.1:9".into()), ..ServerDef::default() };
        let mut transport =
            PluginTransport::open(&hostile(), "hostile", &def).unwrap_or_else(|e| panic!("{e}"));
        let pump = transport.pump.clone();
        // The fixture spins forever once its first message arrives.
        let message = ClientJsonRpcMessage::notification(ClientNotification::InitializedNotification(
            InitializedNotification::default(),
        ));
        transport.send(message).await.unwrap_or_else(|e| panic!("{e}"));
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(pump.ended_now(), None, "still spinning");
        drop(transport);
        let ended = tokio::time::timeout(CLOSE_GRACE * 4, pump.ended()).await;
        assert_eq!(ended.ok().as_deref(), Some("the transport plugin's task went away"));
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn sending_after_the_plugin_failed_reports_its_reason() {
        let def =
            ServerDef { name: "bomb".into(), url: Some("tcp://127.0.0.1:9".into()), ..ServerDef::default() };
        let mut transport =
            PluginTransport::open(&hostile(), "hostile", &def).unwrap_or_else(|e| panic!("{e}"));
        let reason = transport.pump.clone().ended().await;
        assert_eq!(reason, "transport plugin hostile: exceeded its memory limit (64 MiB)");
        assert!(transport.receive().await.is_none());
        let message = ClientJsonRpcMessage::notification(ClientNotification::InitializedNotification(
            InitializedNotification::default(),
        ));
        let err = transport.send(message).await.err().map(|e| e.to_string());
        assert_eq!(err.as_deref(), Some("transport plugin hostile: exceeded its memory limit (64 MiB)"));
    }
}
