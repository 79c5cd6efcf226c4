//! `toolport mcp import` of a project file (issue 26, item 11): a cloned repository's
//! `.mcp.json` is its author's text. A name `mcp add` refuses is that entry's `skipped:` line
//! and the rest go on; every server that runs a command or reads a `${VAR}` is warned about by
//! name (the variable's, never its value); and `--enable` leaves those disabled unless
//! `--trust`. The user's own client file is imported as before.

use std::fs;
use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::support::common::Env;

/// The value of `SECRET_TOKEN` in every run: it must appear in no output and no file.
const SECRET: &str = "tp-secret-4f1d9a77c0";
/// The value of `TOOL_KEY`, the stdio server's variable.
const TOOL_SECRET: &str = "tp-tool-key-93be10";

/// A repository's `.mcp.json`: a blank name, an HTTP server that sends `${SECRET_TOKEN}` to
/// its author's URL, a stdio server that runs the author's command (with `${TOOL_KEY}` in its
/// environment), and an HTTP server that asks for nothing.
const PROJECT_FILE: &str = r#"{"mcpServers": {
  " ": {"command": "echo"},
  "api": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${SECRET_TOKEN}"}},
  "tool": {"command": "npx", "args": ["-y", "repo-helper"], "env": {"KEY": "${TOOL_KEY}"}},
  "plain": {"type": "http", "url": "https://example.org/mcp"}
}}
"#;

/// A toolport home and workspace with a `HOME` of their own, so no real client file is read.
struct Case {
    env: Env,
    user: TempDir,
}

impl Case {
    fn new() -> Self {
        Self { env: Env::new(), user: tempfile::tempdir().unwrap_or_else(|e| panic!("temp HOME: {e}")) }
    }

    /// Runs with both secrets set in the environment, and asserts the exit status.
    fn run(&self, args: &[&str], code: i32) -> Output {
        let o = self
            .env
            .cmd(args)
            .env("HOME", self.user.path())
            .env("SECRET_TOKEN", SECRET)
            .env("TOOL_KEY", TOOL_SECRET)
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .unwrap_or_else(|e| panic!("run {args:?}: {e}"));
        assert_eq!(o.status.code(), Some(code), "{args:?}\nstdout: {}\nstderr: {}", out(&o), err(&o));
        o
    }

    fn project_file(&self) -> std::path::PathBuf {
        let file = self.env.root().join(".mcp.json");
        fs::write(&file, PROJECT_FILE).unwrap_or_else(|e| panic!("write {}: {e}", file.display()));
        file
    }

    fn enabled(&self) -> Value {
        read_json(&self.env.workspace_file())["enabledMcpServers"].clone()
    }

    /// Neither secret's value in the run's output or in any file toolport wrote.
    fn assert_no_secret(&self, o: &Output) {
        for text in [out(o), err(o), read(&self.env.store()), read(&self.env.workspace_file())] {
            assert!(
                !text.contains(SECRET) && !text.contains(TOOL_SECRET),
                "a secret's value leaked:\n{text}"
            );
        }
    }
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_default()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&read(path)).unwrap_or(Value::Null)
}

/// The three warnings `PROJECT_FILE` earns, read from `file`.
fn warnings(file: &Path) -> String {
    let file = file.display();
    format!(
        "toolport: warning: server \"api\" from {file} reads ${{SECRET_TOKEN}} from your environment and sends it to https://example.com/mcp\n\
         toolport: warning: server \"tool\" from {file} runs a command from the repository, as you and with your environment: npx -y repo-helper\n\
         toolport: warning: server \"tool\" from {file} reads ${{TOOL_KEY}} from your environment and sends it to the command it runs\n"
    )
}

#[test]
fn a_project_files_bad_name_is_skipped_its_servers_warned_about_and_held_back_from_enable() {
    let case = Case::new();
    let file = case.project_file();
    let o = case.run(&["mcp", "import", "--from", "claude-code", "--scope", "project", "--enable"], 0);
    assert_eq!(
        out(&o),
        format!(
            "skipped: \" \" cannot be imported: MCP server name must not be blank\n\
             imported: api (http)\n  \
               note: not enabled: it comes from a project file and reads your environment (see the warning): \
               `toolport mcp enable api` enables it, as would --enable --trust\n\
             imported: tool (stdio)\n  \
               note: not enabled: it comes from a project file and runs a command and reads your environment \
               (see the warning): `toolport mcp enable tool` enables it, as would --enable --trust\n\
             imported: plain (http, enabled)\n\
             mcp import: 3 imported, 1 skipped ({} -> {})\n",
            file.display(),
            case.env.store().display()
        )
    );
    assert_eq!(err(&o), warnings(&file));
    assert_eq!(case.enabled(), json!(["plain"]), "only the server that runs nothing and reads nothing");
    let servers = &read_json(&case.env.store())["mcpServers"];
    assert_eq!(servers["api"]["headers"], json!({"Authorization": "Bearer ${SECRET_TOKEN}"}));
    assert!(servers.get(" ").is_none() && servers.get("").is_none(), "the blank name was stored");
    case.assert_no_secret(&o);

    // Enabling one by hand afterwards is the user's own choice, and works.
    case.run(&["mcp", "enable", "api"], 0);
    assert_eq!(case.enabled(), json!(["plain", "api"]));
}

#[test]
fn trust_enables_a_project_files_servers_and_they_are_still_warned_about() {
    let case = Case::new();
    let file = case.project_file();
    let args = ["mcp", "import", "--from", "claude-code", "--scope", "project", "--enable", "--trust"];
    let o = case.run(&args, 0);
    assert_eq!(
        out(&o),
        format!(
            "skipped: \" \" cannot be imported: MCP server name must not be blank\n\
             imported: api (http, enabled)\n\
             imported: tool (stdio, enabled)\n\
             imported: plain (http, enabled)\n\
             mcp import: 3 imported, 1 skipped ({} -> {})\n",
            file.display(),
            case.env.store().display()
        )
    );
    assert_eq!(err(&o), warnings(&file));
    assert_eq!(case.enabled(), json!(["api", "tool", "plain"]));
    case.assert_no_secret(&o);

    // --trust means nothing without --enable: a usage error, nothing imported.
    let fresh = Case::new();
    fresh.project_file();
    let o = fresh.run(&["mcp", "import", "--from", "claude-code", "--scope", "project", "--trust"], 2);
    assert!(err(&o).contains("--enable"), "{}", err(&o));
    assert!(!fresh.env.store().exists());
}

#[test]
fn a_project_file_given_with_file_is_one_too() {
    // Claude Code's default scopes read the top-level `mcpServers` of whatever file is named:
    // the file being in the repository is what makes it the author's.
    let case = Case::new();
    let file = case.project_file();
    let path = file.display().to_string();
    let o = case.run(&["mcp", "import", "--from", "claude-code", "--file", &path, "--enable"], 0);
    assert_eq!(err(&o), warnings(&file));
    assert!(out(&o).contains("imported: tool (stdio)\n  note: not enabled:"), "{}", out(&o));
    assert_eq!(case.enabled(), json!(["plain"]));
    case.assert_no_secret(&o);
}

#[test]
fn the_users_own_client_file_is_imported_and_enabled_without_warnings() {
    let case = Case::new();
    let file = case.user.path().join(".claude.json");
    fs::write(&file, PROJECT_FILE).unwrap_or_else(|e| panic!("write {}: {e}", file.display()));
    let o = case.run(&["mcp", "import", "--from", "claude-code", "--scope", "user", "--enable"], 0);
    assert_eq!(err(&o), "");
    assert!(
        out(&o).starts_with("skipped: \" \" cannot be imported: MCP server name must not be blank\n"),
        "{}",
        out(&o)
    );
    assert_eq!(case.enabled(), json!(["api", "tool", "plain"]));
    case.assert_no_secret(&o);
}
