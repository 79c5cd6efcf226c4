//! One line of the session language (`/mcp …`, `/tools`, `/call`, …) from arbitrary text: the
//! parser (shell-style splitting for `/mcp add` included) must never panic, and surrounding
//! whitespace must never change the result; every command parsed belongs to an action-table
//! entry.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolport::fuzzing::{parse_mcp, parse_session_line as parse};

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else { return };
    let parsed = parse(line);
    let padded = parse(&format!("  {line}\t "));
    assert_eq!(parsed, padded, "whitespace changed the parse");
    if let Ok(command) = parse_mcp(line) {
        assert!(command.action().is_some(), "no table entry for {command:?}");
    }
});
