//! toolport's built-in fetch MCP server: a `wasi:cli/command` component speaking MCP over
//! stdin/stdout, whose only way out is `wasi:http/outgoing-handler` — the host decides which
//! destinations that reaches. It has no native build (the point is the sandbox); natively it
//! only says so.

#[cfg_attr(not(target_os = "wasi"), allow(dead_code, reason = "natively only its tests use it"))]
mod url;

#[cfg(target_os = "wasi")]
mod fetch;
#[cfg(target_os = "wasi")]
mod http;
#[cfg(target_os = "wasi")]
mod tool;

use std::process::ExitCode;

#[cfg(target_os = "wasi")]
fn main() -> ExitCode {
    use rmcp::ServiceExt;
    use rmcp::service::ServerInitializeError;

    /// Serves until the client closes stdin (a client that leaves before `initialize` too).
    async fn serve() -> Result<(), String> {
        let service = match tool::FetchServer::new().serve(wasi_stdio::stdio()).await {
            Ok(service) => service,
            Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(error) => return Err(format!("initialize failed: {error}")),
        };
        service.waiting().await.map(|_| ()).map_err(|e| format!("the server task failed: {e}"))
    }

    match wasi_stdio::run(serve()) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(message)) => {
            eprintln!("server_fetch: {message}");
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("server_fetch: cannot start the runtime: {error}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(not(target_os = "wasi"))]
fn main() -> ExitCode {
    eprintln!("server_fetch runs only as a WASI component: build it for wasm32-wasip2");
    ExitCode::from(2)
}
