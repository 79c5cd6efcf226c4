//! The MCP face: one tool, `fetch`, and the server's info.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::fetch;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FetchArgs {
    /// The http or https URL to GET.
    pub url: String,
    /// Return at most this many bytes of the body (default 100000, at most 5242880).
    pub max_bytes: Option<u64>,
}

#[derive(Clone)]
pub struct FetchServer {
    #[allow(dead_code, reason = "read by the code #[tool_handler] generates")]
    tool_router: ToolRouter<Self>,
}

impl FetchServer {
    pub fn new() -> Self {
        Self { tool_router: Self::tool_router() }
    }
}

#[tool_router]
impl FetchServer {
    #[tool(
        description = "GET a URL over HTTP(S) and return the status and the body as text (cut at maxBytes). Redirects are followed; only hosts granted to this server can be reached, others answer `not granted: scheme://host:port`."
    )]
    async fn fetch(&self, Parameters(args): Parameters<FetchArgs>) -> CallToolResult {
        fetch::fetch(&args.url, args.max_bytes).await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for FetchServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("toolport-fetch", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Fetches web pages and APIs with GET, only from the hosts this server was granted.",
            )
    }
}
