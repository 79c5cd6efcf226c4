//! What a transport hands the runtime: the running MCP session and whatever else says how it
//! ends (the child process of a stdio server, the pump of a plugin transport).

use rmcp::service::RunningService;
use rmcp::{ClientHandler, RoleClient};

use super::http_audit::HeaderAudit;
use super::plugin::Pump;
use super::stdio::StdioChild;
use crate::plugin::Refusals;

/// An initialized MCP session and, for `stdio`, the child process behind it.
pub struct Connected<H: ClientHandler> {
    /// rmcp's running client; its peer sends requests.
    pub service: RunningService<RoleClient, H>,
    /// The child process (stdio), or the sandboxed server's run (wasm).
    pub child: Option<StdioChild>,
    /// The plugin's pump (plugin transports only): says why the connection ended.
    pub pump: Option<Pump>,
    /// Tools whose `x-mcp-header` annotations break SEP-2243 (streamable HTTP only, where
    /// rmcp leaves them out).
    pub audit: Option<HeaderAudit>,
    /// What the sandbox refused a `wasm` server, recorded by the host.
    pub refusals: Option<Refusals>,
}
