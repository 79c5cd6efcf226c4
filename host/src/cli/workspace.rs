//! `toolport workspace set|unset namePolicy|toolShape|surface`: which name policy and tool shape
//! this workspace uses, and whether `serve` shows every tool or the lazy surface, written to
//! `<root>/.toolport/workspace.json` through the locked writer once the plugin is known to exist
//! and to be of that kind (or the surface to be `full` or `lazy`).

use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::Subcommand;

use super::ExitError;
use super::mcp::edit_error;
use toolport::{GlobalStore, Paths, PluginHost, SURFACE_KEY, Surface, WorkspacePluginKey, WorkspaceSettings};

/// `toolport workspace <subcommand>`.
#[derive(Debug, clap::Args)]
pub struct WorkspaceArgs {
    #[command(subcommand)]
    command: WorkspaceCommand,
}

#[derive(Debug, Subcommand)]
enum WorkspaceCommand {
    /// Use a plugin (built-in or configured) as this workspace's name policy or tool shape, or
    /// choose the surface `serve` shows (`full` or `lazy`).
    #[command(
        after_help = "Examples: toolport workspace set namePolicy namespace\n          toolport workspace set surface lazy"
    )]
    Set {
        /// The workspace key.
        #[arg(value_enum)]
        key: KeyArg,
        /// The plugin's name (for `surface`: `full` or `lazy`).
        #[arg(value_name = "PLUGIN")]
        plugin: String,
    },
    /// Go back to the default: no name policy; the `openai` tool shape; the `full` surface.
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
    #[value(name = "surface")]
    Surface,
}

impl KeyArg {
    /// The plugin key, or `None` for `surface` (which names no plugin).
    fn key(self) -> Option<WorkspacePluginKey> {
        match self {
            Self::NamePolicy => Some(WorkspacePluginKey::NamePolicy),
            Self::ToolShape => Some(WorkspacePluginKey::ToolShape),
            Self::Surface => None,
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
    let root = &paths.workspace_root;
    match args.command {
        WorkspaceCommand::Set { key, plugin } => {
            let value = plugin.trim();
            let (name, old, default) = match key.key() {
                Some(key) => {
                    check_plugin(paths, key, value)?;
                    let old = toolport::set_workspace_plugin(root, key, Some(value)).map_err(edit_error)?;
                    (key.as_str(), old, default_of(key))
                }
                None => {
                    let surface = Surface::parse(value).ok_or_else(|| {
                        ExitError::usage(format!("{SURFACE_KEY} \"{value}\": must be \"full\" or \"lazy\""))
                    })?;
                    let old = toolport::set_workspace_surface(root, Some(surface)).map_err(edit_error)?;
                    (SURFACE_KEY, old, WorkspaceSettings::default().surface.as_str().to_string())
                }
            };
            let was = old.unwrap_or(default);
            println!("workspace {name}: {value} (was {was}) -> {}", file.display());
        }
        WorkspaceCommand::Unset { key } => {
            let (name, old, default) = match key.key() {
                Some(key) => {
                    let old = toolport::set_workspace_plugin(root, key, None).map_err(edit_error)?;
                    (key.as_str(), old, default_of(key))
                }
                None => {
                    let old = toolport::set_workspace_surface(root, None).map_err(edit_error)?;
                    (SURFACE_KEY, old, WorkspaceSettings::default().surface.as_str().to_string())
                }
            };
            let was = old.unwrap_or_else(|| default.clone());
            println!("workspace {name}: unset, now the default {default} (was {was}) -> {}", file.display());
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
