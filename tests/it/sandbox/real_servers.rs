//! Real servers with `"sandbox": true` do their work within their grants, through the built
//! binary: npm's server-filesystem (a read-only folder: it lists and reads there, and the
//! sandbox, not the server, refuses a read of another folder it was told about and a write
//! into its own), server-memory (its file in a read-write folder), server-everything (nothing
//! granted at all); PyPI's mcp-server-fetch (through the egress proxy: a granted loopback port
//! is fetched, another refused and recorded on the row and in the call's error) and
//! mcp-server-git (a granted repository).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Trap, random_word, real, temp_dir, write_file};
use crate::support::common::Env;
use crate::support::faults::write;
use crate::support::peers::{everything_stdio, filesystem_entry, memory_entry, node, sandbox_peers};
use crate::support::runtime::write_config;
use crate::support::session::Scripted;

/// A session holding `servers` (all enabled) under the workspace keys of `extra`.
fn session(servers: &[(&str, Value)], extra: Value) -> (Env, Scripted) {
    let env = Env::new();
    write(&env, servers, json!({}), extra);
    let session = Scripted::start(&env);
    (env, session)
}

/// `/call <tool> <arguments>`, its answer without the final newline.
fn call(s: &mut Scripted, tool: &str, arguments: Value) -> String {
    s.run(&format!("/call {tool} {arguments}")).trim_end().to_string()
}

/// The row of `name` in `/mcp`.
fn row(s: &mut Scripted, name: &str) -> String {
    let view = s.run("/mcp");
    let start = format!("- {name} |");
    view.lines()
        .find(|l| l.starts_with(&start))
        .unwrap_or_else(|| panic!("no row {name}:\n{view}"))
        .to_string()
}

#[test]
fn filesystem_reads_its_read_only_folder_and_the_sandbox_refuses_the_rest() {
    let data = temp_dir("data");
    let other = temp_dir("other");
    let (data, other_dir) = (real(data.path()), real(other.path()));
    write_file(&data.join("a.txt"), "granted text");
    let secret = random_word("filesystem-secret");
    write_file(&other_dir.join("secret.txt"), &secret);
    // The server is told about both folders; only `data` is granted, read-only.
    let fs = json!({
        "command": node(), "args": [filesystem_entry(), &data, &other_dir], "roots": "none",
        "sandbox": true, "grants": { "dirs": [&data] },
    });
    // Namespaced: two of its tools have names toolport keeps for itself; and no question before
    // `write_file` (destructive), so the write reaches the server and the sandbox answers it.
    let (_env, mut s) = session(&[("fs", fs)], json!({ "namePolicy": "namespace", "confirm": "never" }));

    let listed = call(&mut s, "fs__list_directory", json!({ "path": data }));
    assert_eq!(listed, "[FILE] a.txt");
    assert_eq!(call(&mut s, "fs__read_text_file", json!({ "path": data.join("a.txt") })), "granted text");

    let read = call(&mut s, "fs__read_text_file", json!({ "path": other_dir.join("secret.txt") }));
    assert!(read.starts_with("tool error: ") && read.contains("EACCES"), "{read}");
    assert!(!read.contains(&secret), "{read}");
    let listed = call(&mut s, "fs__list_directory", json!({ "path": other_dir }));
    assert!(listed.starts_with("tool error: ") && listed.contains("EACCES"), "{listed}");

    let written = call(&mut s, "fs__write_file", json!({ "path": data.join("new.txt"), "content": "x" }));
    assert!(written.starts_with("tool error: ") && written.contains("EACCES"), "{written}");
    assert!(!data.join("new.txt").exists(), "written into a read-only grant");
    let row = row(&mut s, "fs");
    assert!(row.starts_with("- fs | type=stdio | state=connected |"), "{row}");
    assert!(s.quit().success());
}

#[test]
fn memory_keeps_its_graph_in_the_read_write_folder() {
    let dir = temp_dir("memory");
    let dir = real(dir.path());
    let file = dir.join("memory.jsonl");
    let memory = json!({
        "command": node(), "args": [memory_entry()], "env": { "MEMORY_FILE_PATH": &file },
        "sandbox": true, "grants": { "dirs": [{ "host": &dir, "mode": "rw" }] },
    });
    let (_env, mut s) = session(&[("memory", memory)], json!({}));
    let entity =
        json!({ "name": "toolport", "entityType": "project", "observations": ["runs servers confined"] });
    let created = call(&mut s, "create_entities", json!({ "entities": [entity] }));
    assert!(created.contains("runs servers confined") && !created.starts_with("tool error"), "{created}");
    let graph = call(&mut s, "read_graph", json!({}));
    assert!(graph.contains("\"toolport\"") && graph.contains("runs servers confined"), "{graph}");
    assert!(s.quit().success());
    let kept = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    assert!(kept.contains("runs servers confined"), "{kept}");
}

#[test]
fn fetch_reaches_its_granted_host_through_the_proxy_and_the_refusal_is_recorded() {
    let granted = Trap::http("hello from the granted server");
    let other = Trap::http("hello from the other server");
    let (g, o) = (granted.port(), other.port());
    let fetch = json!({
        "command": sandbox_peers().join("venv/bin/mcp-server-fetch"),
        "args": ["--ignore-robots-txt", "--allow-private-ips"],
        "sandbox": true, "grants": { "hosts": [format!("http://127.0.0.1:{g}")] },
    });
    let (_env, mut s) = session(&[("fetch", fetch)], json!({}));

    let page = call(&mut s, "fetch", json!({ "url": format!("http://127.0.0.1:{g}/page") }));
    assert!(page.contains("hello from the granted server") && !page.starts_with("tool error"), "{page}");
    let before = row(&mut s, "fetch");
    assert!(
        before.starts_with("- fetch | type=stdio | state=connected |") && !before.contains("denied="),
        "{before}"
    );

    let refused = call(&mut s, "fetch", json!({ "url": format!("http://127.0.0.1:{o}/") }));
    assert!(refused.starts_with(&format!("tool error: not granted: http://127.0.0.1:{o}")), "{refused}");
    assert!(!refused.contains("the other server"), "{refused}");
    let after = row(&mut s, "fetch");
    assert!(after.ends_with(&format!(" | denied=not granted: http://127.0.0.1:{o}")), "{after}");
    assert_eq!(other.hits(), 0, "the port not granted was reached");
    // The refusal cost that call only.
    let again = call(&mut s, "fetch", json!({ "url": format!("http://127.0.0.1:{g}/again") }));
    assert!(again.contains("hello from the granted server"), "{again}");
    assert!(s.quit().success());
}

/// `git <args>` in `repo`, with an identity of its own (the machine's is none of the test's
/// business); panics unless it succeeds.
fn git(repo: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=Sandbox Test",
            "-c",
            "user.email=sandbox@example.org",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap_or_else(|e| panic!("git {args:?}: {e}"));
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn git_reads_the_status_and_log_of_its_granted_repository() {
    let repo = temp_dir("repo");
    let repo = real(repo.path());
    git(&repo, &["init", "-q"]);
    write_file(&repo.join("README.md"), "a repository in a sandbox\n");
    git(&repo, &["add", "README.md"]);
    git(&repo, &["commit", "-q", "-m", "first commit of the sandbox test"]);
    write_file(&repo.join("untracked.txt"), "new\n");
    let server = json!({
        "command": sandbox_peers().join("venv/bin/mcp-server-git"), "args": ["--repository", &repo],
        "sandbox": true, "grants": { "dirs": [{ "host": &repo, "mode": "rw" }] },
    });
    let (_env, mut s) = session(&[("git", server)], json!({}));
    let status = call(&mut s, "git_status", json!({ "repo_path": repo }));
    assert!(status.contains("On branch main") && status.contains("untracked.txt"), "{status}");
    let log = call(&mut s, "git_log", json!({ "repo_path": repo }));
    assert!(log.contains("first commit of the sandbox test") && log.contains("Sandbox Test"), "{log}");
    assert!(s.quit().success());
}

#[test]
fn everything_lists_and_echoes_with_nothing_granted() {
    let env = Env::new();
    let mut everything = everything_stdio();
    everything["sandbox"] = json!(true);
    write_config(&env, json!({ "everything": everything }), &["everything"], json!({}));
    let (code, out, err) = env.run(&["mcp", "list"], Duration::from_secs(60));
    assert_eq!(code, 0, "{err}");
    let row = out.lines().find(|l| l.starts_with("- everything |")).unwrap_or_default();
    assert!(
        row.starts_with(
            "- everything | type=stdio | state=connected | workspace=enabled | paused=no | tools="
        ),
        "{out}{err}"
    );
    assert!(!row.contains("tools=0") && !row.contains("denied="), "{row}");
    let (code, out, err) =
        env.run(&["call", "echo", r#"{"message":"hello from the sandbox"}"#], Duration::from_secs(60));
    assert_eq!((code, out.as_str()), (0, "Echo: hello from the sandbox\n"), "{err}");
}
