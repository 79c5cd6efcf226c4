//! `toolport plugin run`: one name policy or tool shape run once on a list of tools (a guard
//! on one request: `run_guard.rs`), with no runtime around it — a plugin author's fastest loop, and a check a CI job can run. The tools
//! come from a JSON file or live from a configured server; the plugin runs under exactly the
//! sandbox its flags describe (the store's `grants` and `limits`, with the store's checks), and
//! what it decided, logged and was refused is printed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use serde_json::{Map, Value, json};

use super::edit::{KindArg, SandboxFlags, component_kind, is_builtin};
use super::trial_report;
use crate::cli::ExitError;
use toolport::display::escape_line;
use toolport::plugins::{PluginError, PluginHost, PluginLogLine, ToolInfo, Verdict};
use toolport::store::{GlobalStore, PluginKind, ServerDef, WorkspaceSettings};
use toolport::{Paths, Resolved, ResolvedServer, Runtime, RuntimeOptions, ServerState, ToolRecord};

/// The server name a plugin sees when the tools come from a file.
const SAMPLE_SERVER: &str = "sample";

/// `toolport plugin run` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  toolport plugin run policy.wasm --tools tools.json\n  \
    toolport plugin run shape.wasm --server notes --json\n  \
    toolport plugin run guard.wasm --request call.json --result result.json\n  \
    toolport plugin run guard.wasm --request '{\"method\": \"tools/call\", \"params\": {\"name\": \"q\", \"arguments\": {}}}'")]
pub struct RunArgs {
    /// The component file.
    #[arg(value_name = "FILE.wasm")]
    file: PathBuf,
    /// What it is; default: the world the component exports (a mismatch is an error).
    #[arg(long, value_enum)]
    kind: Option<KindArg>,
    /// A JSON file of MCP tools: an array of tool objects, or a `tools/list` result `{"tools": […]}`.
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present_any = ["server", "request"],
        conflicts_with_all = ["server", "request"]
    )]
    tools: Option<PathBuf>,
    /// Take the tools live from this configured server; the plugin sees its definition.
    #[arg(long, value_name = "NAME", conflicts_with = "request")]
    server: Option<String>,
    /// A guard: the JSON-RPC request it sees (`{"method": "tools/call", "params": {…}}`, or a
    /// call's params alone), a file or the JSON itself.
    #[arg(long, value_name = "FILE|JSON")]
    request: Option<PathBuf>,
    /// A guard: the server's result to that request (a file or the JSON itself); the response
    /// hook runs on it too.
    #[arg(long, value_name = "FILE|JSON", requires = "request")]
    result: Option<PathBuf>,
    /// A guard: the caller's subject the hooks see (as a token would name it under serve).
    #[arg(long, value_name = "TEXT", requires = "request")]
    subject: Option<String>,
    /// A guard: the client name the hooks see.
    #[arg(long, value_name = "NAME", requires = "request")]
    client: Option<String>,
    /// The server name the plugin sees with --tools.
    #[arg(long, value_name = "NAME", default_value = SAMPLE_SERVER, conflicts_with = "server")]
    server_name: String,
    #[command(flatten)]
    sandbox: SandboxFlags,
    /// One JSON object: the results, the plugin's log lines and the sandbox's denials.
    #[arg(long)]
    json: bool,
}

/// What the plugin answered: a verdict or a shaped tool per tool.
enum Answers {
    Verdicts(Vec<Verdict>),
    Shaped(Vec<Value>),
}

/// Runs the plugin once and prints what it did.
pub async fn run(paths: &Paths, args: RunArgs) -> Result<ExitCode> {
    let (kind, _) = component_kind(paths, &args.file, args.kind)?;
    if kind == PluginKind::Transport {
        return Err(ExitError::usage(format!(
            "{} is a transport plugin: it moves a server's messages, so it needs a server to run. Try it \
             with `toolport plugin add NAME {}`, a server whose \"type\" is NAME (`toolport mcp add …`), \
             then `toolport mcp list`",
            args.file.display(),
            args.file.display()
        ))
        .into());
    }
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let name = plugin_name(&args.file);
    let request = args.sandbox.clone().request(kind, &args.file, None);
    let (_, def) = toolport::edit::plugin_entry(&name, &request, &cwd)?;
    if kind == PluginKind::Guard || args.request.is_some() {
        return run_guard(paths, &args, kind, &name, def).await;
    }
    let (server, tools) = match (&args.tools, &args.server) {
        (Some(file), _) => {
            (ServerDef { name: args.server_name.trim().to_string(), ..Default::default() }, read_tools(file)?)
        }
        (None, Some(server)) => live_tools(paths, server.trim()).await?,
        (None, None) => return Err(ExitError::usage("give --tools FILE or --server NAME").into()),
    };
    let host = PluginHost::new(Some(paths.cache_dir()), &[def])
        .context("cannot start the plugin host")?
        .with_observer(crate::cli::observer());
    // A plugin that does not load is a problem of the file or the flags (exit 2).
    let load = |e: PluginError| ExitError::usage(e.to_string());
    let (outcome, logs, denials) = match kind {
        PluginKind::NamePolicy => {
            let policy = host.name_policy(&name).map_err(load)?;
            policy.keep_logs();
            let outcome = policy.review(&server, &tools).await.map(Answers::Verdicts);
            (outcome, policy.log_lines(), policy.denials())
        }
        _ => {
            let shape = host.tool_shape(&name).map_err(load)?;
            shape.keep_logs();
            let outcome = shape.convert(&server, &tools).await.map(Answers::Shaped);
            (outcome, shape.log_lines(), shape.denials())
        }
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report_json(
                &name, kind, &server, &tools, &outcome, &logs, &denials
            ))?
        );
    } else {
        print!("{}", report_text(&tools, &outcome, &logs, &denials));
    }
    match outcome {
        Ok(_) => Ok(ExitCode::SUCCESS),
        Err(e) => Err(ExitError::failure(e.to_string()).into()),
    }
}

/// A guard on the request file (`run_guard.rs`); any other kind with `--request` is a usage
/// error that says what it takes.
async fn run_guard(
    paths: &Paths,
    args: &RunArgs,
    kind: PluginKind,
    name: &str,
    def: toolport::store::PluginDef,
) -> Result<ExitCode> {
    let Some(request) = &args.request else {
        return Err(ExitError::usage(format!(
            "{} is a guard plugin: give it a request with --request FILE (and the server's answer with --result FILE)",
            args.file.display()
        ))
        .into());
    };
    if kind != PluginKind::Guard {
        return Err(ExitError::usage(format!(
            "{} is a {} plugin: --request is for guards; give it --tools FILE or --server NAME",
            args.file.display(),
            kind.as_str()
        ))
        .into());
    }
    let host = PluginHost::new(Some(paths.cache_dir()), &[def])
        .context("cannot start the plugin host")?
        .with_observer(crate::cli::observer());
    let guard = host.guard(name).map_err(|e| ExitError::usage(e.to_string()))?;
    let trial = super::run_guard::Trial {
        server: args.server_name.trim(),
        subject: args.subject.as_deref(),
        client: args.client.as_deref(),
    };
    super::run_guard::run(&guard, request, args.result.as_deref(), trial, args.json).await
}

/// The name the plugin runs under (and its messages use): the file's stem, unless a built-in
/// has it (a configured entry may not take a built-in's name, so the host would not load it).
fn plugin_name(file: &Path) -> String {
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = if stem.trim().is_empty() { "plugin".to_string() } else { stem };
    if is_builtin(&stem) { format!("{stem}.wasm") } else { stem }
}

/// The tools of a `--tools` file: an array of MCP tool objects, or `{"tools": […]}`.
fn read_tools(file: &Path) -> Result<Vec<ToolInfo>> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| ExitError::usage(format!("cannot read {}: {e}", file.display())))?;
    let doc = toolport::edit::parse_json(file, &text)?;
    let bad = |msg: String| ExitError::usage(format!("{}: {msg}", file.display()));
    let list = match &doc {
        Value::Array(list) => Some(list),
        Value::Object(obj) => obj.get("tools").and_then(Value::as_array),
        _ => None,
    }
    .ok_or_else(|| bad("expected an array of tools or a tools/list result {\"tools\": [...]}".into()))?;
    list.iter()
        .enumerate()
        .map(|(i, tool)| tool_info(tool).map_err(|msg| bad(format!("tool {i}{msg}")).into()))
        .collect()
}

/// One MCP tool object in the plugins' form; the message starts with what follows `tool N`.
fn tool_info(tool: &Value) -> Result<ToolInfo, String> {
    let obj = tool.as_object().ok_or(": must be an object")?;
    let name = match obj.get("name") {
        Some(Value::String(n)) if !n.trim().is_empty() => n.clone(),
        _ => return Err(": \"name\" must be a non-empty string".into()),
    };
    let at = |field: &str, what: &str| format!(" ({}): \"{field}\" must be {what}", escape_line(&name));
    let text = |field: &str| match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(at(field, "a string")),
    };
    let object = |field: &str| match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v @ Value::Object(_)) => Ok(Some(v.clone())),
        Some(_) => Err(at(field, "an object")),
    };
    Ok(ToolInfo {
        title: text("title")?,
        description: text("description")?,
        input_schema: object("inputSchema")?.unwrap_or(Value::Null),
        output_schema: object("outputSchema")?,
        annotations: object("annotations")?,
        name,
    })
}

/// The tools `server` lists now, connected as the runtime connects it (that server alone, no
/// name policy, nothing reserved), and its definition as the store has it.
async fn live_tools(paths: &Paths, server: &str) -> Result<(ServerDef, Vec<ToolInfo>)> {
    let store = GlobalStore::load(&paths.store_file())?;
    let def = store
        .server(server)
        .cloned()
        .ok_or_else(|| ExitError::usage(format!("Unknown MCP server: {server}")))?;
    // A definition the runtime would not connect is the store's mistake (exit 2).
    let transport = toolport::store::validate(&def, &store.plugins)
        .map_err(|msg| ExitError::usage(format!("invalid MCP server \"{server}\": {msg}")))?;
    let resolved = Resolved {
        servers: vec![ResolvedServer {
            transport: Ok(transport),
            def: def.clone(),
            enabled: true,
            paused: false,
        }],
        enabled: vec![def.name.clone()],
        paused: Vec::new(),
        unknown_enabled: Vec::new(),
        settings: WorkspaceSettings { reserved_tool_names: Vec::new(), ..Default::default() },
        plugins: store.plugins.clone(),
        workspace_file: None,
    };
    let options =
        RuntimeOptions::for_paths(paths, paths.workspace_root.clone()).with_observer(crate::cli::observer());
    let runtime = Runtime::start(resolved, options).await?;
    let row = runtime.status().into_iter().find(|r| r.name == def.name);
    if let Some(row) = row.filter(|r| r.state != ServerState::Connected) {
        runtime.shutdown().await;
        let why = row.error.unwrap_or_else(|| format!("{:?}", row.state));
        return Err(
            ExitError::failure(format!("cannot list the tools of {server}: {}", escape_line(&why))).into()
        );
    }
    for warning in runtime.warnings() {
        eprintln!("{warning}");
    }
    // No policy ran, so each record's name is the server's own.
    let tools =
        runtime.records().iter().filter(|r| r.server == def.name).map(|r| ToolRecord::info(r)).collect();
    runtime.shutdown().await;
    Ok((def, tools))
}

fn report_text(
    tools: &[ToolInfo],
    outcome: &Result<Answers, PluginError>,
    logs: &[PluginLogLine],
    denials: &[String],
) -> String {
    let mut out = String::new();
    match outcome {
        Ok(Answers::Verdicts(verdicts)) => {
            for (tool, verdict) in tools.iter().zip(verdicts) {
                let name = escape_line(&tool.name);
                out.push_str(&match verdict {
                    Verdict::Keep => format!("keep {name}\n"),
                    Verdict::Rename(to) => format!("rename {name} -> {}\n", escape_line(to)),
                    Verdict::Hide => format!("hide {name}\n"),
                    Verdict::Reject(reason) => format!("reject {name}: {}\n", escape_line(reason)),
                });
            }
        }
        Ok(Answers::Shaped(values)) => {
            for value in values {
                out.push_str(&serde_json::to_string_pretty(value).unwrap_or_default());
                out.push('\n');
            }
        }
        Err(_) => {}
    }
    out.push_str(&trial_report::trailer_text(logs, denials));
    out
}

fn report_json(
    plugin: &str,
    kind: PluginKind,
    server: &ServerDef,
    tools: &[ToolInfo],
    outcome: &Result<Answers, PluginError>,
    logs: &[PluginLogLine],
    denials: &[String],
) -> Value {
    let mut out = Map::new();
    out.insert("plugin".into(), plugin.into());
    out.insert("kind".into(), kind.as_str().into());
    out.insert("server".into(), server.name.clone().into());
    match outcome {
        Ok(Answers::Verdicts(verdicts)) => {
            let rows: Vec<Value> =
                tools.iter().zip(verdicts).map(|(t, v)| verdict_json(&t.name, v)).collect();
            out.insert("verdicts".into(), rows.into());
        }
        Ok(Answers::Shaped(values)) => {
            out.insert("tools".into(), values.clone().into());
        }
        Err(_) => {}
    }
    trial_report::trailer_json(&mut out, logs, denials);
    out.insert("error".into(), outcome.as_ref().err().map(|e| e.to_string()).into());
    Value::Object(out)
}

fn verdict_json(tool: &str, verdict: &Verdict) -> Value {
    match verdict {
        Verdict::Keep => json!({ "tool": tool, "verdict": "keep" }),
        Verdict::Rename(to) => json!({ "tool": tool, "verdict": "rename", "name": to }),
        Verdict::Hide => json!({ "tool": tool, "verdict": "hide" }),
        Verdict::Reject(reason) => json!({ "tool": tool, "verdict": "reject", "reason": reason }),
    }
}
