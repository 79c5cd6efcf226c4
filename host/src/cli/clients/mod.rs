//! Other agents' config files: `toolport install` writes the entry that starts `toolport
//! serve` into a client's file, `toolport mcp import` copies a client's servers into the
//! global store. Where each client keeps its servers is [`Client::config_file`].
//!
//! Writes go through `config/write.rs` like every other; the formats' editors here (a JSONC
//! syntax tree, `toml_edit`) change only the entry at stake, so the rest of the user's file —
//! other keys, order, comments — is left byte for byte.

mod cautions;
mod client;
mod codex_toml;
mod import;
mod install;
mod json_file;
mod mapping;
mod on_path;

pub use cautions::ImportCaution;
pub use client::{Client, ClientHomes, ClientScope, InstallOutcome, Launch};
pub use import::{ImportOutcome, ImportReport, ImportRequest, import};
pub use install::{InstallRequest, install};
pub use on_path::{NotOnPath, command_on_path};
