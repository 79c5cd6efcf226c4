//! Whether a normalised definition can be started, with the exact messages of
//! reference-behaviour A. An invalid definition is not a load error: that one server shows
//! `error` with the message and the others carry on.

use super::model::{PluginDef, PluginKind, ServerDef, TransportKind};

/// The transport a definition will use, or the validation message. A `type` other than the
/// built-ins must name a configured transport plugin; plugin transports need a `url` like the
/// built-in network ones (the plugin receives it as the endpoint).
pub fn validate(def: &ServerDef, plugins: &[PluginDef]) -> Result<TransportKind, String> {
    let Some(kind) = def.transport.as_deref() else {
        return Err("missing MCP transport type".to_string());
    };
    let needs_url = |k: TransportKind| {
        if def.url.is_some() { Ok(k) } else { Err(format!("{} transport requires url", k.as_str())) }
    };
    match kind {
        "stdio" if def.command.is_some() => Ok(TransportKind::Stdio),
        "stdio" => Err("stdio transport requires command".to_string()),
        "sse" => needs_url(TransportKind::Sse),
        "streamable_http" => needs_url(TransportKind::StreamableHttp),
        "wasm" => match def.wasm.as_ref().map(|w| (w.component.is_some(), w.builtin.is_some())) {
            Some((true, false) | (false, true)) => Ok(TransportKind::Wasm),
            Some((true, true)) => Err("wasm server takes component or builtin, not both".to_string()),
            _ => Err("wasm server requires component or builtin".to_string()),
        },
        other if plugins.iter().any(|p| p.kind == PluginKind::Transport && p.name == other) => {
            needs_url(TransportKind::Plugin(other.to_string()))
        }
        other => Err(format!("unsupported MCP transport: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::config::model::{Grants, Limits, WasmDef};

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
