//! How a server is reached. Each transport built into the host is declared once here: its
//! `type` name, the other spellings a definition may use for it, and what a definition of it
//! must name besides its `type`. Reading a definition (aliases, a missing `type` inferred),
//! validating it, `mcp add` and the store's check of a transport plugin's name all ask this
//! file, so a transport rmcp has is a variant here plus its arm in `transport::connect`.

use crate::config::store_keys as key;

/// How a server is reached, after normalisation and validation. A new built-in transport is a
/// variant, its arms in the `match`es below (the compiler lists them) and its place in
/// `BUILTIN`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TransportKind {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
    /// The legacy HTTP+SSE transport (served by the built-in `transport-sse` plugin).
    Sse,
    /// The standard streamable HTTP transport (`http` is an alias).
    StreamableHttp,
    /// A transport plugin, named by the server's `type`.
    Plugin(String),
    /// A `wasi:cli/command` component run in the host's sandbox, speaking MCP on its stdio.
    Wasm,
}

/// The transports built into the host, in the order a missing `type` is inferred.
const BUILTIN: [TransportKind; 4] =
    [TransportKind::Stdio, TransportKind::Sse, TransportKind::StreamableHttp, TransportKind::Wasm];

/// What a definition must name besides its `type` to be started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::config) enum Needs {
    /// `command`: the program to start.
    Command,
    /// `url`: the endpoint. Every network transport takes one, so a `url` alone never says
    /// which transport a definition means.
    Url,
    /// `component` or `builtin`, not both: the sandboxed program.
    Component,
}

impl Needs {
    /// The keys that satisfy it (any one of them).
    pub(in crate::config) fn keys(self) -> &'static [&'static str] {
        match self {
            Self::Command => &[key::COMMAND],
            Self::Url => &[key::URL],
            Self::Component => &[key::COMPONENT, key::BUILTIN],
        }
    }
}

impl TransportKind {
    /// The normalised `type` string.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Stdio => "stdio",
            Self::Sse => "sse",
            Self::StreamableHttp => "streamable_http",
            Self::Plugin(name) => name,
            Self::Wasm => "wasm",
        }
    }

    /// The other spellings of its `type`, read as [`Self::as_str`].
    fn aliases(&self) -> &'static [&'static str] {
        match self {
            Self::StreamableHttp => &["http", "streamable-http"],
            Self::Stdio | Self::Sse | Self::Plugin(_) | Self::Wasm => &[],
        }
    }

    /// What a definition of it must name. A plugin transport takes a `url` like the built-in
    /// network ones (the plugin receives it as the endpoint).
    pub(in crate::config) fn needs(&self) -> Needs {
        match self {
            Self::Stdio => Needs::Command,
            Self::Sse | Self::StreamableHttp | Self::Plugin(_) => Needs::Url,
            Self::Wasm => Needs::Component,
        }
    }

    /// The `--transport` words `mcp add` takes for the built-ins, as completion offers them:
    /// each transport a command or a url defines, by its name and then its first alias.
    pub fn add_words() -> Vec<String> {
        let words = BUILTIN.into_iter().filter(|kind| kind.needs() != Needs::Component).flat_map(|kind| {
            let alias = kind.aliases().first().map(|a| a.to_string());
            std::iter::once(kind.as_str().to_string()).chain(alias)
        });
        words.collect()
    }

    /// The built-in transport a normalised `type` names.
    pub(in crate::config) fn builtin(name: &str) -> Option<Self> {
        BUILTIN.into_iter().find(|kind| kind.as_str() == name)
    }

    /// Whether `name` is a built-in transport's name or alias, which a transport plugin may not
    /// take (a `type` of that spelling always means the built-in).
    pub(in crate::config) fn is_builtin_name(name: &str) -> bool {
        BUILTIN.iter().any(|kind| kind.as_str() == name || kind.aliases().contains(&name))
    }

    /// The transport of a definition without a `type`: the first built-in one whose needed key
    /// `names` says it has (`command`: stdio; `component` or `builtin`: wasm). A `url` alone is
    /// deliberately not guessed: sse and streamable_http both take one.
    pub(in crate::config) fn inferred(names: impl Fn(&str) -> bool) -> Option<Self> {
        BUILTIN
            .into_iter()
            .filter(|kind| kind.needs() != Needs::Url)
            .find(|kind| kind.needs().keys().iter().any(|k| names(k)))
    }
}

/// Lower-cases a `type` and maps the aliases `http` and `streamable-http` to `streamable_http`.
pub(in crate::config) fn normalize_type(raw: &str) -> Option<String> {
    let t = raw.trim().to_lowercase();
    if t.is_empty() {
        return None;
    }
    let aliased = BUILTIN.into_iter().find(|kind| kind.aliases().contains(&t.as_str()));
    Some(aliased.map_or(t, |kind| kind.as_str().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_are_read_as_their_transport_and_reserved_for_it() {
        assert_eq!(normalize_type(" HTTP ").as_deref(), Some("streamable_http"));
        assert_eq!(normalize_type("streamable-http").as_deref(), Some("streamable_http"));
        assert_eq!(normalize_type("Tcp").as_deref(), Some("tcp"));
        assert_eq!(normalize_type("  "), None);
        for name in ["stdio", "sse", "streamable_http", "wasm", "http", "streamable-http"] {
            assert!(TransportKind::is_builtin_name(name), "{name}");
        }
        assert!(!TransportKind::is_builtin_name("tcp"));
        assert_eq!(TransportKind::builtin("http"), None, "only normalised names");
    }

    #[test]
    fn a_missing_type_is_inferred_from_command_or_component_never_from_url() {
        let given = |keys: &'static [&'static str]| TransportKind::inferred(|k| keys.contains(&k));
        assert_eq!(given(&["command", "component"]), Some(TransportKind::Stdio));
        assert_eq!(given(&["builtin"]), Some(TransportKind::Wasm));
        assert_eq!(given(&["url"]), None);
    }
}
