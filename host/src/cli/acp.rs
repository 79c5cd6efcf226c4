//! Placeholder subcommand.

use std::process::ExitCode;

use crate::paths::Paths;

/// Arguments (placeholder).
#[derive(Debug, clap::Args)]
pub struct AcpArgs {}

pub async fn run(_paths: &Paths, _args: AcpArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not built yet")
}
