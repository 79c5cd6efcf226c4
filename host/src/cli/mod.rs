//! The `toolport` command line: clap definitions and dispatch. One `*Args` struct and one
//! `run` function per subcommand live in the submodules; this file only wires them.

mod acp;
mod ask;
mod audit;
mod call_progress;
mod catalog;
mod clients;
mod duration;
mod exit;
mod grants;
mod install;
mod login;
mod mcp;
mod observer;
mod plugin;
mod policy;
mod progress;
mod sandbox;
mod scan;
mod serve;
mod service_identity;
mod session;
mod session_editor;
mod status;
mod token_env;
mod tools;
mod workspace;

pub(crate) use observer::observer;

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

use toolport::Paths;
use toolport::display;

pub use exit::{EXIT_FAILURE, EXIT_USAGE, ExitError};

/// How long the async runtime may take to wind down after the command: blocking work still
/// running then (a name lookup, a stuck read) must not keep the process from exiting.
const RUNTIME_SHUTDOWN: Duration = Duration::from_secs(2);

/// How long the last metrics and spans may take to leave after the command, together: an OTLP
/// receiver answers in milliseconds; an unreachable one must not hold the exit for the
/// exporter's own 10 s.
const FLUSH: Duration = Duration::from_secs(3);
/// The same after SIGINT/SIGTERM, when an agent kills toolport within a second.
const FLUSH_AFTER_SIGNAL: Duration = Duration::from_millis(300);

#[derive(Debug, Parser)]
#[command(name = "toolport", version, about = "MCP servers as a live, checked tool surface")]
struct Cli {
    /// Home folder (global store, plugin cache). Default: $TOOLPORT_HOME, else ~/.toolport.
    #[arg(long, global = true, value_name = "DIR")]
    home: Option<PathBuf>,
    /// Workspace root. Default: nearest ancestor holding .toolport/, else the current folder.
    #[arg(long, global = true, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// More logging (-v info, -vv debug, -vvv trace); RUST_LOG wins when set.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Manage MCP server definitions and workspace enablement.
    Mcp(mcp::McpArgs),
    /// Print the converted tool surface.
    Tools(tools::ToolsArgs),
    /// Check what the enabled servers' definitions say (hidden characters, instructions to the
    /// model, shadowing, secrets); exit 1 on a finding at or above --fail-on.
    Scan(scan::ScanArgs),
    /// Call one tool through the executor and print the result.
    Call(tools::CallArgs),
    /// Every connected server's resources and resource templates.
    Resources(catalog::ResourcesArgs),
    /// Read one resource from a server (text printed; binary described, or saved with --output).
    Read(catalog::ReadArgs),
    /// Every connected server's prompts.
    Prompts(catalog::PromptsArgs),
    /// Get one prompt with JSON arguments and print its messages.
    Prompt(catalog::PromptArgs),
    /// Interactive session: /mcp, /tools, /call, /resources, /read, /prompts, /prompt, /help, /quit.
    Session(session::SessionArgs),
    /// ACP agent over stdio (newline-delimited JSON-RPC).
    Acp(acp::AcpArgs),
    /// One MCP server for any agent: the workspace's checked surface, on stdio or --http.
    Serve(serve::ServeArgs),
    /// The audit log of every call, read, prompt and sign-in: `audit tail [-n N] [--follow]`.
    Audit(audit::AuditArgs),
    /// What a running `serve --http` is doing: its servers, clients and calls in flight.
    Status(status::StatusArgs),
    /// The policy file `serve` decides each caller's requests by: `policy check` explains one.
    Policy(policy::PolicyArgs),
    /// Built-in and configured plugins; inspect a component.
    Plugin(plugin::PluginArgs),
    /// The native sandbox of stdio servers: `sandbox check` says whether this machine can.
    Sandbox(sandbox::SandboxArgs),
    /// This workspace's name policy and tool shape.
    Workspace(workspace::WorkspaceArgs),
    /// Write the entry that starts `toolport serve` into an agent's config file.
    Install(install::InstallArgs),
    /// The built-in tour on a temporary home and workspace.
    Demo(tools::DemoArgs),
    /// A small stdio MCP server built into the binary (tests, demos).
    DemoServer(crate::demo_server::DemoServerArgs),
}

/// Parses the command line, runs the command and maps the outcome to an exit status.
pub fn main() -> ExitCode {
    // toolport started again as a sandboxed server's launcher: nothing else of the CLI runs.
    if std::env::args_os().nth(1).is_some_and(|a| a == toolport::sandbox::LAUNCHER_ARG) {
        return sandbox::launch();
    }
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("toolport: cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_FAILURE);
        }
    };
    // Inside the runtime's context: the OTLP/gRPC exporter's channel is bound to it.
    let traces = match runtime.block_on(async { toolport::audit::start_traces() }) {
        Ok(traces) => traces,
        Err(message) => {
            eprintln!("toolport: {message}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    init_tracing(cli.verbose, traces.as_ref());
    toolport::raise_fd_limit();
    if let Err(e) = start_metrics(&runtime, &cli.command) {
        eprintln!("toolport: {e}");
        return ExitCode::from(EXIT_USAGE);
    }
    let (outcome, signalled) = runtime.block_on(run(cli));
    // A signal ends the command where it was: the lines it recorded are written all the same.
    observer::flush();
    // Before the runtime goes: the gRPC exporters need it to send the last points and spans.
    flush_telemetry(&runtime, traces, if signalled { FLUSH_AFTER_SIGNAL } else { FLUSH });
    if signalled {
        // Signalled: the servers are ended already; blocking work still running (serve's
        // read of stdin, which no one can interrupt) is not waited for.
        runtime.shutdown_background();
    } else {
        runtime.shutdown_timeout(RUNTIME_SHUTDOWN);
    }
    match outcome {
        Ok(code) => code,
        Err(err) => {
            // The message may quote a server's words (escaped) and a server URL (redacted).
            let message = format!("{err:#}");
            eprintln!("toolport: {}", display::escape_text(&display::redact_urls(&message)));
            ExitCode::from(exit_status(&err))
        }
    }
}

/// Builds the observer's meter when OTLP (`OTEL_*`) or `serve --http --metrics` asks for it,
/// inside the async runtime (the gRPC exporter needs it); nothing is built otherwise.
fn start_metrics(runtime: &tokio::runtime::Runtime, command: &Command) -> Result<(), String> {
    let prometheus = matches!(command, Command::Serve(args) if args.metrics());
    let _inside = runtime.enter();
    observer::start_metrics(prometheus)
}

/// Exports the metrics' last points and the last spans, both at once, and waits for them at
/// most `budget` in all. The SDK bounds neither for us: its metrics shutdown waits up to 5 s
/// whatever it is told, and the OTLP exporter retries an unreachable collector with backoff.
/// So each runs on a thread of its own, and one still exporting when the budget is spent is
/// left behind: the process exits without it.
fn flush_telemetry(
    runtime: &tokio::runtime::Runtime,
    traces: Option<toolport::audit::Traces>,
    budget: Duration,
) {
    let deadline = std::time::Instant::now() + budget;
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let mut flushing = 0;
    let mut spawn = |name: &str, flush: Box<dyn FnOnce() + Send>| {
        let handle = runtime.handle().clone();
        let done = done.clone();
        let spawned = std::thread::Builder::new().name(format!("toolport-flush-{name}")).spawn(move || {
            let _inside = handle.enter();
            flush();
            let _ = done.send(());
        });
        match spawned {
            Ok(_) => flushing += 1,
            Err(e) => tracing::warn!("cannot flush the {name}: {e}"),
        }
    };
    // The observer's shutdown: its lines are written already (`observer::flush`), its meter
    // exports its last points.
    spawn("metrics", Box::new(observer::shutdown));
    if let Some(traces) = traces {
        spawn(
            "traces",
            Box::new(move || {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                if let Err(e) = traces.shutdown(left) {
                    tracing::warn!("{e}");
                }
            }),
        );
    }
    for _ in 0..flushing {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if finished.recv_timeout(left).is_err() {
            tracing::debug!("telemetry still exporting after {} ms: exiting without it", budget.as_millis());
            return;
        }
    }
}

fn exit_status(err: &anyhow::Error) -> u8 {
    for cause in err.chain() {
        if let Some(exit) = cause.downcast_ref::<ExitError>() {
            return exit.code;
        }
        if cause.downcast_ref::<toolport::ConfigError>().is_some() {
            return EXIT_USAGE;
        }
    }
    EXIT_FAILURE
}

/// Runs the command until it ends or toolport gets SIGINT/SIGTERM, then ends every server
/// process group still alive: servers run in groups of their own, so a terminal's Ctrl-C
/// reaches only toolport, and closing them is toolport's job. After a normal end the servers
/// get a grace to leave on their own ([`toolport::end_server_processes`]); after a signal
/// toolport must be out fast (an agent kills it within a second: Claude Code sends SIGKILL
/// 600 ms after SIGINT), so every group is sent SIGTERM at once, with a short grace before
/// SIGKILL ([`toolport::end_server_processes_promptly`]), and a second signal ends them with
/// SIGKILL and leaves without waiting. The flag says whether a signal ended the command.
async fn run(cli: Cli) -> (anyhow::Result<ExitCode>, bool) {
    if let Command::DemoServer(args) = cli.command {
        // The demo server is itself a stdio server: it keeps the default signal behaviour.
        return (crate::demo_server::run(args).await.map(|()| ExitCode::SUCCESS), false);
    }
    let mut signals = Signals::listen();
    let signal = tokio::select! {
        outcome = dispatch(cli) => {
            // A call cut short is cancelled at its server before the server is ended.
            let ended = async {
                toolport::settle_cancellations().await;
                toolport::end_server_processes().await;
            };
            tokio::select! {
                () = ended => return (outcome, false),
                signal = signals.next() => {
                    tracing::info!("received {signal} while closing the servers: killing them");
                    toolport::kill_server_processes();
                    return (outcome, true);
                }
            }
        }
        signal = signals.next() => signal,
    };
    tracing::info!("received {signal}: closing the servers");
    tokio::select! {
        () = async {
            toolport::settle_cancellations().await;
            // A cancellation written is not yet read: SIGTERM at once would kill a server
            // before it hears that its call was abandoned.
            tokio::time::sleep(CANCEL_READ_GRACE).await;
            toolport::end_server_processes_promptly().await;
        } => {}
        again = signals.next() => {
            tracing::info!("received {again} again: killing the servers");
            toolport::kill_server_processes();
        }
    }
    (Ok(ExitCode::from(signal.exit_status())), true)
}

/// How long servers get to read the `notifications/cancelled` just written before SIGTERM:
/// reading a line takes microseconds, and 50 ms keeps the exit well inside an agent's 500 ms
/// between SIGINT and SIGKILL.
const CANCEL_READ_GRACE: std::time::Duration = std::time::Duration::from_millis(50);

/// A signal that asks toolport to stop.
#[derive(Debug, Clone, Copy)]
enum Stop {
    Interrupt,
    Terminate,
}

impl Stop {
    /// The shell convention: 128 + the signal's number.
    fn exit_status(self) -> u8 {
        match self {
            Self::Interrupt => 130,
            Self::Terminate => 143,
        }
    }
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Interrupt => "SIGINT",
            Self::Terminate => "SIGTERM",
        })
    }
}

/// SIGINT and SIGTERM, listened for from the start of the command. If a handler cannot be
/// installed, that signal keeps its default action (the servers then still die with toolport
/// via the parent-death signal).
struct Signals {
    interrupt: Option<tokio::signal::unix::Signal>,
    terminate: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn listen() -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        let listen = |kind: SignalKind| match signal(kind) {
            Ok(stream) => Some(stream),
            Err(e) => {
                tracing::warn!("cannot handle signal {}: {e}", kind.as_raw_value());
                None
            }
        };
        Self { interrupt: listen(SignalKind::interrupt()), terminate: listen(SignalKind::terminate()) }
    }

    /// The next SIGINT or SIGTERM.
    async fn next(&mut self) -> Stop {
        tokio::select! {
            _ = next(&mut self.interrupt) => Stop::Interrupt,
            _ = next(&mut self.terminate) => Stop::Terminate,
        }
    }
}

/// The next delivery of `stream`'s signal; never, for a signal without a handler.
async fn next(stream: &mut Option<tokio::signal::unix::Signal>) {
    match stream {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}

async fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    // The tour keeps to a home and workspace of its own: nothing of the user's is read, and
    // nothing but the shared compiled cache is written (no audit lines, decisions or pins).
    if let Command::Demo(args) = cli.command {
        return tools::run_demo(args).await;
    }
    let (paths, skipped) = Paths::locate(cli.home.as_deref(), cli.workspace.as_deref())?;
    if let Some(message) = skipped {
        eprintln!("Warning: {message}");
    }
    let audit_stderr = matches!(&cli.command, Command::Serve(args) if args.audit_stderr);
    let observer = observer::install(&paths, audit_stderr);
    let outcome = match cli.command {
        Command::Mcp(args) => mcp::run(&paths, args).await,
        Command::Tools(args) => tools::run_tools(&paths, args).await,
        Command::Scan(args) => scan::run_scan(&paths, args).await,
        Command::Call(args) => tools::run_call(&paths, args).await,
        Command::Resources(args) => catalog::run_resources(&paths, args).await,
        Command::Read(args) => catalog::run_read(&paths, args).await,
        Command::Prompts(args) => catalog::run_prompts(&paths, args).await,
        Command::Prompt(args) => catalog::run_prompt(&paths, args).await,
        Command::Session(args) => session::run(&paths, args).await,
        Command::Acp(args) => acp::run(&paths, args).await,
        Command::Serve(args) => serve::run(&paths, args).await,
        Command::Audit(args) => audit::run(&paths, args).await,
        Command::Status(args) => status::run(args).await,
        Command::Plugin(args) => plugin::run(&paths, args).await,
        Command::Policy(args) => policy::run(&paths, args).await,
        Command::Workspace(args) => workspace::run(&paths, args).await,
        Command::Install(args) => install::run(&paths, args).await,
        Command::Sandbox(args) => Ok(sandbox::run(&args)),
        Command::Demo(_) | Command::DemoServer(_) => unreachable!("handled above"),
    };
    // Every line recorded by the command is in its file before the process ends.
    observer.flush();
    outcome
}

/// The log on stderr at the chosen verbosity and, when `traces` are exported, the spans made for
/// OpenTelemetry handed to the exporter whatever that verbosity.
fn init_tracing(verbose: u8, traces: Option<&toolport::audit::Traces>) {
    use tracing_subscriber::EnvFilter;
    // rmcp logs transport failures with the full URL, which may carry an expanded `${VAR}`
    // secret: every line is redacted by `RedactingStderr`, and rmcp stays quiet anyway unless
    // the user asks for debug output.
    // An OTLP export that fails is said once per failed export (the SDK's error line); the
    // exporter's own warning about its retries says the same and stays for -vv.
    let default = match verbose {
        0 => "warn,rmcp=off,opentelemetry-otlp=error",
        1 => "info,rmcp=off,opentelemetry-otlp=error,opentelemetry_sdk=warn",
        2 => "debug,rmcp=warn",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    // Logs go to stderr so stdout stays clean for --json output and the ACP protocol stream.
    // Colours only on a terminal: piped into a file or a test, the log is plain text.
    let ansi = std::io::stderr().is_terminal();
    if let Some(traces) = traces {
        use tracing_subscriber::Layer as _;
        use tracing_subscriber::layer::SubscriberExt as _;
        use tracing_subscriber::util::SubscriberInitExt as _;
        let log = tracing_subscriber::fmt::layer().with_ansi(ansi).with_writer(RedactingStderr);
        let _ = tracing_subscriber::registry().with(log.with_filter(filter)).with(traces.layer()).try_init();
        return;
    }
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(RedactingStderr)
        .try_init();
}

/// The log's writer: stderr, with every URL's query values and userinfo and rmcp's logged
/// authorization code masked ([`display::redact_log`]) at every verbosity, whoever wrote the
/// line (rmcp, reqwest, a plugin, us). `tracing_subscriber`'s formatter hands over each event
/// whole in one write, so a URL or a code is never split across two calls.
struct RedactingStderr;

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for RedactingStderr {
    type Writer = Self;

    fn make_writer(&'a self) -> Self::Writer {
        Self
    }
}

impl std::io::Write for RedactingStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().lock().write_all(display::redact_log(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}
