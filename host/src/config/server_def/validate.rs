//! Whether a normalised definition can be started, with the original tool's exact messages. An
//! invalid definition is not a load error: that one server shows `error` with the message and
//! the others carry on.

use super::model::ServerDef;
use super::transport_kind::{Needs, TransportKind};
use crate::config::host_pattern::HostPattern;
use crate::config::model::{PluginDef, PluginKind};
use crate::config::store_keys::{BUILTIN, COMMAND, COMPONENT, URL};

/// The transport a definition will use, or the validation message. A `type` other than the
/// built-ins must name a configured transport plugin; what each transport needs besides its
/// `type` is [`TransportKind::needs`].
pub fn validate(def: &ServerDef, plugins: &[PluginDef]) -> Result<TransportKind, String> {
    let Some(name) = def.transport.as_deref() else {
        return Err("missing MCP transport type".to_string());
    };
    let kind = match TransportKind::builtin(name) {
        Some(kind) => kind,
        None if plugins.iter().any(|p| p.kind == PluginKind::Transport && p.name == name) => {
            TransportKind::Plugin(name.to_string())
        }
        None => return Err(format!("unsupported MCP transport: {name}")),
    };
    let requires = |key: &str| Err(format!("{} transport requires {key}", kind.as_str()));
    match kind.needs() {
        Needs::Command if def.command.is_none() => requires(COMMAND),
        Needs::Command => sandbox_hosts(def).map(|()| kind),
        Needs::Url if def.url.is_none() => requires(URL),
        Needs::Component => match def.wasm.as_ref().map(|w| (w.component.is_some(), w.builtin.is_some())) {
            Some((true, false) | (false, true)) => Ok(kind),
            Some((true, true)) => Err(format!("wasm server takes {COMPONENT} or {BUILTIN}, not both")),
            _ => Err(format!("wasm server requires {COMPONENT} or {BUILTIN}")),
        },
        Needs::Url => Ok(kind),
    }
}

/// A sandboxed `stdio` server's `grants.hosts`, each read by the sandbox's own rule: the egress
/// proxy matches with it, and a pattern it cannot read would leave the server without the host
/// its owner meant, so the server shows why instead.
fn sandbox_hosts(def: &ServerDef) -> Result<(), String> {
    for host in def.sandbox.iter().flat_map(|s| &s.grants.hosts) {
        HostPattern::parse(host)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::config::model::{Grants, Limits};
    use crate::config::server_def::model::WasmDef;

    fn d(t: Option<&str>, url: Option<&str>, command: Option<&str>) -> ServerDef {
        ServerDef {
            name: "s".into(),
            transport: t.map(Into::into),
            url: url.map(Into::into),
            command: command.map(Into::into),
            ..ServerDef::default()
        }
    }

    fn plugin(name: &str, kind: PluginKind) -> PluginDef {
        PluginDef {
            name: name.into(),
            kind,
            path: PathBuf::from("/p.wasm"),
            grants: Grants::default(),
            limits: Limits::default(),
            sha256: None,
        }
    }

    #[test]
    fn every_message() {
        let v = |def: ServerDef| validate(&def, &[]);
        assert_eq!(v(d(None, Some("u"), None)), Err("missing MCP transport type".into()));
        assert_eq!(v(d(Some("stdio"), None, None)), Err("stdio transport requires command".into()));
        assert_eq!(v(d(Some("sse"), None, None)), Err("sse transport requires url".into()));
        assert_eq!(
            v(d(Some("streamable_http"), None, None)),
            Err("streamable_http transport requires url".into())
        );
        assert_eq!(v(d(Some("tcp"), Some("u"), None)), Err("unsupported MCP transport: tcp".into()));
        assert_eq!(v(d(Some("wasm"), None, None)), Err("wasm server requires component or builtin".into()));
        let both = ServerDef {
            wasm: Some(WasmDef {
                component: Some("a.wasm".into()),
                builtin: Some("files".into()),
                ..WasmDef::default()
            }),
            ..d(Some("wasm"), None, None)
        };
        assert_eq!(v(both), Err("wasm server takes component or builtin, not both".into()));
    }

    #[test]
    fn a_sandboxed_stdio_servers_host_grants_follow_the_sandboxs_rule() {
        let sandboxed = |hosts: &[&str]| ServerDef {
            sandbox: Some(crate::config::server_def::NativeSandbox {
                grants: Grants { hosts: hosts.iter().map(|h| h.to_string()).collect(), ..Grants::default() },
                ..Default::default()
            }),
            ..d(Some("stdio"), None, Some("npx"))
        };
        assert_eq!(validate(&sandboxed(&["https://api.github.com"]), &[]), Ok(TransportKind::Stdio));
        assert_eq!(
            validate(&sandboxed(&["https://api.github.com", "api.github.com"]), &[]),
            Err("bad host grant \"api.github.com\": no scheme (expected scheme://host:port)".into())
        );
    }

    #[test]
    fn valid_builtins() {
        assert_eq!(validate(&d(Some("stdio"), None, Some("x")), &[]), Ok(TransportKind::Stdio));
        assert_eq!(validate(&d(Some("sse"), Some("u"), None), &[]), Ok(TransportKind::Sse));
        assert_eq!(
            validate(&d(Some("streamable_http"), Some("u"), None), &[]),
            Ok(TransportKind::StreamableHttp)
        );
    }

    #[test]
    fn plugin_transports_need_a_transport_plugin_and_a_url() {
        let plugins = [plugin("tcp", PluginKind::Transport), plugin("ns", PluginKind::NamePolicy)];
        assert_eq!(
            validate(&d(Some("tcp"), Some("tcp://h:1"), None), &plugins),
            Ok(TransportKind::Plugin("tcp".into()))
        );
        assert_eq!(validate(&d(Some("tcp"), None, None), &plugins), Err("tcp transport requires url".into()));
        assert_eq!(
            validate(&d(Some("ns"), Some("u"), None), &plugins),
            Err("unsupported MCP transport: ns".into())
        );
    }
}
