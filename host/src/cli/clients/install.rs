//! `toolport install`: toolport's own entry written into a client's config file, through the
//! same locked, atomic write as toolport's files (`config/write.rs`), by the file's format
//! editor, so nothing else in the file changes.

use std::path::PathBuf;

use super::client::{Client, ClientHomes, ClientScope, Format, InstallOutcome, Launch};
use super::{codex_toml, json_file};
use toolport::edit::{EditError, LockAt, edit_text, refuse_links_out};
use toolport::{ConfigError, Paths};

/// The folder in toolport's home that holds the locks of other programs' files.
pub(crate) const LOCKS_DIR: &str = "locks";

/// What to install where.
#[derive(Debug, Clone)]
pub struct InstallRequest {
    /// The client whose file gets the entry.
    pub client: Client,
    /// Its user file or this project's.
    pub scope: ClientScope,
    /// The entry's name (`toolport` unless `--name`).
    pub name: String,
    /// What the entry starts.
    pub launch: Launch,
    /// Replace a different entry of the same name.
    pub force: bool,
}

/// The file an install looked at and what it did there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The client's file (as named, before following a symlink).
    pub file: PathBuf,
    /// Added, replaced, already there, or refused.
    pub outcome: InstallOutcome,
}

/// Writes `req`'s entry into the client's file for `req.scope`. A malformed file is a
/// [`ConfigError`] naming its line and column, and nothing is written; so is a
/// [`InstallOutcome::Conflict`] (the caller says what to do).
pub fn install(paths: &Paths, homes: &ClientHomes, req: &InstallRequest) -> Result<Installed, EditError> {
    let name = req.name.trim();
    if name.is_empty() {
        return Err(ConfigError("the entry's name must not be blank".into()).into());
    }
    let file = req.client.config_file(req.scope, homes)?;
    // A project's file came with the project (a cloned repository): a symlink in it must not
    // turn the install into a write outside the workspace. The user's own files are theirs to
    // link anywhere (a dotfiles repository), as toolport's store is.
    if req.scope == ClientScope::Project {
        refuse_links_out(&homes.workspace_root, &file)?;
    }
    let entry = req.launch.entry(req.client);
    let locks = paths.home.join(LOCKS_DIR);
    let outcome = edit_text(&file, LockAt::In(&locks), |path, text| match req.client.format() {
        Format::Json { comments, trailing_commas, .. } => {
            let mut doc = json_file::parse(path, text, json_file::Dialect { comments, trailing_commas })?;
            let keys = req.client.servers_path(req.scope, homes);
            let outcome = doc.put_server(path, &keys, name, &entry, req.force)?;
            Ok((changed(&outcome).then(|| doc.render()), outcome))
        }
        Format::CodexToml => {
            let mut doc = codex_toml::parse(path, text)?;
            let outcome = codex_toml::put_server(path, &mut doc, name, &entry, req.force)?;
            Ok((changed(&outcome).then(|| doc.to_string().into_bytes()), outcome))
        }
    })?;
    Ok(Installed { file, outcome })
}

fn changed(outcome: &InstallOutcome) -> bool {
    matches!(outcome, InstallOutcome::Added | InstallOutcome::Replaced)
}
