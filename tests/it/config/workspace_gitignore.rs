//! `.toolport/` is meant to be committed, its lock files are not: after the commands that make
//! them (`mcp enable` takes `workspace.json.lock`, a first sight pinned in `tools.lock` takes
//! `tools.lock.lock`), a real `git status` shows only the files a project commits, and a
//! user's own `.toolport/.gitignore` keeps every line it had.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::support::common::{Env, toolport_path};

fn ok(env: &Env, args: &[&str]) -> String {
    let o = env.cmd(args).output().unwrap_or_else(|e| panic!("{args:?}: {e}"));
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn git(root: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", root)
        .output()
        .unwrap_or_else(|e| panic!("git {args:?}: {e}"));
    assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Adds and enables a demo server, then lists it (the first sight pins its tools).
fn enable_and_pin(env: &Env) {
    let bin = toolport_path().display().to_string();
    ok(env, &["mcp", "add", "demo", "--", &bin, "demo-server"]);
    ok(env, &["mcp", "enable", "demo"]);
    ok(env, &["mcp", "list"]);
    let dir = env.root().join(".toolport");
    for lock in ["workspace.json.lock", "tools.lock.lock", "tools.lock"] {
        assert!(dir.join(lock).exists(), "{lock} was not made, so this test shows nothing");
    }
}

#[test]
fn git_status_shows_only_the_committed_workspace_files() {
    let env = Env::new();
    git(env.root(), &["init", "-q"]);
    enable_and_pin(&env);
    assert_eq!(
        git(env.root(), &["status", "--porcelain", "--untracked-files=all"]),
        "?? .toolport/.gitignore\n?? .toolport/tools.lock\n?? .toolport/workspace.json\n"
    );
    assert_eq!(
        fs::read_to_string(env.root().join(".toolport/.gitignore")).unwrap_or_default(),
        "# toolport's lock files: each machine's own (the rest of .toolport/ is meant to be committed)\n\
         tools.lock.lock\nworkspace.json.lock\n"
    );
}

#[test]
fn a_users_own_gitignore_keeps_its_lines_and_gets_the_missing_ones() {
    let env = Env::new();
    git(env.root(), &["init", "-q"]);
    let dir = env.root().join(".toolport");
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    // Committed without the lock files' lines, and a line of the user's own, unterminated.
    fs::write(dir.join(".gitignore"), "# mine\nscratch.json\nworkspace.json.lock")
        .unwrap_or_else(|e| panic!("{e}"));
    fs::write(dir.join("scratch.json"), "{}").unwrap_or_else(|e| panic!("{e}"));
    git(env.root(), &["add", ".toolport/.gitignore"]);
    git(env.root(), &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "mine"]);
    enable_and_pin(&env);
    assert_eq!(
        fs::read_to_string(dir.join(".gitignore")).unwrap_or_default(),
        "# mine\nscratch.json\nworkspace.json.lock\ntools.lock.lock\n"
    );
    assert_eq!(
        git(env.root(), &["status", "--porcelain", "--untracked-files=all"]),
        " M .toolport/.gitignore\n?? .toolport/tools.lock\n?? .toolport/workspace.json\n"
    );
}
