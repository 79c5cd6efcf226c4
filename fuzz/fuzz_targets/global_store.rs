//! The global store (`mcp.json`) from arbitrary bytes: parse, normalise, validate, resolve
//! against a workspace, expand variables and render the status view. Nothing may panic, and
//! what the normaliser promises must hold for every accepted document.
#![no_main]

use std::collections::BTreeSet;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use toolport::config::{GlobalStore, WorkspaceSettings, offline_status, resolve, validate};

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
    let rows = offline_status(&resolved);
    assert_eq!(rows.len(), store.servers.len() + 1, "one row per server plus the missing one");
    let _ = toolport::status::render(&rows, None);
    let _ = toolport::status::render_json(&rows, None);
});
