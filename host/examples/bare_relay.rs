//! The floor under `serve`'s hop: an MCP relay with nothing but rmcp on both sides. It serves
//! stdio and passes `tools/list` and `tools/call` to one stdio server, with none of toolport's
//! work in between (no registry, no guards, no audit, no policy, no progress or questions).
//! `bench/serve.sh` measures it beside `serve`, so the hop splits into what any rmcp relay
//! costs and what toolport adds on top.
//!
//! Run: `cargo build --release --example bare_relay`, then as a client's server command:
//! `target/release/examples/bare_relay SERVER [ARGS…]`.

use anyhow::Context as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};

/// The server behind, and its tools as listed once at the start.
struct Relay {
    server: RunningService<RoleClient, ()>,
    tools: Vec<Tool>,
}

impl ServerHandler for Relay {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("bare-relay", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.server.call_tool_once(request).await.map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut argv = std::env::args().skip(1);
    let program = argv.next().context("usage: bare_relay SERVER [ARGS…]")?;
    let mut command = tokio::process::Command::new(program);
    command.args(argv);
    let server = ().serve(TokioChildProcess::new(command)?).await.context("cannot reach the server")?;
    let tools = server.list_all_tools().await.context("cannot list the server's tools")?;
    let running = Relay { server, tools }.serve(rmcp::transport::stdio_pipes()).await?;
    running.waiting().await?;
    Ok(())
}
