//! `toolport mcp …`: server definitions in the global store and enablement in this workspace.
//! The work is done by the library (its config edits and the runtime); this file maps arguments in and
//! messages and exit statuses out.

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use clap::Subcommand;
use serde_json::{Map, Value};

use super::exit::{ExitError, edit_error};
use super::grants::{self, Change, GrantFlags};
use toolport::{
    Client, ClientHomes, ClientScope, ConfigError, ElicitPolicy, GlobalStore, ImportCaution, ImportOutcome,
    ImportReport, ImportRequest, Paths, Roots, Runtime, RuntimeOptions, SECRET_MASK as MASK, SandboxEntry,
    ServerDef, TerminalElicitor, ToolFilter, Trailer, WorkspaceSettings, parse_add_args,
};

/// The usage line printed with an `add` argument error.
const CLI_ADD_USAGE: &str = "Usage: toolport mcp add [--transport <stdio|sse|http|streamable_http|PLUGIN>] <name> \
     <url | -- command [args…]> [--env K=V]… [--header \"K: V\"]… [--cwd DIR] [--include GLOB]… [--exclude GLOB]… \
     [--roots VALUE]…";

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
        /// Machine-readable output (documented in the README).
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
            --roots VALUE      workspace (default), none, client, or a folder (repeatable for a list)\n\
            For stdio, everything after -- is the command and its arguments, verbatim.",
        override_usage = "toolport mcp add [--transport <stdio|sse|http|PLUGIN>] <name> <url | -- command [args…]> [--env K=V]… [--header \"K: V\"]… [--cwd DIR] [--include GLOB]… [--exclude GLOB]… [--roots VALUE]…"
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
    /// Give a sandboxed (type wasm) server a folder, a host or an environment variable.
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
            add(paths, &req.name, &req.to_json())?;
        }
        McpCommand::AddJson { name, json } => {
            let doc = toolport::parse_json(std::path::Path::new("<json argument>"), &json)?;
            let Value::Object(def) = doc else {
                return Err(ConfigError("the definition must be a JSON object".into()).into());
            };
            add(paths, &name, &def)?;
        }
        McpCommand::Get { name, json } => print!("{}", get_view(paths, &name, json).await?),
        McpCommand::Login { name, no_browser } => return super::login::login(paths, &name, no_browser).await,
        McpCommand::Logout { name } => return super::login::logout(paths, &name),
        McpCommand::Remove { name } => {
            toolport::remove_server(paths, &name).map_err(edit_error)?;
            println!("mcp removed: {name}");
        }
        McpCommand::Enable { name } => {
            toolport::enable_server(paths, &name).map_err(edit_error)?;
            println!("mcp enabled: {name}");
        }
        McpCommand::Disable { name } => {
            toolport::disable_server(paths, &name).map_err(edit_error)?;
            println!("mcp disabled: {name}");
        }
        McpCommand::Grant { name, what } => {
            grants::change(paths, SandboxEntry::Server(&name), what, Change::Grant)?
        }
        McpCommand::Revoke { name, what } => {
            grants::change(paths, SandboxEntry::Server(&name), what, Change::Revoke)?;
        }
        McpCommand::Pin { name } => grants::pin(paths, SandboxEntry::Server(&name))?,
        McpCommand::Import { from, scope, file, enable, trust } => {
            let self_exe = std::env::current_exe().ok();
            let req = ImportRequest { client: from, scope, file, enable, trust, self_exe };
            let homes = ClientHomes::from_env(&paths.workspace_root)?;
            let report = toolport::import_servers(paths, &homes, &req).map_err(edit_error)?;
            eprint!("{}", import_warnings(&report));
            print!("{}", import_view(paths, &report));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The `mcp import` lines: one per server of the client's file (names and keys only, never a
/// value), then the count.
fn import_view(paths: &Paths, report: &ImportReport) -> String {
    let mut out = String::new();
    let mut imported = 0;
    for line in &report.lines {
        // A blank name (the store refuses it) is quoted, or its line would name nothing.
        let name = if line.name.trim().is_empty() {
            toolport::escape_line(&Value::from(line.name.as_str()).to_string()).into_owned()
        } else {
            toolport::escape_line(&line.name).into_owned()
        };
        match &line.outcome {
            ImportOutcome::Imported { transport, enabled, off_in_client, notes, cautions, held_back } => {
                imported += 1;
                let enabled = if *enabled { ", enabled" } else { "" };
                out.push_str(&format!("imported: {name} ({transport}{enabled})\n"));
                if *off_in_client {
                    out.push_str(&format!(
                        "  note: turned off in the client's file (enabled = false), so not enabled here: \
                         `toolport mcp enable {name}` enables it\n"
                    ));
                }
                if *held_back {
                    out.push_str(&format!(
                        "  note: not enabled: it comes from a project file and {} (see the warning): \
                         `toolport mcp enable {name}` enables it, as would --enable --trust\n",
                        what_it_does(cautions)
                    ));
                }
                for note in notes {
                    out.push_str(&format!("  note: {}\n", toolport::escape_line(note)));
                }
            }
            ImportOutcome::Skipped(why) => {
                out.push_str(&format!("skipped: {name} {}\n", toolport::escape_line(why)));
            }
        }
    }
    let skipped = report.lines.len() - imported;
    out.push_str(&format!(
        "mcp import: {imported} imported, {skipped} skipped ({} -> {})\n",
        report.file.display(),
        paths.store_file().display()
    ));
    out
}

/// One `toolport: warning:` line per caution of a project file's imported server: what it
/// will run and which variables it will send where, by name (never a value), so a cloned
/// repository's file cannot quietly send the user's token to its author.
fn import_warnings(report: &ImportReport) -> String {
    let file = report.file.display();
    let mut out = String::new();
    for line in &report.lines {
        let ImportOutcome::Imported { cautions, .. } = &line.outcome else { continue };
        let name = toolport::escape_line(&line.name);
        for caution in cautions {
            let what = match caution {
                ImportCaution::RunsCommand { command, args } => {
                    let words = std::iter::once(command).chain(args).map(String::as_str);
                    let joined = shlex::try_join(words.clone())
                        .unwrap_or_else(|_| words.collect::<Vec<_>>().join(" "));
                    format!(
                        "runs a command from the repository, as you and with your environment: {}",
                        toolport::escape_line(&joined)
                    )
                }
                ImportCaution::ReadsEnv { vars, url } => {
                    let names: Vec<String> = vars.iter().map(|v| format!("${{{v}}}")).collect();
                    let them = if names.len() == 1 { "it" } else { "them" };
                    let to = match url {
                        Some(url) => toolport::escape_line(url).into_owned(),
                        None => "the command it runs".to_string(),
                    };
                    format!("reads {} from your environment and sends {them} to {to}", and_list(&names))
                }
            };
            out.push_str(&format!("toolport: warning: server \"{name}\" from {file} {what}\n"));
        }
    }
    out
}

/// The held-back note's reason: which of the two a server does.
fn what_it_does(cautions: &[ImportCaution]) -> &'static str {
    let runs = cautions.iter().any(|c| matches!(c, ImportCaution::RunsCommand { .. }));
    let reads = cautions.iter().any(|c| matches!(c, ImportCaution::ReadsEnv { .. }));
    match (runs, reads) {
        (true, true) => "runs a command and reads your environment",
        (true, false) => "runs a command",
        _ => "reads your environment",
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The `mcp list` output: the live status view. With nothing active the runtime connects
/// nothing, so a plain listing costs no server start.
async fn list_view(paths: &Paths, json: bool) -> Result<String> {
    let resolved = toolport::load_resolved(paths, &BTreeSet::new())?;
    let options = RuntimeOptions {
        progress: true,
        cache_dir: Some(paths.cache_dir()),
        credentials: Some(paths.credentials()),
        // Advertised as `serve`, `call` and `tools` do: a server that lists some tools only
        // to clients that can answer questions (server-everything) counts them here too.
        elicitor: Some(Arc::new(TerminalElicitor::new(ElicitPolicy::Ask))),
        ..Default::default()
    };
    let runtime = Runtime::start(resolved, options).await?;
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

fn add(paths: &Paths, name: &str, def: &Map<String, Value>) -> Result<()> {
    let store = paths.store_file();
    toolport::add_server(&store, name, def).map_err(edit_error)?;
    println!("mcp added: {} -> {}", name.trim(), store.display());
    Ok(())
}

/// `mcp get`: the definition as stored. `--json` also connects the server when this workspace
/// enables it (that server alone: the others are paused for the look) to show the negotiated
/// `protocolVersion`; the text view stays offline, as the contract has it.
async fn get_view(paths: &Paths, name: &str, json: bool) -> Result<String> {
    let store = GlobalStore::load(&paths.store_file())?;
    let def = store.server(name).ok_or_else(|| ExitError::failure(format!("Unknown MCP server: {name}")))?;
    let enabled = WorkspaceSettings::load(&paths.workspace_root)?.enabled.iter().any(|n| n == name);
    let validity = toolport::validate(def, &store.plugins);
    let masked = masked(def);
    if json {
        let mut out = Map::new();
        out.insert("name".into(), def.name.clone().into());
        out.insert("definition".into(), Value::Object(masked.to_json()));
        out.insert("workspaceEnabled".into(), enabled.into());
        out.insert("valid".into(), validity.is_ok().into());
        if def.url.is_some() {
            out.insert("oauth".into(), super::login::oauth_state(paths, def)?.into());
        }
        if let Some(wasm) = &def.wasm {
            out.insert("sandbox".into(), grants::sandbox_json(wasm));
        }
        if let Err(msg) = &validity {
            out.insert("error".into(), msg.clone().into());
        }
        if enabled
            && validity.is_ok()
            && let Some(version) = negotiated_version(paths, &store, name).await?
        {
            out.insert("protocolVersion".into(), version.into());
        }
        return Ok(format!("{}\n", serde_json::to_string_pretty(&out)?));
    }
    let mut out = format!("{}\n", def.name);
    let mut line = |k: &str, v: &str| out.push_str(&format!("  {k}: {v}\n"));
    line("type", masked.transport.as_deref().unwrap_or("(unknown)"));
    if let Some(u) = &masked.url {
        line("url", u);
    }
    if let Some(c) = &masked.command {
        line("command", c);
    }
    if !masked.args.is_empty() {
        let joined =
            shlex::try_join(masked.args.iter().map(String::as_str)).unwrap_or_else(|_| masked.args.join(" "));
        line("args", &joined);
    }
    for (k, _) in &masked.env {
        line("env", &format!("{k}={MASK}"));
    }
    for (k, _) in &masked.headers {
        line("header", &format!("{k}: {MASK}"));
    }
    if let Some(c) = &masked.cwd {
        line("cwd", c);
    }
    match masked.inherit_env {
        Some(false) => line("inheritEnv", "no (only PATH, HOME, LANG, TERM and env)"),
        Some(true) => line("inheritEnv", "yes"),
        None => {}
    }
    if !masked.tools.is_empty() {
        line("tools", &tool_filter_text(&masked.tools));
    }
    for (key, value) in masked.wasm.as_ref().map(grants::sandbox_lines).unwrap_or_default() {
        line(key, &value);
    }
    line("roots", &roots_text(&masked.roots));
    let t = masked.timeouts;
    line(
        "timeouts",
        &format!(
            "connectMs={} listMs={} callMs={}",
            t.connect.as_millis(),
            t.list.as_millis(),
            t.call.as_millis()
        ),
    );
    if let Some(o) = &masked.oauth {
        let mut parts = vec![format!("grant={}", o.grant.as_str())];
        if let Some(id) = &o.client_id {
            parts.push(format!("clientId={id}"));
        }
        if o.client_secret.is_some() {
            parts.push(format!("clientSecret={MASK}"));
        }
        if let Some(scopes) = &o.scopes {
            parts.push(format!("scopes={}", scopes.join(",")));
        }
        if let Some(port) = o.callback_port {
            parts.push(format!("callbackPort={port}"));
        }
        // The pins of the jwt_bearer grant: where the workload's token may go.
        for (key, value) in [("issuer", &o.issuer), ("tokenEndpoint", &o.token_endpoint)] {
            if let Some(value) = value {
                parts.push(format!("{key}={value}"));
            }
        }
        line("oauth config", &parts.join(" "));
    }
    if masked.url.is_some() {
        line("oauth", &super::login::oauth_state(paths, def)?);
    }
    line("workspace", if enabled { "enabled" } else { "disabled" });
    match validity {
        Ok(_) => line("valid", "yes"),
        Err(msg) => line("valid", &format!("no ({msg})")),
    }
    Ok(out)
}

/// `include ["read_*","search"] exclude ["*_delete"]`: each list as JSON, so a glob with a
/// comma or a space reads back exactly; an empty list is left out.
fn tool_filter_text(filter: &ToolFilter) -> String {
    [("include", filter.include()), ("exclude", filter.exclude())]
        .into_iter()
        .filter(|(_, globs)| !globs.is_empty())
        .map(|(key, globs)| format!("{key} {}", Value::from(globs.to_vec())))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `roots` setting as `mcp get` shows it: the keyword and what it means, or the paths as
/// written (a JSON array, like the filter's globs).
fn roots_text(roots: &Roots) -> String {
    match roots {
        Roots::Workspace => "workspace (the workspace root)".to_string(),
        Roots::None => "none (no roots offered: the server keeps its own arguments)".to_string(),
        Roots::Client => "client (under serve, the client's roots; else the workspace root)".to_string(),
        Roots::Paths(paths) => Value::from(paths.clone()).to_string(),
    }
}

/// Connects `name` alone (every other server paused) and reads the revision it negotiated;
/// `None` when it did not connect (`mcp list` says why).
async fn negotiated_version(paths: &Paths, store: &GlobalStore, name: &str) -> Result<Option<String>> {
    let others: BTreeSet<String> =
        store.servers.iter().map(|def| def.name.clone()).filter(|other| other != name).collect();
    let resolved = toolport::load_resolved(paths, &others)?;
    let options = RuntimeOptions {
        cache_dir: Some(paths.cache_dir()),
        credentials: Some(paths.credentials()),
        ..Default::default()
    };
    let runtime = Runtime::start(resolved, options).await?;
    let version =
        runtime.status().into_iter().find(|row| row.name == name).and_then(|row| row.protocol_version);
    runtime.shutdown().await;
    Ok(version)
}

/// The definition with every env and header value, and the OAuth secrets, replaced by `***`.
fn masked(def: &ServerDef) -> ServerDef {
    let mask =
        |pairs: &[(String, String)]| pairs.iter().map(|(k, _)| (k.clone(), MASK.to_string())).collect();
    let secret = |v: &Option<String>| v.as_ref().map(|_| MASK.to_string());
    let oauth = def.oauth.as_ref().map(|o| toolport::OAuthDef {
        client_secret: secret(&o.client_secret),
        private_key: secret(&o.private_key),
        assertion: secret(&o.assertion),
        idp: o.idp.as_ref().map(|i| toolport::IdpDef {
            client_secret: secret(&i.client_secret),
            id_token: secret(&i.id_token),
            ..i.clone()
        }),
        ..o.clone()
    });
    ServerDef { env: mask(&def.env), headers: mask(&def.headers), oauth, ..def.clone() }
}
