//! `toolport mcp set NAME KEY VALUE…` and `toolport mcp unset NAME KEY`: one field of one
//! definition, edited by the library under the store's lock. A bad key or value is a usage
//! error (exit 2) naming the keys or the rule; an unknown server is `Unknown MCP server: NAME`
//! (exit 1). Secret values (`env.*`, `headers.*`) are printed as `***`, old and new.

use anyhow::Result;

use crate::cli::exit::{ExitError, edit_error};
use toolport::Paths;
use toolport::edit::{ServerField, set_server_field};

/// Sets the field and says what it is now and was: `mcp NAME: KEY = VALUE (was OLD) -> STORE`.
pub fn set(paths: &Paths, name: &str, key: &str, values: &[String]) -> Result<String> {
    let field = ServerField::parse(key).map_err(ExitError::usage)?;
    let value = field.value(values).map_err(ExitError::usage)?;
    let store = paths.store_file();
    let old = set_server_field(&store, name, &field, Some(value.clone())).map_err(edit_error)?;
    Ok(format!(
        "mcp {}: {} = {} (was {}) -> {}\n",
        name.trim(),
        field.key(),
        field.shown(Some(&value)),
        field.shown(old.as_ref()),
        store.display()
    ))
}

/// Removes the field: `mcp NAME: KEY unset (was OLD) -> STORE`.
pub fn unset(paths: &Paths, name: &str, key: &str) -> Result<String> {
    let field = ServerField::parse(key).map_err(ExitError::usage)?;
    let store = paths.store_file();
    let old = set_server_field(&store, name, &field, None).map_err(edit_error)?;
    Ok(format!(
        "mcp {}: {} unset (was {}) -> {}\n",
        name.trim(),
        field.key(),
        field.shown(old.as_ref()),
        store.display()
    ))
}
