//! `toolport mcp import`: a client's server definitions copied into toolport's global store,
//! each through [`add_server`] (validated, locked, atomic). Values are copied as text: a
//! `${VAR}` stays `${VAR}` for toolport to expand at connect time, never now.
//!
//! A project file (`.mcp.json`, `.vscode/mcp.json`, … — what a cloned repository brings) is
//! its author's text, not the user's: each server of one that runs a command or reads the
//! environment is reported as an [`ImportCaution`], and `--enable` leaves such a server
//! disabled unless the user says `--trust`. The user's own client files are imported as before.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::Value;

use super::cautions::{ImportCaution, cautions};
use super::client::{Client, ClientHomes, ClientScope, Format};
use super::mapping::to_store;
use super::{codex_toml, json_file};
use toolport::edit::{EditError, add_server, enable_server};
use toolport::{ConfigError, Paths};

/// What to import from where.
#[derive(Debug, Clone)]
pub struct ImportRequest {
    /// The client whose servers are read.
    pub client: Client,
    /// Its user file, this project's, or Claude Code's local scope; `None`: the client's
    /// [`Client::default_import_scopes`]. With `file`, which part of that file is read.
    pub scope: Option<ClientScope>,
    /// Read this file instead of the client's usual one.
    pub file: Option<PathBuf>,
    /// Also enable each imported server in this workspace.
    pub enable: bool,
    /// With `enable`, also enable a project file's servers that have an [`ImportCaution`]: the
    /// user has read the file and vouches for it. Without it they are imported, left disabled.
    pub trust: bool,
    /// The running toolport binary: an entry that starts it is toolport itself, not imported.
    pub self_exe: Option<PathBuf>,
}

/// The file an import read and what became of each of its servers, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportReport {
    /// The file read.
    pub file: PathBuf,
    /// One line per server found.
    pub lines: Vec<ImportLine>,
}

/// One server of the client's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportLine {
    /// Its name in the client's file, trimmed as the store keeps it; a blank name as written
    /// (so the view can quote it: an empty name says nothing of which entry was skipped).
    pub name: String,
    /// Imported or skipped, and why.
    pub outcome: ImportOutcome,
}

/// What became of one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportOutcome {
    /// Added to the store.
    Imported {
        /// `stdio`, `http` or `sse`.
        transport: &'static str,
        /// Whether it was also enabled in this workspace.
        enabled: bool,
        /// The client's file turns it off (Codex's `enabled = false`): the user's choice, so
        /// `--enable` leaves it disabled here too.
        off_in_client: bool,
        /// What the user should know: fields toolport has no place for, client-only
        /// variables kept as text. Never a value.
        notes: Vec<String>,
        /// What a project file's server does once enabled that its author, not the user,
        /// chose; empty for the user's own files.
        cautions: Vec<ImportCaution>,
        /// `--enable` without `--trust` left it disabled because of its cautions.
        held_back: bool,
    },
    /// Not added; the reason reads after the name (`skipped: NAME <reason>`).
    Skipped(String),
}

/// Copies the client's servers into the store. A missing or malformed file is an error and
/// changes nothing; a server that cannot be mapped, whose name or definition `mcp add` would
/// refuse, that the store already has, or that is toolport itself is skipped with its reason
/// and the rest go on. A project file's servers carry their [`ImportCaution`]s, and `enable`
/// passes over the ones with any unless `trust`.
pub fn import(paths: &Paths, homes: &ClientHomes, req: &ImportRequest) -> Result<ImportReport, EditError> {
    let scopes = match req.scope {
        Some(scope) => vec![scope],
        None => req.client.default_import_scopes().to_vec(),
    };
    // Every scope of one import is in the same file (Claude Code's local and user scopes are
    // both `~/.claude.json`).
    let file = match &req.file {
        Some(f) => f.clone(),
        None => req.client.config_file(scopes[0], homes)?,
    };
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let names: Vec<_> = scopes.iter().map(|s| s.name()).collect();
            return Err(anyhow::anyhow!(
                "{}: no such file ({} keeps its {} servers there; pass --file PATH for another)",
                file.display(),
                req.client,
                names.join(" and ")
            )
            .into());
        }
        Err(e) => return Err(ConfigError(format!("{}: cannot read: {e}", file.display())).into()),
    };
    let mut servers = Vec::new();
    for scope in &scopes {
        servers.extend(read_servers(req.client, *scope, homes, &file, &text)?);
    }
    let project = is_project_file(&scopes, req.file.is_some(), &file, &paths.workspace_root);
    let store = paths.store_file();
    let mut lines = Vec::new();
    for (name, entry) in &servers {
        let outcome = if is_toolport(entry, req.self_exe.as_deref()) {
            ImportOutcome::Skipped("is toolport itself".into())
        } else {
            match to_store(req.client, entry) {
                Err(why) => ImportOutcome::Skipped(format!("cannot be imported: {why}")),
                // `add_server` is `mcp add`'s own check of the name and the definition: a name
                // it refuses is this entry's `skipped:` line, and the rest go on.
                Ok(mapped) => match add_server(&store, name, &mapped.def) {
                    Ok(()) => {
                        let cautions = if project { cautions(name, &mapped) } else { Vec::new() };
                        ImportOutcome::Imported {
                            transport: mapped.transport,
                            enabled: false,
                            off_in_client: mapped.off_in_client,
                            notes: mapped.notes,
                            held_back: req.enable && !req.trust && !cautions.is_empty(),
                            cautions,
                        }
                    }
                    Err(EditError::AlreadyExists(_)) => ImportOutcome::Skipped("already defined".into()),
                    Err(EditError::Config(e)) => ImportOutcome::Skipped(format!("cannot be imported: {e}")),
                    Err(e) => return Err(e),
                },
            }
        };
        let trimmed = name.trim();
        let name = if trimmed.is_empty() { name.clone() } else { trimmed.to_string() };
        lines.push(ImportLine { name, outcome });
    }
    if req.enable {
        for line in &mut lines {
            if let ImportOutcome::Imported { enabled, off_in_client: false, held_back: false, .. } =
                &mut line.outcome
            {
                enable_server(paths, &line.name)
                    .with_context(|| format!("imported {} but cannot enable it", line.name))?;
                *enabled = true;
            }
        }
    }
    Ok(ImportReport { file, lines })
}

/// Whether `file` came with the workspace rather than from the user's own settings: the
/// client's project scope, or a `--file` inside the workspace root (a repository's
/// `.mcp.json` read with `--file`, whatever `--scope` says). Paths are compared once links
/// are resolved, so `./.mcp.json` and a link into the root count too. A `--file` elsewhere is
/// a file the user pointed at, imported as their own, as before.
fn is_project_file(scopes: &[ClientScope], given: bool, file: &Path, root: &Path) -> bool {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    scopes.contains(&ClientScope::Project) || (given && real(file).starts_with(real(root)))
}

/// The client's servers in `scope` as JSON objects, in file order.
fn read_servers(
    client: Client,
    scope: ClientScope,
    homes: &ClientHomes,
    file: &Path,
    text: &str,
) -> Result<Vec<(String, Value)>, ConfigError> {
    let servers = match client.format() {
        Format::Json { comments, trailing_commas, .. } => {
            let dialect = json_file::Dialect { comments, trailing_commas };
            json_file::parse(file, Some(text), dialect)?.servers(file, &client.servers_path(scope, homes))?
        }
        Format::CodexToml => codex_toml::servers(file, &codex_toml::parse(file, Some(text))?)?,
    };
    Ok(servers.into_iter().collect())
}

/// An entry that starts toolport's `serve`: the one `install` wrote (here or by another copy
/// of toolport). Importing it would make toolport serve itself.
fn is_toolport(entry: &Value, self_exe: Option<&Path>) -> bool {
    let Some(command) = entry.get("command").and_then(Value::as_str) else { return false };
    let ours = self_exe.is_some_and(|exe| Path::new(command) == exe)
        || Path::new(command).file_stem().is_some_and(|s| s == "toolport");
    let serves = entry
        .get("args")
        .and_then(Value::as_array)
        .is_some_and(|args| args.iter().any(|a| a.as_str() == Some("serve")));
    ours && serves
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn project_files_are_the_project_scope_or_a_given_file_inside_the_workspace() {
        let root = Path::new("/nonexistent/ws");
        let inside = Path::new("/nonexistent/ws/.mcp.json");
        let outside = Path::new("/nonexistent/home/.claude.json");
        assert!(is_project_file(&[ClientScope::Project], false, inside, root));
        assert!(is_project_file(&[ClientScope::Project], true, outside, root));
        assert!(is_project_file(&[ClientScope::Local, ClientScope::User], true, inside, root));
        assert!(!is_project_file(&[ClientScope::Local, ClientScope::User], true, outside, root));
        assert!(!is_project_file(&[ClientScope::User], false, inside, root), "the user's own file");
    }

    #[test]
    fn toolport_itself_is_recognised() {
        let exe = Path::new("/opt/bin/tp");
        assert!(is_toolport(&json!({"command":"/opt/bin/tp","args":["serve"]}), Some(exe)));
        assert!(is_toolport(
            &json!({"command":"/usr/bin/toolport","args":["serve","--home","/h"]}),
            Some(exe)
        ));
        assert!(!is_toolport(&json!({"command":"/usr/bin/toolport","args":["demo-server"]}), Some(exe)));
        assert!(!is_toolport(&json!({"command":"npx","args":["serve"]}), Some(exe)));
    }
}
