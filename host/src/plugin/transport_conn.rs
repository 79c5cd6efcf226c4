//! Opening one transport connection: the plugin's own grants widened by exactly the origin of
//! the server it serves (DESIGN §5, issue 5). A transport plugin may reach its server's `url`
//! (scheme, host, port) and nothing else unless `grants.hosts` says so; the widening is per
//! connection, in that connection's own store, so serving server A never lets a plugin reach B.

use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use super::error::PluginError;
use super::load::{Loaded, Pre};
use super::sandbox::Sandbox;
use super::{PluginHost, TransportPlugin};
use crate::config::{Grants, PluginKind, ServerDef};

/// A transport plugin ready to open connections, each in a fresh store under the plugin's
/// limits and with its grants plus the server's origin.
#[derive(Clone)]
pub(crate) struct TransportOpener {
    plugin: Arc<Loaded>,
    grants: Grants,
}

impl std::fmt::Debug for TransportOpener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransportOpener").field("name", &self.plugin.name).finish_non_exhaustive()
    }
}

impl PluginHost {
    /// The transport plugin `name` (a server's `type`, or `sse` for the built-in), ready to
    /// open connections.
    pub(crate) fn transport_opener(&self, name: &str) -> Result<TransportOpener, PluginError> {
        let plugin = self.get(name, PluginKind::Transport)?;
        // Built-ins carry no configured grants: the origin of the server is all they get.
        let grants =
            self.inner.defs.iter().find(|d| d.name == name).map(|d| d.grants.clone()).unwrap_or_default();
        Ok(TransportOpener { plugin, grants })
    }
}

impl TransportOpener {
    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.plugin.name
    }

    /// The grants one connection to `server` runs with: the configured ones plus the origin of
    /// the server's `url` when it has a scheme, a host and a port (given or the scheme's default).
    pub fn grants_for(&self, server: &ServerDef) -> Grants {
        let mut grants = self.grants.clone();
        if let Some(origin) = server.url.as_deref().and_then(origin_of) {
            grants.hosts.push(origin);
        }
        grants
    }

    /// Runs one connection for `server` until the plugin returns. Messages sent on the sender
    /// paired with `inbox` reach the plugin; what it sends arrives on `outbox`'s receiver.
    /// Dropping that sender closes the inbox, which asks the plugin to finish. There is no time
    /// cap on the pump (it lives as long as the connection) but it yields every epoch tick, so
    /// dropping this future stops even a plugin that never returns.
    pub async fn run(
        &self,
        server: &ServerDef,
        inbox: UnboundedReceiver<String>,
        outbox: UnboundedSender<String>,
    ) -> Result<(), PluginError> {
        self.for_server(server)?.run(server, inbox, outbox).await
    }

    /// The plugin as loaded, with this connection's sandbox in place of the plugin-wide one.
    /// Cheap: the compiled component and the pre-linked instance are shared, not copied.
    fn for_server(&self, server: &ServerDef) -> Result<TransportPlugin, PluginError> {
        let p = &*self.plugin;
        let name = p.name.clone();
        let Pre::Transport(pre) = &p.pre else {
            return Err(PluginError::Load { name, message: "not loaded as a transport plugin".into() });
        };
        let sandbox = Sandbox::new(&name, &self.grants_for(server))
            .map_err(|message| PluginError::Sandbox { name: name.clone(), message })?;
        let loaded = Loaded {
            engine: p.engine,
            name,
            kind: p.kind,
            origin: p.origin.clone(),
            sandbox,
            limits: p.limits,
            pre: Pre::Transport(pre.clone()),
            cache: p.cache,
        };
        Ok(TransportPlugin { plugin: Arc::new(loaded) })
    }
}

/// `scheme://host:port` for a URL, the port defaulted for `http`/`ws` (80) and
/// `https`/`wss` (443); `None` when the URL has no host or no port can be known.
pub(crate) fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let authority = rest.split(['/', '?', '#']).next()?;
    // Credentials in the URL are not part of the origin.
    let authority = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (ip, after) = v6.split_once(']')?;
            (format!("[{ip}]"), after.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        },
    };
    if host.is_empty() || host.contains('*') {
        return None;
    }
    let port = match port {
        Some(p) => p.parse::<u16>().ok()?,
        None => match scheme.as_str() {
            "http" | "ws" => 80,
            "https" | "wss" => 443,
            _ => return None,
        },
    };
    Some(format!("{scheme}://{}:{port}", host.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::grants::HostPattern;

    #[test]
    fn origins_keep_scheme_host_and_port() {
        assert_eq!(origin_of("tcp://127.0.0.1:9000").as_deref(), Some("tcp://127.0.0.1:9000"));
        assert_eq!(origin_of("http://Example.com/sse").as_deref(), Some("http://example.com:80"));
        assert_eq!(origin_of("wss://x.io/a?b=c").as_deref(), Some("wss://x.io:443"));
        assert_eq!(origin_of("ws://[::1]:8080/mcp").as_deref(), Some("ws://[::1]:8080"));
        assert_eq!(origin_of("http://user:pw@h.io:81/").as_deref(), Some("http://h.io:81"));
        assert_eq!(origin_of("tcp://host-without-port"), None);
        assert_eq!(origin_of("not a url"), None);
        assert_eq!(origin_of("http://*.evil.com/"), None);
    }

    #[test]
    fn every_origin_is_a_valid_grant() {
        for url in ["tcp://127.0.0.1:9000", "http://localhost/sse", "ws://[::1]:8080/mcp"] {
            let origin = origin_of(url).unwrap_or_default();
            let pattern = HostPattern::parse(&origin).unwrap_or_else(|e| panic!("{e}"));
            assert!(pattern.port.is_some(), "{origin}");
        }
    }
}
