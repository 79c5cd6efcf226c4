//! `toolport demo-server`: a small stdio MCP server built into the binary, so tests, benches
//! and the `demo` tour have a real peer without installing anything. Its options make the
//! awkward cases on purpose: slow `initialize`, paginated lists, crashes, changing tool lists,
//! colliding names and results that break their `outputSchema`. Its `confirm` tool asks for
//! input the 2026-07-28 way (SEP-2322): an input-required result with an elicitation and a
//! sealed `requestState`, then the answer.
//!
//! `ServerHandler` is implemented by hand (no `#[tool_router]`) because the options change the
//! list itself (prefix, generated tools, pages) and the timing of the handshake. This file is
//! the server (its state, the handler, the transports, and what it prints); `args.rs` holds its
//! options, `tool_list.rs` its tools and their answers, `confirm.rs` the `confirm` tool.

mod args;
mod confirm;
mod tool_list;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DiscoverResult, Implementation,
    InitializeRequestParams, InitializeResult, ListResourcesResult, ListToolsResult, MetaObject,
    PaginatedRequestParams, ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, RequestStateCodec, Resource, ResourceContents, ServerCapabilities, ServerConfig,
    ServerNotification, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

pub use args::DemoServerArgs;

/// Exit status when `--crash-after` fires: distinctive, so a test can see it in the error.
pub const CRASH_EXIT_CODE: i32 = 3;
/// Longest `sleep`, so a stray call cannot hold a test run for hours.
const MAX_SLEEP_MS: u64 = 600_000;

/// Serves MCP on stdin/stdout until the client closes it, or over HTTP with `--http` until
/// killed.
pub async fn run(args: DemoServerArgs) -> anyhow::Result<()> {
    if let Some(addr) = args.http {
        return serve_http(addr, DemoServer::new(args)?).await;
    }
    let server = DemoServer::new(args)?;
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}

/// rmcp's streamable HTTP service under axum at `/mcp`; every session shares one server state.
async fn serve_http(addr: std::net::SocketAddr, server: DemoServer) -> anyhow::Result<()> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().route_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr).await.context("cannot bind --http")?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, router).await.context("HTTP server failed")?;
    Ok(())
}

#[derive(Clone)]
struct DemoServer {
    args: Arc<DemoServerArgs>,
    calls: Arc<AtomicUsize>,
    /// Set once `--notify-after-ms` has fired: the list then includes `late`.
    changed: Arc<AtomicBool>,
    /// Seals `confirm`'s `requestState` (a client echoes it, so it must not be forgeable).
    state: Arc<RequestStateCodec>,
    /// `--result-meta`, parsed.
    meta: Option<MetaObject>,
}

impl DemoServer {
    fn new(args: DemoServerArgs) -> anyhow::Result<Self> {
        // A key of this process only: state from another run cannot be replayed here.
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| anyhow::anyhow!("no randomness for the state key: {e}"))?;
        let state = RequestStateCodec::try_new(key.to_vec())
            .map_err(|e| anyhow::anyhow!("cannot build the request-state codec: {e}"))?;
        let meta = match &args.result_meta {
            Some(text) => Some(MetaObject(serde_json::from_str(text).with_context(|| {
                format!("--result-meta {text} is not a JSON object: give one like '{{\"k\": 1}}'")
            })?)),
            None => None,
        };
        Ok(Self {
            args: Arc::new(args),
            calls: Arc::default(),
            changed: Arc::default(),
            state: Arc::new(state),
            meta,
        })
    }
}

impl DemoServer {
    /// Sleeps `ms` in tenths, reporting progress after each when the client sent a progress
    /// token, and stops early when the client cancels (both recorded in `--call-log`).
    async fn sleep(&self, ms: u64, context: &RequestContext<RoleServer>) -> Result<CallToolResult, McpError> {
        let token = context.meta.get_progress_token();
        self.log_call(&format!("started sleep {ms}"));
        for tenth in 1..=10u32 {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(ms / 10)) => {}
                () = context.ct.cancelled() => {
                    self.log_call(&format!("cancelled sleep {ms}"));
                    return Err(McpError::internal_error("cancelled", None));
                }
            }
            if let Some(token) = &token {
                let params = ProgressNotificationParam::new(token.clone(), f64::from(tenth))
                    .with_total(10.0)
                    .with_message(format!("{tenth}/10"));
                let _ = context.peer.notify_progress(params).await;
            }
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(format!("slept {ms} ms"))]))
    }

    /// One line in `--call-log`, if there is one.
    fn log_call(&self, line: &str) {
        let Some(log) = &self.args.call_log else { return };
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .and_then(|mut f| std::io::Write::write_all(&mut f, format!("{line}\n").as_bytes()));
        if let Err(e) = appended {
            eprintln!("demo-server: cannot write {}: {e}", log.display());
        }
    }
}

impl ServerHandler for DemoServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities =
            ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build();
        if self.args.resources > 0 || self.args.broken_resources {
            capabilities.resources = ServerCapabilities::builder().enable_resources().build().resources;
        }
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("toolport-demo-server", env!("CARGO_PKG_VERSION")))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        if self.args.delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(self.args.delay_ms)).await;
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    /// The stateless revision's start: as slow as `initialize` (`--delay-ms`), so a slow
    /// server stays slow whichever revision the client speaks.
    async fn discover(&self, _context: RequestContext<RoleServer>) -> Result<DiscoverResult, McpError> {
        if self.args.delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(self.args.delay_ms)).await;
        }
        Ok(DiscoverResult::from_server_info(self.supported_protocol_versions().into_owned(), self.get_info()))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let Some(ms) = self.args.notify_after_ms {
            let changed = self.changed.clone();
            let peer = context.peer.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                changed.store(true, Ordering::SeqCst);
                if let Err(e) = peer.notify_tool_list_changed().await {
                    eprintln!("demo-server: cannot send list_changed: {e}");
                }
            });
        }
    }

    /// 2026-07-28 has no `initialized`: a client that wants `list_changed` listens for it.
    /// Any tools filter is accepted.
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    /// `--notify-after-ms` for a 2026-07-28 client: after the delay, the `late` tool and one
    /// `list_changed` on the subscription; then it stays open until the client cancels it.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        if let Some(ms) = self.args.notify_after_ms {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(ms)) => {
                    self.changed.store(true, Ordering::SeqCst);
                    let changed = ServerNotification::ToolListChangedNotification(Default::default());
                    if let Err(e) = context.sink().send(changed).await {
                        eprintln!("demo-server: cannot send list_changed: {e}");
                    }
                }
                () = context.cancelled() => return Ok(()),
            }
        }
        context.cancelled().await;
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = self.tools();
        if self.args.repeat_cursor {
            let mut result = ListToolsResult::with_all_items(tools);
            result.next_cursor = Some("loop".to_string());
            return Ok(result);
        }
        let page = self.args.page_size;
        if page == 0 {
            return Ok(ListToolsResult::with_all_items(tools));
        }
        // The cursor is the index of the page's first tool, as text.
        let start = match request.and_then(|r| r.cursor) {
            Some(cursor) => {
                cursor.parse::<usize>().map_err(|_| McpError::invalid_params("bad cursor", None))?
            }
            None => 0,
        };
        let end = (start + page).min(tools.len());
        let mut result = ListToolsResult::with_all_items(tools.get(start..end).unwrap_or_default().to_vec());
        if end < tools.len() {
            result.next_cursor = Some(end.to_string());
        }
        Ok(result)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        if self.args.broken_resources {
            return Err(McpError::internal_error("resources are broken on purpose", None));
        }
        let all = self.args.resources;
        let page = if self.args.page_size == 0 { all.max(1) } else { self.args.page_size };
        let start = match request.and_then(|r| r.cursor) {
            Some(cursor) => {
                cursor.parse::<usize>().map_err(|_| McpError::invalid_params("bad cursor", None))?
            }
            None => 0,
        };
        let end = (start + page).min(all);
        let items = (start..end)
            .map(|i| {
                Resource::new(format!("demo://item/{}", i + 1), format!("item-{}", i + 1))
                    .with_mime_type("text/plain")
            })
            .collect();
        let mut result = ListResourcesResult::with_all_items(items);
        if end < all {
            result.next_cursor = Some(end.to_string());
        }
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let index = request.uri.strip_prefix("demo://item/").and_then(|i| i.parse::<usize>().ok());
        match index {
            Some(i) if (1..=self.args.resources).contains(&i) => {
                let mut result =
                    ReadResourceResult::new(vec![ResourceContents::text(format!("item {i}"), request.uri)]);
                result.meta = self.meta.clone();
                Ok(ReadResourceResponse::Complete(result))
            }
            _ => Err(McpError::resource_not_found(format!("no resource {}", request.uri), None)),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(base) = request.name.strip_prefix(self.args.prefix.as_str()) else {
            return Err(McpError::invalid_params(format!("unknown tool: {}", request.name), None));
        };
        if base == "confirm" && self.args.confirm {
            return self.confirm(&request, context.id.to_string());
        }
        let args = request.arguments.unwrap_or_default();
        let mut result = if base == "sleep" {
            let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0).min(MAX_SLEEP_MS);
            self.sleep(ms, &context).await?
        } else if base == "headed" && self.args.header_tools {
            // What reached the server as the header, not what the arguments say.
            let header = context
                .extensions
                .get::<http::request::Parts>()
                .and_then(|parts| parts.headers.get("mcp-param-region"))
                .and_then(|value| value.to_str().ok())
                .unwrap_or("(no Mcp-Param-Region header)");
            CallToolResult::success(vec![ContentBlock::text(format!("Mcp-Param-Region: {header}"))])
        } else {
            self.answer(base, &args)?
        };
        result.meta = self.meta.clone();
        let done = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if self.args.crash_after.is_some_and(|n| done >= n) {
            // Answer first, then die: the client sees this call succeed and the next one fail.
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                eprintln!("demo-server: crashing after {done} calls (--crash-after)");
                std::process::exit(CRASH_EXIT_CODE);
            });
        }
        Ok(result.into())
    }
}
