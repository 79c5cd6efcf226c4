//! `toolport install --client …` and `toolport mcp import --from …` on a temporary `$HOME`, for
//! every client and scope: the client's file keeps every other byte (unknown keys, order,
//! indentation, JSONC and TOML comments), a second install changes nothing, and importing the
//! same file into a fresh toolport home brings the other servers with `${VAR}` text intact and
//! leaves toolport's own entry behind. Where the agent itself can say what it makes of the file
//! without signing in (Claude Code's `claude mcp list`, Gemini CLI's `gemini mcp list`,
//! installed by `tests/peers/install_agents.sh`), it is asked.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::support::common::{Env, toolport_path};

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

    /// `toolport --home … --workspace … <args>` with `HOME` set to the temporary one, the
    /// variables that would move the clients' files elsewhere removed, and a `PATH` of the
    /// system's folders only (no toolport on it).
    fn run(&self, args: &[&str], code: i32) -> Output {
        self.run_with_path(args, code, SYSTEM_PATH)
    }

    fn run_with_path(&self, args: &[&str], code: i32, path: &str) -> Output {
        let o = self
            .env
            .cmd(args)
            .env("HOME", self.user.path())
            .env("PATH", path)
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

/// A `PATH` on which no toolport is found.
const SYSTEM_PATH: &str = "/usr/bin:/bin";

/// A real agent's command (`claude`, `gemini`) run in the workspace with the temporary `HOME`
/// and Node on `PATH`; it must succeed. Its stdout then stderr (Gemini CLI lists on stderr).
fn agent(homes: &Homes, bin: &str, args: &[&str]) -> String {
    let node_dir = crate::support::peers::node().parent().map(Path::to_path_buf).unwrap_or_default();
    let o = Command::new(crate::support::peers::agent_bin(bin))
        .args(args)
        .current_dir(homes.env.root())
        .env("HOME", homes.user.path())
        .env("PATH", format!("{}:{SYSTEM_PATH}", node_dir.display()))
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("GEMINI_API_KEY")
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| panic!("run {bin} {args:?}: {e}"));
    assert!(o.status.success(), "{bin} {args:?}\nstdout: {}\nstderr: {}", stdout(&o), stderr(&o));
    format!("{}{}", stdout(&o), stderr(&o))
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

/// `~/.claude.json` as Claude Code 2.1 writes it after `claude mcp add` in two projects and
/// `claude mcp add --scope user` once: the local scope lives under `projects.<path>`.
fn claude_json(root: &Path) -> String {
    format!(
        r#"{{
  "numStartups": 3,
  "mcpServers": {{
    "user-one": {{"type": "stdio", "command": "npx", "args": ["user-one"], "env": {{}}}},
    "both": {{"type": "stdio", "command": "npx", "args": ["from-user"], "env": {{}}}}
  }},
  "projects": {{
    "/somewhere/else": {{
      "allowedTools": [],
      "mcpServers": {{"elsewhere": {{"type": "stdio", "command": "npx", "args": ["elsewhere"], "env": {{}}}}}}
    }},
    "{root}": {{
      "allowedTools": [],
      "mcpServers": {{
        "local-one": {{"type": "stdio", "command": "npx", "args": ["local-one"], "env": {{"K": "${{LOCAL_K}}"}}}},
        "both": {{"type": "stdio", "command": "npx", "args": ["from-local"], "env": {{}}}}
      }},
      "enabledMcpjsonServers": [],
      "disabledMcpjsonServers": [],
      "hasTrustDialogAccepted": false
    }}
  }}
}}
"#,
        root = root.display()
    )
}

#[test]
fn claude_codes_local_scope_is_imported_by_default_and_installable() {
    let homes = Homes::new();
    let file = homes.user.path().join(".claude.json");
    let before = claude_json(homes.env.root());
    write(&file, &before);
    let store = homes.env.store();

    // No --scope: the local scope (this project's entry) first, then the user scope.
    let o = homes.run(&["mcp", "import", "--from", "claude-code"], 0);
    assert_eq!(
        stdout(&o),
        format!(
            "imported: local-one (stdio)\nimported: both (stdio)\nimported: user-one (stdio)\n\
             skipped: both already defined\n\
             mcp import: 3 imported, 1 skipped ({} -> {})\n",
            file.display(),
            store.display()
        )
    );
    let servers = &read_json(&store)["mcpServers"];
    assert_eq!(servers["both"]["args"], json!(["from-local"]), "the local entry wins, as in Claude Code");
    assert_eq!(servers["local-one"]["env"], json!({"K": "${LOCAL_K}"}));
    assert!(servers.get("elsewhere").is_none(), "another project's entry was imported");

    // --scope local alone, into a fresh toolport home.
    let Homes { env, user } = homes;
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("temp home: {e}"));
    let homes = Homes { env: Env { home, workspace: env.workspace }, user };
    let o = homes.run(&["mcp", "import", "--from", "claude-code", "--scope", "local"], 0);
    assert!(
        stdout(&o).starts_with(
            "imported: local-one (stdio)\nimported: both (stdio)\nmcp import: 2 imported, 0 skipped"
        ),
        "{}",
        stdout(&o)
    );

    // install --scope local writes this project's entry and nothing else.
    let o = homes.run(&["install", "--client", "claude-code", "--scope", "local"], 0);
    assert_eq!(stdout(&o), format!("installed: toolport -> {} (claude-code, local scope)\n", file.display()));
    let after = read_json(&file);
    let mut expected: Value = serde_json::from_str(&before).unwrap_or_else(|e| panic!("{e}"));
    let bin = toolport_path().display().to_string();
    let home = homes.env.home().display().to_string();
    expected["projects"][homes.env.root().display().to_string()]["mcpServers"]["toolport"] =
        json!({"type": "stdio", "command": bin, "args": ["serve", "--home", home], "env": {}});
    assert_eq!(after, expected);
    let text = read(&file);
    assert!(text.starts_with("{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"user-one\""), "{text}");

    // Claude Code itself finds it in this project, and it connects.
    let listed = agent(&homes, "claude", &["mcp", "list"]);
    assert!(
        listed.contains(&format!("toolport: {bin} serve --home {home} - ✔ Connected")),
        "claude mcp list:\n{listed}"
    );
    assert!(listed.contains("local-one: npx local-one"), "claude mcp list:\n{listed}");

    let o = homes.run(&["install", "--client", "cursor", "--scope", "local"], 2);
    assert_eq!(stderr(&o), "toolport: cursor has no local scope: use --scope user or project\n");
}

#[test]
fn codex_servers_turned_off_stay_off_with_enable() {
    let homes = Homes::new();
    let file = homes.user.path().join(".codex/config.toml");
    write(
        &file,
        "[mcp_servers.on]\ncommand = \"npx\"\nargs = [\"on\"]\n\n[mcp_servers.off]\ncommand = \"npx\"\nargs = [\"off\"]\nenabled = false\n",
    );
    let o = homes.run(&["mcp", "import", "--from", "codex", "--enable"], 0);
    assert_eq!(
        stdout(&o),
        format!(
            "imported: on (stdio, enabled)\nimported: off (stdio)\n  \
             note: turned off in the client's file (enabled = false), so not enabled here: `toolport mcp enable off` enables it\n\
             mcp import: 2 imported, 0 skipped ({} -> {})\n",
            file.display(),
            homes.env.store().display()
        )
    );
    assert_eq!(read_json(&homes.env.workspace_file()), json!({"enabledMcpServers": ["on"]}));
    assert_eq!(
        read_json(&homes.env.store())["mcpServers"]["off"],
        json!({"type": "stdio", "command": "npx", "args": ["off"]})
    );
    homes.run(&["mcp", "enable", "off"], 0);
    assert_eq!(read_json(&homes.env.workspace_file()), json!({"enabledMcpServers": ["on", "off"]}));
}

#[test]
fn force_replaces_only_the_keys_toolport_writes() {
    let homes = Homes::new();
    let bin = toolport_path().display().to_string();
    let home = homes.env.home().display().to_string();
    let codex = homes.user.path().join(".codex/config.toml");
    write(
        &codex,
        "[mcp_servers.toolport]\n# mine\ncommand = \"/old/toolport\"\nargs = [\"serve\"]\nstartup_timeout_sec = 30\ntool_timeout_sec = 600\nenv = { RUST_LOG = \"debug\" }\n",
    );
    homes.run(&["install", "--client", "codex"], 1);
    let o = homes.run(&["install", "--client", "codex", "--force"], 0);
    assert!(stdout(&o).starts_with("replaced: toolport -> "), "{}", stdout(&o));
    assert_eq!(
        read(&codex),
        format!(
            "[mcp_servers.toolport]\n# mine\ncommand = \"{bin}\"\nargs = [\"serve\", \"--home\", \"{home}\"]\nstartup_timeout_sec = 30\ntool_timeout_sec = 600\nenv = {{ RUST_LOG = \"debug\" }}\n"
        )
    );
    // The user's keys are no difference: installing again changes nothing.
    let o = homes.run(&["install", "--client", "codex"], 0);
    assert!(stdout(&o).starts_with("already installed: toolport in "), "{}", stdout(&o));

    let claude = homes.user.path().join(".claude.json");
    write(
        &claude,
        "{\"mcpServers\": {\"toolport\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:1/mcp\", \"headers\": {\"X\": \"1\"}, \"env\": {\"RUST_LOG\": \"debug\"}, \"timeout\": 5}}}\n",
    );
    homes.run(&["install", "--client", "claude-code", "--force"], 0);
    assert_eq!(
        read_json(&claude)["mcpServers"]["toolport"],
        json!({"type": "stdio", "env": {"RUST_LOG": "debug"}, "timeout": 5, "command": bin, "args": ["serve", "--home", home]})
    );
}

#[test]
fn gemini_settings_never_get_a_trailing_comma_and_gemini_reads_them() {
    let homes = Homes::new();
    let file = homes.user.path().join(".gemini/settings.json");
    let commas = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n  }\n}\n";
    write(&file, commas);
    let o = homes.run(&["install", "--client", "gemini"], 2);
    assert_eq!(
        stderr(&o),
        format!("toolport: {}:3:26: Trailing commas are not allowed\n", file.display()),
        "Gemini CLI refuses this file too"
    );
    assert_eq!(read(&file), commas);

    let before = "{\n  // mine\n  \"theme\": \"Default\",\n  \"mcpServers\": {\n    \"a\": {\"command\": \"/bin/true\"}\n  }\n}\n";
    write(&file, before);
    homes.run(&["install", "--client", "gemini"], 0);
    let after = read(&file);
    let stripped: String = after.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
    let v: Value =
        serde_json::from_str(&stripped).unwrap_or_else(|e| panic!("not JSON once comments go: {e}\n{after}"));
    assert_eq!(v["mcpServers"]["toolport"]["args"][0], json!("serve"));
    let listed = agent(&homes, "gemini", &["mcp", "list"]);
    let (bin, home) = (toolport_path().display().to_string(), homes.env.home().display().to_string());
    assert!(
        listed.contains(&format!("toolport: {bin} serve --home {home} (stdio)")),
        "gemini mcp list:\n{listed}"
    );
    assert!(
        listed.contains("a: /bin/true  (stdio)") || listed.contains("a: /bin/true (stdio)"),
        "gemini mcp list:\n{listed}"
    );
}

#[test]
fn a_project_entry_names_toolport_on_path_or_says_why_not() {
    let bin = toolport_path();
    let bin_dir = bin.parent().map(Path::to_path_buf).unwrap_or_default();
    let homes = Homes::new();
    let file = homes.env.root().join(".mcp.json");
    let home = homes.env.home().display().to_string();
    let home_warning = format!(
        "toolport: warning: {}'s \"toolport\" entry passes --home {home}, a folder on this machine only: a teammate's toolport would use it too. Install from toolport's default home (~/.toolport, no --home or $TOOLPORT_HOME) for an entry without it\n",
        file.display()
    );

    // Not on PATH: the absolute path, and a warning saying what to do.
    let o = homes.run(&["install", "--client", "claude-code", "--scope", "project"], 0);
    assert_eq!(
        stderr(&o),
        format!(
            "toolport: warning: {} is meant to be shared, but its \"toolport\" entry names {}, a path that will not exist on a teammate's machine: \"toolport\" is not on PATH. Put this toolport on PATH, then run `toolport install --client claude-code --scope project --force` again\n{home_warning}",
            file.display(),
            bin.display()
        )
    );
    assert_eq!(read_json(&file)["mcpServers"]["toolport"]["command"], json!(bin.display().to_string()));

    // Another toolport first on PATH: still the absolute path, and the warning names the other.
    let other = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let fake = other.path().join("toolport");
    write(&fake, "#!/bin/sh\n");
    let exec = <fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755);
    fs::set_permissions(&fake, exec).unwrap_or_else(|e| panic!("chmod {}: {e}", fake.display()));
    let path = format!("{}:{}:{SYSTEM_PATH}", other.path().display(), bin_dir.display());
    let o = homes.run_with_path(&["install", "--client", "claude-code", "--scope", "project"], 0, &path);
    assert!(
        stderr(&o).contains(&format!(
            "\"toolport\" on PATH is another binary, {}. Put this toolport on PATH",
            fake.display()
        )),
        "{}",
        stderr(&o)
    );

    // On PATH: the bare name, which a teammate's PATH finds too (a change: --force).
    let path = format!("{}:{SYSTEM_PATH}", bin_dir.display());
    homes.run_with_path(&["install", "--client", "claude-code", "--scope", "project"], 1, &path);
    let o = homes.run_with_path(
        &["install", "--client", "claude-code", "--scope", "project", "--force"],
        0,
        &path,
    );
    assert_eq!(stderr(&o), home_warning);
    assert_eq!(
        read_json(&file)["mcpServers"]["toolport"],
        json!({"type": "stdio", "command": "toolport", "args": ["serve", "--home", home], "env": {}})
    );
    // The user's own file keeps the absolute path, PATH or not.
    homes.run_with_path(&["install", "--client", "claude-code"], 0, &path);
    assert_eq!(
        read_json(&homes.user.path().join(".claude.json"))["mcpServers"]["toolport"]["command"],
        json!(bin.display().to_string())
    );
    // And toolport's own entry is still recognised on import.
    let o = homes.run(&["mcp", "import", "--from", "claude-code", "--scope", "project"], 0);
    assert!(stdout(&o).starts_with("skipped: toolport is toolport itself\n"), "{}", stdout(&o));
}

/// A workspace `ws/` with a sibling `outside/` (so a repository's `../outside/…` link has
/// somewhere real to point), the user's `$HOME`, and the `outside` folder.
fn workspace_beside_outside() -> (Homes, TempDir, PathBuf) {
    let top = tempfile::tempdir().unwrap_or_else(|e| panic!("temp top: {e}"));
    let outside = top.path().join("outside");
    fs::create_dir(&outside).unwrap_or_else(|e| panic!("mkdir {}: {e}", outside.display()));
    let workspace = tempfile::tempdir_in(top.path()).unwrap_or_else(|e| panic!("temp workspace: {e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("temp home: {e}"));
    let user = tempfile::tempdir().unwrap_or_else(|e| panic!("temp HOME: {e}"));
    (Homes { env: Env { home, workspace }, user }, top, outside)
}

/// Issue 26 item 10: a project's file (or a folder on its way) that a cloned repository made
/// a symlink out of the workspace is refused as `workspace.json` is: exit 2, the file, the
/// root and the link named, and nothing written outside, whether the place out there exists
/// or not. A link that stays inside the workspace is still written through.
#[test]
fn a_project_file_linked_out_of_the_workspace_is_refused_and_nothing_is_written_outside() {
    let (homes, _top, outside) = workspace_beside_outside();
    let root = homes.env.root().to_path_buf();
    let refused = |file: &Path, link: &str| {
        format!(
            "toolport: refusing to follow {}: it leads outside the workspace root {}{link}\n",
            file.display(),
            root.display()
        )
    };

    // `.mcp.json -> ../outside/x.json`, first dangling, then onto a file that exists.
    let mcp = root.join(".mcp.json");
    std::os::unix::fs::symlink("../outside/x.json", &mcp).unwrap_or_else(|e| panic!("symlink: {e}"));
    let o = homes.run(&["install", "--client", "claude-code", "--scope", "project"], 2);
    assert_eq!(stderr(&o), refused(&mcp, " (a symlink to ../outside/x.json)"));
    assert_eq!(stdout(&o), "");
    assert!(!outside.join("x.json").exists(), "the install created ../outside/x.json");
    let victim = "{\"mcpServers\": {}}\n";
    write(&outside.join("x.json"), victim);
    let o = homes.run(&["install", "--client", "claude-code", "--scope", "project", "--force"], 2);
    assert_eq!(stderr(&o), refused(&mcp, " (a symlink to ../outside/x.json)"));
    assert_eq!(read(&outside.join("x.json")), victim, "the install wrote through the link");

    // A folder on the way: `.codex -> ../outside`, so `.codex/config.toml` is outside too.
    std::os::unix::fs::symlink("../outside", root.join(".codex")).unwrap_or_else(|e| panic!("symlink: {e}"));
    let o = homes.run(&["install", "--client", "codex", "--scope", "project"], 2);
    let codex = root.join(".codex/config.toml");
    assert_eq!(
        stderr(&o),
        refused(&codex, &format!(" ({} is a symlink to ../outside)", root.join(".codex").display()))
    );
    assert!(!outside.join("config.toml").exists(), "the install created ../outside/config.toml");

    let names: Vec<String> = fs::read_dir(&outside)
        .unwrap_or_else(|e| panic!("read {}: {e}", outside.display()))
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()).unwrap_or_default())
        .collect();
    assert_eq!(names, ["x.json"], "only the file the test wrote is outside");

    // A link that stays inside the workspace is the repository's own layout: written through.
    let cursor = root.join(".cursor/mcp.json");
    write(&root.join("shared/cursor.json"), "{}\n");
    fs::create_dir_all(root.join(".cursor")).unwrap_or_else(|e| panic!("mkdir .cursor: {e}"));
    std::os::unix::fs::symlink("../shared/cursor.json", &cursor).unwrap_or_else(|e| panic!("symlink: {e}"));
    let o = homes.run(&["install", "--client", "cursor", "--scope", "project"], 0);
    assert!(stdout(&o).starts_with("installed: toolport -> "), "{}", stdout(&o));
    assert!(fs::symlink_metadata(&cursor).is_ok_and(|m| m.file_type().is_symlink()), "the link was replaced");
    assert_eq!(
        read_json(&root.join("shared/cursor.json"))["mcpServers"]["toolport"]["args"][0],
        json!("serve")
    );
}
