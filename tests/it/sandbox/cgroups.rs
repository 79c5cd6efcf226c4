//! The pids cgroup a launcher makes when toolport runs as root (`RLIMIT_NPROC` does not bind
//! root): one left behind by a toolport that ended before removing it (a one-shot command, a
//! kill) must neither pile up nor stop a later launcher whose pid is the same.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use crate::support::common::Env;
use crate::support::runtime::{demo, write_config};

/// The hierarchy a launcher running as root uses: v1's `pids`, or the unified one with `pids`.
fn pids_hierarchy() -> Option<PathBuf> {
    let v1 = PathBuf::from("/sys/fs/cgroup/pids");
    if v1.is_dir() {
        return Some(v1);
    }
    let controllers = std::fs::read_to_string("/sys/fs/cgroup/cgroup.controllers").unwrap_or_default();
    controllers.split_whitespace().any(|c| c == "pids").then(|| PathBuf::from("/sys/fs/cgroup"))
}

/// A pid no process has now: one of a child that has been reaped.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap_or_else(|e| panic!("spawn true: {e}"));
    let pid = child.id();
    child.wait().unwrap_or_else(|e| panic!("wait: {e}"));
    pid
}

#[test]
fn a_cgroup_left_by_an_ended_launcher_is_removed_by_the_next() {
    let uid = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let root = uid.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    assert!(root, "the tests run as root, as CI does: the pids cgroup is root's path");
    let hierarchy = pids_hierarchy().unwrap_or_else(|| panic!("no pids cgroup controller is mounted"));
    let left = hierarchy.join(format!("toolport-sandbox-{}", dead_pid()));
    std::fs::create_dir(&left).unwrap_or_else(|e| panic!("plant {}: {e}", left.display()));

    let env = Env::new();
    let mut boxed = demo(&[]);
    boxed["sandbox"] = json!(true);
    write_config(&env, json!({ "boxed": boxed }), &["boxed"], json!({}));
    let (code, out, err) = env.run(&["mcp", "list", "--json"], Duration::from_secs(60));
    let swept = !left.exists();
    let _ = std::fs::remove_dir(&left);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("\"state\": \"connected\""), "{out}{err}");
    assert!(swept, "{} was left in place", left.display());
}
