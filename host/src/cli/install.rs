//! `toolport install --client NAME`: adopt toolport in an agent by writing the entry that
//! starts `toolport serve` into that agent's own config file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser as _};

use super::ExitError;
use super::clients::{self, Client, ClientHomes, ClientScope, InstallOutcome, InstallRequest, Launch};
use toolport::Paths;

/// `toolport install --client <name> [--scope user|project|local] [--name NAME] [--force]`.
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The agent whose config file gets the entry.
    #[arg(long, value_parser = client_parser())]
    pub client: Client,
    /// The user's file (every project), this workspace's (shared), or Claude Code's local
    /// scope (the user's file, this workspace only).
    #[arg(long, default_value = "user", value_parser = scope_parser())]
    pub scope: ClientScope,
    /// The entry's name in the client's file.
    #[arg(long, default_value = "toolport")]
    pub name: String,
    /// Replace an entry of that name that differs.
    #[arg(long)]
    pub force: bool,
}

/// `--client` values: the library's clients, named in the help and the "possible values" error.
pub fn client_parser() -> impl clap::builder::TypedValueParser<Value = Client> {
    PossibleValuesParser::new(Client::ALL.map(Client::name)).try_map(|s| s.parse::<Client>())
}

/// `--scope` values.
pub fn scope_parser() -> impl clap::builder::TypedValueParser<Value = ClientScope> {
    PossibleValuesParser::new(["user", "project", "local"]).try_map(|s| s.parse::<ClientScope>())
}

/// Writes the entry and says what happened; a different entry of that name exits 1.
pub async fn run(paths: &Paths, args: InstallArgs) -> Result<ExitCode> {
    let exe = std::env::current_exe().context("cannot find the path of the running toolport")?;
    let homes = ClientHomes::from_env(&paths.workspace_root)?;
    let home = explicit_home(paths);
    let mut launch = Launch::serve(&exe, home.as_deref());
    // A project file travels with the project: it names toolport as PATH finds it, where that
    // is this binary. The user's own files keep the absolute path, which needs no PATH (a
    // desktop app or an editor often starts servers with a bare one).
    let shared = args.scope == ClientScope::Project;
    let on_path = shared.then(|| clients::command_on_path(&exe, std::env::var_os("PATH").as_deref()));
    if let Some(Ok(name)) = &on_path {
        launch.command = name.clone();
    }
    let req =
        InstallRequest { client: args.client, scope: args.scope, name: args.name, launch, force: args.force };
    let done = clients::install(paths, &homes, &req).map_err(super::exit::edit_error)?;
    let (name, file) = (req.name.trim(), done.file.display());
    let at = format!("({}, {} scope)", req.client, req.scope.name());
    match done.outcome {
        InstallOutcome::Added => println!("installed: {name} -> {file} {at}"),
        InstallOutcome::Replaced => println!("replaced: {name} -> {file} {at}"),
        InstallOutcome::Unchanged => println!("already installed: {name} in {file}"),
        InstallOutcome::Conflict => {
            return Err(ExitError::failure(format!(
                "{file} already has a different \"{name}\" entry: pass --force to replace it, \
                 or --name to install under another name"
            ))
            .into());
        }
    }
    if let Some(Err(why)) = &on_path {
        let (cmd, scope) = (req.launch.command.as_str(), req.scope.name());
        let problem = match why {
            clients::NotOnPath::Missing { name } => format!("\"{name}\" is not on PATH"),
            clients::NotOnPath::Other { name, found } => {
                format!("\"{name}\" on PATH is another binary, {}", found.display())
            }
        };
        eprintln!(
            "toolport: warning: {file} is meant to be shared, but its \"{name}\" entry names {cmd}, \
             a path that will not exist on a teammate's machine: {problem}. Put this toolport on PATH, \
             then run `toolport install --client {} --scope {scope} --force` again",
            req.client
        );
    }
    if shared && let Some(home) = &home {
        eprintln!(
            "toolport: warning: {file}'s \"{name}\" entry passes --home {}, a folder on this machine \
             only: a teammate's toolport would use it too. Install from toolport's default home \
             (~/.toolport, no --home or $TOOLPORT_HOME) for an entry without it",
            home.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// toolport's home when it is not the one `serve` would find by itself (`--home` or
/// `$TOOLPORT_HOME`, which the client will not pass): the entry must then name it.
fn explicit_home(paths: &Paths) -> Option<PathBuf> {
    let default = std::env::home_dir().map(|h| h.join(".toolport"));
    (default.as_deref() != Some(Path::new(&paths.home))).then(|| paths.home.clone())
}
