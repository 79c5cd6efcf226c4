//! Transports (DESIGN §1): how the host reaches a server and completes the MCP handshake.
//! `stdio` and `streamable_http` go through rmcp; `sse` (the built-in `transport-sse` plugin)
//! and every plugin `type` go through the plugin-transport adapter ([`plugin`]).

mod http;
mod plugin;
mod stderr_tail;
mod stdio;

pub use plugin::{PluginTransport, Pump, SSE_PLUGIN};
pub use stderr_tail::StderrTail;
pub use stdio::StdioChild;

use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpError;
use rmcp::{ClientHandler, RoleClient, ServiceExt};

use crate::config::{ServerDef, TransportKind};
use crate::plugin::PluginHost;

/// Largest message a stdio server may send. rmcp's default (16 MiB) drops a bigger line
/// silently and the call then waits for its timeout; a tool returning a large file or log is
/// legal, so we allow 64 MiB, which still bounds what one misbehaving server can make us buffer.
pub const MAX_STDIO_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// An initialized MCP session and, for `stdio`, the child process behind it.
pub struct Connected<H: ClientHandler> {
    /// rmcp's running client; its peer sends requests.
    pub service: RunningService<RoleClient, H>,
    /// The child process (stdio only).
    pub child: Option<StdioChild>,
    /// The plugin's pump (plugin transports only): says why the connection ended.
    pub pump: Option<Pump>,
}

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
                    let exited =
                        tokio::time::timeout(std::time::Duration::from_millis(300), child.exited()).await;
                    Err(exited.unwrap_or_else(|_| deepest_cause(&e)))
                }
            }
        }
        TransportKind::StreamableHttp => {
            let transport = http::transport(http::config(def)?);
            let service = handler.serve(transport).await.map_err(|e| deepest_cause(&e))?;
            Ok(Connected { service, child: None, pump: None })
        }
        TransportKind::Sse => plugin::connect(plugins, SSE_PLUGIN, def, handler).await,
        TransportKind::Plugin(name) => plugin::connect(plugins, name, def, handler).await,
    }
}

/// The innermost error's message: what actually went wrong, without the wrappers' prose.
/// rmcp does not link two of its wrappers as `source()` (the transport error inside an
/// initialize error, the HTTP client's error inside its own), so those hops are taken by hand.
pub fn deepest_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    loop {
        let next: Option<&(dyn std::error::Error + 'static)> =
            if let Some(rmcp::service::ClientInitializeError::TransportError { error, .. }) =
                current.downcast_ref()
            {
                Some(error)
            } else if let Some(StreamableHttpError::Client(inner)) =
                current.downcast_ref::<StreamableHttpError<reqwest::Error>>()
            {
                Some(inner)
            } else {
                current.source()
            };
        match next {
            Some(next) => current = next,
            None => break,
        }
    }
    let text = current.to_string();
    if text.trim().is_empty() { error.to_string() } else { text }
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
