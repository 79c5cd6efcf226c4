//! `toolport tools`, `toolport call` and `toolport demo`: the tool surface, the executor and the
//! tour, each on a runtime started from the config files.

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::Value;
use toolport::display::{self, escape_line};
use toolport::serving::{self, LAZY_SERVER};
use toolport::store::{Surface, TrustMode};
use toolport::{Paths, Resolved, Runtime, RuntimeOptions};

use super::ExitError;
use super::ask::{ElicitPolicy, TerminalElicitor};
use super::progress::Spinners;

/// `toolport tools [--shape NAME] [--json] [--lazy]`.
#[derive(Debug, clap::Args)]
pub struct ToolsArgs {
    /// Tool-shape plugin to convert with (default: the workspace's `toolShape`, else `openai`).
    #[arg(long, value_name = "NAME")]
    shape: Option<String>,
    /// Print the converted tools as one JSON array (with `--tokens`, the costs as one object).
    #[arg(long)]
    json: bool,
    /// What each server's and each tool's definition costs in tokens (o200k_base), dearest
    /// first, with each server's share and the total.
    #[arg(long)]
    tokens: bool,
    /// Show what `serve --lazy` lists (search_tools, describe_tool, call_tool) instead of every
    /// tool; the default when the workspace's `surface` is `lazy`.
    #[arg(long)]
    lazy: bool,
}

/// `toolport call <tool> [json-args]`.
#[derive(Debug, clap::Args)]
pub struct CallArgs {
    /// The tool's final name, as `toolport tools` shows it.
    tool: String,
    /// Arguments as a JSON object; omitted or blank means `{}`.
    #[arg(value_name = "JSON-ARGS")]
    arguments: Option<String>,
    /// Print the whole result as MCP's `CallToolResult` JSON (`content`, `structuredContent`,
    /// `isError`) instead of its text.
    #[arg(long)]
    json: bool,
    /// How a server's request for input is answered: asked on the terminal by default
    /// (declined without one), every form answered with its defaults, or declined.
    #[arg(long, value_enum, value_name = "ANSWER")]
    elicit: Option<ElicitArg>,
    /// Allow the call without asking even when the workspace's `confirm` setting names the
    /// tool (destructive tools by default): for scripts, which have no terminal to answer on.
    #[arg(long)]
    yes: bool,
}

/// `--elicit` values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ElicitArg {
    /// Ask on the terminal; decline when there is none (the default).
    Ask,
    /// Fill every field from its schema default; accept URL requests (printed, opened with $BROWSER).
    AcceptDefaults,
    /// Decline every request.
    Decline,
}

impl From<ElicitArg> for ElicitPolicy {
    fn from(arg: ElicitArg) -> Self {
        match arg {
            ElicitArg::Ask => ElicitPolicy::Ask,
            ElicitArg::AcceptDefaults => ElicitPolicy::AcceptDefaults,
            ElicitArg::Decline => ElicitPolicy::Decline,
        }
    }
}

/// `toolport demo` (no options: it makes its own temporary home and workspace).
#[derive(Debug, clap::Args)]
pub struct DemoArgs {}

/// Starts the runtime for a command, printing startup warnings to stderr; a server's
/// questions are asked on the terminal.
pub(super) async fn start(paths: &Paths) -> anyhow::Result<Runtime> {
    start_with(paths, TerminalElicitor::new(ElicitPolicy::Ask), None, |_| {}).await
}

/// [`start`] with the workspace's `trust` off: every listed tool on the surface, and nothing
/// pinned. What `scan` checks: a held tool is checked too, and a check writes no lock.
pub(super) async fn start_unpinned(paths: &Paths) -> anyhow::Result<Runtime> {
    let elicitor = TerminalElicitor::new(ElicitPolicy::Ask);
    start_with(paths, elicitor, None, |resolved| resolved.settings.trust = TrustMode::Off).await
}

/// [`start`], answering servers' questions (and toolport's own before a call) with `elicitor`; with `for_call`, only until the
/// server that owns that tool is known ([`Runtime::start_for_call`]).
async fn start_with(
    paths: &Paths,
    elicitor: TerminalElicitor,
    for_call: Option<&str>,
    adjust: impl FnOnce(&mut Resolved),
) -> anyhow::Result<Runtime> {
    let mut resolved = toolport::load_resolved(paths, &BTreeSet::new())?;
    adjust(&mut resolved);
    let options = RuntimeOptions::for_paths(paths, paths.workspace_root.clone())
        .with_progress(Spinners::on_stderr())
        .with_elicitor(Arc::new(elicitor))
        .with_listings(paths)
        .with_observer(crate::cli::observer());
    let runtime = match for_call {
        Some(tool) => Runtime::start_for_call(resolved, options, tool).await?,
        None => Runtime::start(resolved, options).await?,
    };
    for warning in runtime.warnings() {
        eprintln!("{warning}");
    }
    Ok(runtime)
}

/// Prints the tool surface.
pub async fn run_tools(paths: &Paths, args: ToolsArgs) -> anyhow::Result<ExitCode> {
    let runtime = start(paths).await?;
    let lazy = args.lazy || runtime.surface() == Surface::Lazy;
    if args.tokens {
        let costs = match lazy {
            true => lazy_costs(&runtime, args.shape.as_deref()).await,
            false => runtime.token_costs(args.shape.as_deref()).await,
        };
        runtime.shutdown().await;
        let costs = costs?;
        match args.json {
            true => println!("{}", serde_json::to_string_pretty(&costs.to_json())?),
            false => print!("{}", costs.render_text()),
        }
        return Ok(ExitCode::SUCCESS);
    }
    let tools = if lazy {
        runtime.shape_own(LAZY_SERVER, &serving::lazy_tools(), args.shape.as_deref()).await
    } else {
        runtime.tools_in(args.shape.as_deref()).await
    };
    runtime.shutdown().await;
    let tools = tools?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&Value::Array(tools))?);
    } else {
        print!("{}", render_tools(&tools));
    }
    Ok(ExitCode::SUCCESS)
}

/// What the lazy surface's three definitions cost, counted as the full surface's are.
async fn lazy_costs(runtime: &Runtime, shape: Option<&str>) -> anyhow::Result<display::TokenCosts> {
    let shape_name = shape.map_or_else(|| runtime.tool_shape(), str::to_string);
    let own = serving::lazy_tools();
    let shaped = runtime.shape_own(LAZY_SERVER, &own, shape).await?;
    let named = own.iter().zip(&shaped).map(|(tool, shaped)| (LAZY_SERVER, tool.name.as_ref(), shaped));
    Ok(display::TokenCosts::count(&shape_name, named))
}

/// Calls one tool and prints its result (its text, or with `--json` all of it); exit 1 when
/// the tool reports `isError`.
pub async fn run_call(paths: &Paths, args: CallArgs) -> anyhow::Result<ExitCode> {
    let policy = args.elicit.map(ElicitPolicy::from).unwrap_or_default();
    let elicitor = TerminalElicitor::new(policy);
    let elicitor = if args.yes { elicitor.allowing_calls() } else { elicitor };
    let runtime = start_with(paths, elicitor, Some(&args.tool), |_| {}).await?;
    let outcome =
        super::call_progress::call(&runtime, &args.tool, args.arguments.as_deref().unwrap_or_default()).await;
    runtime.shutdown().await;
    let outcome = outcome.map_err(|e| ExitError::failure(e.to_string()))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&outcome.to_json())?);
    } else {
        println!("{}", outcome.render_text());
    }
    Ok(if outcome.is_error { ExitCode::from(super::EXIT_FAILURE) } else { ExitCode::SUCCESS })
}

/// Runs the built-in tour.
pub async fn run_demo(_args: DemoArgs) -> anyhow::Result<ExitCode> {
    crate::demo::run().await?;
    Ok(ExitCode::SUCCESS)
}

/// One line per tool, `name — description`, whatever the shape (OpenAI nests them under
/// `function`; others keep them at the top level). Names and descriptions are the servers'
/// text, so their controls are escaped (`--json` leaves that to JSON's own escaping).
pub fn render_tools(tools: &[Value]) -> String {
    if tools.is_empty() {
        return "(no tools)\n".to_string();
    }
    let mut out = String::new();
    for tool in tools {
        let inner = tool.get("function").unwrap_or(tool);
        let name = escape_line(inner.get("name").and_then(Value::as_str).unwrap_or("(unnamed)"));
        match inner.get("description").and_then(Value::as_str).map(|d| d.replace(['\r', '\n'], " ")) {
            Some(description) if !description.trim().is_empty() => {
                out.push_str(&format!("{name} — {}\n", escape_line(description.trim())));
            }
            _ => out.push_str(&format!("{name}\n")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_openai_and_flat_shapes() {
        let tools = vec![
            json!({"type": "function", "function": {"name": "echo", "description": "Returns\nits message"}}),
            json!({"name": "add", "input_schema": {}}),
        ];
        assert_eq!(render_tools(&tools), "echo — Returns its message\nadd\n");
        assert_eq!(render_tools(&[]), "(no tools)\n");
        let hostile = json!({"name": "poke", "description": "clears\u{1b}[2J\u{1b}]0;title\u{7}"});
        assert_eq!(render_tools(&[hostile]), "poke — clears\\u{1b}[2J\\u{1b}]0;title\\u{7}\n");
    }
}
