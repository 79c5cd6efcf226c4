//! Compile once: compiled components cached under `<home>/cache/`, keyed by the component's
//! SHA-256 and the engine's compatibility hash.
//!
//! An entry is `MAGIC`, the CRC-32 of the artifact, its length, then the artifact. Anything
//! that does not check out (truncated, corrupt, written by another engine) is rebuilt and
//! overwritten, never handed to wasmtime: deserializing is only sound for bytes wasmtime wrote.
//! A CRC and not a cryptographic hash: it guards against accidents (a crash mid-write, a bad
//! disk, a full volume), and nothing guards against someone who can write the user's home — they
//! could recompute any hash, or replace the toolport binary itself. The CRC costs a tenth of a
//! SHA-256 on the hot path of every start.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Identifies the entry format; bump it when the layout changes.
const MAGIC: &[u8; 8] = b"TPCWASM2";
const HEADER_LEN: usize = 8 + 4 + 8;

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
}

/// The compiled-artifact cache in one folder.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// A cache in `dir` (created on first write).
    pub(crate) fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The entry file for a component whose SHA-256 is `digest`.
    fn entry_path_for(&self, engine: &Engine, digest: &[u8; 32]) -> PathBuf {
        let mut key = Sha256::new();
        key.update(digest);
        engine.precompile_compatibility_hash().hash(&mut ShaHasher(&mut key));
        self.dir.join(format!("{}.cwasm", hex::encode(key.finalize())))
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
        let digest = digest.unwrap_or_else(|| Sha256::digest(bytes).into());
        let path = self.entry_path_for(engine, &digest);
        let had_entry = match std::fs::read(&path) {
            Ok(entry) => match verified_artifact(&entry) {
                Some(artifact) => match deserialize(engine, artifact) {
                    Ok(component) => return Ok((component, CacheOutcome::Hit)),
                    Err(e) => {
                        tracing::warn!(path = %path.display(), "cache entry rejected by wasmtime, rebuilding: {e:#}");
                        true
                    }
                },
                None => {
                    tracing::warn!(path = %path.display(), "cache entry is truncated or corrupt, rebuilding");
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
        if let Err(e) = self.store(&path, &component) {
            tracing::warn!(path = %path.display(), "cannot write plugin cache entry: {e:#}");
        }
        Ok((component, if had_entry { CacheOutcome::Rebuilt } else { CacheOutcome::Compiled }))
    }

    fn store(&self, path: &Path, component: &Component) -> Result<()> {
        let artifact = component.serialize()?;
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        // Write to a temporary file in the same folder and rename: readers see the old entry or
        // the complete new one, never half of it.
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir)?;
        tmp.write_all(MAGIC)?;
        tmp.write_all(&crc32fast::hash(&artifact).to_le_bytes())?;
        tmp.write_all(&(artifact.len() as u64).to_le_bytes())?;
        tmp.write_all(&artifact)?;
        tmp.as_file().sync_all()?;
        tmp.persist(path).map_err(|e| e.error).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(())
    }
}

/// The artifact inside an entry, if magic, length and checksum all match.
fn verified_artifact(entry: &[u8]) -> Option<&[u8]> {
    let (header, artifact) = entry.split_at_checked(HEADER_LEN)?;
    let (magic, rest) = header.split_at(8);
    let (sum, len) = rest.split_at(4);
    let sum = u32::from_le_bytes(sum.try_into().ok()?);
    let len = u64::from_le_bytes(len.try_into().ok()?);
    (magic == MAGIC && len == artifact.len() as u64 && crc32fast::hash(artifact) == sum).then_some(artifact)
}

/// Turns a verified artifact back into a component.
#[allow(unsafe_code)]
fn deserialize(engine: &Engine, artifact: &[u8]) -> Result<Component> {
    // SAFETY: wasmtime requires that the bytes come from `Component::serialize` of a compatible
    // engine. `artifact` passed `verified_artifact`: its CRC-32 and length match what `store`
    // recorded when it wrote the output of `serialize` into our own cache folder, so truncation
    // and accidental corruption are excluded, and wasmtime itself rejects artifacts of another
    // engine configuration or version. Forging an entry needs write access to the user's home,
    // which already lets an attacker replace the toolport binary.
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

    #[test]
    fn verified_artifact_rejects_truncation_and_corruption() {
        let artifact = b"compiled bytes".to_vec();
        let mut entry = MAGIC.to_vec();
        entry.extend_from_slice(&crc32fast::hash(&artifact).to_le_bytes());
        entry.extend_from_slice(&(artifact.len() as u64).to_le_bytes());
        entry.extend_from_slice(&artifact);
        assert_eq!(verified_artifact(&entry), Some(&artifact[..]));
        assert_eq!(verified_artifact(&entry[..entry.len() - 1]), None);
        assert_eq!(verified_artifact(&entry[..10]), None);
        let mut corrupt = entry.clone();
        let last = corrupt.len() - 1;
        corrupt[last] ^= 1;
        assert_eq!(verified_artifact(&corrupt), None);
        let mut wrong_magic = entry;
        wrong_magic[0] = b'X';
        assert_eq!(verified_artifact(&wrong_magic), None);
    }
}
