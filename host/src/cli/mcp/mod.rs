//! `toolport mcp …`: server definitions in the global store and enablement in this workspace.
//! The work is done by the library (its config edits and the runtime); this folder maps
//! arguments in and messages and exit statuses out: the commands here, `mcp import`'s report in
//! `import.rs`, `mcp get`'s view in `get.rs`, `mcp set`/`unset` in `fields.rs`, `mcp default`
//! in `defaults.rs`.

mod defaults;
mod fields;
mod get;
mod import;
mod pins;

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use clap::Subcommand;
use serde_json::{Map, Value};

use crate::cli::ask::{ElicitPolicy, TerminalElicitor};
use crate::cli::clients::{self, Client, ClientHomes, ClientScope, ImportRequest};
use crate::cli::exit::{ExitError, edit_error};
use crate::cli::grants::{self, Change, GrantFlags};
use crate::cli::progress::Spinners;
use toolport::edit::{self, SandboxChoice, SandboxEntry, parse_add_args};
use toolport::{ConfigError, Paths, Runtime, RuntimeOptions, Trailer};

/// The usage line printed with an `add` argument error.
const CLI_ADD_USAGE: &str = "Usage: toolport mcp add [--transport <stdio|sse|http|streamable_http|PLUGIN>] <name> \
     <url | -- command [args…]> [--env K=V]… [--header \"K: V\"]… [--cwd DIR] [--include GLOB]… [--exclude GLOB]… \
     [--roots VALUE]… [--protocol-version REVISION] [--connect-timeout MS] [--list-timeout MS] [--call-timeout MS] \
     [--sandbox | --no-sandbox] [--force]";

/// `toolport mcp [<subcommand>]`; without one it lists.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    #[command(subcommand)]
    command: Option<McpCommand>,
}

#[derive(Debug, Subcommand)]
enum McpCommand {
    /// Print the status view of every defined or enabled server.
    List {
        /// Machine-readable output (documented in docs/src/configure/mcp.md).
        #[arg(long)]
        json: bool,
    },
    /// Add a server to the global store (does not enable it).
    #[command(
        after_help = "Options inside ARGS (before the url or command):\n  \
            --transport <stdio|sse|http|streamable_http|PLUGIN>   default stdio\n  \
            --env K=V          child environment (repeatable)\n  \
            --header \"K: V\"    HTTP header (repeatable)\n  \
            --cwd DIR          child working folder\n  \
            --include GLOB     only the server's tools matching it (repeatable; `*`, `?`, `[..]`)\n  \
            --exclude GLOB     never the server's tools matching it (repeatable; wins over --include)\n  \
            --roots VALUE      workspace (default), none, client, or a folder (repeatable for a list)\n  \
            --protocol-version REVISION   speak only this MCP revision with it (e.g. 2025-11-25)\n  \
            --connect-timeout MS   time to start and initialize it (default 30000; timeouts.connectMs)\n  \
            --list-timeout MS      time for its whole tool listing (default 30000; timeouts.listMs)\n  \
            --call-timeout MS      time for one tool call (default 60000; timeouts.callMs)\n  \
            --sandbox          start it under the OS sandbox (\"sandbox\": true; stdio only)\n  \
            --no-sandbox       not, whatever the store's default (toolport mcp default sandbox)\n  \
            --force            replace a definition of that name wholesale (none of its old keys are kept;\n                     \
            the workspace's enablement and pins stay)\n\
            For stdio, everything after -- is the command and its arguments, verbatim.\n\
            One field of an existing definition: toolport mcp set NAME KEY VALUE…",
        override_usage = "toolport mcp add [--transport <stdio|sse|http|PLUGIN>] <name> <url | -- command [args…]> [--env K=V]… [--header \"K: V\"]… [--cwd DIR] [--include GLOB]… [--exclude GLOB]… [--roots VALUE]… [--protocol-version REVISION] [--connect-timeout MS] [--list-timeout MS] [--call-timeout MS] [--sandbox | --no-sandbox] [--force]"
    )]
    Add {
        /// Everything after `add`, parsed by the same library parser as `/mcp add`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0.., value_name = "ARGS")]
        args: Vec<String>,
    },
    /// Add a server given as a JSON definition.
    AddJson {
        /// The server name.
        name: String,
        /// The definition, e.g. '{"type":"stdio","command":"npx","args":["-y","pkg"]}'.
        json: String,
        /// Replace a definition of that name wholesale (the workspace's enablement stays).
        #[arg(long)]
        force: bool,
    },
    /// Set one field of a server's definition; the rest of it stays as it is.
    #[command(
        after_help = "Keys:\n  \
            timeouts.connectMs MS, timeouts.listMs MS, timeouts.callMs MS   milliseconds, above 0\n  \
            tools.include GLOB…, tools.exclude GLOB…   the values replace the list\n  \
            args ARG…          the command's arguments, replaced whole, verbatim\n  \
            env.VAR VALUE      one environment variable (shown as ***)\n  \
            headers.NAME VALUE one HTTP header (shown as ***)\n  \
            cwd DIR, url URL\n  \
            sandbox true|false a stdio server under the OS sandbox or not\n\
            Example: toolport mcp set files timeouts.connectMs 120000",
        override_usage = "toolport mcp set <NAME> <KEY> <VALUE>…"
    )]
    Set {
        /// The server name.
        name: String,
        /// The field: timeouts.connectMs, timeouts.listMs, timeouts.callMs, tools.include,
        /// tools.exclude, args, env.VAR, headers.NAME, cwd, url or sandbox.
        key: String,
        /// Its value (lists: every value, in order).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0.., value_name = "VALUE")]
        values: Vec<String>,
    },
    /// Remove one field of a server's definition (a timeout goes back to its default).
    Unset {
        /// The server name.
        name: String,
        /// The field, as `mcp set` names it.
        key: String,
    },
    /// Show the store's defaults for servers added from now on, or set one.
    #[command(
        after_help = "Defaults:\n  \
            sandbox on|off   every stdio server added is written with \"sandbox\": true (default off;\n                   \
            mcp add --no-sandbox opts one out)\n\
            Example: toolport mcp default sandbox on",
        override_usage = "toolport mcp default [sandbox [on|off]]"
    )]
    Default {
        /// The default to show or set.
        #[arg(value_enum)]
        key: Option<defaults::DefaultKey>,
        /// Its new value.
        #[arg(value_enum, requires = "key")]
        value: Option<defaults::OnOff>,
    },
    /// Show one definition (env and header values as ***).
    Get {
        /// The server name.
        name: String,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Sign in to a remote server (OAuth): opens the browser, or --no-browser to paste back.
    Login {
        /// The server name.
        name: String,
        /// Print the sign-in address and read the final redirect address pasted on stdin
        /// (machines without a browser: SSH, containers).
        #[arg(long)]
        no_browser: bool,
    },
    /// Forget a remote server's OAuth tokens.
    Logout {
        /// The server name.
        name: String,
    },
    /// Delete a server from the global store and this workspace's enabled list.
    Remove {
        /// The server name.
        name: String,
    },
    /// Enable a defined server in this workspace.
    Enable {
        /// The server name.
        name: String,
    },
    /// Stop enabling a server in this workspace.
    Disable {
        /// The server name.
        name: String,
    },
    /// Give a sandboxed server (type wasm, or stdio with "sandbox": true) a folder, a host or an
    /// environment variable.
    #[command(
        after_help = "Example: toolport mcp grant notes --dir '~/notes:rw' --host 'http://127.0.0.1:*' --env NOTES_TOKEN"
    )]
    #[command(
        override_usage = "toolport mcp grant <SERVER> [--dir PATH[:ro|:rw]]… [--host PATTERN]… [--env NAME]…"
    )]
    Grant {
        /// The server name.
        #[arg(value_name = "SERVER")]
        name: String,
        #[command(flatten)]
        what: GrantFlags,
    },
    /// Take grants back from a sandboxed server.
    #[command(override_usage = "toolport mcp revoke <SERVER> [--dir PATH]… [--host PATTERN]… [--env NAME]…")]
    Revoke {
        /// The server name.
        #[arg(value_name = "SERVER")]
        name: String,
        #[command(flatten)]
        what: GrantFlags,
    },
    /// Pin a sandboxed server's component to its SHA-256: a changed file is then refused.
    Pin {
        /// The server name.
        #[arg(value_name = "SERVER")]
        name: String,
    },
    /// Show what changed in a server's tool definitions since they were pinned in
    /// .toolport/tools.lock, word by word, and why each held tool is held.
    Diff {
        /// The server name.
        #[arg(value_name = "SERVER")]
        name: String,
    },
    /// Pin a server's held tools again as listed now (accepting their current findings), so
    /// they are back on the surface; no tool named: every held tool of that server.
    Approve {
        /// The server name.
        #[arg(value_name = "SERVER")]
        name: String,
        /// The server's own names of the tools to approve.
        #[arg(value_name = "TOOL")]
        tools: Vec<String>,
    },
    /// Copy an agent's server definitions into the global store (names already there are skipped).
    Import {
        /// The agent whose file is read.
        #[arg(long, value_parser = super::install::client_parser())]
        from: Client,
        /// Its user file, this workspace's, or Claude Code's local scope. Default: user, and
        /// for claude-code local then user (both in ~/.claude.json).
        #[arg(long, value_parser = super::install::scope_parser())]
        scope: Option<ClientScope>,
        /// Read this file instead of the agent's usual one.
        #[arg(long, value_name = "PATH")]
        file: Option<std::path::PathBuf>,
        /// Also enable each imported server in this workspace.
        #[arg(long)]
        enable: bool,
        /// With --enable, also enable a project file's servers that run a command or read
        /// environment variables (each is warned about either way).
        #[arg(long, requires = "enable")]
        trust: bool,
    },
}

/// Runs one `mcp` subcommand.
pub async fn run(paths: &Paths, args: McpArgs) -> Result<ExitCode> {
    match args.command.unwrap_or(McpCommand::List { json: false }) {
        McpCommand::List { json } => print!("{}", list_view(paths, json).await?),
        McpCommand::Add { args } => {
            let req = parse_add_args(&args).map_err(|e| ExitError::usage(format!("{e}\n{CLI_ADD_USAGE}")))?;
            add(paths, &req.name, &req.to_json(), req.force, req.sandbox)?;
        }
        McpCommand::AddJson { name, json, force } => {
            let doc = edit::parse_json(std::path::Path::new("<json argument>"), &json)?;
            let Value::Object(def) = doc else {
                return Err(ConfigError("the definition must be a JSON object".into()).into());
            };
            add(paths, &name, &def, force, SandboxChoice::StoreDefault)?;
        }
        McpCommand::Set { name, key, values } => print!("{}", fields::set(paths, &name, &key, &values)?),
        McpCommand::Unset { name, key } => print!("{}", fields::unset(paths, &name, &key)?),
        McpCommand::Default { key, value } => print!("{}", defaults::run(paths, key, value)?),
        McpCommand::Get { name, json } => print!("{}", get::get_view(paths, &name, json).await?),
        McpCommand::Login { name, no_browser } => {
            return crate::cli::login::login(paths, &name, no_browser).await;
        }
        McpCommand::Logout { name } => return crate::cli::login::logout(paths, &name),
        McpCommand::Remove { name } => {
            edit::remove_server(paths, &name).map_err(edit_error)?;
            println!("mcp removed: {name}");
        }
        McpCommand::Enable { name } => {
            edit::enable_server(paths, &name).map_err(edit_error)?;
            println!("mcp enabled: {name}");
        }
        McpCommand::Disable { name } => {
            edit::disable_server(paths, &name).map_err(edit_error)?;
            println!("mcp disabled: {name}");
        }
        McpCommand::Grant { name, what } => {
            grants::change(paths, SandboxEntry::Server(&name), what, Change::Grant)?
        }
        McpCommand::Revoke { name, what } => {
            grants::change(paths, SandboxEntry::Server(&name), what, Change::Revoke)?;
        }
        McpCommand::Pin { name } => grants::pin(paths, SandboxEntry::Server(&name))?,
        McpCommand::Diff { name } => print!("{}", pins::diff(paths, &name).await?),
        McpCommand::Approve { name, tools } => print!("{}", pins::approve(paths, &name, &tools).await?),
        McpCommand::Import { from, scope, file, enable, trust } => {
            let self_exe = std::env::current_exe().ok();
            let req = ImportRequest { client: from, scope, file, enable, trust, self_exe };
            let homes = ClientHomes::from_env(&paths.workspace_root)?;
            let report = clients::import(paths, &homes, &req).map_err(edit_error)?;
            eprint!("{}", import::import_warnings(&report));
            print!("{}", import::import_view(paths, &report));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Starts the runtime over the workspace's servers, as `mcp list`, `diff` and `approve` see
/// them.
async fn start_workspace(paths: &Paths) -> Result<Runtime> {
    let resolved = toolport::load_resolved(paths, &BTreeSet::new())?;
    let options = RuntimeOptions::for_paths(paths, paths.workspace_root.clone())
        .with_progress(Spinners::on_stderr())
        // Advertised as `serve`, `call` and `tools` do: a server that lists some tools only
        // to clients that can answer questions (server-everything) counts them here too.
        .with_elicitor(Arc::new(TerminalElicitor::new(ElicitPolicy::Ask)))
        // What it lists is what `serve` then lists at once, before the server is up again.
        .with_listings(paths)
        .with_observer(crate::cli::observer());
    Runtime::start(resolved, options).await
}

/// The `mcp list` output: the live status view. With nothing active the runtime connects
/// nothing, so a plain listing costs no server start.
async fn list_view(paths: &Paths, json: bool) -> Result<String> {
    let runtime = start_workspace(paths).await?;
    let rows = runtime.status();
    runtime.shutdown().await;
    let store = paths.store_file();
    let workspace_config = paths.workspace_file();
    let trailer = Some(Trailer { store: &store, workspace_config: &workspace_config });
    Ok(if json {
        format!("{}\n", serde_json::to_string_pretty(&toolport::render_status_json(&rows, trailer))?)
    } else {
        toolport::render_status(&rows, trailer)
    })
}

fn add(
    paths: &Paths,
    name: &str,
    def: &Map<String, Value>,
    force: bool,
    sandbox: SandboxChoice,
) -> Result<()> {
    let store = paths.store_file();
    let replaced = edit::put_server(&store, name, def, force, sandbox).map_err(edit_error)?;
    let verb = if replaced { "replaced" } else { "added" };
    println!("mcp {verb}: {} -> {}", name.trim(), store.display());
    Ok(())
}
