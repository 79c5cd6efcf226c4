//! A global store kept in a dotfiles repository and linked into the home: every edit goes
//! through to the link's target, and the link stays a link.

use std::fs;

use serde_json::Value;

use crate::support::common::{Env, toolport_path};

#[test]
fn mcp_add_through_a_symlinked_store_updates_the_target_and_keeps_the_link() {
    let env = Env::new();
    let dotfiles = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dotfiles: {e}"));
    let real = dotfiles.path().join("mcp.json");
    let bin = toolport_path().display().to_string();
    // The neighbour already defined in the real file must survive the edit and keep working.
    let existing = serde_json::json!({
        "mcpServers": { "old": { "type": "stdio", "command": bin, "args": ["demo-server"] } }
    });
    fs::write(&real, existing.to_string()).unwrap_or_else(|e| panic!("write {}: {e}", real.display()));
    std::os::unix::fs::symlink(&real, env.store()).unwrap_or_else(|e| panic!("symlink: {e}"));

    let out = env
        .cmd(["mcp", "add", "--transport", "stdio", "files", "--", &bin, "demo-server", "--prefix", "f_"])
        .output()
        .unwrap_or_else(|e| panic!("mcp add: {e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let meta = fs::symlink_metadata(env.store()).unwrap_or_else(|e| panic!("lstat: {e}"));
    assert!(meta.file_type().is_symlink(), "the store was replaced by a regular file");
    let text = fs::read_to_string(&real).unwrap_or_else(|e| panic!("read {}: {e}", real.display()));
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let names: Vec<&String> = v["mcpServers"].as_object().map(|m| m.keys().collect()).unwrap_or_default();
    assert_eq!(names, ["old", "files"]);
    assert!(!env.home().join("mcp.json.lock").exists(), "the lock belongs beside the target");

    // Both servers, read back through the link, connect.
    for name in ["old", "files"] {
        let out = env.cmd(["mcp", "enable", name]).output().unwrap_or_else(|e| panic!("enable: {e}"));
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let out = env.cmd(["mcp", "list"]).output().unwrap_or_else(|e| panic!("mcp list: {e}"));
    let list = String::from_utf8_lossy(&out.stdout);
    assert!(list.contains("- old | type=stdio | state=connected"), "{list}");
    assert!(list.contains("- files | type=stdio | state=connected"), "{list}");
}
