//! Transports: how the host reaches a server and completes the MCP handshake.
//! `stdio` and `streamable_http` go through rmcp; `sse` (the built-in `transport-sse` plugin)
//! and every plugin `type` go through the plugin-transport adapter ([`plugin`]); `wasm` runs a
//! sandboxed server in the plugin host and talks to its stdio ([`wasm`]).

mod challenge;
mod confine;
mod connect_error;
mod connected;
mod egress;
mod header_rules;
mod http;
mod http_audit;
mod in_order;
mod lifecycle;
mod plugin;
mod process_group;
mod stderr_tail;
mod stdio;
mod stdout_drain;
mod stdout_noise;
mod trace_headers;
mod wasm;

pub use challenge::login;
pub use confine::launcher::Ended as SandboxEnded;
pub use confine::spec::LAUNCHER_ARG;
pub use confine::{CheckReport, SandboxError, check as check_sandbox, launch as launch_sandboxed};
pub use connect_error::ConnectError;
pub use connected::{Connected, Refused};
pub use header_rules::header_rule_broken;
pub use http::Signing;
pub use http_audit::{BadHeaderTool, HeaderAudit};
pub use in_order::ProgressTap;
pub use lifecycle::{is_stateless, offered as offered_version};
pub use plugin::SSE_PLUGIN;
pub use process_group::end_all as end_server_processes;
pub use process_group::{
    end_all_promptly as end_server_processes_promptly, kill_all as kill_server_processes,
};
pub use stdout_noise::StdoutNoise;

use rmcp::ClientHandler;

use crate::config::{ServerDef, TransportKind};
use crate::plugin::PluginHost;
use connected::End;
use lifecycle::{Start, StartError};
use stdio::{HANDSHAKE_EXIT_WAIT, MAX_STDIO_MESSAGE_BYTES};

/// Opens the transport for `def` (already `${VAR}`-expanded) and starts the MCP lifecycle
/// ([`lifecycle::lifecycle`]: `server/discover`, else `initialize`). A server that answers the
/// probe with something other than a discovery result (some 2025 servers answer every unknown
/// method with `{}`) gets a fresh connection with `initialize` alone; one whose answer came
/// after rmcp's 10 s probe wait gets one without that wait ([`lifecycle::retry_lifecycle`]).
/// A definition that names its `protocolVersion` gets that revision's lifecycle, once
/// ([`lifecycle::pinned`]).
/// The error says what went wrong ([`ConnectError`]), in one line naming the deepest cause,
/// e.g. `Connection refused (os error 111)` or `process exited with status 1; stderr: …`. Callers bound it with the connect timeout;
/// dropping the future kills a half-started child. The server's progress reports go to `tap`
/// in the order they arrive ([`in_order`]). What a stdio server writes to stdout that is not
/// JSON-RPC is noted in `noise` ([`stdout_noise`]), which the caller keeps to explain a
/// handshake that fails or times out.
pub async fn connect<H: ClientHandler + Clone>(
    def: &ServerDef,
    kind: &TransportKind,
    plugins: &PluginHost,
    signing: Signing<'_>,
    handler: H,
    tap: ProgressTap,
    noise: &StdoutNoise,
) -> Result<Connected<H>, ConnectError> {
    if let Some(lifecycle) = lifecycle::pinned(def) {
        let only = Start { handler, lifecycle, tap };
        return open(def, kind, plugins, signing, only, noise).await.map_err(|e| e.error);
    }
    let first = Start { handler: handler.clone(), lifecycle: lifecycle::lifecycle(), tap: tap.clone() };
    let result = match open(def, kind, plugins, signing, first, noise).await {
        Err(StartError { error, retry: Some(lifecycle) }) => {
            tracing::info!(server = %def.name, "the first start failed ({error}); connecting again with {lifecycle:?}");
            let again = Start { handler, lifecycle, tap };
            open(def, kind, plugins, signing, again, noise).await
        }
        other => other,
    };
    result.map_err(|e| e.error)
}

/// One connection attempt.
async fn open<H: ClientHandler>(
    def: &ServerDef,
    kind: &TransportKind,
    plugins: &PluginHost,
    signing: Signing<'_>,
    start: Start<H>,
    noise: &StdoutNoise,
) -> Result<Connected<H>, StartError> {
    match kind {
        TransportKind::Stdio => {
            let (child, stdout, stdin) = stdio::spawn(def)?;
            // Drained after the transport lets go (the server may still be writing as it exits),
            // and sifted for lines that are not JSON-RPC while it is read.
            let stdout = stdout_noise::Sieve::new(stdout_drain::DrainOnDrop::new(stdout), def, noise.clone());
            let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(stdout, stdin)
                .with_max_line_length(MAX_STDIO_MESSAGE_BYTES);
            match start.serve(transport).await {
                Ok(service) => Ok(Connected { service, end: End::Child(child) }),
                Err(e) if lifecycle::retry_lifecycle(&e).is_some() => {
                    child.stop().await;
                    Err(StartError::from_init(&e, def))
                }
                Err(e) => {
                    // A child that died during the handshake explains itself better than
                    // rmcp's "connection closed"; a sandboxed one's first refusal (its package
                    // runner's registry, say) comes first, with the grant that allows it.
                    let exited = tokio::time::timeout(HANDSHAKE_EXIT_WAIT, child.exited()).await;
                    let reason =
                        exited.map_or_else(|_| ConnectError::from_cause(&e, def), ConnectError::Exited);
                    Err(match child.refusals().and_then(|r| r.all().into_iter().next()) {
                        Some(refused) => ConnectError::Refused {
                            refusal: egress::with_fix(&refused, &def.name),
                            then: Some(Box::new(reason)),
                        },
                        None => reason,
                    }
                    .into())
                }
            }
        }
        TransportKind::StreamableHttp => {
            let audit = HeaderAudit::default();
            let config = http::config(def)?;
            let transport = http::transport(def, signing, config, audit.clone()).await?;
            let service = start.serve(transport).await.map_err(|e| StartError::from_init(&e, def))?;
            Ok(Connected { service, end: End::Http(audit) })
        }
        TransportKind::Wasm => wasm::connect(plugins, def, start).await,
        TransportKind::Sse => through_plugin(plugins, SSE_PLUGIN, def, start).await,
        TransportKind::Plugin(name) => through_plugin(plugins, name, def, start).await,
    }
}

/// A session over transport plugin `name`; its pump says why the connection ends.
async fn through_plugin<H: ClientHandler>(
    plugins: &PluginHost,
    name: &str,
    def: &ServerDef,
    start: Start<H>,
) -> Result<Connected<H>, StartError> {
    let (service, pump) = plugin::connect(plugins, name, def, start).await?;
    Ok(Connected { service, end: End::Pump(pump) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Observer;

    #[tokio::test]
    async fn a_refused_http_connection_reports_the_os_error() {
        let def = ServerDef { url: Some("http://127.0.0.1:9/mcp".into()), ..ServerDef::default() };
        let plugins = PluginHost::new(None, &[]).unwrap_or_else(|e| panic!("{e:#}"));
        let err = connect(
            &def,
            &TransportKind::StreamableHttp,
            &plugins,
            Signing { credentials: None, observer: &Observer::default() },
            (),
            ProgressTap::default(),
            &StdoutNoise::default(),
        )
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert_eq!(err, "Connection refused (os error 111)");
    }

    #[tokio::test]
    async fn sse_without_url_fails_in_the_plugins_words() {
        let plugins = PluginHost::new(None, &[]).unwrap_or_else(|e| panic!("{e:#}"));
        let err = connect(
            &ServerDef::default(),
            &TransportKind::Sse,
            &plugins,
            Signing { credentials: None, observer: &Observer::default() },
            (),
            ProgressTap::default(),
            &StdoutNoise::default(),
        )
        .await
        .err()
        .map(|e| e.to_string());
        assert_eq!(err.as_deref(), Some("transport plugin sse: sse transport requires url"));
    }
}
