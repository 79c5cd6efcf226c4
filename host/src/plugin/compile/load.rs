//! Loading a plugin: bytes → checked component → `InstancePre`. Built-ins and third-party files
//! take exactly this path; only where the bytes come from differs.

use std::path::PathBuf;

use wasmtime::component::Component;

use super::cache::{Cache, CacheOutcome, compiled};
use super::engine::engine;
use super::inspect::{
    PACKAGE, WIT_VERSION, exported_interfaces, header_problem, version_compatible, world_of_interface,
};
use crate::config::{Grants, Limits, PluginKind};
use crate::plugin::bindings;
use crate::plugin::error::{Fault, PluginError};
use crate::plugin::sandbox::admission::Admission;
use crate::plugin::sandbox::context::Sandbox;
use crate::plugin::sandbox::grant_hint::missing_grants;
use crate::plugin::sandbox::store::{State, linker};

/// Where a plugin's bytes came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Embedded in the toolport binary.
    Builtin,
    /// A component file from the config.
    File(PathBuf),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Builtin => f.write_str("built-in"),
            Self::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// A pre-linked plugin, ready to instantiate per call (one variant per world).
pub(crate) enum Pre {
    Shape(bindings::shape::ToolShapePre<State>),
    Policy(bindings::policy::NamePolicyPre<State>),
    Transport(bindings::transport::TransportPre<State>),
    /// A guard, and its warm instances: a hook runs in one left by a call that went well.
    Guard(bindings::guard::GuardPre<State>, WarmGuards),
}

/// A guard's instances that served a hook without fault, each in its own store, ready for the
/// next hook (`kinds/guard.rs`).
pub(crate) type WarmGuards = std::sync::Mutex<Vec<(wasmtime::Store<State>, bindings::guard::Guard)>>;

/// Everything needed to run one plugin. Shared by every call and connection: per-call state
/// lives in the store each of them builds.
pub(crate) struct Loaded {
    pub engine: &'static wasmtime::Engine,
    pub name: String,
    pub kind: PluginKind,
    pub origin: Origin,
    /// The configured grants; a transport widens them per connection.
    pub sandbox: Sandbox,
    /// Its share of the instance pool, counted over all its stores.
    pub admission: Admission,
    pub limits: Limits,
    pub pre: Pre,
    pub cache: CacheOutcome,
}

impl Loaded {
    /// `fault` of this plugin, in the role it was loaded for.
    pub fn error(&self, fault: Fault) -> PluginError {
        PluginError::new(&self.name, self.kind, fault)
    }

    /// A fault the guest raised itself (its error, its crash) in a store whose data is
    /// `state`, with the grants it lacks among those it asked for — unless the sandbox refused
    /// it a destination: that record is exact and needs no guess.
    pub fn guest_error(&self, fault: Fault, state: &State) -> PluginError {
        let refused = self.sandbox.denials().first().is_some() || state.socket_refusal().is_some();
        let hint = if refused { None } else { missing_grants(state.asked, self.sandbox.grants()) };
        self.error(fault).with_hint(hint.as_deref())
    }
}

/// What to load: the plugin as the config (or the built-in table) describes it.
pub(crate) struct Spec<'a> {
    pub name: &'a str,
    pub kind: PluginKind,
    pub origin: Origin,
    pub grants: &'a Grants,
    pub limits: Limits,
    /// The SHA-256 of the bytes when known in advance (built-ins).
    pub digest: Option<[u8; 32]>,
}

/// Compiles (or loads from the cache), checks the world and version, and pre-links.
pub(crate) fn load(spec: Spec<'_>, bytes: &[u8], cache: Option<&Cache>) -> Result<Loaded, PluginError> {
    let name = spec.name.to_string();
    let load_err = |message: String| PluginError::new(&name, spec.kind, Fault::Load { message });
    check_header(&name, spec.kind, &spec.origin, bytes)?;
    let sandbox = Sandbox::new(&name, spec.grants).map_err(|e| load_err(e.0))?;
    let engine = engine().map_err(|e| load_err(format!("{e:#}")))?;
    let (component, outcome) = compiled(engine, bytes, cache, spec.digest)
        .map_err(|e| load_err(format!("cannot compile: {e:#}")))?;
    check_world(&name, spec.kind, engine, &component)?;
    let linker = linker(engine).map_err(|e| load_err(format!("{e:#}")))?;
    let pre = linker
        .instantiate_pre(&component)
        .map_err(|e| load_err(format!("it needs an import the sandbox does not provide: {e:#}")))?;
    let link = |e: wasmtime::Error| load_err(format!("{e:#}"));
    let pre = match spec.kind {
        PluginKind::ToolShape => Pre::Shape(bindings::shape::ToolShapePre::new(pre).map_err(link)?),
        PluginKind::NamePolicy => Pre::Policy(bindings::policy::NamePolicyPre::new(pre).map_err(link)?),
        PluginKind::Transport => Pre::Transport(bindings::transport::TransportPre::new(pre).map_err(link)?),
        PluginKind::Guard => {
            Pre::Guard(bindings::guard::GuardPre::new(pre).map_err(link)?, WarmGuards::default())
        }
    };
    tracing::debug!(plugin = %name, kind = spec.kind.as_str(), origin = %spec.origin, cache = ?outcome, "plugin loaded");
    Ok(Loaded {
        engine,
        name,
        kind: spec.kind,
        admission: Admission::new(spec.origin == Origin::Builtin),
        origin: spec.origin,
        sandbox,
        limits: spec.limits,
        pre,
        cache: outcome,
    })
}

/// Tells a core module, or something that is not WebAssembly at all, from a component before
/// wasmtime produces a parser error.
fn check_header(name: &str, kind: PluginKind, origin: &Origin, bytes: &[u8]) -> Result<(), PluginError> {
    match header_problem(bytes) {
        None => Ok(()),
        Some(detail) => Err(PluginError::new(
            name,
            kind,
            Fault::NotComponent { origin: origin.to_string(), detail: detail.to_string() },
        )),
    }
}

/// Refuses a component built for another major version of the contract, or exporting another
/// world than its configured kind needs.
fn check_world(
    name: &str,
    kind: PluginKind,
    engine: &wasmtime::Engine,
    component: &Component,
) -> Result<(), PluginError> {
    let exports = exported_interfaces(engine, component);
    let listed = if exports.is_empty() { "nothing".to_string() } else { exports.join(", ") };
    let expected_iface = match kind {
        PluginKind::ToolShape => "shape",
        PluginKind::NamePolicy => "policy",
        PluginKind::Transport => "connection",
        PluginKind::Guard => "hooks",
    };
    let expected = format!("{PACKAGE}/{expected_iface}@{WIT_VERSION} (the {} world)", kind.as_str());
    let mut found_expected = false;
    for export in &exports {
        let Some(rest) = export.strip_prefix(PACKAGE).and_then(|r| r.strip_prefix('/')) else { continue };
        let (iface, version) = rest.split_once('@').unwrap_or((rest, ""));
        if !version_compatible(version) {
            let fault =
                Fault::WrongVersion { found: version.to_string(), expected: WIT_VERSION, exports: listed };
            return Err(PluginError::new(name, kind, fault));
        }
        found_expected |= iface == expected_iface;
    }
    if found_expected {
        return Ok(());
    }
    let exports = exports
        .iter()
        .map(|e| match world_of_interface(e) {
            Some(world) => format!("{e} (the {world} world)"),
            None => e.clone(),
        })
        .collect::<Vec<_>>();
    let exports = if exports.is_empty() { "nothing".to_string() } else { exports.join(", ") };
    Err(PluginError::new(name, kind, Fault::WrongWorld { kind, exports, expected }))
}
