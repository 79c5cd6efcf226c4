//! The plugin host and its commands against real components: built-ins, name policies, the
//! `plugin` commands, plugins scaffolded or written in other languages, and sandboxed servers
//! (`type: wasm`).

mod cli;
mod cmds;
mod examples;
mod guards;
mod guards_entry;
mod guards_hostile;
mod host;
mod mistakes;
mod new;
mod policy;
mod wasm_builtins;
mod wasm_hostile;
mod wasm_python;
