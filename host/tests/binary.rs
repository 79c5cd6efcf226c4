//! Checks of the built binary itself. Besides what they assert, their presence makes
//! `cargo test --workspace` build `target/<profile>/toolport`, which the black-box suite in
//! `tests/` runs (a package's binaries are built only for its own integration tests).

use std::process::Command;

fn toolport() -> Command {
    Command::new(env!("CARGO_BIN_EXE_toolport"))
}

#[test]
fn version_names_the_package_version() {
    let out = toolport().arg("--version").output().expect("run toolport");
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("toolport {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn bad_usage_exits_2() {
    let out = toolport().arg("no-such-command").output().expect("run toolport");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-command"));
}

#[test]
fn an_empty_home_lists_nothing_and_writes_nothing() {
    let home = tempfile::tempdir().expect("temp home");
    let ws = tempfile::tempdir().expect("temp workspace");
    let out = toolport()
        .args(["mcp", "list"])
        .arg("--home")
        .arg(home.path())
        .arg("--workspace")
        .arg(ws.path())
        .output()
        .expect("run toolport");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "mcp: (none)\n");
    assert_eq!(std::fs::read_dir(home.path()).expect("read home").count(), 0);
}
