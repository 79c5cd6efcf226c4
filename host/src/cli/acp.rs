//! `toolport acp`: an ACP agent on stdin/stdout for editors and embedding hosts.

use std::process::ExitCode;

use toolport::{AcpOptions, Paths, RuntimeOptions, serve_acp};

/// `toolport acp` takes no options: the home comes from the global flags, and each session's
/// workspace from the client's `cwd`.
#[derive(Debug, clap::Args)]
pub struct AcpArgs {}

/// Serves ACP until the client closes stdin. stdout carries only protocol lines.
pub async fn run(paths: &Paths, _args: AcpArgs) -> anyhow::Result<ExitCode> {
    let options = AcpOptions { home: paths.home.clone(), runtime: RuntimeOptions::default() };
    serve_acp(tokio::io::stdin(), tokio::io::stdout(), options).await?;
    Ok(ExitCode::SUCCESS)
}
