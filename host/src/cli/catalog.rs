//! `toolport resources`, `read`, `prompts` and `prompt`: what servers offer besides tools,
//! on a runtime started from the config files like `tools` and `call`. Text views escape the
//! servers' text; `--json` leaves that to JSON's own escaping. Warnings (a prompt name or a
//! URI two servers share) go to stderr, so stdout stays the answer.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use toolport::{Catalog, Paths};

use super::ExitError;
use super::tools::start;

/// `toolport resources [--json]`.
#[derive(Debug, clap::Args)]
pub struct ResourcesArgs {
    /// Print `{"resources": [...], "resourceTemplates": [...]}`, each item with its `server`.
    #[arg(long)]
    json: bool,
}

/// `toolport read <server> <uri> [--output FILE] [--json]`.
#[derive(Debug, clap::Args)]
pub struct ReadArgs {
    /// The server to read from, as `toolport resources` shows it.
    server: String,
    /// The resource's URI (a listed one, or one a template describes).
    uri: String,
    /// Write the raw bytes (binary contents decoded) to FILE instead of printing; `-` is stdout.
    #[arg(short, long, value_name = "FILE", conflicts_with = "json")]
    output: Option<PathBuf>,
    /// Print MCP's `ReadResourceResult` (`{"contents": [...]}`, blobs in base64).
    #[arg(long)]
    json: bool,
}

/// `toolport prompts [--json]`.
#[derive(Debug, clap::Args)]
pub struct PromptsArgs {
    /// Print the prompts as one JSON array, each with its `server`.
    #[arg(long)]
    json: bool,
}

/// `toolport prompt <name> [json-args] [--json]`.
#[derive(Debug, clap::Args)]
pub struct PromptArgs {
    /// The prompt's name, as `toolport prompts` shows it.
    name: String,
    /// Arguments as a JSON object of strings; omitted or blank means none.
    #[arg(value_name = "JSON-ARGS")]
    arguments: Option<String>,
    /// Print MCP's `GetPromptResult` (`{"description": …, "messages": [...]}`).
    #[arg(long)]
    json: bool,
}

/// The merged catalog.
async fn catalog(paths: &Paths) -> anyhow::Result<Catalog> {
    let runtime = start(paths).await?;
    let catalog = runtime.catalog();
    runtime.shutdown().await;
    Ok(catalog)
}

/// Prints the warnings of the list a command shows (the other list's stay quiet).
fn warn(warnings: &[String]) {
    for warning in warnings {
        eprintln!("{warning}");
    }
}

/// Prints every connected server's resources and resource templates.
pub async fn run_resources(paths: &Paths, args: ResourcesArgs) -> anyhow::Result<ExitCode> {
    let catalog = catalog(paths).await?;
    warn(&catalog.resource_warnings);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&catalog.resources_json())?);
    } else {
        print!("{}", catalog.resources_text());
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints every connected server's prompts.
pub async fn run_prompts(paths: &Paths, args: PromptsArgs) -> anyhow::Result<ExitCode> {
    let catalog = catalog(paths).await?;
    warn(&catalog.prompt_warnings);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&catalog.prompts_json())?);
    } else {
        print!("{}", catalog.prompts_text());
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads one resource: text printed, binary described by type and size unless `--output`
/// asks for the bytes (as `curl -o` and `gh … --output` do).
pub async fn run_read(paths: &Paths, args: ReadArgs) -> anyhow::Result<ExitCode> {
    let runtime = start(paths).await?;
    let read = runtime.read(&args.server, &args.uri).await;
    runtime.shutdown().await;
    let read = read.map_err(|e| ExitError::failure(e.to_string()))?;
    match &args.output {
        Some(path) => {
            let bytes = read
                .bytes()
                .map_err(|why| ExitError::failure(format!("cannot decode {}: {why}", args.uri)))?;
            if path.as_os_str() == "-" {
                let mut stdout = std::io::stdout().lock();
                stdout.write_all(&bytes).and_then(|()| stdout.flush()).context("cannot write to stdout")?;
            } else {
                std::fs::write(path, &bytes).with_context(|| format!("cannot write {}", path.display()))?;
            }
        }
        None if args.json => println!("{}", serde_json::to_string_pretty(&read.to_json())?),
        None => {
            println!("{}", read.render_text());
            if read.has_binary() {
                eprintln!(
                    "toolport: binary content not printed: use --output FILE (or --output - for stdout)"
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Gets one prompt with its arguments and prints its messages.
pub async fn run_prompt(paths: &Paths, args: PromptArgs) -> anyhow::Result<ExitCode> {
    let runtime = start(paths).await?;
    let outcome = runtime.prompt(&args.name, args.arguments.as_deref().unwrap_or_default()).await;
    runtime.shutdown().await;
    let outcome = outcome.map_err(|e| ExitError::failure(e.to_string()))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&outcome.to_json())?);
    } else {
        println!("{}", outcome.render_text());
    }
    Ok(ExitCode::SUCCESS)
}
