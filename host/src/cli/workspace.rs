//! `toolport workspace set|unset namePolicy|toolShape|surface`: which name policy and tool shape
//! this workspace uses, and whether `serve` shows every tool or the lazy surface, written to
//! `<root>/.toolport/workspace.json` through the locked writer once the plugin is known to exist
//! and to be of that kind (or the surface to be `full` or `lazy`).

use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::Subcommand;

use super::ExitError;
use super::exit::edit_error;
use toolport::Paths;
use toolport::edit::{self, SURFACE_KEY, WorkspacePluginKey};
use toolport::plugins::PluginHost;
use toolport::store::{GlobalStore, Surface, WorkspaceSettings};

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

    /// The key as `workspace.json` spells it.
    fn name(self) -> &'static str {
        self.key().map_or(SURFACE_KEY, WorkspacePluginKey::as_str)
    }

    /// What an unset key means: the workspace file's own default.
    fn default(self) -> String {
        let defaults = WorkspaceSettings::default();
        match self.key() {
            Some(WorkspacePluginKey::NamePolicy) => {
                defaults.name_policy.unwrap_or_else(|| "none".to_string())
            }
            Some(WorkspacePluginKey::ToolShape) => defaults.tool_shape,
            None => defaults.surface.as_str().to_string(),
        }
    }
}

/// Runs a `workspace` subcommand.
pub async fn run(paths: &Paths, args: WorkspaceArgs) -> Result<ExitCode> {
    let file = paths.workspace_file();
    let root = &paths.workspace_root;
    match args.command {
        WorkspaceCommand::Set { key, plugin } => {
            let value = plugin.trim();
            let old = match key.key() {
                Some(plugin_key) => {
                    check_plugin(paths, plugin_key, value)?;
                    edit::set_workspace_plugin(root, plugin_key, Some(value))
                }
                None => {
                    let surface = Surface::parse(value).ok_or_else(|| {
                        ExitError::usage(format!("{SURFACE_KEY} \"{value}\": must be \"full\" or \"lazy\""))
                    })?;
                    edit::set_workspace_surface(root, Some(surface))
                }
            }
            .map_err(edit_error)?;
            let was = old.unwrap_or_else(|| key.default());
            println!("workspace {}: {value} (was {was}) -> {}", key.name(), file.display());
        }
        WorkspaceCommand::Unset { key } => {
            let old = match key.key() {
                Some(plugin_key) => edit::set_workspace_plugin(root, plugin_key, None),
                None => edit::set_workspace_surface(root, None),
            }
            .map_err(edit_error)?;
            let default = key.default();
            let was = old.unwrap_or_else(|| default.clone());
            println!(
                "workspace {}: unset, now the default {default} (was {was}) -> {}",
                key.name(),
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
