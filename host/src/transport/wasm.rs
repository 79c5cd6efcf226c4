//! The `wasm` transport: a sandboxed server (`plugin::ServerComponent`) reached through its
//! in-memory stdin and stdout exactly as a stdio child is through its pipes — same framing,
//! same message cap, its stderr drained into the same bounded tail, its end reported the same
//! way (`StdioChild`), so the runtime cannot tell the two apart except by what they may do.

use rmcp::ClientHandler;

use super::connect_error::ConnectError;
use super::connected::{Connected, End};
use super::lifecycle::{Start, StartError, retry_lifecycle};
use super::stderr_tail::StderrTail;
use super::stdio::StdioChild;
use super::stdio::{HANDSHAKE_EXIT_WAIT, MAX_STDIO_MESSAGE_BYTES};
use crate::config::ServerDef;
use crate::plugin::{PluginHost, Started};

/// Starts `def`'s component (already `${VAR}`-expanded) and the MCP lifecycle over its stdio.
pub async fn connect<H: ClientHandler>(
    plugins: &PluginHost,
    def: &ServerDef,
    start: Start<H>,
) -> Result<Connected<H>, StartError> {
    // Compiling a component the cache has not seen takes a while of CPU: off the async threads.
    let (plugins, owned) = (plugins.clone(), def.clone());
    let (component, wasm) = tokio::task::spawn_blocking(move || plugins.wasm_server(&owned))
        .await
        .map_err(|e| StartError::other(format!("loading the component failed: {e}")))?
        .map_err(StartError::other)?;
    let Started { stdin, stdout, stderr, ended, stop, refusals } =
        component.start(def, &wasm).map_err(StartError::other)?;
    let child = StdioChild::sandboxed(ended, stop, StderrTail::drain(stderr));
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(stdout, stdin)
        .with_max_line_length(MAX_STDIO_MESSAGE_BYTES);
    match start.serve(transport).await {
        Ok(service) => Ok(Connected { service, end: End::Wasm { run: child, refusals } }),
        Err(e) if retry_lifecycle(&e).is_some() => {
            child.stop().await;
            Err(StartError::from_init(&e, def))
        }
        Err(e) => {
            // The host's own record of a refusal explains a failed start best, then the end.
            let ended = tokio::time::timeout(HANDSHAKE_EXIT_WAIT, child.exited()).await;
            let error = match refusals.all().into_iter().next() {
                Some(refusal) => ConnectError::Refused { refusal, then: None },
                None => ended.map_or_else(|_| ConnectError::from_cause(&e, def), ConnectError::Exited),
            };
            child.stop().await;
            Err(error.into())
        }
    }
}
