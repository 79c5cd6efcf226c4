//! What a component is: the world it targets, the contract version, the WASI interfaces it
//! imports and what it exports. Used by `toolport plugin inspect` and by the load-time check.

use std::path::Path;

use serde::Serialize;
use wasmtime::Engine;
use wasmtime::component::Component;

use super::cache::Cache;
use super::engine::engine;

/// The contract's package name.
pub const PACKAGE: &str = "toolport:plugin";
/// The contract version this host serves.
pub const WIT_VERSION: &str = "0.1.1";
/// The folder of the contract it serves: a compatible release edits its folder in place, so
/// the folder keeps the version of the line's first release (wit/README.md).
pub const WIT_FOLDER: &str = "wit/since_v0.1.0";

/// A component's interface, as `toolport plugin inspect` shows it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Inspection {
    /// `tool-shape`, `name-policy`, `transport` or `guard`, when it exports one of the worlds.
    pub world: Option<String>,
    /// The `toolport:plugin` version it was built against.
    pub version: Option<String>,
    /// Whether this host can serve that version.
    pub compatible: bool,
    /// `wasi:*` interfaces it imports (what it would like the sandbox to provide).
    pub wasi_imports: Vec<String>,
    /// Its other imports (`toolport:plugin/log`, …).
    pub other_imports: Vec<String>,
    /// Everything it exports.
    pub exports: Vec<String>,
}

/// Compiles `bytes` (through the plugin cache in `cache_dir` when given: an 18 MB Python
/// component takes a minute to compile in a debug build, and the same compile is what loading
/// it later needs) and reads its interface.
pub fn inspect(bytes: &[u8], cache_dir: Option<&Path>) -> anyhow::Result<Inspection> {
    if let Some(problem) = header_problem(bytes) {
        anyhow::bail!("not a WebAssembly component: {problem}");
    }
    let engine = engine()?;
    let component = match cache_dir {
        Some(dir) => Cache::new(dir).load_or_compile(engine, bytes, None)?.0,
        None => Component::new(engine, bytes)?,
    };
    let ty = component.component_type();
    let (mut wasi_imports, mut other_imports): (Vec<String>, Vec<String>) =
        ty.imports(engine).map(|(name, _)| name.to_string()).partition(|n| n.starts_with("wasi:"));
    wasi_imports.sort();
    other_imports.sort();
    let exports = exported_interfaces(engine, &component);
    let ours = exports.iter().find_map(|e| {
        let rest = e.strip_prefix(PACKAGE)?.strip_prefix('/')?;
        Some((world_of_interface(e), rest.split_once('@').map(|(_, v)| v.to_string())))
    });
    let (world, version) = match ours {
        Some((world, version)) => (world.map(str::to_string), version),
        None => (None, None),
    };
    let compatible = version.as_deref().is_some_and(version_compatible);
    Ok(Inspection { world, version, compatible, wasi_imports, other_imports, exports })
}

/// What of the sandbox a component would use, in the words of `grants`: `env`
/// (`wasi:cli/environment`), `dirs` (`wasi:filesystem`), `sockets`, `http` — read from its
/// import section without compiling it, so `plugin list` stays instant for large components.
/// Shown next to what it is granted, so a guest that reads variables with no `grants.env` is
/// seen before it fails.
pub fn sandbox_uses(bytes: &[u8]) -> anyhow::Result<Vec<&'static str>> {
    use wasmparser::{Parser, Payload};
    let mut uses = Vec::new();
    // Nested modules and components have imports of their own, satisfied inside: only the
    // outermost ones reach the host.
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(bytes) {
        match payload? {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(reader) if depth == 0 => {
                for import in reader {
                    let name = import?.name.name;
                    let word = [
                        ("wasi:cli/environment", "env"),
                        ("wasi:filesystem/", "dirs"),
                        ("wasi:sockets/", "sockets"),
                        ("wasi:http/", "http"),
                    ]
                    .into_iter()
                    .find_map(|(prefix, word)| name.starts_with(prefix).then_some(word));
                    if let Some(word) = word
                        && !uses.contains(&word)
                    {
                        uses.push(word);
                    }
                }
            }
            _ => {}
        }
    }
    uses.sort_unstable();
    Ok(uses)
}

/// Why `bytes` is not a component, judged from the header alone.
pub(crate) fn header_problem(bytes: &[u8]) -> Option<&'static str> {
    match bytes.get(..8) {
        Some([0, b'a', b's', b'm', 0x0d, 0x00, 0x01, 0x00]) => None,
        Some([0, b'a', b's', b'm', 0x01, 0x00, 0x00, 0x00]) => Some(
            "it is a core WebAssembly module; build it for wasm32-wasip2 (or wrap it with `wasm-tools component new`)",
        ),
        Some([0, b'a', b's', b'm', ..]) => Some("unsupported WebAssembly binary version"),
        _ => Some("it does not start with the WebAssembly magic number"),
    }
}

/// The names a component exports.
pub(crate) fn exported_interfaces(engine: &Engine, component: &Component) -> Vec<String> {
    component.component_type().exports(engine).map(|(name, _)| name.to_string()).collect()
}

/// The world an exported `toolport:plugin` interface belongs to.
pub(crate) fn world_of_interface(export: &str) -> Option<&'static str> {
    let rest = export.strip_prefix(PACKAGE)?.strip_prefix('/')?;
    match rest.split('@').next()? {
        "shape" => Some("tool-shape"),
        "policy" => Some("name-policy"),
        "connection" => Some("transport"),
        "hooks" => Some("guard"),
        _ => None,
    }
}

/// Semver compatibility with [`WIT_VERSION`]: same major, and for 0.x the same minor.
pub(crate) fn version_compatible(version: &str) -> bool {
    let parse = |v: &str| -> Option<(u64, u64)> {
        let mut parts = v.split(['.', '-', '+']);
        Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
    };
    match (parse(version), parse(WIT_VERSION)) {
        (Some((major, minor)), Some((our_major, our_minor))) => {
            major == our_major && (major != 0 || minor == our_minor)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_rules_follow_semver() {
        assert!(version_compatible("0.1.0"));
        assert!(version_compatible("0.1.7"));
        assert!(!version_compatible("0.2.0"));
        assert!(!version_compatible("1.0.0"));
        assert!(!version_compatible(""));
    }
}
