use crate::support::common::{shared_cache, toolport};

#[test]
fn help_lists_the_commands() {
    let out = toolport().arg("--help").output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for cmd in ["mcp", "tools", "call", "session", "acp", "plugin", "demo"] {
        assert!(text.contains(cmd), "--help lacks {cmd}: {text}");
    }
}

/// `toolport demo`, the README's first command: every state in the status view, real calls,
/// and the sandboxed `files` server reading the workspace it was granted and refused the way
/// out and a write, all on a temporary home that is gone afterwards.
#[test]
fn the_demo_tours_every_state_and_a_sandboxed_server() {
    let out = toolport()
        .arg("demo")
        .env_remove("RUST_LOG")
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    for line in [
        "- files | type=stdio | state=connected | workspace=enabled | paused=no | tools=",
        "- twin | type=stdio | state=error |",
        "- later | type=stdio | state=paused |",
        "- spare | type=stdio | state=disabled |",
        "- ghost | type=(unknown) | state=missing |",
        "- notes | type=wasm | state=connected | workspace=enabled | paused=no | tools=9",
        "call math_add {\"a\": 2, \"b\": 3}\n  -> 5",
        "  -> # A demo workspace\n     notes can read this file, and nothing outside it.",
        "  -> isError=true refused: /workspace/../home/mcp.json: paths with '..' are not allowed",
        "  -> isError=true refused: /workspace/new.txt is in a read-only folder",
    ] {
        assert!(text.contains(line), "the demo lacks {line:?}:\n{text}");
    }
    let temp = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("The servers are stopped and ").and_then(|l| l.strip_suffix(" is removed."))
        })
        .unwrap_or_else(|| panic!("no closing line:\n{text}"));
    assert!(!std::path::Path::new(temp).exists(), "{temp} is left behind");
}

/// `toolport demo` run by a user with servers, pins and audit files of their own: it still
/// tours every state, and afterwards every file under `$HOME` is byte for byte what it was (the
/// shared compiled cache aside, kept here outside the home so the digest covers all of it). It
/// used to append its calls and first sights to the user's `~/.toolport/audit`, tagged with
/// the project it was run in, and `mcp get files` then showed the demo's pins.
#[test]
fn the_demo_leaves_the_users_home_as_it_was() {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let write = |rel: &str, text: &str| {
        let path = home.path().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    };
    write(
        ".toolport/mcp.json",
        r#"{"mcpServers": {"files": {"type": "stdio", "command": "my-files-server"}}}"#,
    );
    write(".toolport/audit/calls.jsonl", "{\"mine\": 1}\n");
    write(".toolport/audit/decisions.jsonl", "{\"mine\": 2}\n");
    write("project/.toolport/workspace.json", r#"{"enabledMcpServers": ["files"]}"#);
    write("project/.toolport/tools.lock", "{\"version\": 1}\n");
    let before = tree(home.path());

    let out = toolport()
        .arg("demo")
        .current_dir(home.path().join("project"))
        .env("HOME", home.path())
        .env("TOOLPORT_CACHE_DIR", shared_cache())
        .env_remove("XDG_CACHE_HOME")
        .env_remove("TOOLPORT_HOME")
        .env_remove("RUST_LOG")
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    for line in ["call math_add {\"a\": 2, \"b\": 3}\n  -> 5", "- files | type=stdio | state=connected |"] {
        assert!(text.contains(line), "the demo lacks {line:?}:\n{text}");
    }

    let after = tree(home.path());
    let changed: Vec<&String> = before
        .keys()
        .chain(after.keys())
        .filter(|path| before.get(*path) != after.get(*path))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert!(changed.is_empty(), "the demo changed the user's home: {changed:?}");
}

/// Every entry under `root` but the documented shared cache (`.cache/toolport`): its path,
/// and its bytes (a folder: empty; a link: its target).
fn tree(root: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut entries = std::collections::BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
            let rel = path.strip_prefix(root).unwrap_or(&path).display().to_string();
            if rel == ".cache/toolport" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap_or_else(|e| panic!("{e}"));
            let bytes = if meta.is_symlink() {
                std::fs::read_link(&path).map(|t| t.display().to_string().into_bytes()).unwrap_or_default()
            } else if meta.is_dir() {
                todo.push(path.clone());
                Vec::new()
            } else {
                std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            };
            entries.insert(rel, bytes);
        }
    }
    entries
}
