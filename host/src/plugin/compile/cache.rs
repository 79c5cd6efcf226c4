//! Compile once: compiled components cached under `<home>/cache/` (the built-ins under the
//! user's shared `…/toolport/builtins/`, the same format and checks: `paths::shared_cache_dir`),
//! keyed by the component's SHA-256 and the engine's compatibility hash.
//!
//! An entry is `MAGIC`, an HMAC-SHA256 tag, the artifact's length, then the artifact. The tag
//! is over the entry's own id (the file name's digest), the length and the artifact, under the
//! user's cache key (`cache_trust`), so an entry is accepted only where the host itself wrote
//! it: a truncated, corrupt or forged entry, one written by another engine, or a valid entry
//! copied under another component's name are all rebuilt and overwritten, never handed to
//! wasmtime (deserializing is only sound for bytes wasmtime wrote for this engine). Entries
//! are opened without following links, and the folder is used only when it passes
//! `cache_trust`'s checks; otherwise the plugin is compiled in memory.

use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use super::cache_trust::{self, Key, open_no_follow};

/// Identifies the entry format; bump it when the layout changes.
const MAGIC: &[u8; 8] = b"TPCWASM3";
const TAG_LEN: usize = 32;
const HEADER_LEN: usize = MAGIC.len() + TAG_LEN + 8;

type HmacSha256 = Hmac<Sha256>;

/// How a component was obtained, for logs, tests and benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Loaded from a valid cache entry.
    Hit,
    /// Compiled; the entry was absent.
    Compiled,
    /// Compiled; the entry existed but failed its checks and was replaced.
    Rebuilt,
    /// Compiled; no cache folder configured.
    Uncached,
    /// Compiled in memory: the cache folder or its key failed the trust checks (a warning
    /// says which), so nothing was read from it or written to it.
    Refused,
}

/// The compiled-artifact cache in one folder.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
    /// The folder's trust checks and key, done once per cache (and warned about once).
    key: Arc<OnceLock<Option<Key>>>,
}

/// The runnable component for `bytes`: through `cache` when there is one, else compiled in
/// memory; its memory images made here, at load (see [`with_memory_images`]).
pub(crate) fn compiled(
    engine: &Engine,
    bytes: &[u8],
    cache: Option<&Cache>,
    digest: Option<[u8; 32]>,
) -> Result<(Component, CacheOutcome)> {
    let (component, outcome) = match cache {
        Some(cache) => cache.load_or_compile(engine, bytes, digest)?,
        None => (Component::new(engine, bytes)?, CacheOutcome::Uncached),
    };
    with_memory_images(&component)?;
    Ok((component, outcome))
}

/// How often a memory image refused by the kernel is made again.
const IMAGE_TRIES: u32 = 4;

/// Makes the component's copy-on-write memory images now rather than at its first
/// instantiation. On Linux each image is a sealed memfd, and sealing it is refused with
/// `EBUSY` while the kernel still holds a transient reference to a freshly written page (a
/// per-CPU page batch of another core): seen once in CI as a Python server "crashed: Device or
/// resource busy" at its first start. A failed image is not kept, so a fresh try writes a new
/// memfd; here the refusal costs a retry instead of failing the guest's first run.
fn with_memory_images(component: &Component) -> Result<()> {
    let mut tries = 1;
    loop {
        match component.initialize_copy_on_write_image() {
            Ok(()) => return Ok(()),
            Err(e) if tries < IMAGE_TRIES && is_busy(&e) => {
                tracing::debug!("memory image refused by the kernel, making it again: {e:#}");
                std::thread::sleep(std::time::Duration::from_millis(10 << tries));
                tries += 1;
            }
            Err(e) => {
                return Err(anyhow::Error::from(e).context("cannot prepare the component's memory image"));
            }
        }
    }
}

fn is_busy(err: &wasmtime::Error) -> bool {
    err.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::ResourceBusy)
    })
}

impl Cache {
    /// A cache in `dir` (created on first use).
    pub(crate) fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into(), key: Arc::default() }
    }

    /// The key, once the folder is known to be the user's own; `None` (warned once) if not.
    fn key(&self) -> Option<&Key> {
        self.key
            .get_or_init(|| match cache_trust::open(&self.dir) {
                Ok(key) => Some(key),
                Err(why) => {
                    tracing::warn!("not using the plugin cache, compiling in memory: {why}");
                    None
                }
            })
            .as_ref()
    }

    /// The id of the entry for a component whose SHA-256 is `digest`, and its file.
    fn entry_for(&self, engine: &Engine, digest: &[u8; 32]) -> ([u8; 32], PathBuf) {
        let mut id = Sha256::new();
        id.update(digest);
        engine.precompile_compatibility_hash().hash(&mut ShaHasher(&mut id));
        let id: [u8; 32] = id.finalize().into();
        let path = self.dir.join(format!("{}.cwasm", hex::encode(id)));
        (id, path)
    }

    /// Loads the compiled component from the cache, or compiles it and stores the artifact.
    /// `digest` is the SHA-256 of `bytes` when already known (the built-ins' digests are
    /// computed at build time), saving a hash on every start.
    pub(crate) fn load_or_compile(
        &self,
        engine: &Engine,
        bytes: &[u8],
        digest: Option<[u8; 32]>,
    ) -> Result<(Component, CacheOutcome)> {
        let Some(key) = self.key() else {
            return Ok((Component::new(engine, bytes)?, CacheOutcome::Refused));
        };
        let digest = digest.unwrap_or_else(|| Sha256::digest(bytes).into());
        let (id, path) = self.entry_for(engine, &digest);
        let had_entry = match read_entry(&path) {
            Ok(entry) => match verified_artifact(key, &id, &entry) {
                Some(artifact) => match deserialize(engine, artifact) {
                    Ok(component) => return Ok((component, CacheOutcome::Hit)),
                    Err(e) => {
                        tracing::warn!(path = %path.display(), "cache entry rejected by wasmtime, rebuilding: {e:#}");
                        true
                    }
                },
                None => {
                    tracing::warn!(path = %path.display(), "cache entry is not one this host wrote for this plugin, rebuilding");
                    true
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => {
                tracing::warn!(path = %path.display(), "cannot read cache entry, rebuilding: {e}");
                true
            }
        };
        let component = Component::new(engine, bytes)?;
        // A cache that cannot be written only costs time; the plugin still loads.
        if let Err(e) = self.store(key, &id, &path, &component) {
            tracing::warn!(path = %path.display(), "cannot write plugin cache entry: {e:#}");
        }
        Ok((component, if had_entry { CacheOutcome::Rebuilt } else { CacheOutcome::Compiled }))
    }

    fn store(&self, key: &Key, id: &[u8; 32], path: &Path, component: &Component) -> Result<()> {
        let artifact = component.serialize()?;
        let len = (artifact.len() as u64).to_le_bytes();
        // Write to a temporary file in the same folder and rename: readers see the old entry or
        // the complete new one, never half of it. The rename replaces whatever is at `path`
        // (a link included) instead of writing through it.
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir)?;
        tmp.write_all(MAGIC)?;
        let tag = tag(key, id, &len, &artifact).context("cannot key the cache's MAC")?;
        tmp.write_all(&tag.finalize().into_bytes())?;
        tmp.write_all(&len)?;
        tmp.write_all(&artifact)?;
        tmp.as_file().sync_all()?;
        tmp.persist(path).map_err(|e| e.error).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(())
    }
}

/// The bytes of the entry at `path`, which must be a regular file reached without a link.
fn read_entry(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut file = open_no_follow(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut entry = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut entry)?;
    Ok(entry)
}

/// The MAC of an entry's contents, bound to the entry's id. (`None` never happens: HMAC takes
/// a key of any length.)
fn tag(key: &Key, id: &[u8; 32], len: &[u8; 8], artifact: &[u8]) -> Option<HmacSha256> {
    let mut mac = <HmacSha256 as Mac>::new_from_slice(&key.0).ok()?;
    mac.update(id);
    mac.update(len);
    mac.update(artifact);
    Some(mac)
}

/// The artifact inside an entry, if magic, length and tag all match (the tag compared in
/// constant time).
fn verified_artifact<'e>(key: &Key, id: &[u8; 32], entry: &'e [u8]) -> Option<&'e [u8]> {
    let (header, artifact) = entry.split_at_checked(HEADER_LEN)?;
    let (magic, rest) = header.split_at(MAGIC.len());
    let (sum, len) = rest.split_at(TAG_LEN);
    let len: [u8; 8] = len.try_into().ok()?;
    if magic != MAGIC || u64::from_le_bytes(len) != artifact.len() as u64 {
        return None;
    }
    tag(key, id, &len, artifact)?.verify_slice(sum).ok().map(|()| artifact)
}

/// Turns a verified artifact back into a component.
#[allow(unsafe_code)]
fn deserialize(engine: &Engine, artifact: &[u8]) -> Result<Component> {
    // SAFETY: wasmtime requires that the bytes come from `Component::serialize` of a compatible
    // engine. `artifact` passed `verified_artifact`: its HMAC-SHA256, under a key only this
    // user can read and kept outside the cache folder, matches what `store` recorded for this
    // very entry id (component digest and engine hash) when it wrote the output of `serialize`.
    // So the bytes are ones this host wrote for this component, not a copy of another entry,
    // not a file someone else placed, and wasmtime itself rejects artifacts of another engine
    // configuration or version.
    let component = unsafe { Component::deserialize(engine, artifact) }?;
    Ok(component)
}

/// Feeds `Hash` output into SHA-256, so the key is stable across builds (unlike `DefaultHasher`).
struct ShaHasher<'a>(&'a mut Sha256);

impl Hasher for ShaHasher<'_> {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the kernel's transient refusal is tried again; any other failure is final.
    #[test]
    fn only_a_busy_refusal_makes_the_image_again() {
        let busy = std::io::Error::from(std::io::ErrorKind::ResourceBusy);
        let sealing = wasmtime::Error::new(busy).context("failed to add seals to memfd");
        assert!(is_busy(&sealing));
        let denied = wasmtime::Error::new(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
        assert!(!is_busy(&denied));
        assert!(!is_busy(&wasmtime::Error::msg("Device or resource busy")));
    }

    fn entry(key: &Key, id: &[u8; 32], artifact: &[u8]) -> Vec<u8> {
        let len = (artifact.len() as u64).to_le_bytes();
        let mut entry = MAGIC.to_vec();
        let tag = tag(key, id, &len, artifact).unwrap_or_else(|| panic!("no mac"));
        entry.extend_from_slice(&tag.finalize().into_bytes());
        entry.extend_from_slice(&len);
        entry.extend_from_slice(artifact);
        entry
    }

    #[test]
    fn verified_artifact_rejects_truncation_corruption_other_ids_and_other_keys() {
        let key = Key([7; 32]);
        let id = [1; 32];
        let artifact = b"compiled bytes".to_vec();
        let good = entry(&key, &id, &artifact);
        assert_eq!(verified_artifact(&key, &id, &good), Some(&artifact[..]));
        assert_eq!(verified_artifact(&key, &id, &good[..good.len() - 1]), None);
        assert_eq!(verified_artifact(&key, &id, &good[..10]), None);
        let mut corrupt = good.clone();
        let last = corrupt.len() - 1;
        corrupt[last] ^= 1;
        assert_eq!(verified_artifact(&key, &id, &corrupt), None);
        let mut wrong_magic = good.clone();
        wrong_magic[0] = b'X';
        assert_eq!(verified_artifact(&key, &id, &wrong_magic), None);
        assert_eq!(verified_artifact(&key, &[2; 32], &good), None, "copied under another id");
        assert_eq!(verified_artifact(&Key([8; 32]), &id, &good), None, "written under another key");
    }
}
