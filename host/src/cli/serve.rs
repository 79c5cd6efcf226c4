//! `toolport serve`: the workspace's surface as one MCP server, on stdio (how agents start a
//! local server) or streamable HTTP at `/mcp`.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::process::ExitCode;

use toolport::authz;
use toolport::serving::{
    CancellationToken, Gateway, HttpAuth, HttpOptions, OidcOptions, RateLimit, SessionKey,
};
use toolport::store::Surface;
use toolport::{Paths, RuntimeOptions, ServerState, ServerStatus};

use super::ExitError;

/// Serves the servers the workspace enables, after every host rule.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio (e.g. 127.0.0.1:8931; port 0
    /// picks a free one). An address other than loopback needs --token-env or --auth oidc.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// The environment variable holding the bearer token every HTTP request must carry.
    #[arg(long, value_name = "VAR", requires = "http")]
    token_env: Option<String>,
    /// Another `Host` an HTTP client may use (a name, or name:port), besides loopback's.
    #[arg(long, value_name = "HOST", requires = "http")]
    allow_host: Vec<String>,
    /// How HTTP callers are known: `token`, the one shared token of --token-env (the default
    /// when that is given), or `oidc`, JWT access tokens from --issuer for --audience.
    #[arg(long, value_enum, value_name = "KIND", requires = "http")]
    auth: Option<AuthKind>,
    /// With --auth oidc: the issuer, exactly as its tokens' `iss` names it (its keys are found
    /// through its /.well-known/openid-configuration).
    #[arg(long, value_name = "URL", required_if_eq("auth", "oidc"))]
    issuer: Option<String>,
    /// With --auth oidc: what a token's `aud` must contain (RFC 8707), e.g. this server's URL.
    #[arg(long, value_name = "A", required_if_eq("auth", "oidc"))]
    audience: Option<String>,
    /// With --auth oidc: this server's resource URL in its protected-resource metadata
    /// (default: --audience when it is a URL, else http://<Host>/mcp).
    #[arg(long, value_name = "URL")]
    resource: Option<String>,
    /// A browser origin allowed to call (scheme://host[:port]), besides loopback's.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    allow_origin: Vec<String>,
    /// The largest HTTP request body, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = HttpOptions::MAX_BODY_BYTES)]
    max_body_bytes: usize,
    /// HTTP requests served at once; more get 503 until one has ended (standalone GET streams
    /// have as many places of their own).
    #[arg(long, value_name = "N", default_value_t = HttpOptions::MAX_REQUESTS)]
    max_requests: usize,
    /// HTTP connections open at once; more are refused with 503 as they arrive.
    #[arg(long, value_name = "N", default_value_t = HttpOptions::MAX_CONNECTIONS)]
    max_connections: usize,
    /// HTTP connections open at once from one address.
    #[arg(long, value_name = "N", default_value_t = HttpOptions::MAX_CONNECTIONS_PER_PEER)]
    max_connections_per_peer: usize,
    /// Sessions held at once (an initialize beyond them gets 503; idle ones close after 5
    /// minutes), and as many calls waiting for a 2026-07-28 client's answer.
    #[arg(long, value_name = "N", default_value_t = HttpOptions::MAX_SESSIONS)]
    max_sessions: usize,
    /// Serve the metrics at http://ADDR/metrics in the Prometheus text format (behind the
    /// token, when one is set).
    #[arg(long, requires = "http")]
    metrics: bool,
    /// The environment variable holding the key replicas behind a load balancer share (32
    /// characters or more): session ids are sealed with it, so any replica can resume a session.
    #[arg(long, value_name = "VAR", requires = "http")]
    session_key_env: Option<String>,
    /// With --session-key-env: how long a sealed session id serves after it was issued (`30m`,
    /// `8h`); then the client is told the session is unknown and opens another.
    #[arg(long, value_name = "DURATION", default_value = "24h", requires = "session_key_env",
          value_parser = super::duration::parse_positive_duration)]
    session_lifetime: std::time::Duration,
    /// Requests to /mcp one caller may make, as COUNT/UNIT (UNIT s, min or h; e.g. 100/min):
    /// the whole count at once, then one more each COUNT-th of the period; more get 429 with
    /// Retry-After. The caller is a token's subject (--auth oidc), else the client's address.
    #[arg(long, value_name = "RATE", requires = "http")]
    rate_limit: Option<RateLimit>,
    /// Calls of one tool one caller may make (tools/call), as COUNT/UNIT like --rate-limit.
    #[arg(long, value_name = "RATE", requires = "http")]
    tool_rate_limit: Option<RateLimit>,
    /// How long after the start a tool listing waits for servers still connecting that have
    /// no last-known listing (`8s`, `30s`; `0`: not at all). It ends as soon as every server
    /// has connected or failed; a server with a last-known listing (kept in <home>/listings/
    /// from its last live listing) is listed from it at once.
    #[arg(long, value_name = "DURATION", default_value = "8s",
          value_parser = super::duration::parse_duration)]
    list_wait: std::time::Duration,
    /// Do not follow edits of the store, the workspace file and the policy file.
    #[arg(long)]
    no_watch: bool,
    /// Show the lazy surface whatever the workspace's `surface` says: three tools
    /// (search_tools, describe_tool, call_tool) instead of every tool.
    #[arg(long)]
    lazy: bool,
    /// The Cedar policy file every request is decided by (default: <home>/policy.cedar when
    /// it exists; none: everything allowed). An edit applies at once; a removed file keeps the
    /// policy read last until serve restarts.
    #[arg(long, value_name = "FILE")]
    policy: Option<std::path::PathBuf>,
    /// Start even when the tool pins cannot be written (`.toolport/tools.lock` read-only under
    /// `trust: "pin"`): first sights are kept in memory while serve runs, so a tool that changed
    /// since the last start is served as new.
    #[arg(long)]
    allow_unpinned: bool,
    /// Show every audit line (each call, read, prompt and sign-in, as JSON) on stderr too, for
    /// a log collector; the file under `<home>/audit/` is written either way.
    #[arg(long)]
    pub audit_stderr: bool,
}

/// `--auth`'s values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum AuthKind {
    Token,
    Oidc,
}

impl ServeArgs {
    /// Whether the metrics' Prometheus reader is wanted (`--metrics`).
    pub fn metrics(&self) -> bool {
        self.metrics
    }
}

/// Serves until the client closes stdin (stdio) or toolport is signalled (HTTP).
pub async fn run(paths: &Paths, args: ServeArgs) -> anyhow::Result<ExitCode> {
    let http = match args.http {
        Some(addr) => {
            let session_key = session_key(args.session_key_env.as_deref())?;
            let options = HttpOptions {
                auth: http_auth(&args)?,
                allowed_hosts: args.allow_host,
                allowed_origins: args.allow_origin,
                max_body_bytes: args.max_body_bytes,
                max_requests: args.max_requests.max(1),
                max_connections: args.max_connections.max(1),
                max_connections_per_peer: args.max_connections_per_peer.max(1),
                max_sessions: args.max_sessions.max(1),
                metrics: args.metrics,
                session_key,
                session_lifetime: args.session_lifetime,
                rate_limit: args.rate_limit,
                tool_rate_limit: args.tool_rate_limit,
                ..HttpOptions::new(addr)
            };
            options.check().map_err(|e| ExitError::usage(format!("{e:#}")))?;
            Some(options)
        }
        None => None,
    };
    let policy = match &args.policy {
        Some(file) => authz::Policy::load(file).map(Some),
        None => authz::Policy::load_from_home(&paths.home),
    }
    .map_err(|e| ExitError::usage(e.to_string()))?;
    let resolved = toolport::load_resolved(paths, &BTreeSet::new())?;
    if !args.allow_unpinned {
        toolport::store::check_pins_kept(&resolved).map_err(|e| ExitError::usage(e.0))?;
    }
    if http.as_ref().is_some_and(|options| matches!(options.auth, HttpAuth::Oidc(_))) {
        for line in super::service_identity::personal_sign_ins(paths, &resolved) {
            eprintln!("{line}");
        }
    }
    let options = RuntimeOptions::for_paths(paths, paths.workspace_root.clone())
        .with_listings(paths)
        .from_known_listings()
        .with_observer(crate::cli::observer());
    let surface = args.lazy.then_some(Surface::Lazy);
    let gateway = Gateway::start_with_surface(resolved, options, surface, args.list_wait).await?;
    if let Some(policy) = &policy {
        eprintln!("toolport serve: every request is decided by the policy in {}", policy.file().display());
    }
    gateway.set_policy(policy);
    // Servers connect in the background: the warnings once each one is up or has failed, then
    // one line that says so (what an operator, or a script, waits for to see the whole surface).
    let runtime = gateway.runtime().clone();
    let warned = tokio::spawn(async move {
        runtime.settled().await;
        for warning in runtime.warnings() {
            eprintln!("{warning}");
        }
        eprintln!("toolport serve: {}", settled_line(&runtime.status()));
    });
    let _watch = if args.no_watch { None } else { Some(gateway.watch(paths.clone())?) };
    let policy_file = args.policy.clone().unwrap_or_else(|| authz::Policy::home_file(&paths.home));
    let _policy_watch = if args.no_watch { None } else { Some(gateway.watch_policy(policy_file)?) };
    let served = match http {
        None => {
            let (input, output) = rmcp::transport::stdio_pipes();
            gateway.serve_stdio(input, output).await
        }
        Some(options) => {
            let ready = |addr| eprintln!("toolport serve: listening on http://{addr}/mcp");
            gateway.serve_http(options, CancellationToken::new(), ready).await
        }
    };
    warned.abort();
    gateway.runtime().shutdown().await;
    served.map(|()| ExitCode::SUCCESS)
}

/// The callers' check `--auth`, `--token-env`, `--issuer`, `--audience` and `--resource` ask for.
fn http_auth(args: &ServeArgs) -> anyhow::Result<HttpAuth> {
    let oidc_flags = args.issuer.is_some() || args.audience.is_some() || args.resource.is_some();
    let kind = args.auth.or(args.token_env.is_some().then_some(AuthKind::Token));
    match kind {
        Some(AuthKind::Oidc) if args.token_env.is_some() => Err(ExitError::usage(
            "--token-env is the shared token of --auth token; --auth oidc checks the issuer's JWTs instead",
        )
        .into()),
        Some(AuthKind::Oidc) => Ok(HttpAuth::Oidc(OidcOptions {
            issuer: args.issuer.clone().unwrap_or_default(),
            audience: args.audience.clone().unwrap_or_default(),
            resource: args.resource.clone(),
        })),
        _ if oidc_flags => {
            Err(ExitError::usage("--issuer, --audience and --resource are for --auth oidc").into())
        }
        Some(AuthKind::Token) => match super::token_env::read(args.token_env.as_deref())? {
            Some(token) => Ok(HttpAuth::Token(token)),
            None => {
                Err(ExitError::usage("--auth token needs --token-env VAR (the variable holding the token)")
                    .into())
            }
        },
        None => Ok(HttpAuth::Open),
    }
}

/// The key `--session-key-env VAR` names: its value, derived; an unset variable or a short
/// value is a usage error naming the flag and the variable.
fn session_key(var: Option<&str>) -> Result<Option<SessionKey>, ExitError> {
    let Some(var) = var else { return Ok(None) };
    let secret = match std::env::var(var) {
        Ok(secret) if !secret.is_empty() => secret,
        _ => return Err(ExitError::usage(format!("--session-key-env {var}: that variable is not set"))),
    };
    SessionKey::from_secret(&secret)
        .map(Some)
        .map_err(|e| ExitError::usage(format!("--session-key-env {var}: {e}")))
}

/// `every server has connected or failed: 2 connected, 1 unavailable`, counting the servers
/// this workspace enables (disabled and paused ones are not waited for).
fn settled_line(rows: &[ServerStatus]) -> String {
    let connected = rows.iter().filter(|r| r.state == ServerState::Connected).count();
    let unavailable =
        rows.iter().filter(|r| matches!(r.state, ServerState::Error | ServerState::Missing)).count();
    format!("every server has connected or failed: {connected} connected, {unavailable} unavailable")
}
