//! The config files and the commands that edit them: `mcp` and its grants and pins, the
//! environment a stdio server inherits, linked stores, and the workspace's discovery and
//! plugin settings.

mod cmds;
mod env;
mod files;
mod grants;
mod links;
mod server_fields;
mod workspace_gitignore;
mod workspace_owner;
mod workspace_plugins;
