//! The config files and the commands that edit them: `mcp` and its grants and pins, a `stdio`
//! server's OS sandbox and the store's default for it, the environment a stdio server
//! inherits, linked stores, the workspace's discovery and plugin settings, and the `guards`
//! lists of both files.

mod cmds;
mod env;
mod files;
mod grants;
mod guards;
mod links;
mod native_sandbox;
mod server_fields;
mod workspace_gitignore;
mod workspace_owner;
mod workspace_plugins;
