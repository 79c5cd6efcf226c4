//! Transports (DESIGN §1): how the host reaches a server and completes the MCP handshake.
//! `stdio` and `streamable_http` go through rmcp; `sse` (the built-in `transport-sse` plugin)
//! and every plugin `type` go through the plugin-transport adapter ([`plugin`]).

mod cause;
mod connected;
mod http;
mod plugin;
mod process_group;
mod stderr_tail;
mod stdio;

pub use cause::deepest_cause;
pub use connected::Connected;
pub use plugin::SSE_PLUGIN;
pub use process_group::end_all as end_server_processes;

use std::time::Duration;

use rmcp::{ClientHandler, ServiceExt};

use crate::config::{ServerDef, TransportKind};
use crate::plugin::PluginHost;

/// Largest message a stdio server may send. rmcp's default (16 MiB) drops a bigger line
/// silently and the call then waits for its timeout; a tool returning a large file or log is
/// legal, so we allow 64 MiB, which still bounds what one misbehaving server can make us buffer.
pub const MAX_STDIO_MESSAGE_BYTES: usize = 64 * 1024 * 1024;
/// How long a failed stdio handshake waits for the child's exit: a server that crashed on
/// start has usually exited by then, and its status and stderr explain more than rmcp's
/// "connection closed"; one that is still running gets rmcp's reason instead.
const HANDSHAKE_EXIT_WAIT: Duration = Duration::from_millis(300);

/// Opens the transport for `def` (already `${VAR}`-expanded) and runs `initialize`.
/// The error is one line naming the deepest cause, e.g. `Connection refused (os error 111)`
/// or `process exited with status 1; stderr: …`. Callers bound it with the connect timeout;
/// dropping the future kills a half-started child.
pub async fn connect<H: ClientHandler>(
    def: &ServerDef,
    kind: &TransportKind,
    plugins: &PluginHost,
    handler: H,
) -> Result<Connected<H>, String> {
    match kind {
        TransportKind::Stdio => {
            let (child, stdout, stdin) = stdio::spawn(def)?;
            let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(stdout, stdin)
                .with_max_line_length(MAX_STDIO_MESSAGE_BYTES);
            match handler.serve(transport).await {
                Ok(service) => Ok(Connected { service, child: Some(child), pump: None }),
                Err(e) => {
                    // A child that died during the handshake explains itself better than
                    // rmcp's "connection closed".
                    let exited = tokio::time::timeout(HANDSHAKE_EXIT_WAIT, child.exited()).await;
                    Err(exited.unwrap_or_else(|_| deepest_cause(&e)))
                }
            }
        }
        TransportKind::StreamableHttp => {
            let transport = http::transport(http::config(def)?);
            let service = handler.serve(transport).await.map_err(|e| deepest_cause(&e))?;
            Ok(Connected { service, child: None, pump: None })
        }
        TransportKind::Sse => through_plugin(plugins, SSE_PLUGIN, def, handler).await,
        TransportKind::Plugin(name) => through_plugin(plugins, name, def, handler).await,
    }
}

/// A session over transport plugin `name`; its pump says why the connection ends.
async fn through_plugin<H: ClientHandler>(
    plugins: &PluginHost,
    name: &str,
    def: &ServerDef,
    handler: H,
) -> Result<Connected<H>, String> {
    let (service, pump) = plugin::connect(plugins, name, def, handler).await?;
    Ok(Connected { service, child: None, pump: Some(pump) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_refused_http_connection_reports_the_os_error() {
        let def = ServerDef { url: Some("http://127.0.0.1:9/mcp".into()), ..ServerDef::default() };
        let plugins = PluginHost::new(None, &[]).unwrap_or_else(|e| panic!("{e:#}"));
        let err = connect(&def, &TransportKind::StreamableHttp, &plugins, ()).await.err().unwrap_or_default();
        assert_eq!(err, "Connection refused (os error 111)");
    }

    #[tokio::test]
    async fn sse_without_url_fails_in_the_plugins_words() {
        let plugins = PluginHost::new(None, &[]).unwrap_or_else(|e| panic!("{e:#}"));
        let err = connect(&ServerDef::default(), &TransportKind::Sse, &plugins, ()).await.err();
        assert_eq!(err.as_deref(), Some("transport plugin sse: sse transport requires url"));
    }
}
