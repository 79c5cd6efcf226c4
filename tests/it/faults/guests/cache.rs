//! The fault suite, the compiled cache (issue 11, item 10): loading an entry is an `unsafe`
//! deserialize of machine code, so the host must use only entries it wrote itself, for that
//! very component, in a folder no one else can write. An entry copied under another
//! component's key, an entry that is a symlink to a file elsewhere, and a world-writable cache
//! folder are each rebuilt or refused, and the plugin (and its neighbour) still load and work.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolport::{CacheOutcome, PluginHost, ServerDef, ToolInfo};

/// A home folder with the cache where toolport keeps it, `<home>/cache`.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Self {
        Self { dir: tempfile::tempdir().unwrap_or_else(|e| panic!("{e}")) }
    }

    fn cache(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    /// Loads the built-in shape `name` through a fresh host on this cache and checks it still
    /// shapes a tool; returns how its code was obtained.
    async fn load(&self, name: &str) -> CacheOutcome {
        let host = PluginHost::new(Some(self.cache()), &[]).unwrap_or_else(|e| panic!("{e:#}"));
        let shape = host.tool_shape(name).unwrap_or_else(|e| panic!("{e}"));
        let out = shape.convert(&demo(), &[tool()]).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out, vec![expected(name)], "{name} must shape as itself");
        host.cache_outcome(name).unwrap_or_else(|| panic!("{name} not loaded"))
    }

    /// The cache's entries, in no particular order.
    fn entries(&self) -> Vec<PathBuf> {
        let list = std::fs::read_dir(self.cache()).unwrap_or_else(|e| panic!("{e}"));
        list.map(|e| e.unwrap_or_else(|e| panic!("{e}")).path()).collect()
    }

    /// The entry of `name`, after loading only it into an empty cache.
    async fn only_entry_of(&self, name: &str) -> PathBuf {
        assert_eq!(self.load(name).await, CacheOutcome::Compiled);
        let entries = self.entries();
        assert_eq!(entries.len(), 1, "{entries:?}");
        entries[0].clone()
    }
}

fn demo() -> ServerDef {
    ServerDef { name: "demo".into(), command: Some("demo".into()), ..ServerDef::default() }
}

fn tool() -> ToolInfo {
    ToolInfo {
        name: "ping".into(),
        title: None,
        description: None,
        input_schema: json!({"type": "object"}),
        output_schema: None,
        annotations: None,
    }
}

/// What each built-in shape makes of [`tool`]: the two differ, so a swapped entry shows.
fn expected(name: &str) -> Value {
    match name {
        "openai" => {
            json!({"type": "function", "function": {"name": "ping", "parameters": {"type": "object"}}})
        }
        _ => json!({"name": "ping", "input_schema": {"type": "object"}}),
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).map(|m| m.mode() & 0o777).unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn the_cache_is_private_and_its_key_lives_outside_it() {
    let home = Home::new();
    home.only_entry_of("openai").await;
    assert_eq!(mode(&home.cache()), 0o700);
    let key = home.dir.path().join("cache.key");
    assert_eq!(mode(&key), 0o600);
    assert_eq!(std::fs::metadata(&key).map(|m| m.len()).ok(), Some(32));
    assert_eq!(home.load("openai").await, CacheOutcome::Hit);
}

#[tokio::test]
async fn an_entry_copied_under_another_key_is_rebuilt() {
    let home = Home::new();
    let openai = home.only_entry_of("openai").await;
    assert_eq!(home.load("anthropic").await, CacheOutcome::Compiled);
    let anthropic = home.entries().into_iter().find(|e| *e != openai).unwrap_or_else(|| panic!("no entry"));
    // A valid entry, checksum and all, under the other component's name.
    std::fs::copy(&openai, &anthropic).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(home.load("anthropic").await, CacheOutcome::Rebuilt);
    assert_eq!(home.load("anthropic").await, CacheOutcome::Hit);
    assert_eq!(home.load("openai").await, CacheOutcome::Hit, "the neighbour's entry is untouched");
}

#[tokio::test]
async fn a_symlinked_entry_is_not_followed() {
    let home = Home::new();
    let entry = home.only_entry_of("openai").await;
    // The link points at a valid entry outside the cache: following it would be a hit.
    let outside = home.dir.path().join("elsewhere.cwasm");
    std::fs::rename(&entry, &outside).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(&outside, &entry).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(home.load("openai").await, CacheOutcome::Rebuilt);
    let meta = std::fs::symlink_metadata(&entry).unwrap_or_else(|e| panic!("{e}"));
    assert!(meta.file_type().is_file(), "the link is replaced by an entry of the host's own");
    assert!(outside.exists(), "the file the link pointed at is left alone");
    assert_eq!(home.load("openai").await, CacheOutcome::Hit);
}

#[tokio::test]
async fn a_world_writable_cache_folder_is_refused() {
    let home = Home::new();
    let entry = home.only_entry_of("openai").await;
    let before = std::fs::read(&entry).unwrap_or_else(|e| panic!("{e}"));
    let chmod = |m: u32| {
        std::fs::set_permissions(home.cache(), std::fs::Permissions::from_mode(m))
            .unwrap_or_else(|e| panic!("{e}"))
    };
    chmod(0o777);
    // Compiled in memory: still works, and nothing was read from or written to the folder.
    assert_eq!(home.load("openai").await, CacheOutcome::Refused);
    assert_eq!(home.load("anthropic").await, CacheOutcome::Refused);
    assert_eq!(home.entries(), vec![entry.clone()]);
    assert_eq!(std::fs::read(&entry).ok(), Some(before));
    chmod(0o700);
    assert_eq!(home.load("openai").await, CacheOutcome::Hit);
}
