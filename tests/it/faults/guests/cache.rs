//! The fault suite, the compiled cache (issue 11, item 10): loading an entry is an `unsafe`
//! deserialize of machine code, so the host must use only entries it wrote itself, for that
//! very component, in a folder no one else can write. An entry copied under another
//! component's key, an entry that is a symlink to a file elsewhere, and a world-writable cache
//! folder are each rebuilt or refused, and the plugin (and its neighbour) still load and work.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolport::plugins::{CacheOutcome, PluginHost, ToolInfo};
use toolport::store::ServerDef;

use crate::support::common::Env;
use crate::support::runtime::{demo as demo_server, write_config};

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

    /// Loads the built-in shape `name` through a fresh host on this cache (the built-ins kept
    /// in it too, not in the user's shared cache) and checks it still shapes a tool; returns
    /// how its code was obtained.
    async fn load(&self, name: &str) -> CacheOutcome {
        self.load_with(name, &self.cache()).await
    }

    /// [`Home::load`] with the built-ins' code kept in `builtins`, as in the user's shared
    /// cache (`$TOOLPORT_CACHE_DIR/builtins`).
    async fn load_with(&self, name: &str, builtins: &Path) -> CacheOutcome {
        let host = PluginHost::with_caches(Some(self.cache()), Some(builtins.to_path_buf()), &[])
            .unwrap_or_else(|e| panic!("{e:#}"));
        let shape = host.tool_shape(name).unwrap_or_else(|e| panic!("{e}"));
        let out = shape.convert(&demo(), &[tool()]).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out, vec![expected(name)], "{name} must shape as itself");
        host.cache_outcome(name).unwrap_or_else(|| panic!("{name} not loaded"))
    }

    /// The cache's entries, in no particular order.
    fn entries(&self) -> Vec<PathBuf> {
        entries(&self.cache())
    }

    /// The entry of `name`, after loading only it into an empty cache.
    async fn only_entry_of(&self, name: &str) -> PathBuf {
        assert_eq!(self.load(name).await, CacheOutcome::Compiled);
        let entries = self.entries();
        assert_eq!(entries.len(), 1, "{entries:?}");
        entries[0].clone()
    }
}

/// The entries of the cache folder `dir`, in no particular order.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let list = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{e}"));
    list.map(|e| e.unwrap_or_else(|e| panic!("{e}")).path()).collect()
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

/// The user's shared cache of the built-ins (issue 31): a second home reuses the code the first
/// one compiled, and keeps none of it in its own cache.
#[tokio::test]
async fn a_second_home_reuses_the_shared_builtin() {
    let shared = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let builtins = shared.path().join("builtins");
    let (first, second) = (Home::new(), Home::new());
    assert_eq!(first.load_with("openai", &builtins).await, CacheOutcome::Compiled);
    assert_eq!(second.load_with("openai", &builtins).await, CacheOutcome::Hit);
    assert_eq!(entries(&builtins).len(), 1);
    assert_eq!(mode(&builtins), 0o700);
    assert_eq!(mode(&shared.path().join("builtins.key")), 0o600, "the key lives beside the folder");
    assert!(!second.cache().exists(), "nothing of the built-in lands in the home's own cache");
}

/// A corrupt entry in the shared cache is rebuilt by whichever home meets it first, and the
/// others then load the rebuilt one.
#[tokio::test]
async fn a_corrupt_shared_entry_is_rebuilt() {
    let shared = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let builtins = shared.path().join("builtins");
    let (first, second) = (Home::new(), Home::new());
    assert_eq!(first.load_with("openai", &builtins).await, CacheOutcome::Compiled);
    let entry = entries(&builtins).pop().unwrap_or_else(|| panic!("no entry"));
    let mut bytes = std::fs::read(&entry).unwrap_or_else(|e| panic!("{e}"));
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&entry, &bytes).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(second.load_with("openai", &builtins).await, CacheOutcome::Rebuilt);
    assert_eq!(first.load_with("openai", &builtins).await, CacheOutcome::Hit);
}

/// A shared folder others can write is not used, by any home: the built-in is compiled in
/// memory and nothing is read from or written to the folder.
#[tokio::test]
async fn an_untrusted_shared_folder_is_refused() {
    let shared = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let builtins = shared.path().join("builtins");
    let home = Home::new();
    assert_eq!(home.load_with("openai", &builtins).await, CacheOutcome::Compiled);
    let before = entries(&builtins);
    let chmod = |m: u32| {
        std::fs::set_permissions(&builtins, std::fs::Permissions::from_mode(m))
            .unwrap_or_else(|e| panic!("{e}"))
    };
    chmod(0o777);
    assert_eq!(Home::new().load_with("openai", &builtins).await, CacheOutcome::Refused);
    assert_eq!(Home::new().load_with("anthropic", &builtins).await, CacheOutcome::Refused);
    assert_eq!(entries(&builtins), before);
    chmod(0o700);
    assert_eq!(Home::new().load_with("openai", &builtins).await, CacheOutcome::Hit);
}

/// The binary names the shared cache from `TOOLPORT_CACHE_DIR`: the default shape a first
/// `tools` on a fresh home loads is compiled into it once, and a second fresh home finds it
/// there (its own `cache/` gets nothing of it).
#[test]
fn fresh_homes_share_the_cache_named_by_toolport_cache_dir() {
    let shared = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let tools = |env: &Env| {
        write_config(env, json!({ "demo": demo_server(&[]) }), &["demo"], json!({}));
        let out = env
            .cmd(["tools", "--json"])
            .env("TOOLPORT_CACHE_DIR", shared.path())
            .output()
            .unwrap_or_else(|e| panic!("toolport tools: {e}"));
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    let (first, second) = (Env::new(), Env::new());
    tools(&first);
    let compiled = entries(&shared.path().join("builtins"));
    assert_eq!(compiled.len(), 1, "the openai shape: {compiled:?}");
    tools(&second);
    assert_eq!(entries(&shared.path().join("builtins")), compiled, "reused, not compiled again");
    assert!(!second.home().join("cache").exists(), "nothing of the built-in in the home's cache");
}
