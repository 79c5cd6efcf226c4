//! Workspace discovery climbs from the current folder only through folders the user owns (as
//! git's `safe.directory`): another user's `.toolport/` further up is skipped with a warning.
//! The suite runs as root, so "another user" is a folder chowned to `nobody` (uid 65534).

use std::fs;
use std::path::Path;
use std::process::Output;

use crate::support::common::toolport;

const NOBODY: u32 = 65534;

/// `toolport --home <home> mcp list` in `cwd`, without `--workspace`: discovery decides.
fn list_in(cwd: &Path, home: &Path) -> Output {
    toolport()
        .current_dir(cwd)
        .arg("--home")
        .arg(home)
        .args(["mcp", "list"])
        .env_remove("RUST_LOG")
        .env_remove("TOOLPORT_HOME")
        .output()
        .unwrap_or_else(|e| panic!("mcp list: {e}"))
}

/// A store defining `name` (never started: a definition a workspace may or may not enable).
fn store_with(home: &Path, name: &str) {
    mkdir(home);
    let store =
        format!(r#"{{"mcpServers":{{"{name}":{{"type":"stdio","command":"/nonexistent/{name}"}}}}}}"#);
    fs::write(home.join("mcp.json"), store).unwrap_or_else(|e| panic!("write store: {e}"));
}

fn chown(path: &Path, uid: u32) {
    std::os::unix::fs::chown(path, Some(uid), Some(uid))
        .unwrap_or_else(|e| panic!("chown {}: {e}", path.display()));
}

fn mkdir(path: &Path) {
    fs::create_dir_all(path).unwrap_or_else(|e| panic!("mkdir {}: {e}", path.display()));
}

#[test]
fn another_users_workspace_up_the_tree_is_skipped_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("temp: {e}"));
    let home = tmp.path().join("home");
    store_with(&home, "planted");
    // theirs/ and its .toolport belong to nobody; theirs/mine is ours (we created it).
    let theirs = tmp.path().join("theirs");
    let mine = theirs.join("mine");
    mkdir(&theirs.join(".toolport"));
    mkdir(&mine);
    fs::write(theirs.join(".toolport/workspace.json"), r#"{"enabledMcpServers":["planted"]}"#)
        .unwrap_or_else(|e| panic!("write: {e}"));
    chown(&theirs.join(".toolport/workspace.json"), NOBODY);
    chown(&theirs.join(".toolport"), NOBODY);
    chown(&theirs, NOBODY);

    let o = list_in(&mine, &home);
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("- planted | type=stdio | state=disabled | workspace=disabled"), "{stdout}");
    let expected = format!("workspaceConfig={}\n", mine.join(".toolport/workspace.json").display());
    assert!(stdout.ends_with(&expected), "{stdout}");
    let uid = fs::metadata(&mine).map(|m| std::os::unix::fs::MetadataExt::uid(&m)).unwrap_or_default();
    assert_eq!(
        stderr,
        format!(
            "Warning: not using the workspace {t}: {t} is owned by uid {NOBODY}, not by you (uid {uid}); \
             pass --workspace {t} to use it\n",
            t = theirs.display()
        )
    );
}

#[test]
fn a_workspace_of_ones_own_up_the_tree_is_still_found() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("temp: {e}"));
    let home = tmp.path().join("home");
    store_with(&home, "mine");
    let ours = tmp.path().join("ours");
    let deep = ours.join("a/b");
    mkdir(&ours.join(".toolport"));
    mkdir(&deep);
    fs::write(ours.join(".toolport/workspace.json"), r#"{"enabledMcpServers":["mine"]}"#)
        .unwrap_or_else(|e| panic!("write: {e}"));
    let o = list_in(&deep, &home);
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("- mine | type=stdio | state=error | workspace=enabled"), "{stdout}");
    assert!(
        stdout.ends_with(&format!("workspaceConfig={}\n", ours.join(".toolport/workspace.json").display()))
    );
    assert_eq!(stderr, "");
}
