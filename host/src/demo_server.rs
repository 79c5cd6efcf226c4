//! A small stdio MCP server built into the binary (tests, demos). Placeholder until issue 4.

/// Options of `toolport demo-server`.
#[derive(Debug, clap::Args)]
pub struct DemoServerArgs {}

/// Serves MCP on stdin/stdout until the client closes it.
pub async fn run(_args: DemoServerArgs) -> anyhow::Result<()> {
    anyhow::bail!("demo-server is not built yet")
}
