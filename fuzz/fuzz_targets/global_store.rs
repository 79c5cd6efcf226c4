//! The global store (`mcp.json`) from arbitrary bytes: parse, normalise, validate, resolve
//! against a workspace, expand variables and render the status view. Nothing may panic, and
//! what the normaliser promises must hold for every accepted document.
#![no_main]

use std::collections::BTreeSet;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use toolport::fuzzing::missing_rows;
use toolport::store::{GlobalStore, WorkspaceSettings, resolve, validate};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let path = Path::new("/fuzz/home/mcp.json");
    let Ok(store) = GlobalStore::parse(path, text) else { return };
    let mut seen = BTreeSet::new();
    for def in &store.servers {
        // Names are trimmed, never blank, never repeated.
        assert!(!def.name.is_empty(), "blank server name kept");
        assert_eq!(def.name, def.name.trim(), "untrimmed server name");
        assert!(seen.insert(def.name.clone()), "duplicate server name {:?}", def.name);
        let _ = validate(&def, &store.plugins);
        let _ = def.expanded(|name| (name.len() % 2 == 0).then(|| format!("v-{name}")));
    }
    for plugin in &store.plugins {
        assert!(
            !plugin.name.is_empty() && plugin.name == plugin.name.trim(),
            "plugin name {:?}",
            plugin.name
        );
    }
    // Enable every server plus one that does not exist, pause the first.
    let mut ghost = String::from("ghost");
    while store.server(&ghost).is_some() {
        ghost.push('_');
    }
    let mut settings = WorkspaceSettings::default();
    settings.enabled = store.servers.iter().map(|s| s.name.clone()).chain([ghost]).collect();
    let paused: BTreeSet<String> = store.servers.first().map(|s| s.name.clone()).into_iter().collect();
    let resolved = resolve(&store, &settings, &paused);
    assert_eq!(resolved.servers.len(), store.servers.len(), "one resolved server per definition");
    let rows = missing_rows(&resolved);
    assert_eq!(rows.len(), 1, "exactly the ghost is missing");
    let _ = toolport::render_status(&rows, None);
    let _ = toolport::render_status_json(&rows, None);
});
