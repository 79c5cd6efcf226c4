//! `toolport install --client NAME`: adopt toolport in an agent by writing the entry that
//! starts `toolport serve` into that agent's own config file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser as _};

use super::ExitError;
use toolport::{Client, ClientHomes, ClientScope, InstallOutcome, InstallRequest, Launch, Paths};

/// `toolport install --client <name> [--scope user|project] [--name NAME] [--force]`.
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The agent whose config file gets the entry.
    #[arg(long, value_parser = client_parser())]
    pub client: Client,
    /// The user's file (every project) or this workspace's.
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
    PossibleValuesParser::new(["user", "project"]).try_map(|s| s.parse::<ClientScope>())
}

/// Writes the entry and says what happened; a different entry of that name exits 1.
pub async fn run(paths: &Paths, args: InstallArgs) -> Result<ExitCode> {
    let exe = std::env::current_exe().context("cannot find the path of the running toolport")?;
    let homes = ClientHomes::from_env(&paths.workspace_root)?;
    let launch = Launch::serve(&exe, explicit_home(paths).as_deref());
    let req =
        InstallRequest { client: args.client, scope: args.scope, name: args.name, launch, force: args.force };
    let done = toolport::install_client(paths, &homes, &req).map_err(super::mcp::edit_error)?;
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
    Ok(ExitCode::SUCCESS)
}

/// toolport's home when it is not the one `serve` would find by itself (`--home` or
/// `$TOOLPORT_HOME`, which the client will not pass): the entry must then name it.
fn explicit_home(paths: &Paths) -> Option<PathBuf> {
    let default = std::env::home_dir().map(|h| h.join(".toolport"));
    (default.as_deref() != Some(Path::new(&paths.home))).then(|| paths.home.clone())
}
