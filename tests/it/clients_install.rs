//! `toolport install --client …` and `toolport mcp import --from …` on a temporary `$HOME`, for
//! every client and scope: the client's file keeps every other byte (unknown keys, order,
//! indentation, JSONC and TOML comments), a second install changes nothing, and importing the
//! same file into a fresh toolport home brings the other servers with `${VAR}` text intact and
//! leaves toolport's own entry behind.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::common::{Env, toolport_path};

/// A client's file before the install, cut where the new entry goes: `pre` ends with the last
/// server already there, `post` is the rest. Whatever the editor does, both must survive.
struct Seed {
    pre: &'static str,
    post: &'static str,
    /// The file also defines `remote`, an HTTP server with an `Authorization` header.
    remote: bool,
}

const CLAUDE_CODE: Seed = Seed {
    pre: r#"{
  "numStartups": 12,
  "projects": {"/w": {"allowedTools": []}},
  "mcpServers": {
    "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}"}},
    "other": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "${PKG}"],
      "env": {"TOKEN": "${OTHER_TOKEN}"}
    }"#,
    post: r#"
  },
  "zz-unknown": {"keep": [1, 2.5, null]}
}
"#,
    remote: true,
};

const CLAUDE_DESKTOP: Seed = Seed {
    pre: r#"{
    "globalShortcut": "Ctrl+Space",
    "mcpServers": {
        "other": {
            "command": "npx",
            "args": ["-y", "${PKG}"],
            "env": {"TOKEN": "${OTHER_TOKEN}"}
        }"#,
    post: r#"
    }
}
"#,
    remote: false,
};

const CODEX: Seed = Seed {
    pre: r#"# My Codex settings: keep this comment.
model = "o3" # and this one

[mcp_servers.remote]
url = "https://example.com/mcp"
bearer_token_env_var = "API_TOKEN"

[mcp_servers.other]
# the other server
command = "npx"
args = ["-y", "${PKG}"]
env = { TOKEN = "${OTHER_TOKEN}" }
"#,
    post: r#"
# profiles below
[profiles.fast]
model = "o4-mini"
"#,
    remote: true,
};

const GEMINI: Seed = Seed {
    pre: r#"{
  "theme": "Default",
  // Gemini CLI strips comments: so must we keep them.
  "mcpServers": {
    "remote": {"httpUrl": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}"}},
    "other": {
      "command": "npx",
      "args": ["-y", "${PKG}"],
      "env": {"TOKEN": "${OTHER_TOKEN}"},
      "trust": true
    }"#,
    post: r#"
  },
  "selectedAuthType": "gemini-api-key"
}
"#,
    remote: true,
};

const CURSOR: Seed = Seed {
    pre: r#"{
  "mcpServers": {
    "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}"}},
    "other": {"command": "npx", "args": ["-y", "${PKG}"], "env": {"TOKEN": "${OTHER_TOKEN}"}}"#,
    post: r#"
  },
  "x-cursor-unknown": true
}
"#,
    remote: true,
};

const VSCODE: Seed = Seed {
    pre: r#"{
  // Inputs VS Code prompts for.
  "inputs": [
    {"type": "promptString", "id": "api-key", "description": "API key", "password": true},
  ],
  "servers": {
    /* the remote one */
    "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}"}},
    "other": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "${PKG}"],
      "env": {"TOKEN": "${OTHER_TOKEN}"},
    },"#,
    post: r#"
  },
}
"#,
    remote: true,
};

/// Every client and scope: the client's name, `--scope`, the file (under `$HOME` for user
/// scope, under the workspace for project scope) and what it starts with.
const CASES: [(&str, &str, &str, &Seed); 11] = [
    ("claude-code", "user", ".claude.json", &CLAUDE_CODE),
    ("claude-code", "project", ".mcp.json", &CLAUDE_CODE),
    ("claude-desktop", "user", ".config/Claude/claude_desktop_config.json", &CLAUDE_DESKTOP),
    ("codex", "user", ".codex/config.toml", &CODEX),
    ("codex", "project", ".codex/config.toml", &CODEX),
    ("gemini", "user", ".gemini/settings.json", &GEMINI),
    ("gemini", "project", ".gemini/settings.json", &GEMINI),
    ("cursor", "user", ".cursor/mcp.json", &CURSOR),
    ("cursor", "project", ".cursor/mcp.json", &CURSOR),
    ("vscode", "user", ".config/Code/User/mcp.json", &VSCODE),
    ("vscode", "project", ".vscode/mcp.json", &VSCODE),
];

/// A toolport home and workspace plus the user's own `$HOME`, where the clients' files live.
struct Homes {
    env: Env,
    user: TempDir,
}

impl Homes {
    fn new() -> Self {
        Self { env: Env::new(), user: tempfile::tempdir().unwrap_or_else(|e| panic!("temp HOME: {e}")) }
    }

    /// `toolport --home … --workspace … <args>` with `HOME` set to the temporary one and the
    /// variables that would move the clients' files elsewhere removed.
    fn run(&self, args: &[&str], code: i32) -> Output {
        let o = self
            .env
            .cmd(args)
            .env("HOME", self.user.path())
            .env_remove("CODEX_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .unwrap_or_else(|e| panic!("run {args:?}: {e}"));
        assert_eq!(o.status.code(), Some(code), "{args:?}\nstdout: {}\nstderr: {}", stdout(&o), stderr(&o));
        o
    }

    fn file(&self, scope: &str, rel: &str) -> PathBuf {
        if scope == "user" { self.user.path().join(rel) } else { self.env.root().join(rel) }
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn write(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).unwrap_or_else(|e| panic!("mkdir {}: {e}", dir.display()));
    }
    fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

#[test]
fn install_then_import_round_trips_for_every_client_and_scope() {
    for (client, scope, rel, seed) in CASES {
        let case = format!("{client} --scope {scope}");
        let homes = Homes::new();
        let file = homes.file(scope, rel);
        let before = format!("{}{}", seed.pre, seed.post);
        write(&file, &before);

        let o = homes.run(&["install", "--client", client, "--scope", scope], 0);
        assert_eq!(
            stdout(&o),
            format!("installed: toolport -> {} ({client}, {scope} scope)\n", file.display()),
            "{case}"
        );
        let after = read(&file);
        assert!(after.starts_with(seed.pre), "{case}: the text before the new entry changed:\n{after}");
        assert!(after.ends_with(seed.post), "{case}: the text after the new entry changed:\n{after}");
        let added = &after[seed.pre.len()..after.len() - seed.post.len()];
        let bin = toolport_path().display().to_string();
        let home = homes.env.home().display().to_string();
        if client == "codex" {
            assert_eq!(
                added,
                format!(
                    "\n[mcp_servers.toolport]\ncommand = \"{bin}\"\nargs = [\"serve\", \"--home\", \"{home}\"]\n"
                ),
                "{case}"
            );
        } else {
            assert!(added.contains("\"toolport\": {"), "{case}: {added}");
            assert!(added.contains(&format!("\"command\": \"{bin}\"")), "{case}: {added}");
            assert!(
                added.contains(&format!("\"args\": [\"serve\", \"--home\", \"{home}\"]")),
                "{case}: {added}"
            );
        }
        let lock = file.with_extension(format!("{}.lock", file.extension().unwrap_or_default().display()));
        assert!(!lock.exists(), "{case}: a lock file beside the client's file");

        let o = homes.run(&["install", "--client", client, "--scope", scope], 0);
        assert_eq!(stdout(&o), format!("already installed: toolport in {}\n", file.display()), "{case}");
        assert_eq!(read(&file), after, "{case}: a second install rewrote the file");

        // Into a fresh toolport home (same workspace and HOME): the others arrive, toolport
        // itself stays behind.
        let Homes { env, user } = homes;
        let home = tempfile::tempdir().unwrap_or_else(|e| panic!("temp home: {e}"));
        let fresh = Homes { env: Env { home, workspace: env.workspace }, user };
        let o = fresh.run(&["mcp", "import", "--from", client, "--scope", scope], 0);
        let out = stdout(&o);
        let store = fresh.env.store();
        let n = if seed.remote { 2 } else { 1 };
        assert!(out.contains("imported: other (stdio)\n"), "{case}: {out}");
        assert!(out.contains("skipped: toolport is toolport itself\n"), "{case}: {out}");
        assert!(
            out.ends_with(&format!(
                "mcp import: {n} imported, 1 skipped ({} -> {})\n",
                file.display(),
                store.display()
            )),
            "{case}: {out}"
        );
        assert!(!out.contains("OTHER_TOKEN") && !out.contains("API_TOKEN"), "{case}: values printed: {out}");
        let servers = &read_json(&store)["mcpServers"];
        assert_eq!(
            servers["other"],
            json!({"type": "stdio", "command": "npx", "args": ["-y", "${PKG}"], "env": {"TOKEN": "${OTHER_TOKEN}"}}),
            "{case}"
        );
        assert!(servers.get("toolport").is_none(), "{case}");
        if seed.remote {
            assert_eq!(
                servers["remote"],
                json!({"type": "streamable_http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}"}}),
                "{case}"
            );
        }
        assert_eq!(read(&file), after, "{case}: import changed the client's file");

        // Again: every name is there now.
        let o = fresh.run(&["mcp", "import", "--from", client, "--scope", scope], 0);
        let out = stdout(&o);
        assert!(out.contains("skipped: other already defined\n"), "{case}: {out}");
        assert!(out.contains(&format!("mcp import: 0 imported, {} skipped", n + 1)), "{case}: {out}");
    }
}

#[test]
fn a_different_entry_is_refused_unless_forced() {
    let homes = Homes::new();
    let file = homes.user.path().join(".cursor/mcp.json");
    let before =
        "{\"mcpServers\": {\"toolport\": {\"command\": \"/old/toolport\", \"args\": [\"serve\"]}}}\n";
    write(&file, before);
    let o = homes.run(&["install", "--client", "cursor"], 1);
    assert_eq!(
        stderr(&o),
        format!(
            "toolport: {} already has a different \"toolport\" entry: pass --force to replace it, or --name to install under another name\n",
            file.display()
        )
    );
    assert_eq!(read(&file), before);
    let o = homes.run(&["install", "--client", "cursor", "--name", "tp"], 0);
    assert!(stdout(&o).starts_with("installed: tp -> "), "{}", stdout(&o));
    let o = homes.run(&["install", "--client", "cursor", "--force"], 0);
    assert!(stdout(&o).starts_with("replaced: toolport -> "), "{}", stdout(&o));
    let servers = &read_json(&file)["mcpServers"];
    assert_eq!(servers["toolport"], servers["tp"]);
    assert_eq!(servers["toolport"]["command"], json!(toolport_path().display().to_string()));
}

#[test]
fn a_missing_file_is_created_with_its_folders() {
    let homes = Homes::new();
    homes.run(&["install", "--client", "vscode", "--scope", "project"], 0);
    let file = homes.env.root().join(".vscode/mcp.json");
    let v = read_json(&file);
    assert_eq!(v["servers"]["toolport"]["type"], json!("stdio"));
    homes.run(&["install", "--client", "codex"], 0);
    let toml = read(&homes.user.path().join(".codex/config.toml"));
    assert!(toml.starts_with("[mcp_servers.toolport]\ncommand = "), "{toml}");
}

#[test]
fn codex_home_moves_codex_user_file() {
    let homes = Homes::new();
    let codex = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let o = homes
        .env
        .cmd(["install", "--client", "codex"])
        .env("HOME", homes.user.path())
        .env("CODEX_HOME", codex.path())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(codex.path().join("config.toml").exists());
    assert!(!homes.user.path().join(".codex").exists());
}

#[test]
fn malformed_files_are_named_with_their_position_and_left_alone() {
    let cases = [
        (
            "claude-code",
            ".claude.json",
            "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}\n",
            ":3:",
        ),
        (
            "vscode",
            ".config/Code/User/mcp.json",
            "{\n  // fine\n  \"servers\": {\n    \"a\" {}\n  }\n}\n",
            ":4:",
        ),
        ("codex", ".codex/config.toml", "model = \"o3\"\n[mcp_servers.a\ncommand = \"x\"\n", ":2:"),
    ];
    for (client, rel, text, at) in cases {
        let homes = Homes::new();
        let file = homes.user.path().join(rel);
        write(&file, text);
        let o = homes.run(&["install", "--client", client], 2);
        let err = stderr(&o);
        assert!(err.starts_with(&format!("toolport: {}{at}", file.display())), "{client}: {err}");
        assert_eq!(read(&file), text, "{client}: a malformed file was rewritten");
        let o = homes.run(&["mcp", "import", "--from", client], 2);
        assert!(
            stderr(&o).starts_with(&format!("toolport: {}{at}", file.display())),
            "{client}: {}",
            stderr(&o)
        );
        assert!(!homes.env.store().exists(), "{client}: a failed import wrote the store");
    }
}

#[test]
fn usage_errors_and_a_missing_source() {
    let homes = Homes::new();
    let o = homes.run(&["install", "--client", "claude-desktop", "--scope", "project"], 2);
    assert_eq!(stderr(&o), "toolport: claude-desktop has no project scope: use --scope user\n");
    let o = homes.run(&["mcp", "import", "--from", "gemini"], 1);
    let file = homes.user.path().join(".gemini/settings.json");
    assert_eq!(
        stderr(&o),
        format!(
            "toolport: {}: no such file (gemini keeps its user servers there; pass --file PATH for another)\n",
            file.display()
        )
    );
    let o = homes.run(&["install", "--client", "zed"], 2);
    assert!(
        stderr(&o).contains("possible values: claude-code, claude-desktop, codex, gemini, cursor, vscode")
    );
}

#[test]
fn import_from_a_given_file_with_enable() {
    let homes = Homes::new();
    let file = homes.user.path().join("elsewhere.json");
    write(
        &file,
        r#"{"servers": {
            "a": {"type": "stdio", "command": "x", "env": {"K": "${input:api-key}"}},
            "b": {"type": "ws", "url": "ws://127.0.0.1:1"},
            "c": {"type": "sse", "url": "http://127.0.0.1:3001/sse", "envFile": "${workspaceFolder}/.env"}
        }}"#,
    );
    let path = file.display().to_string();
    let o = homes.run(&["mcp", "import", "--from", "vscode", "--file", &path, "--enable"], 0);
    assert_eq!(
        stdout(&o),
        format!(
            "imported: a (stdio, enabled)\n  \
               note: uses vscode's own ${{…}} variables, kept as text: toolport expands only ${{VAR}} from the environment\n\
             skipped: b cannot be imported: type \"ws\" has no toolport equivalent\n\
             imported: c (sse, enabled)\n  note: not carried over: envFile\n\
             mcp import: 2 imported, 1 skipped ({path} -> {})\n",
            homes.env.store().display()
        )
    );
    assert_eq!(read_json(&homes.env.workspace_file()), json!({"enabledMcpServers": ["a", "c"]}));
    assert_eq!(read_json(&homes.env.store())["mcpServers"]["a"]["env"], json!({"K": "${input:api-key}"}));
}
