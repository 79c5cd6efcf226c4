//! Compiled components for the `wasm` server tests, shared between tests and kept between runs.
//!
//! Every test runs the binary on a fresh home, whose plugin cache starts empty, and a
//! debug-built cranelift is slow: the hostile fixture and the built-in tool shape take several
//! seconds per session on 2 busy cores, the 18 MB Python component minutes. So each component is
//! compiled once into a home of its own under `<target>/wasm-peers/` (by running `mcp list`
//! there, the same binary and the same path every test uses), and each test's home gets a copy
//! of that cache folder and its key: the entries stay authenticated by the key that wrote them,
//! and what a test runs is still exactly what the host compiled. The fault suite shares its
//! plugin cache for the same reason.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use serde_json::json;

use crate::support::common::toolport_path;

/// The folder holding the binary's `debug/` (or `release/`): the workspace's target folder.
pub fn target_dir() -> PathBuf {
    let bin = toolport_path();
    bin.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| panic!("no target folder above {}", bin.display()))
}

/// The home whose cache holds `component`'s compiled entry (and the built-in shape's).
pub fn kept_home(component: &Path) -> PathBuf {
    let stem = component.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    target_dir().join("wasm-peers").join(format!("it-home-{stem}"))
}

/// Components already warmed by this process; held while warming, so one compiles at a time.
static WARMED: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// Makes sure `component` is compiled in its kept home, run with `args` (it must connect),
/// giving a cold compile `connect_ms`; a cache hit (a second or two) once an earlier run did it.
pub fn warm(component: &Path, args: &[&str], connect_ms: u64) {
    let mut warmed = WARMED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if warmed.contains(component) {
        return;
    }
    let home = kept_home(component);
    let workspace = home.join("workspace");
    std::fs::create_dir_all(workspace.join(".toolport"))
        .unwrap_or_else(|e| panic!("create {}: {e}", workspace.display()));
    let store = json!({ "mcpServers": { "warm": {
        "type": "wasm", "component": component, "args": args, "timeouts": { "connectMs": connect_ms },
    } } });
    std::fs::write(home.join("mcp.json"), store.to_string())
        .unwrap_or_else(|e| panic!("write {}: {e}", home.join("mcp.json").display()));
    std::fs::write(workspace.join(".toolport/workspace.json"), r#"{"enabledMcpServers":["warm"]}"#)
        .unwrap_or_else(|e| panic!("write the warm-up workspace: {e}"));
    let started = Instant::now();
    let out = std::process::Command::new(toolport_path())
        .arg("--home")
        .arg(&home)
        .arg("--workspace")
        .arg(&workspace)
        .args(["mcp", "list"])
        .env_remove("RUST_LOG")
        .env_remove("TOOLPORT_HOME")
        .output()
        .unwrap_or_else(|e| panic!("run toolport mcp list in {}: {e}", home.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("warm-up of {}: {:?}", component.display(), started.elapsed());
    assert!(
        stdout.lines().any(|l| l.starts_with("- warm | type=wasm | state=connected |")),
        "{} did not connect in the warm-up:\n{stdout}{}",
        component.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    warmed.insert(component.to_path_buf());
}

/// Copies the files of `from` into `to`, created 0700 as the host wants its cache folder
/// (`std::fs::copy` keeps each file's mode: the entries' and the key's 0600).
pub fn copy_files(from: &Path, to: &Path) {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .mode(0o700)
        .recursive(true)
        .create(to)
        .unwrap_or_else(|e| panic!("create {}: {e}", to.display()));
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("read {}: {e}", from.display())) {
        let entry = entry.unwrap_or_else(|e| panic!("read {}: {e}", from.display()));
        if entry.file_type().is_ok_and(|t| t.is_file()) {
            let target = to.join(entry.file_name());
            std::fs::copy(entry.path(), &target)
                .unwrap_or_else(|e| panic!("copy {} to {}: {e}", entry.path().display(), target.display()));
        }
    }
}

/// Warms `component` (see [`warm`]) and gives `home` a copy of its compiled cache and key.
pub fn seed_cache(home: &Path, component: &Path, args: &[&str], connect_ms: u64) {
    warm(component, args, connect_ms);
    let kept = kept_home(component);
    copy_files(&kept.join("cache"), &home.join("cache"));
    std::fs::copy(kept.join("cache.key"), home.join("cache.key"))
        .unwrap_or_else(|e| panic!("copy {}: {e}", kept.join("cache.key").display()));
}

/// What a warm-up of a small component may take: a cold compile of it in a debug build.
pub const SMALL_CONNECT_MS: u64 = 120_000;

/// Runs a build script (`script ARGS… <target>`) that prints the component's path on its last
/// line; that path. Any failure, or a path that is not a file, fails the test.
pub fn built_by(script: &Path, args: &[&str]) -> PathBuf {
    let out = std::process::Command::new("bash")
        .arg(script)
        .args(args)
        .arg(target_dir())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{} {args:?} failed ({}):\n{stdout}{}",
        script.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let path = PathBuf::from(stdout.lines().last().unwrap_or_default().trim());
    assert!(path.is_file(), "{} printed {stdout:?}, which is not a file", script.display());
    path
}
