//! The built-in plugins `build.rs` embedded (`openai`, `anthropic`, `namespace`, `sse`), with
//! their kinds and build-time SHA-256 digests, so they load through exactly the path files take;
//! and the built-in sandboxed servers (`files`, `fetch`), likewise.

mod generated {
    include!(concat!(env!("OUT_DIR"), "/builtin.rs"));
}

use crate::config::PluginKind;

/// Where `build.rs` left every built guest component, fixtures included: tests and benchmarks
/// load the real files from here.
pub const PLUGIN_BUILD_DIR: &str = env!("TOOLPORT_PLUGIN_BUILD_DIR");

/// One embedded plugin.
pub(crate) struct Builtin {
    pub kind: PluginKind,
    pub bytes: &'static [u8],
    /// Computed by `build.rs`, so a start never hashes the embedded bytes for the cache key.
    pub digest: Option<[u8; 32]>,
}

/// The built-in called `name`, if there is one.
pub(crate) fn find(name: &str) -> Option<Builtin> {
    let index = generated::BUILTINS.iter().position(|(n, _, _)| *n == name)?;
    let (_, kind, bytes) = generated::BUILTINS[index];
    Some(Builtin { kind, bytes, digest: generated::BUILTIN_SHA256.get(index).copied() })
}

/// Every built-in, in build order.
pub(crate) fn all() -> impl Iterator<Item = (&'static str, PluginKind)> {
    generated::BUILTINS.iter().map(|(name, kind, _)| (*name, *kind))
}

/// One embedded sandboxed server (`{"type": "wasm", "builtin": name}`).
pub(crate) struct BuiltinServer {
    pub bytes: &'static [u8],
    pub digest: [u8; 32],
}

/// The built-in server called `name`, if there is one.
pub(crate) fn find_server(name: &str) -> Option<BuiltinServer> {
    generated::BUILTIN_SERVERS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, bytes, digest)| BuiltinServer { bytes, digest: *digest })
}

/// The names of the built-in servers, in build order.
pub(in crate::plugin) fn builtin_servers() -> impl Iterator<Item = &'static str> {
    generated::BUILTIN_SERVERS.iter().map(|(name, _, _)| *name)
}

/// The embedded bytes of a built-in plugin (tests and benchmarks load them as files too).
pub fn builtin_bytes(name: &str) -> Option<&'static [u8]> {
    find(name).map(|b| b.bytes)
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::generated::{BUILTIN_SERVERS, BUILTIN_SHA256, BUILTINS};

    #[test]
    fn build_time_digests_match_the_embedded_bytes() {
        assert_eq!(BUILTINS.len(), BUILTIN_SHA256.len());
        for ((name, _, bytes), digest) in BUILTINS.iter().zip(BUILTIN_SHA256) {
            let actual: [u8; 32] = Sha256::digest(bytes).into();
            assert_eq!(&actual, digest, "{name}");
        }
        for (name, bytes, digest) in BUILTIN_SERVERS {
            let actual: [u8; 32] = Sha256::digest(bytes).into();
            assert_eq!(&actual, digest, "{name}");
        }
    }
}
