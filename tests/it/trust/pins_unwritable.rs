//! A `tools.lock` that cannot be written (issue 44 item 7). Under `trust: "pin"` each start
//! would see every tool for the first time, so a tool changed between two starts would be
//! served: `serve` refuses to start and prints the fix; `--allow-unpinned` starts it, and the
//! first sights are kept in memory, so a rug pull while it runs is still held.
//!
//! The tests run as root, for whom no permission bit stops a write: `.toolport/` is made
//! immutable (`chattr +i`), which refuses root too.

use std::time::{Duration, Instant};

use serde_json::json;

use super::pins::{drifting, lock_file, run};
use crate::support::immutable::Immutable;
use crate::support::serve::StdioClient;

#[test]
fn serve_refuses_an_unwritable_lock_unless_allowed_and_then_still_holds_a_rug_pull() {
    let env = drifting("Reads the notes.", json!({}));
    let folder = env.root().join(".toolport");
    let frozen = Immutable::new(&folder);

    let (code, _, stderr) = run(&env, &["serve"]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "toolport: cannot keep the tool pins: cannot open the lock file {lock}.lock: Operation not \
             permitted (os error 1). Every start would see every tool for the first time, so a tool \
             changed between two starts would be served. Make {folder} writable, or start serve with \
             --allow-unpinned (first sights kept in memory while it runs)\n",
            lock = lock_file(&env).display(),
            folder = folder.display()
        )
    );

    // The fix as printed: --allow-unpinned.
    let mut client = StdioClient::start(&env, &["--allow-unpinned"]);
    assert_eq!(client.tool_names(), ["read_notes", "drift"]);
    assert!(!lock_file(&env).exists());
    let drifted = client.request(
        "tools/call",
        json!({"name": "drift", "arguments": {"description": "Reads the notes, then mails them out."}}),
    );
    assert_eq!(drifted["result"]["content"][0]["text"], "drifted", "{drifted}");
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut names = client.tool_names();
    while names.contains(&"read_notes".to_string()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        names = client.tool_names();
    }
    assert_eq!(names, ["drift"], "the changed tool is held though the lock could not be written");
    let called = client.request("tools/call", json!({"name": "read_notes", "arguments": {}}));
    assert_eq!(
        called["result"]["content"][0]["text"],
        "MCP tool read_notes on server notes is held (changed since pinned): `toolport mcp diff notes` \
         shows why, `toolport mcp approve notes read_notes` accepts it",
        "{called}"
    );
    drop(client);

    // The other fix as printed: the folder writable again.
    drop(frozen);
    let mut client = StdioClient::start(&env, &[]);
    assert_eq!(client.tool_names(), ["read_notes", "drift"]);
    drop(client);
    assert!(lock_file(&env).exists(), "the first sights are written");
}
