use crate::support::common::toolport;

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
