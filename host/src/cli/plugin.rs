//! Placeholder subcommand.

use std::process::ExitCode;

use crate::paths::Paths;

/// Arguments (placeholder).
#[derive(Debug, clap::Args)]
pub struct PluginArgs {}

pub async fn run(_paths: &Paths, _args: PluginArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not built yet")
}
