//! toolport's built-in filesystem MCP server, speaking MCP over stdin/stdout.
//!
//! As a `wasi:cli/command` component its roots are the preopened folders: the host grants
//! them, read-only or read-write, and its sandbox is the real boundary; this server refuses
//! what it can tell is out of bounds before asking. Natively (for the wasm-vs-native
//! benchmark) it is `server_files DIR[:rw] …`.

mod changes;
mod errors;
mod folder;
mod glob;
mod listing;
mod reading;
mod roots;
mod search;
mod tools;
mod walk;

use std::process::ExitCode;

use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;

use crate::roots::Roots;
use crate::tools::FilesServer;

fn main() -> ExitCode {
    let roots = match load_roots() {
        Ok(roots) => roots,
        Err(message) => {
            eprintln!("server_files: {message}");
            return ExitCode::from(2);
        }
    };
    match wasi_stdio::run(serve(roots)) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(message)) => {
            eprintln!("server_files: {message}");
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("server_files: cannot start the runtime: {error}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(target_os = "wasi")]
fn load_roots() -> Result<Roots, String> {
    Ok(Roots::from_preopens())
}

#[cfg(not(target_os = "wasi"))]
fn load_roots() -> Result<Roots, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || args.iter().any(|a| a == "-h" || a == "--help") {
        return Err(
            "usage: server_files DIR[:rw] … (each DIR is read-only unless it ends in :rw)".to_string()
        );
    }
    Roots::from_args(args)
}

/// Serves until the client closes stdin. A client that leaves before `initialize` is a clean
/// end too.
async fn serve(roots: Roots) -> Result<(), String> {
    let service = match FilesServer::new(roots).serve(wasi_stdio::stdio()).await {
        Ok(service) => service,
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(format!("initialize failed: {error}")),
    };
    service.waiting().await.map(|_| ()).map_err(|e| format!("the server task failed: {e}"))
}
