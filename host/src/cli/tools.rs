//! Placeholder subcommands: tools, call, demo.

use std::process::ExitCode;

use crate::paths::Paths;

/// `toolport tools` (placeholder).
#[derive(Debug, clap::Args)]
pub struct ToolsArgs {}
/// `toolport call` (placeholder).
#[derive(Debug, clap::Args)]
pub struct CallArgs {}
/// `toolport demo` (placeholder).
#[derive(Debug, clap::Args)]
pub struct DemoArgs {}

pub async fn run_tools(_paths: &Paths, _args: ToolsArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not built yet")
}
pub async fn run_call(_paths: &Paths, _args: CallArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not built yet")
}
pub async fn run_demo(_args: DemoArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not built yet")
}
