//! `toolport workspace set|unset namePolicy|toolShape`: which name policy and tool shape this
//! workspace uses, written to `<root>/.toolport/workspace.json` through the locked writer once
//! the plugin is known to exist and to be of that kind.

use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::Subcommand;

use super::ExitError;
use super::mcp::edit_error;
use toolport::{GlobalStore, Paths, PluginHost, WorkspacePluginKey, WorkspaceSettings};

/// `toolport workspace <subcommand>`.
#[derive(Debug, clap::Args)]
pub struct WorkspaceArgs {
    #[command(subcommand)]
    command: WorkspaceCommand,
}

#[derive(Debug, Subcommand)]
enum WorkspaceCommand {
    /// Use a plugin (built-in or configured) as this workspace's name policy or tool shape.
    #[command(after_help = "Example: toolport workspace set namePolicy namespace")]
    Set {
        /// The workspace key.
        #[arg(value_enum)]
        key: KeyArg,
        /// The plugin's name.
        #[arg(value_name = "PLUGIN")]
        plugin: String,
    },
    /// Go back to the default: no name policy; the `openai` tool shape.
    Unset {
        /// The workspace key.
        #[arg(value_enum)]
        key: KeyArg,
    },
}

/// The keys, as `workspace.json` spells them (the kinds' spelling is accepted too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum KeyArg {
    #[value(name = "namePolicy", alias = "name-policy")]
    NamePolicy,
    #[value(name = "toolShape", alias = "tool-shape")]
    ToolShape,
}

impl KeyArg {
    fn key(self) -> WorkspacePluginKey {
        match self {
            Self::NamePolicy => WorkspacePluginKey::NamePolicy,
            Self::ToolShape => WorkspacePluginKey::ToolShape,
        }
    }
}

/// What an unset key means: the workspace file's own default.
fn default_of(key: WorkspacePluginKey) -> String {
    let defaults = WorkspaceSettings::default();
    match key {
        WorkspacePluginKey::NamePolicy => defaults.name_policy.unwrap_or_else(|| "none".to_string()),
        WorkspacePluginKey::ToolShape => defaults.tool_shape,
    }
}

/// Runs a `workspace` subcommand.
pub async fn run(paths: &Paths, args: WorkspaceArgs) -> Result<ExitCode> {
    let file = paths.workspace_file();
    match args.command {
        WorkspaceCommand::Set { key, plugin } => {
            let key = key.key();
            let plugin = plugin.trim();
            check_plugin(paths, key, plugin)?;
            let old = toolport::set_workspace_plugin(&paths.workspace_root, key, Some(plugin))
                .map_err(edit_error)?;
            let was = old.unwrap_or_else(|| default_of(key));
            println!("workspace {}: {plugin} (was {was}) -> {}", key.as_str(), file.display());
        }
        WorkspaceCommand::Unset { key } => {
            let key = key.key();
            let old = toolport::set_workspace_plugin(&paths.workspace_root, key, None).map_err(edit_error)?;
            let default = default_of(key);
            let was = old.unwrap_or_else(|| default.clone());
            println!(
                "workspace {}: unset, now the default {default} (was {was}) -> {}",
                key.as_str(),
                file.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Refuses a plugin that does not exist or is of another kind, naming what would fit (the
/// words of the check every command makes on the workspace file).
fn check_plugin(paths: &Paths, key: WorkspacePluginKey, plugin: &str) -> Result<()> {
    let store = GlobalStore::load(&paths.store_file())?;
    let host = PluginHost::new(None, &store.plugins).context("cannot start the plugin host")?;
    match host.misfit(plugin, key.kind()) {
        None => Ok(()),
        Some(problem) => Err(ExitError::usage(format!("{} \"{plugin}\": {problem}", key.as_str())).into()),
    }
}
