//! The plugin host of one runtime: which plugins exist (the built-ins plus the config's
//! `plugins`), loading each on first use, and handing it out in the role the caller asks for.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use sha2::Digest as _;

use super::builtin;
use super::compile::cache::{Cache, CacheOutcome};
use super::compile::engine;
use super::compile::load::{self, Loaded, Origin, Spec};
use super::error::{Fault, PluginError, check_pin};
use super::kinds::guard::GuardPlugin;
use super::kinds::policy::NamePolicy;
use super::kinds::server::ServerComponent;
use super::kinds::shape::ToolShape;
use super::kinds::transport::TransportPlugin;
use crate::config::{Grants, Limits, PluginDef, PluginKind, ServerDef, WasmDef};
use crate::observe::Observer;
use crate::plugin::SetupError;

/// A summary of one available plugin, for `toolport plugin list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginSummary {
    /// The name servers and workspaces use for it.
    pub name: String,
    /// What it is for.
    pub kind: PluginKind,
    /// Built-in, or the configured file.
    pub origin: Origin,
    /// What it may reach (built-ins: nothing beyond a transport's own server).
    pub grants: Grants,
    /// Its memory and time caps.
    pub limits: Limits,
}

/// The plugins available to one runtime: the built-ins plus the config's `plugins` entries,
/// loaded (compiled or read from the cache, checked, pre-linked) on first use and then shared.
/// Cheap to clone; safe to share across tasks.
#[derive(Clone)]
pub struct PluginHost {
    inner: Arc<Inner>,
    /// Where the plugins' calls are counted (the runtime's observer); the default counts
    /// nothing.
    observer: Observer,
}

struct Inner {
    /// The configured plugins' and servers' compiled code (`<home>/cache`).
    cache: Option<Cache>,
    /// The built-ins' compiled code: one cache for every home of the user (see
    /// [`crate::paths::shared_cache_dir`]), so a new home starts warm.
    builtin_cache: Option<Cache>,
    defs: Vec<PluginDef>,
    loaded: Mutex<HashMap<String, Arc<Loaded>>>,
    /// Sandboxed servers' components by server name, with what they were loaded from.
    servers: Mutex<HashMap<String, (Stamp, Arc<ServerComponent>)>>,
}

/// What a server's component was loaded from: a retry after the file changed (rebuilt, or
/// re-pinned) loads it again; otherwise the compiled, linked component is reused.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    wasm: WasmDef,
    file: Option<(u64, Option<std::time::SystemTime>)>,
}

impl Stamp {
    fn of(wasm: &WasmDef) -> Self {
        let file = wasm
            .component_path
            .as_ref()
            .and_then(|p| std::fs::metadata(p).ok())
            .map(|m| (m.len(), m.modified().ok()));
        Self { wasm: wasm.clone(), file }
    }
}

impl std::fmt::Debug for PluginHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginHost").field("defs", &self.inner.defs).finish_non_exhaustive()
    }
}

impl PluginHost {
    /// A host over the built-ins and `defs`. `cache_dir` is `<home>/cache` (None: compile in
    /// memory every time); with a cache, the built-ins use the user's shared one instead
    /// (`$TOOLPORT_CACHE_DIR`, `~/.cache/toolport`: [`crate::paths::shared_cache_dir`], in
    /// its `builtins/` folder), or `cache_dir` when no such folder can be named. Configured
    /// entries that reuse a built-in name are ignored with a warning: built-in names are
    /// reserved so a store cannot swap the default shape.
    pub fn new(cache_dir: Option<PathBuf>, defs: &[PluginDef]) -> anyhow::Result<PluginHost> {
        let builtins = cache_dir.as_ref().map(|home| {
            crate::paths::shared_cache_dir().map_or_else(|| home.clone(), |d| d.join("builtins"))
        });
        Self::with_caches(cache_dir, builtins, defs)
    }

    /// [`PluginHost::new`] with the built-ins' cache folder chosen by the caller (`None`:
    /// compiled in memory), e.g. the home's own to keep a test's cache to itself.
    pub fn with_caches(
        cache_dir: Option<PathBuf>,
        builtin_cache_dir: Option<PathBuf>,
        defs: &[PluginDef],
    ) -> anyhow::Result<PluginHost> {
        let mut kept = Vec::new();
        for def in defs {
            if builtin::find(&def.name).is_some() {
                tracing::warn!(plugin = %def.name, "a configured plugin cannot replace the built-in of that name; ignored");
            } else {
                kept.push(def.clone());
            }
        }
        // Build the engine now so a broken wasmtime setup fails at start, not mid-session.
        engine::engine()?;
        let cache = cache_dir.clone().map(Cache::new);
        // The same folder gets the same `Cache`: its trust checks run (and warn) once.
        let builtin_cache = match builtin_cache_dir {
            Some(dir) if cache_dir.as_ref() == Some(&dir) => cache.clone(),
            dir => dir.map(Cache::new),
        };
        Ok(PluginHost {
            inner: Arc::new(Inner {
                cache,
                builtin_cache,
                defs: kept,
                loaded: Mutex::new(HashMap::new()),
                servers: Mutex::new(HashMap::new()),
            }),
            observer: Observer::default(),
        })
    }

    /// This host with each plugin call it runs counted in `observer`'s metrics (the memory its
    /// store grew to, how long it took). The runtime hands it its own observer.
    pub fn with_observer(mut self, observer: Observer) -> Self {
        self.observer = observer;
        self
    }

    /// The tool-shape plugin `name` (`openai` and `anthropic` are built in).
    pub fn tool_shape(&self, name: &str) -> Result<ToolShape, PluginError> {
        self.get(name, PluginKind::ToolShape)
            .map(|plugin| ToolShape { plugin, observer: self.observer.clone() })
    }

    /// The name-policy plugin `name` (`namespace` is built in).
    pub fn name_policy(&self, name: &str) -> Result<NamePolicy, PluginError> {
        self.get(name, PluginKind::NamePolicy)
            .map(|plugin| NamePolicy { plugin, observer: self.observer.clone() })
    }

    /// The guard plugin `name` (guards are configured, none is built in).
    pub fn guard(&self, name: &str) -> Result<GuardPlugin, PluginError> {
        self.get(name, PluginKind::Guard)
            .map(|plugin| GuardPlugin { plugin, observer: self.observer.clone() })
    }

    /// The transport plugin `name` (a server's `type`, or `sse` for the built-in). Crate-only:
    /// a connection is opened through `transport::PluginTransport`, which gives each one the
    /// server's origin as a grant; there is no way to run a transport without it.
    pub(crate) fn transport(&self, name: &str) -> Result<TransportPlugin, PluginError> {
        self.get(name, PluginKind::Transport).map(|plugin| TransportPlugin { plugin })
    }

    /// The component of the sandboxed server `def` (`type: wasm`), loaded on first use and
    /// again whenever its file or its definition changed. The message names the file.
    pub(crate) fn wasm_server(&self, def: &ServerDef) -> Result<(Arc<ServerComponent>, WasmDef), SetupError> {
        let wasm = def.wasm.clone().ok_or("wasm server requires component or builtin")?;
        let stamp = Stamp::of(&wasm);
        let servers = || self.inner.servers.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((seen, component)) = servers().get(&def.name)
            && *seen == stamp
        {
            return Ok((Arc::clone(component), wasm));
        }
        let cache = if wasm.builtin.is_some() {
            self.inner.builtin_cache.as_ref()
        } else {
            self.inner.cache.as_ref()
        };
        let component = Arc::new(ServerComponent::load(def, &wasm, cache)?);
        servers().insert(def.name.clone(), (stamp, Arc::clone(&component)));
        Ok((component, wasm))
    }

    /// Every available plugin, built-ins first, then the config's entries in order.
    pub fn list(&self) -> Vec<PluginSummary> {
        let builtins = builtin::all().map(|(name, kind)| PluginSummary {
            name: name.to_string(),
            kind,
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

    /// Why `name` cannot serve as a `kind` plugin, with what would (`unknown plugin (built-in:
    /// openai, anthropic; configured: none)`), or `None` when it can. The words of the check on
    /// a workspace's choices and of `workspace set`.
    pub fn misfit(&self, name: &str, kind: PluginKind) -> Option<String> {
        let available = self.list();
        let problem = match available.iter().find(|p| p.name == name) {
            Some(p) if p.kind == kind => return None,
            Some(p) => {
                format!("plugin {name} is a {} plugin, not a {} plugin", p.kind.as_str(), kind.as_str())
            }
            None => "unknown plugin".to_string(),
        };
        let of_kind = |builtin: bool| -> String {
            let names: Vec<&str> = available
                .iter()
                .filter(|p| p.kind == kind && (p.origin == Origin::Builtin) == builtin)
                .map(|p| p.name.as_str())
                .collect();
            if names.is_empty() { "none".to_string() } else { names.join(", ") }
        };
        Some(format!("{problem} (built-in: {}; configured: {})", of_kind(true), of_kind(false)))
    }

    /// How the plugin's compiled code was obtained when it was loaded (tests, diagnostics).
    pub fn cache_outcome(&self, name: &str) -> Option<CacheOutcome> {
        self.lock().get(name).map(|l| l.cache)
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<Loaded>>> {
        // A panic while holding the lock cannot leave the map inconsistent (inserts are atomic).
        self.inner.loaded.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn get(&self, name: &str, kind: PluginKind) -> Result<Arc<Loaded>, PluginError> {
        if let Some(loaded) = self.lock().get(name) {
            return check_kind(loaded, kind).map(|()| Arc::clone(loaded));
        }
        // Loading happens outside the lock (compiling takes a while); if two tasks raced, the
        // first insert wins and both share it.
        let loaded = Arc::new(self.load(name, kind)?);
        let mut map = self.lock();
        let entry = map.entry(name.to_string()).or_insert(loaded);
        check_kind(entry, kind).map(|()| Arc::clone(entry))
    }

    fn load(&self, name: &str, kind: PluginKind) -> Result<Loaded, PluginError> {
        let cache = self.inner.cache.as_ref();
        let fault = |fault| PluginError::new(name, kind, fault);
        if let Some(builtin) = builtin::find(name) {
            if builtin.kind != kind {
                return Err(fault(Fault::WrongKind { actual: builtin.kind, expected: kind }));
            }
            let grants = Grants::default();
            let spec = Spec {
                name,
                kind,
                origin: Origin::Builtin,
                grants: &grants,
                limits: Limits::default(),
                digest: builtin.digest,
            };
            return load::load(spec, builtin.bytes, self.inner.builtin_cache.as_ref());
        }
        let def = self.inner.defs.iter().find(|d| d.name == name).ok_or_else(|| fault(Fault::Unknown))?;
        if def.kind != kind {
            return Err(fault(Fault::WrongKind { actual: def.kind, expected: kind }));
        }
        let bytes = std::fs::read(&def.path)
            .map_err(|source| fault(Fault::Unreadable { path: def.path.clone(), source }))?;
        // The digest is the cache's key anyway: hashing here costs nothing extra.
        let digest: [u8; 32] = sha2::Sha256::digest(&bytes).into();
        check_pin(def.path.display(), &digest, def.sha256.as_deref(), &format!("toolport plugin pin {name}"))
            .map_err(fault)?;
        let spec = Spec {
            name,
            kind,
            origin: Origin::File(def.path.clone()),
            grants: &def.grants,
            limits: def.limits,
            digest: Some(digest),
        };
        load::load(spec, &bytes, cache)
    }
}

/// Refuses a loaded plugin asked for in another role.
fn check_kind(loaded: &Loaded, kind: PluginKind) -> Result<(), PluginError> {
    if loaded.kind == kind {
        return Ok(());
    }
    Err(PluginError::new(&loaded.name, kind, Fault::WrongKind { actual: loaded.kind, expected: kind }))
}
