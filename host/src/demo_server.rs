//! `toolport demo-server`: a small stdio MCP server built into the binary, so tests, benches
//! and the `demo` tour have a real peer without installing anything. Its options make the
//! awkward cases on purpose: slow `initialize`, paginated lists, crashes, changing tool lists,
//! colliding names and results that break their `outputSchema`. Its `confirm` tool asks for
//! input the 2026-07-28 way (SEP-2322): an input-required result with an elicitation and a
//! sealed `requestState`, then the answer.
//!
//! `ServerHandler` is implemented by hand (no `#[tool_router]`) because the options change the
//! list itself (prefix, generated tools, pages) and the timing of the handshake.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DiscoverResult, ElicitRequest,
    ElicitRequestParams, Implementation, InitializeRequestParams, InitializeResult, InputRequest,
    InputRequiredResult, JsonObject, ListResourcesResult, ListToolsResult, MetaObject,
    PaginatedRequestParams, ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, RequestStateCodec, Resource, ResourceContents, ServerCapabilities, ServerConfig,
    ServerNotification, SubscriptionFilter, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// Exit status when `--crash-after` fires: distinctive, so a test can see it in the error.
pub const CRASH_EXIT_CODE: i32 = 3;
/// Default size of the `big` tool's text.
const DEFAULT_BIG_BYTES: usize = 64 * 1024;
/// Largest `big` result, so a typo cannot exhaust the machine (and under the 64 MiB a stdio
/// message may be, with JSON's escapes).
const MAX_BIG_BYTES: usize = 48 * 1024 * 1024;
/// Longest `sleep`, so a stray call cannot hold a test run for hours.
const MAX_SLEEP_MS: u64 = 600_000;
/// Most input-required rounds `confirm` may be told to ask (beyond any client's limit).
const MAX_CONFIRM_ROUNDS: u64 = 100;

/// Options of `toolport demo-server`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DemoServerArgs {
    /// Adds N generated tools (`tool_1` … `tool_N`).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub tools: usize,
    /// Prefixes every tool name (to make collisions between servers).
    #[arg(long, value_name = "P", default_value = "")]
    pub prefix: String,
    /// Waits this long before answering `initialize`.
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub delay_ms: u64,
    /// Returns `tools/list` in pages of N tools, linked by `nextCursor` (0: one page).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub page_size: usize,
    /// Exits (status 3) right after answering the N-th tool call.
    #[arg(long, value_name = "N")]
    pub crash_after: Option<usize>,
    /// After this long, adds a tool `late` and sends `notifications/tools/list_changed`.
    #[arg(long, value_name = "MS")]
    pub notify_after_ms: Option<u64>,
    /// Adds a tool with exactly this name, unprefixed (repeatable; blank and duplicate names
    /// allowed, to exercise the host's name checks).
    #[arg(long, value_name = "NAME")]
    pub extra_tool: Vec<String>,
    /// Misbehaves: every `tools/list` page points to the same `nextCursor` (`loop`), forever.
    #[arg(long)]
    pub repeat_cursor: bool,
    /// Offers N text resources `demo://item/1` … `demo://item/N`, in `--page-size` pages.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub resources: usize,
    /// Misbehaves: declares resources but answers `resources/list` with an error.
    #[arg(long)]
    pub broken_resources: bool,
    /// Appends `started sleep MS` to FILE when a `sleep` starts, and `cancelled sleep MS` when
    /// the client cancels it (`notifications/cancelled`): what a test reads to see both.
    #[arg(long, value_name = "FILE")]
    pub call_log: Option<std::path::PathBuf>,
    /// Serves streamable HTTP at `http://ADDR/mcp` instead of stdio (both revisions, as rmcp's
    /// server transport speaks them), printing `listening on http://…/mcp` once bound; port 0
    /// picks a free one.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// Adds tools that break their own `outputSchema`: `mismatch` (`count` is a string, the
    /// schema says integer), `unstructured` (no `structuredContent` at all), `refused`
    /// (`isError` with nothing structured), and two whose schema cannot be compiled:
    /// `bad_schema` (invalid) and `remote_schema` (a `$ref` to a URL).
    #[arg(long)]
    pub bad_structured: bool,
    /// Adds tools with `x-mcp-header` annotations (SEP-2243): `headed` (a valid `Region`
    /// header) and `misheaded` (an empty one, which a 2026-07-28 client must leave out).
    #[arg(long)]
    pub header_tools: bool,
    /// Adds the tool `confirm`, which asks for input with SEP-2322 input-required results
    /// (on 2026-07-28 sessions; rmcp refuses them on older ones).
    #[arg(long)]
    pub confirm: bool,
    /// `big` returns numbered lines instead of `x`s: line i (from 0) is `{i:08} the quick brown
    /// fox jumps over the lazy dog\n`, the whole cut at `size` bytes. Deterministic, so a test
    /// can make the same text and compare bytes.
    #[arg(long)]
    pub big_lines: bool,
    /// Puts this JSON object as `_meta` on every tool result and `resources/read` result: what
    /// a client behind a host must receive as the server sent it.
    #[arg(long, value_name = "JSON")]
    pub result_meta: Option<String>,
}

/// The `--big-lines` text of `size` bytes.
fn big_lines(size: usize) -> String {
    let mut text = String::with_capacity(size + 64);
    let mut i = 0usize;
    while text.len() < size {
        text.push_str(&format!("{i:08} the quick brown fox jumps over the lazy dog\n"));
        i += 1;
    }
    text.truncate(size);
    text
}

/// The `outputSchema` of the `--bad-structured` tools that have a valid one.
fn count_schema() -> JsonObject {
    object(json!({"count": {"type": "integer"}, "unit": {"type": "string"}}), &["count"])
}

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

/// What `confirm` keeps in its `requestState` between rounds.
#[derive(serde::Serialize, serde::Deserialize, Default)]
struct ConfirmState {
    /// Rounds asked so far.
    round: u64,
    /// The JSON-RPC id of each request so far (a retry must be a new request).
    ids: Vec<String>,
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

    /// `confirm`: asks `rounds` times (an elicitation each time), then answers with the last
    /// answer and the ids of every request it saw.
    fn confirm(&self, request: &CallToolRequestParams, id: String) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.clone().unwrap_or_default();
        let rounds = args.get("rounds").and_then(Value::as_u64).unwrap_or(1).min(MAX_CONFIRM_ROUNDS);
        let mut state = match &request.request_state {
            None => ConfirmState::default(),
            Some(sealed) => self
                .state
                .open_json::<ConfirmState>(sealed)
                .map_err(|e| McpError::invalid_params(format!("requestState rejected: {e}"), None))?,
        };
        state.ids.push(id);
        if state.round < rounds {
            state.round += 1;
            let schema = serde_json::from_value(json!({
                "type": "object",
                "properties": {
                    "size": {"type": "string", "title": "Size", "oneOf": [
                        {"const": "s", "title": "Small"}, {"const": "m", "title": "Medium"}, {"const": "l", "title": "Large"}
                    ], "default": "m"},
                    "colour": {"type": "string", "enum": ["red", "blue"], "default": "blue"},
                    "count": {"type": "integer", "minimum": 1, "maximum": 9, "default": 2},
                    "gift": {"type": "boolean", "default": false}
                },
                "required": ["size"]
            }))
            .map_err(|e| McpError::internal_error(format!("confirm's schema: {e}"), None))?;
            let ask = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: format!("Confirm the order (round {} of {rounds})", state.round),
                requested_schema: schema,
            });
            let sealed = self
                .state
                .seal_json(&state)
                .map_err(|e| McpError::internal_error(format!("cannot seal the state: {e}"), None))?;
            let requests = [("details".to_string(), InputRequest::Elicitation(ask))].into_iter().collect();
            return Ok(InputRequiredResult::new(Some(requests), Some(sealed)).into());
        }
        let answer =
            request.input_responses.as_ref().and_then(|r| r.get("details")).cloned().unwrap_or_default();
        let text = match answer.get("action").and_then(Value::as_str) {
            Some("accept") => format!("confirmed {}", answer.get("content").cloned().unwrap_or_default()),
            Some(other) => format!("not confirmed: {other}"),
            None => "nothing asked".to_string(),
        };
        let text = format!("{text}; rounds {}; request ids {}", state.round, state.ids.join(","));
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }

    fn name(&self, base: &str) -> String {
        format!("{}{base}", self.args.prefix)
    }

    fn tools(&self) -> Vec<Tool> {
        let mut tools = vec![
            tool(
                &self.name("echo"),
                "Returns its message",
                object(json!({"message": {"type": "string"}}), &["message"]),
            ),
            tool(
                &self.name("add"),
                "Adds two numbers",
                object(json!({"a": {"type": "number"}, "b": {"type": "number"}}), &["a", "b"]),
            ),
            tool(
                &self.name("sleep"),
                "Waits ms milliseconds, then answers",
                object(json!({"ms": {"type": "integer", "minimum": 0}}), &["ms"]),
            ),
            tool(
                &self.name("fail"),
                "Always returns an error result (isError)",
                object(json!({"message": {"type": "string"}}), &[]),
            ),
            tool(
                &self.name("big"),
                "Returns a large text (size bytes)",
                object(json!({"size": {"type": "integer", "minimum": 0}}), &[]),
            ),
            tool(&self.name("pid"), "Returns this server's process id", object(json!({}), &[])),
        ];
        if self.args.confirm {
            tools.push(tool(
                &self.name("confirm"),
                "Asks for an order's details through input-required results (SEP-2322), rounds times",
                object(json!({"rounds": {"type": "integer", "minimum": 0}}), &[]),
            ));
        }
        for i in 1..=self.args.tools {
            tools.push(tool(
                &self.name(&format!("tool_{i}")),
                &format!("Generated tool number {i}"),
                object(json!({}), &[]),
            ));
        }
        for name in &self.args.extra_tool {
            tools.push(tool(name, "Extra tool", object(json!({}), &[])));
        }
        if self.args.header_tools {
            let headed =
                |header: &str| object(json!({"region": {"type": "string", "x-mcp-header": header}}), &[]);
            tools.push(tool(&self.name("headed"), "Mirrors region into Mcp-Param-Region", headed("Region")));
            tools.push(tool(&self.name("misheaded"), "Its x-mcp-header is empty", headed("")));
        }
        if self.args.bad_structured {
            let counted = |name: &str, description: &str, output: JsonObject| {
                tool(&self.name(name), description, object(json!({}), &[]))
                    .with_raw_output_schema(Arc::new(output))
            };
            tools.push(counted("mismatch", "Returns a count that is not an integer", count_schema()));
            tools.push(counted("unstructured", "Returns no structuredContent", count_schema()));
            tools.push(counted("refused", "Fails (isError) without structuredContent", count_schema()));
            let invalid = object(json!({"count": {"type": "whole number"}}), &[]);
            tools.push(counted("bad_schema", "Has an outputSchema that is not valid", invalid));
            let mut remote = JsonObject::new();
            remote.insert("$ref".into(), json!("http://127.0.0.1:9/never-fetched.json"));
            tools.push(counted("remote_schema", "Has an outputSchema that refers to a URL", remote));
        }
        if self.changed.load(Ordering::SeqCst) {
            tools.push(tool(&self.name("late"), "Appeared after list_changed", object(json!({}), &[])));
        }
        tools
    }

    fn answer(&self, base: &str, args: &JsonObject) -> Result<CallToolResult, McpError> {
        Ok(match base {
            "echo" => {
                let message = args.get("message").and_then(Value::as_str).unwrap_or_default();
                CallToolResult::success(vec![ContentBlock::text(message)])
            }
            "add" => {
                let a = number(args, "a")?;
                let b = number(args, "b")?;
                let mut result = CallToolResult::success(vec![ContentBlock::text((a + b).to_string())]);
                result.structured_content = Some(json!({ "sum": a + b }));
                result
            }
            "fail" => {
                let message = args.get("message").and_then(Value::as_str).unwrap_or("demo failure");
                CallToolResult::error(vec![ContentBlock::text(message)])
            }
            "big" => {
                let size = args.get("size").and_then(Value::as_u64).map_or(DEFAULT_BIG_BYTES, |s| s as usize);
                let size = size.min(MAX_BIG_BYTES);
                let text = if self.args.big_lines { big_lines(size) } else { "x".repeat(size) };
                CallToolResult::success(vec![ContentBlock::text(text)])
            }
            "pid" => CallToolResult::success(vec![ContentBlock::text(std::process::id().to_string())]),
            "late" => CallToolResult::success(vec![ContentBlock::text("late")]),
            "mismatch" | "bad_schema" | "remote_schema" if self.args.bad_structured => {
                let mut result = CallToolResult::success(vec![ContentBlock::text("five apples")]);
                result.structured_content = Some(json!({"count": "five", "unit": "apple"}));
                result
            }
            "unstructured" if self.args.bad_structured => {
                CallToolResult::success(vec![ContentBlock::text("5 apples, unstructured")])
            }
            "refused" if self.args.bad_structured => {
                CallToolResult::error(vec![ContentBlock::text("no apples today")])
            }
            generated if generated.starts_with("tool_") => {
                CallToolResult::success(vec![ContentBlock::text(format!("{generated} called"))])
            }
            other => return Err(McpError::invalid_params(format!("unknown tool: {other}"), None)),
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

fn tool(name: &str, description: &str, schema: JsonObject) -> Tool {
    Tool::new(name.to_string(), description.to_string(), Arc::new(schema))
}

fn object(properties: Value, required: &[&str]) -> JsonObject {
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), properties);
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    schema
}

fn number(args: &JsonObject, key: &str) -> Result<f64, McpError> {
    args.get(key)
        .and_then(Value::as_f64)
        .ok_or_else(|| McpError::invalid_params(format!("`{key}` must be a number"), None))
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
