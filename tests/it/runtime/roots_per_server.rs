//! A server's `roots` setting (issue 25 item 6) and the reserved-name report (item 7), against
//! the real npm `@modelcontextprotocol/server-filesystem` (which replaces its directory
//! arguments with the client's roots when the client offers roots) and, under `serve`, the
//! Python SDK client offering a root to server-everything's `get-roots-list`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Value, json};

use crate::serve::clients::{Via, py};
use crate::support::common::Env;
use crate::support::peers::{everything_stdio, install, node};
use crate::support::runtime::{printed_commands, write_config};

/// server-filesystem's entry point, installed by `tests/peers/install_filesystem.sh`.
fn filesystem_entry() -> PathBuf {
    static PEERS: OnceLock<String> = OnceLock::new();
    let peers = PathBuf::from(install("peers/install_filesystem.sh", &PEERS));
    peers.join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
}

/// server-filesystem given `dir` as its one argument, its two reserved names left out, and
/// `roots` when not `null`.
fn filesystem(dir: &Path, roots: Value) -> Value {
    let mut def = json!({
        "command": node(), "args": [filesystem_entry(), dir],
        "tools": {"exclude": ["read_file", "write_file"]},
    });
    if !roots.is_null() {
        def["roots"] = roots;
    }
    def
}

/// A workspace holding `w.txt`, and beside it a data folder holding `a.txt` (its real path: the
/// server compares real paths).
struct Folders {
    env: Env,
    data: tempfile::TempDir,
}

impl Folders {
    fn new() -> Self {
        let env = Env::new();
        let data = tempfile::tempdir().unwrap_or_else(|e| panic!("temp data: {e}"));
        std::fs::write(data.path().join("a.txt"), "data file").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(env.root().join("w.txt"), "workspace file").unwrap_or_else(|e| panic!("{e}"));
        Self { env, data }
    }

    fn data(&self) -> PathBuf {
        real(self.data.path())
    }

    fn root(&self) -> PathBuf {
        real(self.env.root())
    }

    /// `toolport call <tool> <args>`: exit code and stdout + stderr.
    fn call(&self, tool: &str, args: Value) -> (i32, String) {
        let (code, out, err) = self.env.run(&["call", tool, &args.to_string()], Duration::from_secs(90));
        (code, format!("{out}{err}"))
    }

    /// What the server says it may read (`list_allowed_directories`), one folder a line.
    fn allowed(&self) -> Vec<String> {
        let (code, text) = self.call("list_allowed_directories", json!({}));
        assert_eq!(code, 0, "{text}");
        text.lines().skip_while(|l| !l.starts_with("Allowed directories")).skip(1).map(String::from).collect()
    }

    fn read(&self, path: &Path) -> (i32, String) {
        self.call("read_text_file", json!({"path": path}))
    }

    /// The server reads `path` and finds `content`.
    fn reads(&self, path: &Path, content: &str) {
        let (code, text) = self.read(path);
        assert_eq!((code, text.trim()), (0, content), "{}", path.display());
    }

    /// The server refuses `path` as outside what it may read.
    fn refuses(&self, path: &Path) {
        let (code, text) = self.read(path);
        assert_eq!(code, 1, "{text}");
        assert!(text.contains(OUTSIDE), "{text}");
    }
}

fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// The refusal server-filesystem gives a path outside what it may read.
const OUTSIDE: &str = "Access denied - path outside allowed directories";

#[test]
fn filesystem_with_roots_none_keeps_its_argument_directory() {
    let f = Folders::new();
    write_config(&f.env, json!({ "fs": filesystem(&f.data(), json!("none")) }), &["fs"], json!({}));
    assert_eq!(f.allowed(), [shown(&f.data())]);
    f.reads(&f.data().join("a.txt"), "data file");
    f.refuses(&f.root().join("w.txt"));
}

#[test]
fn filesystem_by_default_gets_the_workspace_root() {
    let f = Folders::new();
    write_config(&f.env, json!({ "fs": filesystem(&f.data(), Value::Null) }), &["fs"], json!({}));
    assert_eq!(f.allowed(), [shown(&f.root())]);
    f.reads(&f.root().join("w.txt"), "workspace file");
    f.refuses(&f.data().join("a.txt"));
}

#[test]
fn filesystem_gets_a_list_of_roots_absolute_and_under_the_workspace() {
    let f = Folders::new();
    let sub = f.root().join("docs");
    std::fs::create_dir(&sub).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(sub.join("d.txt"), "docs file").unwrap_or_else(|e| panic!("{e}"));
    let roots = json!([f.data(), "docs"]);
    // The argument is the workspace itself: only the listed roots may be read.
    write_config(&f.env, json!({ "fs": filesystem(&f.root(), roots) }), &["fs"], json!({}));
    assert_eq!(f.allowed(), [shown(&f.data()), shown(&sub)]);
    f.reads(&sub.join("d.txt"), "docs file");
    f.reads(&f.data().join("a.txt"), "data file");
    f.refuses(&f.root().join("w.txt"));
}

/// Under `serve`, the client's roots reach the server set to `"client"` and only it: the one at
/// the default is still told the workspace root, after the client's roots have arrived.
#[test]
fn serve_passes_the_clients_roots_only_to_servers_set_to_client() {
    let env = Env::new();
    let mut with_client = everything_stdio();
    with_client["roots"] = json!("client");
    let servers = json!({ "mine": with_client, "plain": everything_stdio() });
    write_config(&env, servers, &["mine", "plain"], json!({"namePolicy": "namespace"}));
    let args = [
        "--uri",
        "file:///client/project/",
        "--wait",
        "15",
        "--roots-tool",
        "mine__get-roots-list",
        "--then",
        "plain__get-roots-list",
    ];
    let seen = py("roots", &Via::Stdio(&env), &args);
    let texts = |key: &str| {
        seen[key].as_array().cloned().unwrap_or_default().iter().map(|t| t.to_string()).collect::<String>()
    };
    assert!(texts("texts").contains("file:///client/project/"), "{seen}");
    let plain = texts("then");
    let workspace = url_of(&real(env.root()));
    assert!(plain.contains(&workspace) && !plain.contains("file:///client/"), "{workspace}: {seen}");
}

/// A folder's `file://` URI as toolport sends it (with the trailing slash).
fn url_of(path: &Path) -> String {
    format!("file://{}/", path.display())
}

#[test]
fn roots_are_stored_shown_and_checked() {
    let env = Env::new();
    let (code, _, err) =
        env.run(&["mcp", "add", "--roots", "none", "a", "--", "cmd"], Duration::from_secs(30));
    assert_eq!(code, 0, "{err}");
    let args = ["mcp", "add", "--roots", "/srv/data", "--roots", "docs", "b", "--", "cmd"];
    let (code, _, err) = env.run(&args, Duration::from_secs(30));
    assert_eq!(code, 0, "{err}");
    let definition = json!({"command": "cmd", "roots": "client", "x-note": "kept"});
    let (code, _, err) = env.run(&["mcp", "add-json", "c", &definition.to_string()], Duration::from_secs(30));
    assert_eq!(code, 0, "{err}");
    let store: Value = serde_json::from_str(&std::fs::read_to_string(env.store()).unwrap_or_default())
        .unwrap_or_else(|e| panic!("store: {e}"));
    assert_eq!(store["mcpServers"]["a"]["roots"], json!("none"));
    assert_eq!(store["mcpServers"]["b"]["roots"], json!(["/srv/data", "docs"]));
    assert_eq!(
        store["mcpServers"]["c"],
        json!({"type": "stdio", "command": "cmd", "roots": "client", "x-note": "kept"})
    );
    for (name, line) in [
        ("a", "  roots: none (no roots offered: the server keeps its own arguments)\n"),
        ("b", "  roots: [\"/srv/data\",\"docs\"]\n"),
        ("c", "  roots: client (under serve, the client's roots; else the workspace root)\n"),
    ] {
        let (code, out, err) = env.run(&["mcp", "get", name], Duration::from_secs(30));
        assert_eq!(code, 0, "{err}");
        assert!(out.contains(line), "{out}");
    }
    let mixed = ["mcp", "add", "--roots", "none", "--roots", "docs", "d", "--", "cmd"];
    let (code, _, err) = env.run(&mixed, Duration::from_secs(30));
    assert_eq!(
        (code, err.lines().next()),
        (
            2,
            Some(
                "toolport: --roots none cannot be combined with other --roots values (a folder of that name is ./none)"
            )
        )
    );

    let message = r#""roots" must be "workspace", "none", "client" or an array of paths"#;
    for bad in [json!("everything"), json!(["/ok", 3]), json!(["  "]), json!({"paths": []}), json!(true)] {
        write_config(&env, json!({ "x": {"command": "cmd", "roots": bad} }), &["x"], json!({}));
        for args in [&["mcp", "list"][..], &["call", "echo"][..]] {
            let (code, _, err) = env.run(args, Duration::from_secs(30));
            let expected = format!("toolport: {}: server \"x\": {message}\n", env.store().display());
            assert_eq!((code, err.as_str()), (2, expected.as_str()), "{bad} {args:?}");
        }
    }
}

/// The reserved-name report of item 7: every one of server-filesystem's reserved names at once,
/// with both fixes, and each fix working.
#[test]
fn filesystem_reserved_names_are_reported_at_once_with_the_fixes() {
    let f = Folders::new();
    let def = json!({ "command": node(), "args": [filesystem_entry(), f.data()], "roots": "none" });
    write_config(&f.env, json!({ "fs": def }), &["fs"], json!({}));
    let message = "MCP tool name conflicts with built-in tool: read_file, write_file. Fix: leave them out \
        (toolport mcp set fs tools.exclude read_file write_file), or prefix every tool with its server's \
        name (toolport workspace set namePolicy namespace)";
    let (code, out, err) = f.env.run(&["mcp", "list"], Duration::from_secs(90));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!("| state=error | workspace=enabled | paused=no | tools=0 | error={message}\n")),
        "{out}"
    );
    let (code, text) = f.call("list_allowed_directories", json!({}));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains(&format!("Warning: MCP unavailable: fs ({message})")), "{text}");

    // Each fix as printed: leaving the two out, then (undone) the namespace policy instead.
    let fixes = printed_commands(message);
    let run = |words: &Vec<String>| {
        let args: Vec<&str> = words.iter().map(String::as_str).collect();
        let (code, _, err) = f.env.run(&args, Duration::from_secs(30));
        assert_eq!(code, 0, "{args:?}: {err}");
    };
    run(&fixes[0]);
    let (code, text) = f.call("list_allowed_directories", json!({}));
    assert_eq!(code, 0, "{text}");
    let (code, _, err) = f.env.run(&["mcp", "unset", "fs", "tools.exclude"], Duration::from_secs(30));
    assert_eq!(code, 0, "{err}");
    run(&fixes[1]);
    let (code, text) = f.call("fs__read_file", json!({"path": f.data().join("a.txt")}));
    assert_eq!((code, text.trim()), (0, "data file"));
}
