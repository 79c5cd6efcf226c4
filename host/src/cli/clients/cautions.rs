//! What a server of a project file will do when it connects, said at import before it ever
//! does: the command it runs, the environment variables it reads and where it sends them.

use std::cell::RefCell;

use serde_json::Value;

use super::mapping::Mapped;
use toolport::store::ServerDef;

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

/// What one imported server of a project file will do when it connects. The variables are
/// the ones [`ServerDef::expanded`] — the connect path's own expansion, not a copy of its
/// grammar — looks up, every one answered as set; a definition it refuses never connects,
/// so it sends nothing.
pub(super) fn cautions(name: &str, mapped: &Mapped) -> Vec<ImportCaution> {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::client::Client;
    use super::super::mapping::to_store;
    use super::*;

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
}
