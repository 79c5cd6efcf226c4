//! The last-known listing of each server, kept in the home (`<home>/listings/`) so `serve` can
//! answer a client's first `tools/list` at once while a slow server (an `npx` or `uvx` start
//! takes seconds) is still coming up: clients that list once (Codex, the Python SDK's default
//! client) would otherwise see none of its tools.
//!
//! What is kept is what the server itself listed (its tools after the transport's header
//! check, before the server's filter, the name policy, the collision rules, trust and the
//! shape), with its instructions: the pipeline then runs over it exactly as over a live
//! listing, so nothing from here reaches a client without every host rule. A listing is filed
//! under a digest of what decides what the server is (its name, transport, command, args,
//! url, cwd, the names of its env variables and headers, its component): a definition changed
//! in any of those starts with no history rather than a stale one. Env and header values are
//! never written, nor digested.
//!
//! Written atomically (a temporary file in the folder, then a rename), mode 0600 in a 0700
//! folder, as `<home>/results/`; a file that cannot be read or parsed is no
//! history (warned about), never an error.

use std::path::PathBuf;

use anyhow::Context as _;
use rmcp::model::Tool;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::config::ServerDef;

/// One server's listing as last seen live.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnownListing {
    /// The server's name (for a person reading the file; the digest is the key).
    pub server: String,
    /// Its `instructions`, if it gave any (the trust step reads them).
    #[serde(default)]
    pub instructions: Option<String>,
    /// Its tools as it listed them.
    pub tools: Vec<Tool>,
}

/// `<home>/listings/`: one file per server definition.
#[derive(Debug, Clone)]
pub struct ListingStore {
    dir: PathBuf,
}

impl ListingStore {
    /// The store in `dir` (created on the first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The listing last recorded for `def`, if any and readable.
    pub fn load(&self, def: &ServerDef) -> Option<KnownListing> {
        let path = self.file(def);
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::warn!(server = %def.name, "cannot read the last-known listing {}: {e}", path.display());
                return None;
            }
        };
        match serde_json::from_slice::<KnownListing>(&text) {
            Ok(listing) if listing.server == def.name => Some(listing),
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(server = %def.name, "the last-known listing {} is not one: {e}", path.display());
                None
            }
        }
    }

    /// Records `listing` for `def`, replacing the one before; unchanged, nothing is written.
    /// A failure is warned about: the next start simply waits for the server.
    pub fn save(&self, def: &ServerDef, listing: &KnownListing) {
        if self.load(def).as_ref() == Some(listing) {
            return;
        }
        if let Err(e) = self.write(def, listing) {
            tracing::warn!(server = %def.name, "cannot keep the last-known listing: {e:#}");
        }
    }

    fn write(&self, def: &ServerDef, listing: &KnownListing) -> anyhow::Result<()> {
        // 0700 like `<home>/results/`: what servers list is the user's business only.
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&self.dir).with_context(|| format!("cannot create {}", self.dir.display()))?;
        let text = serde_json::to_vec_pretty(listing).context("cannot serialise the listing")?;
        let mut temp = tempfile::NamedTempFile::new_in(&self.dir)
            .with_context(|| format!("cannot create a file in {}", self.dir.display()))?;
        std::io::Write::write_all(&mut temp, &text).context("cannot write the listing")?;
        let path = self.file(def);
        temp.persist(&path).with_context(|| format!("cannot move the listing to {}", path.display()))?;
        Ok(())
    }

    fn file(&self, def: &ServerDef) -> PathBuf {
        self.dir.join(format!("{}.json", key(def)))
    }
}

/// The digest a definition's listing is filed under: everything that decides which server
/// answers, never a secret's value.
pub fn key(def: &ServerDef) -> String {
    let names = |pairs: &[(String, String)]| {
        let mut names: Vec<&str> = pairs.iter().map(|(name, _)| name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        names.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    let wasm = def.wasm.as_ref();
    let identity = serde_json::json!({
        "name": def.name,
        "type": def.transport,
        "url": def.url,
        "command": def.command,
        "args": def.args,
        "cwd": def.cwd,
        "inheritEnv": def.inherit_env,
        "env": names(&def.env),
        "headers": names(&def.headers),
        "protocolVersion": def.protocol_version,
        "component": wasm.and_then(|w| w.component.clone()),
        "builtin": wasm.and_then(|w| w.builtin.clone()),
        "sha256": wasm.and_then(|w| w.sha256.clone()),
    });
    hex::encode(Sha256::digest(identity.to_string().as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def() -> ServerDef {
        ServerDef {
            name: "time".into(),
            transport: Some("stdio".into()),
            command: Some("uvx".into()),
            args: vec!["mcp-server-time".into()],
            env: vec![("TZ".into(), "secret-ish".into())],
            ..ServerDef::default()
        }
    }

    fn listing() -> KnownListing {
        let tool = Tool::new("now", "the time", serde_json::Map::new());
        KnownListing { server: "time".into(), instructions: Some("use now".into()), tools: vec![tool] }
    }

    #[test]
    fn a_listing_comes_back_for_the_same_definition_only() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let store = ListingStore::new(dir.path().join("listings"));
        assert_eq!(store.load(&def()), None, "no history yet");
        store.save(&def(), &listing());
        assert_eq!(store.load(&def()), Some(listing()));
        // Another env value is the same server; another arg, env name or command is not.
        let same = ServerDef { env: vec![("TZ".into(), "other".into())], ..def() };
        assert_eq!(store.load(&same), Some(listing()));
        for changed in [
            ServerDef { args: vec!["mcp-server-time".into(), "--local-timezone=UTC".into()], ..def() },
            ServerDef { env: vec![("LANG".into(), "C".into())], ..def() },
            ServerDef { command: Some("pipx".into()), ..def() },
            ServerDef { url: Some("http://127.0.0.1:1/mcp".into()), ..def() },
        ] {
            assert_eq!(store.load(&changed), None, "{changed:?}");
        }
        Ok(())
    }

    #[test]
    fn no_value_of_a_secret_is_written_and_only_the_user_reads_it() -> anyhow::Result<()> {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir()?;
        let listings = dir.path().join("listings");
        let store = ListingStore::new(&listings);
        store.save(&def(), &listing());
        let mode = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.permissions().mode() & 0o777);
        assert_eq!(mode(&listings)?, 0o700);
        for entry in std::fs::read_dir(&listings)? {
            let path = entry?.path();
            assert_eq!(mode(&path)?, 0o600);
            let text = std::fs::read_to_string(&path)?;
            assert!(!text.contains("secret-ish"), "{text}");
        }
        Ok(())
    }

    #[test]
    fn a_broken_file_is_no_history() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let store = ListingStore::new(dir.path());
        std::fs::write(dir.path().join(format!("{}.json", key(&def()))), "{not json")?;
        assert_eq!(store.load(&def()), None);
        Ok(())
    }
}
