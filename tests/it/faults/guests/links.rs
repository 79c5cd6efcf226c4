//! A guest with a read-write folder cannot leave a link in it that leads out (issue 26): the
//! guest itself could never follow one, but the host's programs and agents would. The hostile
//! fixture's `links` tool (`plugins/fixtures/server-hostile`) tries a climbing target, an
//! absolute one, an inside one, and a hard link copying a symbolic link that climbs.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::support::common::Env;
use crate::support::faults::write;
use crate::support::session::Scripted;
use crate::support::wasm::{SMALL_CONNECT_MS, seed_cache};

/// The fixture, built by host/build.rs with the other guests.
fn component() -> PathBuf {
    PathBuf::from(toolport::test_support::PLUGIN_BUILD_DIR).join("server_hostile.wasm")
}

/// Whether anything, even a dangling link, is at `path`.
fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Only the link pointing below its own folder is made; the others are refused as
/// `not-permitted`, each recorded by the host (`not granted: link …`, on the call's answer and
/// the server's row) and logged, and none is on disk. The old host made the climbing link and
/// the hard-linked copy, refusing only the absolute target, and recorded nothing.
#[test]
fn links_leading_out_of_a_granted_folder_are_refused_and_recorded() {
    let env = Env::new();
    let outer = tempfile::tempdir().unwrap_or_else(|e| panic!("temp folder: {e}"));
    let granted = outer.path().join("granted");
    std::fs::create_dir_all(granted.join("dir")).unwrap_or_else(|e| panic!("mkdir: {e}"));
    // The host's own link, pointing inside (at granted/sibling): copied to the folder's top, the
    // same text would point outside.
    std::os::unix::fs::symlink("../sibling", granted.join("dir/up"))
        .unwrap_or_else(|e| panic!("symlink: {e}"));
    let component = component();
    assert!(component.exists(), "{} is missing: host/build.rs builds it", component.display());
    seed_cache(env.home(), &component, &["healthy"], SMALL_CONNECT_MS);
    let def = json!({
        "type": "wasm",
        "component": component,
        "args": ["links"],
        "grants": { "dirs": [{ "host": granted, "mode": "rw" }] },
    });
    let before = write(&env, &[("links", def)], json!({}), json!({}));
    let mut s = Scripted::start(&env);

    let answer = s.run("/call links");
    assert_eq!(
        answer,
        "tool error: not granted: link dir/escape -> ../../outside\n\
         not granted: link dir/absolute -> /etc/passwd\n\
         not granted: link copy -> ../sibling\n\
         symlink dir/escape -> ../../outside: not-permitted\n\
         symlink dir/absolute -> /etc/passwd: not-permitted\n\
         symlink dir/inside -> sub/file: ok\n\
         link copy to dir/up: not-permitted\n"
    );
    for refused in ["dir/escape", "dir/absolute", "copy"] {
        assert!(!exists(&granted.join(refused)), "{refused} was made");
    }
    assert_eq!(
        std::fs::read_link(granted.join("dir/inside")).ok(),
        Some(PathBuf::from("sub/file")),
        "the link pointing inside is made as asked"
    );
    let view = s.run("/mcp");
    let row = view.lines().find(|l| l.starts_with("- links |")).unwrap_or_else(|| panic!("no row:\n{view}"));
    assert!(row.ends_with(" | denied=not granted: link dir/escape -> ../../outside"), "{row}");
    let log = s.stderr();
    assert_eq!(log.matches("denied a link").count(), 3, "one warning per refused link:\n{log}");
    assert!(s.quit().success());
    before.assert_unchanged(&env);
}
