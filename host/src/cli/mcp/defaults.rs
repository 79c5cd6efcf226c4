//! `toolport mcp default [sandbox [on|off]]`: the store's `defaults` for servers added from now
//! on, shown (`sandbox: off`) or set by the library under the store's lock
//! (`mcp default sandbox: on (was off) -> STORE`, the shape of `workspace set`'s line).

use anyhow::Result;

use crate::cli::exit::edit_error;
use toolport::Paths;
use toolport::edit::set_default_sandbox;
use toolport::store::GlobalStore;

/// The defaults there are, as `mcp default` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DefaultKey {
    /// Every stdio server added is written with `"sandbox": true`.
    Sandbox,
}

/// A default's value; `true` and `false` as `mcp set … sandbox` spells them are taken too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    #[value(alias = "true")]
    On,
    #[value(alias = "false")]
    Off,
}

/// `on` or `off`.
fn word(on: bool) -> &'static str {
    if on { "on" } else { "off" }
}

/// Shows every default (no key), one, or sets one.
pub fn run(paths: &Paths, key: Option<DefaultKey>, value: Option<OnOff>) -> Result<String> {
    let store = paths.store_file();
    match (key, value) {
        (_, None) => {
            let defaults = GlobalStore::load(&store)?.defaults;
            Ok(format!("sandbox: {}\n", word(defaults.sandbox)))
        }
        (_, Some(value)) => {
            let on = value == OnOff::On;
            let was = set_default_sandbox(&store, on).map_err(edit_error)?;
            Ok(format!("mcp default sandbox: {} (was {}) -> {}\n", word(on), word(was), store.display()))
        }
    }
}
