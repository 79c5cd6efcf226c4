//! The workspace file (`.toolport/workspace.json`) from arbitrary bytes. Nothing may panic, and
//! `enabledMcpServers` must come out trimmed, without blanks or duplicates, in order.
#![no_main]

use std::collections::BTreeSet;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use toolport::edit::parse_json;
use toolport::store::WorkspaceSettings;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let path = Path::new("/fuzz/root/.toolport/workspace.json");
    let Ok(doc) = parse_json(path, text) else { return };
    let Ok(settings) = WorkspaceSettings::from_value(path, &doc) else { return };
    let mut seen = BTreeSet::new();
    for name in &settings.enabled {
        assert!(!name.is_empty(), "blank enabled name kept");
        assert_eq!(name, name.trim(), "untrimmed enabled name");
        assert!(seen.insert(name.clone()), "duplicate enabled name {name:?}");
    }
    // Reading is a pure function of the document.
    let again = WorkspaceSettings::from_value(path, &doc).map(|s| s.enabled);
    assert_eq!(again.ok().as_ref(), Some(&settings.enabled));
});
