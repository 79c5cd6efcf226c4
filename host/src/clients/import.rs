//! `toolport mcp import`: a client's server definitions copied into toolport's global store,
//! each through [`add_server`] (validated, locked, atomic). Values are copied as text: a
//! `${VAR}` stays `${VAR}` for toolport to expand at connect time, never now.
//!
//! A project file (`.mcp.json`, `.vscode/mcp.json`, … — what a cloned repository brings) is
//! its author's text, not the user's: each server of one that runs a command or reads the
//! environment is reported as an [`ImportCaution`], and `--enable` leaves such a server
//! disabled unless the user says `--trust`. The user's own client files are imported as before.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::{Map, Value};

use super::client::{Client, ClientHomes, ClientScope, Format};
use super::{codex_toml, json_file};
use crate::config::{ConfigError, EditError, ServerDef, add_server, enable_server};
use crate::paths::Paths;

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

/// What a server from a project file will do when it connects, said before it ever does: a
/// cloned repository's `.mcp.json` with `"Authorization": "Bearer ${GITHUB_TOKEN}"` sends the
/// user's token to the author's URL, and a stdio entry runs the author's program as the user.
/// Names only, never a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportCaution {
    /// It runs `command` with `args` (as written) as the user, with toolport's environment.
    RunsCommand {
        /// The program.
        command: String,
        /// Its arguments, `${VAR}` unexpanded.
        args: Vec<String>,
    },
    /// It reads these environment variables (in the order toolport expands them) and sends
    /// their values to `url`, or to the command it runs when `url` is `None` (stdio).
    ReadsEnv {
        /// The variable names, each once.
        vars: Vec<String>,
        /// The server's URL as written (a remote server).
        url: Option<String>,
    },
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

/// What one imported server of a project file will do when it connects. The variables are
/// the ones [`ServerDef::expanded`] — the connect path's own expansion, not a copy of its
/// grammar — looks up, every one answered as set; a definition it refuses never connects,
/// so it sends nothing.
fn cautions(name: &str, mapped: &Mapped) -> Vec<ImportCaution> {
    // `add_server` has just read this very definition; should it ever not read, the server
    // could not connect either.
    let Ok(def) = ServerDef::from_json(name.trim(), &Value::Object(mapped.def.clone())) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(command) = &def.command {
        out.push(ImportCaution::RunsCommand { command: command.clone(), args: def.args.clone() });
    }
    let read = RefCell::new(Vec::<String>::new());
    let expanded = def.expanded(|var| {
        let mut read = read.borrow_mut();
        if !read.iter().any(|v| v == var) {
            read.push(var.to_string());
        }
        Some(String::new())
    });
    let vars = read.into_inner();
    if expanded.is_ok() && !vars.is_empty() {
        let url = if def.command.is_some() { None } else { def.url.clone() };
        out.push(ImportCaution::ReadsEnv { vars, url });
    }
    out
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

/// One server in toolport's store format.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mapped {
    pub def: Map<String, Value>,
    pub transport: &'static str,
    pub notes: Vec<String>,
    /// The client's entry turns the server off (Codex's `enabled = false`).
    pub off_in_client: bool,
}

/// Maps one of `client`'s entries to a store definition: stdio `{type, command, args, env,
/// cwd}`, remote `{type: http|sse, url, headers}`, timeouts where the client has them. Fields
/// toolport has no place for are named in a note; type errors are left to [`add_server`]'s
/// validation, which names the field.
pub(crate) fn to_store(client: Client, entry: &Value) -> Result<Mapped, String> {
    let obj = entry.as_object().ok_or("the definition is not an object")?;
    let has = |k: &str| obj.get(k).is_some_and(|v| !v.is_null());
    let declared = obj.get("type").and_then(Value::as_str).map(|t| t.trim().to_ascii_lowercase());
    let is_http = |t: &str| matches!(t, "http" | "streamable-http" | "streamable_http" | "streamablehttp");
    // (transport, the key holding the URL)
    let (transport, url_key) = match client {
        Client::Gemini if has("command") => ("stdio", None),
        // Gemini: `httpUrl` is streamable HTTP, `url` is SSE unless a `type` says otherwise.
        Client::Gemini if has("httpUrl") => ("http", Some("httpUrl")),
        Client::Gemini if has("url") => match declared.as_deref() {
            Some(t) if is_http(t) => ("http", Some("url")),
            _ => ("sse", Some("url")),
        },
        Client::Gemini => return Err("it has no command, url or httpUrl".into()),
        Client::Codex if has("command") => ("stdio", None),
        Client::Codex if has("url") => ("http", Some("url")),
        Client::Codex => return Err("it has no command or url".into()),
        _ => match declared.as_deref() {
            Some("stdio") => ("stdio", None),
            Some("sse") => ("sse", Some("url")),
            Some(t) if is_http(t) => ("http", Some("url")),
            Some(other) => return Err(format!("type \"{other}\" has no toolport equivalent")),
            None if has("command") => ("stdio", None),
            // A bare `url` (Cursor, Claude Desktop): today's servers speak streamable HTTP.
            None if has("url") => ("http", Some("url")),
            None => return Err("it has no command or url".into()),
        },
    };
    let mut used = vec!["type"];
    let mut def = Map::new();
    def.insert("type".into(), transport.into());
    let mut copy = |def: &mut Map<String, Value>, from: &'static str, to: &str| {
        if let Some(v) = obj.get(from).filter(|v| !v.is_null()) {
            def.insert(to.into(), v.clone());
        }
        used.push(from);
    };
    match url_key {
        None => {
            if !has("command") {
                return Err("a stdio server without a command".into());
            }
            for key in ["command", "args", "env", "cwd"] {
                copy(&mut def, key, key);
            }
        }
        Some(url_key) => {
            copy(&mut def, url_key, "url");
            if client == Client::Codex {
                copy(&mut def, "http_headers", "headers");
            } else {
                copy(&mut def, "headers", "headers");
            }
        }
    }
    let mut off_in_client = false;
    if client == Client::Codex {
        codex_extras(obj, &mut def, &mut used)?;
        // Codex's own switch: the server stays defined, and off.
        off_in_client = obj.get("enabled") == Some(&Value::Bool(false));
        used.push("enabled");
    }
    let mut timeouts = Map::new();
    match client {
        // Gemini's `timeout` is each request's, in milliseconds.
        Client::Gemini => {
            if let Some(ms) = obj.get("timeout").filter(|v| !v.is_null()) {
                timeouts.insert("callMs".into(), ms.clone());
            }
            used.push("timeout");
        }
        Client::Codex => {
            for (key, to) in [("startup_timeout_sec", "connectMs"), ("tool_timeout_sec", "callMs")] {
                if let Some(s) = obj.get(key).and_then(Value::as_f64) {
                    timeouts.insert(to.into(), ((s * 1000.0).round() as u64).into());
                }
                used.push(key);
            }
        }
        _ => {}
    }
    if !timeouts.is_empty() {
        def.insert("timeouts".into(), Value::Object(timeouts));
    }
    let filter_keys = match client {
        Client::Gemini => Some(("includeTools", "excludeTools")),
        Client::Codex => Some(("enabled_tools", "disabled_tools")),
        _ => None,
    };
    if let Some((include, exclude)) = filter_keys {
        let mut tools = Map::new();
        for (from, to) in [(include, "include"), (exclude, "exclude")] {
            if let Some(names) = obj.get(from).filter(|v| !v.is_null()) {
                tools.insert(to.into(), literal_globs(names));
            }
            used.push(from);
        }
        if !tools.is_empty() {
            def.insert("tools".into(), Value::Object(tools));
        }
    }
    let mut notes = Vec::new();
    let dropped: Vec<&str> = obj.keys().map(String::as_str).filter(|k| !used.contains(k)).collect();
    if !dropped.is_empty() {
        notes.push(format!("not carried over: {}", dropped.join(", ")));
    }
    if mentions_client_variables(&Value::Object(def.clone())) {
        notes.push(format!(
            "uses {client}'s own ${{…}} variables, kept as text: toolport expands only ${{VAR}} from the environment"
        ));
    }
    Ok(Mapped { def, transport, notes, off_in_client })
}

/// A client's list of exact tool names as globs that match only those names (a name with a
/// `*` or `[` in it means the character). Anything but strings is left for the store's
/// validation to name. Not `globset::escape`: it leaves `\` as it is, and our filters read `\`
/// as an escape (`config/tool_filter.rs`).
fn literal_globs(names: &Value) -> Value {
    let Some(list) = names.as_array() else { return names.clone() };
    let escape = |name: &str| {
        name.chars().fold(String::new(), |mut out, c| {
            if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
                out.push('\\');
            }
            out.push(c);
            out
        })
    };
    Value::Array(list.iter().map(|v| v.as_str().map_or_else(|| v.clone(), |n| escape(n).into())).collect())
}

/// Codex's header sources beside `http_headers`: `env_http_headers` (header → variable) and
/// `bearer_token_env_var`, both written as `${VAR}` text for toolport to expand.
fn codex_extras(
    obj: &Map<String, Value>,
    def: &mut Map<String, Value>,
    used: &mut Vec<&'static str>,
) -> Result<(), String> {
    used.extend(["env_http_headers", "bearer_token_env_var"]);
    let mut extra = Vec::new();
    if let Some(from_env) = obj.get("env_http_headers").and_then(Value::as_object) {
        for (header, var) in from_env {
            let var = var.as_str().ok_or_else(|| format!("\"env_http_headers.{header}\" is not a string"))?;
            extra.push((header.clone(), format!("${{{var}}}")));
        }
    }
    if let Some(var) = obj.get("bearer_token_env_var").and_then(Value::as_str) {
        extra.push(("Authorization".to_string(), format!("Bearer ${{{var}}}")));
    }
    if extra.is_empty() {
        return Ok(());
    }
    let headers = def.entry("headers").or_insert_with(|| Value::Object(Map::new()));
    let headers = headers.as_object_mut().ok_or("\"http_headers\" is not a table")?;
    for (k, v) in extra {
        headers.insert(k, v.into());
    }
    Ok(())
}

/// `${input:…}`, `${env:…}`, `${workspaceFolder}` and the like: VS Code's and Cursor's
/// variables, which toolport's `${VAR}` expansion refuses (its names are letters, digits, `_`).
fn mentions_client_variables(v: &Value) -> bool {
    match v {
        Value::String(s) => s.match_indices("${").any(|(i, _)| {
            let inner = s[i + 2..].split('}').next().unwrap_or_default();
            // `${VAR:-default}` is toolport's (and Claude Code's) own fallback, not a client's
            // `${input:…}`: only the part before `:-` is the name.
            let name = inner.split(":-").next().unwrap_or_default();
            name.contains(':') || matches!(name, "workspaceFolder" | "userHome" | "workspaceFolderBasename")
        }),
        Value::Array(a) => a.iter().any(mentions_client_variables),
        Value::Object(m) => m.values().any(mentions_client_variables),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map(client: Client, v: Value) -> Result<(Value, &'static str, Vec<String>), String> {
        to_store(client, &v).map(|m| (Value::Object(m.def), m.transport, m.notes))
    }

    #[test]
    fn stdio_entries_keep_their_values_as_text() -> Result<(), String> {
        let entry = json!({"type":"stdio","command":"npx","args":["-y","${PKG}"],"env":{"TOKEN":"${TOKEN}"},"cwd":"/srv"});
        let (def, transport, notes) = map(Client::ClaudeCode, entry)?;
        assert_eq!(
            def,
            json!({"type":"stdio","command":"npx","args":["-y","${PKG}"],"env":{"TOKEN":"${TOKEN}"},"cwd":"/srv"})
        );
        assert_eq!((transport, notes), ("stdio", vec![]));
        let (def, ..) = map(Client::Cursor, json!({"command":"x"}))?;
        assert_eq!(def, json!({"type":"stdio","command":"x"}));
        Ok(())
    }

    #[test]
    fn remote_entries_per_client() -> Result<(), String> {
        let vs = map(Client::VsCode, json!({"type":"http","url":"https://a/mcp","headers":{"K":"${V}"}}))?;
        assert_eq!(vs.0, json!({"type":"http","url":"https://a/mcp","headers":{"K":"${V}"}}));
        assert_eq!(map(Client::VsCode, json!({"type":"sse","url":"u"}))?.1, "sse");
        assert_eq!(map(Client::Gemini, json!({"httpUrl":"u"}))?.0, json!({"type":"http","url":"u"}));
        assert_eq!(map(Client::Gemini, json!({"url":"u"}))?.1, "sse");
        assert_eq!(map(Client::Gemini, json!({"url":"u","type":"http"}))?.1, "http");
        assert_eq!(map(Client::Cursor, json!({"url":"u"}))?.1, "http");
        Ok(())
    }

    #[test]
    fn codex_tables_map_headers_and_timeouts() -> Result<(), String> {
        let entry = json!({"url":"https://a/mcp","bearer_token_env_var":"TOK","http_headers":{"X":"1"},
            "env_http_headers":{"Y":"YV"},"startup_timeout_sec":10,"tool_timeout_sec":1.5,"enabled":true});
        let (def, transport, notes) = map(Client::Codex, entry)?;
        assert_eq!(
            def,
            json!({"type":"http","url":"https://a/mcp","headers":{"X":"1","Y":"${YV}","Authorization":"Bearer ${TOK}"},
                "timeouts":{"connectMs":10000,"callMs":1500}})
        );
        assert_eq!((transport, notes), ("http", vec![]));
        let off = |v| to_store(Client::Codex, &v).map(|m| m.off_in_client);
        assert_eq!(off(json!({"command":"x","enabled":true})), Ok(false));
        assert_eq!(off(json!({"command":"x","enabled":false})), Ok(true));
        assert_eq!(off(json!({"command":"x"})), Ok(false));
        Ok(())
    }

    #[test]
    fn gemini_and_codex_tool_lists_become_filters_on_the_exact_names() -> Result<(), String> {
        let gemini =
            map(Client::Gemini, json!({"command":"x","includeTools":["read","a*b"],"excludeTools":["rm"]}))?;
        assert_eq!(gemini.0["tools"], json!({"include": ["read", "a\\*b"], "exclude": ["rm"]}));
        assert!(gemini.2.is_empty(), "{:?}", gemini.2);
        let codex =
            map(Client::Codex, json!({"command":"x","enabled_tools":["read"],"disabled_tools":["rm"]}))?;
        assert_eq!(codex.0["tools"], json!({"include": ["read"], "exclude": ["rm"]}));
        let filter =
            crate::config::ToolFilter::new(vec!["a\\*b".into()], vec![]).map_err(|e| format!("{e:?}"))?;
        assert!(filter.allows("a*b") && !filter.allows("axb"));
        Ok(())
    }

    #[test]
    fn unmappable_entries_say_why_and_notes_name_keys_only() {
        assert_eq!(
            map(Client::VsCode, json!({"type":"ws","url":"u"})).err().as_deref(),
            Some("type \"ws\" has no toolport equivalent")
        );
        assert_eq!(
            map(Client::ClaudeCode, json!({"args":[]})).err().as_deref(),
            Some("it has no command or url")
        );
        assert_eq!(
            map(Client::ClaudeCode, json!("x")).err().as_deref(),
            Some("the definition is not an object")
        );
        let notes = map(Client::Gemini, json!({"command":"x","trust":true,"env":{"K":"${input:key}"}}))
            .map(|m| m.2)
            .unwrap_or_default();
        assert_eq!(notes[0], "not carried over: trust");
        assert!(notes[1].starts_with("uses gemini's own ${…} variables"), "{notes:?}");
        let fallback = map(Client::ClaudeCode, json!({"command":"x","env":{"K":"${KEY:-none}"}}));
        assert_eq!(fallback.map(|m| m.2), Ok(vec![]), "a ${{VAR:-default}} is toolport's own");
    }

    fn cautions_of(client: Client, v: Value) -> Result<Vec<ImportCaution>, String> {
        to_store(client, &v).map(|m| cautions("s", &m))
    }

    #[test]
    fn a_project_servers_cautions_name_what_it_runs_and_the_variables_it_sends() -> Result<(), String> {
        let remote = json!({"type":"http","url":"https://a/${HOST_PART}/mcp",
            "headers":{"Authorization":"Bearer ${TOKEN}","X":"${TOKEN}-${OTHER:-x}"}});
        assert_eq!(
            cautions_of(Client::ClaudeCode, remote)?,
            vec![ImportCaution::ReadsEnv {
                vars: vec!["HOST_PART".into(), "TOKEN".into(), "OTHER".into()],
                url: Some("https://a/${HOST_PART}/mcp".into()),
            }]
        );
        let stdio =
            json!({"command":"npx","args":["-y","${PKG}"],"env":{"K":"${KEY}"},"cwd":"${NOT_EXPANDED}"});
        assert_eq!(
            cautions_of(Client::Cursor, stdio)?,
            vec![
                ImportCaution::RunsCommand {
                    command: "npx".into(),
                    args: vec!["-y".into(), "${PKG}".into()]
                },
                ImportCaution::ReadsEnv { vars: vec!["PKG".into(), "KEY".into()], url: None },
            ]
        );
        // Codex's variable-named headers are `${VAR}` by the time they are checked.
        let codex = json!({"url":"https://a/mcp","bearer_token_env_var":"TOK"});
        assert_eq!(
            cautions_of(Client::Codex, codex)?,
            vec![ImportCaution::ReadsEnv { vars: vec!["TOK".into()], url: Some("https://a/mcp".into()) }]
        );
        assert_eq!(cautions_of(Client::ClaudeCode, json!({"type":"http","url":"https://a/mcp"}))?, vec![]);
        // `$${X}` is a literal; a definition the connect path refuses never sends anything.
        assert_eq!(
            cautions_of(
                Client::ClaudeCode,
                json!({"type":"http","url":"https://a/$${X}","headers":{"K":"$${Y}"}})
            )?,
            vec![]
        );
        let refused =
            json!({"type":"http","url":"https://a/mcp","headers":{"K":"${input:key}","T":"${TOKEN}"}});
        assert_eq!(cautions_of(Client::VsCode, refused)?, vec![]);
        Ok(())
    }

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
