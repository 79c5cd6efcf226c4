//! The plugin host (DESIGN §5): third-party code — transports, name policies, tool shapes —
//! runs as WASI components that can do nothing they were not granted, cannot hang or exhaust
//! the host, and are refused at load when built for another contract.
//!
//! One wasmtime engine per process (`engine.rs`), compiled artifacts cached on disk
//! (`cache.rs`), a closed-by-default sandbox opened only by config grants (`sandbox.rs`,
//! `grants.rs`), per-call limits (`limits.rs`), and a module per plugin kind (`shape.rs`,
//! `policy.rs`, `transport.rs`). The generated bindings stay private (`bindings.rs`).
//! Built-ins are embedded by `build.rs` and loaded through exactly the same path as files.

mod bindings;
mod cache;
mod engine;
mod error;
mod grants;
mod inspect;
mod limits;
mod load;
mod policy;
mod sandbox;
mod shape;
mod store;
mod transport;
mod transport_conn;
mod wire;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub use cache::{Cache, CacheOutcome};
pub use error::PluginError;
pub use inspect::{Inspection, PACKAGE, WIT_VERSION, inspect};
pub use load::Origin;
pub use policy::NamePolicy;
pub use shape::ToolShape;
pub use transport::TransportPlugin;

use crate::config::{Grants, Limits, PluginDef, PluginKind};
use load::{Loaded, Spec};

mod builtin {
    include!(concat!(env!("OUT_DIR"), "/builtin.rs"));
}

/// Where `build.rs` left every built guest component, fixtures included: tests and benchmarks
/// load the real files from here.
pub const PLUGIN_BUILD_DIR: &str = env!("TOOLPORT_PLUGIN_BUILD_DIR");

/// One tool as listed by a server, in the form plugins receive it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// The server's name for the tool.
    pub name: String,
    /// Display title.
    pub title: Option<String>,
    /// What the tool does.
    pub description: Option<String>,
    /// `inputSchema`; `Value::Null` when the server sent none.
    pub input_schema: serde_json::Value,
    /// `outputSchema`.
    pub output_schema: Option<serde_json::Value>,
    /// `annotations`.
    pub annotations: Option<serde_json::Value>,
}

/// A name policy's decision about one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Keep the server's name.
    Keep,
    /// Expose it under this name; `tools/call` still uses the original.
    Rename(String),
    /// Do not expose it.
    Hide,
    /// Put the server in `error` with this reason.
    Reject(String),
}

/// A summary of one available plugin, for `toolport plugin list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginSummary {
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: PluginKind,
    /// Built-in, or the configured file.
    pub origin: Origin,
    /// What it may reach.
    pub grants: Grants,
    /// Its caps.
    pub limits: Limits,
}

/// The plugins available to one runtime: the built-ins plus the config's `plugins` entries,
/// loaded (compiled or read from the cache, checked, pre-linked) on first use and then shared.
/// Cheap to clone; safe to share across tasks.
#[derive(Clone)]
pub struct PluginHost {
    inner: Arc<Inner>,
}

struct Inner {
    cache: Option<Cache>,
    defs: Vec<PluginDef>,
    loaded: Mutex<HashMap<String, Arc<Loaded>>>,
}

impl std::fmt::Debug for PluginHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginHost").field("defs", &self.inner.defs).finish_non_exhaustive()
    }
}

impl PluginHost {
    /// A host over the built-ins and `defs`. `cache_dir` is `<home>/cache` (None: compile in
    /// memory every time). Configured entries that reuse a built-in name are ignored with a
    /// warning: built-in names are reserved so a store cannot swap the default shape.
    pub fn new(cache_dir: Option<PathBuf>, defs: &[PluginDef]) -> anyhow::Result<PluginHost> {
        let mut kept = Vec::new();
        for def in defs {
            if builtin::BUILTINS.iter().any(|(name, _, _)| *name == def.name) {
                tracing::warn!(plugin = %def.name, "a configured plugin cannot replace the built-in of that name; ignored");
            } else {
                kept.push(def.clone());
            }
        }
        // Build the engine now so a broken wasmtime setup fails at start, not mid-session.
        engine::engine()?;
        Ok(PluginHost {
            inner: Arc::new(Inner {
                cache: cache_dir.map(Cache::new),
                defs: kept,
                loaded: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// The tool-shape plugin `name` (`openai` and `anthropic` are built in).
    pub fn tool_shape(&self, name: &str) -> Result<ToolShape, PluginError> {
        self.get(name, PluginKind::ToolShape).map(|plugin| ToolShape { plugin })
    }

    /// The name-policy plugin `name` (`namespace` is built in).
    pub fn name_policy(&self, name: &str) -> Result<NamePolicy, PluginError> {
        self.get(name, PluginKind::NamePolicy).map(|plugin| NamePolicy { plugin })
    }

    /// The transport plugin `name` (a server's `type`).
    pub fn transport(&self, name: &str) -> Result<TransportPlugin, PluginError> {
        self.get(name, PluginKind::Transport).map(|plugin| TransportPlugin { plugin })
    }

    /// Every available plugin, built-ins first, then the config's entries in order.
    pub fn list(&self) -> Vec<PluginSummary> {
        let builtins = builtin::BUILTINS.iter().map(|(name, kind, _)| PluginSummary {
            name: name.to_string(),
            kind: *kind,
            origin: Origin::Builtin,
            grants: Grants::default(),
            limits: Limits::default(),
        });
        let configured = self.inner.defs.iter().map(|d| PluginSummary {
            name: d.name.clone(),
            kind: d.kind,
            origin: Origin::File(d.path.clone()),
            grants: d.grants.clone(),
            limits: d.limits,
        });
        builtins.chain(configured).collect()
    }

    /// How the plugin's compiled code was obtained when it was loaded (tests, diagnostics).
    pub fn cache_outcome(&self, name: &str) -> Option<CacheOutcome> {
        self.lock().get(name).map(|l| l.cache)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Loaded>>> {
        // A panic while holding the lock cannot leave the map inconsistent (inserts are atomic).
        self.inner.loaded.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn get(&self, name: &str, kind: PluginKind) -> Result<Arc<Loaded>, PluginError> {
        if let Some(loaded) = self.lock().get(name) {
            return check_kind(loaded, kind).map(|()| Arc::clone(loaded));
        }
        let loaded = Arc::new(self.load(name, kind)?);
        let mut map = self.lock();
        let entry = map.entry(name.to_string()).or_insert(loaded);
        check_kind(entry, kind).map(|()| Arc::clone(entry))
    }

    fn load(&self, name: &str, kind: PluginKind) -> Result<Loaded, PluginError> {
        let cache = self.inner.cache.as_ref();
        let wrong_kind = |actual: PluginKind| PluginError::WrongKind {
            name: name.to_string(),
            actual: actual.as_str(),
            expected: kind.as_str(),
        };
        if let Some(index) = builtin::BUILTINS.iter().position(|(n, _, _)| *n == name) {
            let (_, builtin_kind, bytes) = builtin::BUILTINS[index];
            if builtin_kind != kind {
                return Err(wrong_kind(builtin_kind));
            }
            let grants = Grants::default();
            let spec = Spec {
                name,
                kind,
                origin: Origin::Builtin,
                grants: &grants,
                limits: Limits::default(),
                digest: builtin::BUILTIN_SHA256.get(index).copied(),
            };
            return load::load(spec, bytes, cache);
        }
        let def = self
            .inner
            .defs
            .iter()
            .find(|d| d.name == name)
            .ok_or_else(|| PluginError::Unknown { name: name.to_string() })?;
        if def.kind != kind {
            return Err(wrong_kind(def.kind));
        }
        let bytes = std::fs::read(&def.path).map_err(|source| PluginError::Unreadable {
            name: name.to_string(),
            path: def.path.clone(),
            source,
        })?;
        let spec = Spec {
            name,
            kind,
            origin: Origin::File(def.path.clone()),
            grants: &def.grants,
            limits: def.limits,
            digest: None,
        };
        load::load(spec, &bytes, cache)
    }
}

fn check_kind(loaded: &Loaded, kind: PluginKind) -> Result<(), PluginError> {
    if loaded.kind == kind {
        return Ok(());
    }
    Err(PluginError::WrongKind {
        name: loaded.name.clone(),
        actual: loaded.kind.as_str(),
        expected: kind.as_str(),
    })
}

/// The embedded bytes of a built-in plugin (tests and benchmarks load them as files too).
pub fn builtin_bytes(name: &str) -> Option<&'static [u8]> {
    builtin::BUILTINS.iter().find(|(n, _, _)| *n == name).map(|(_, _, bytes)| *bytes)
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::builtin::{BUILTIN_SHA256, BUILTINS};

    #[test]
    fn build_time_digests_match_the_embedded_bytes() {
        assert_eq!(BUILTINS.len(), BUILTIN_SHA256.len());
        for ((name, _, bytes), digest) in BUILTINS.iter().zip(BUILTIN_SHA256) {
            let actual: [u8; 32] = Sha256::digest(bytes).into();
            assert_eq!(&actual, digest, "{name}");
        }
    }
}
