//! The `streamable_http` transport: rmcp's client over `reqwest`, with the server's headers.

use std::collections::HashMap;

use http::{HeaderName, HeaderValue};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::connect_error::ConnectError;
use super::http_audit::{AuditingClient, HeaderAudit};
use crate::auth::{CredentialsFile, OAuthHttp};
use crate::config::ServerDef;
use crate::observe::Observer;

/// The transport configuration for `def` (already `${VAR}`-expanded). Header values are marked
/// sensitive so they never show up in debug output; error messages name only the header.
pub fn config(def: &ServerDef) -> Result<StreamableHttpClientTransportConfig, ConnectError> {
    let url = def.url.as_deref().ok_or("streamable_http transport requires url")?;
    let mut headers = HashMap::new();
    for (name, value) in &def.headers {
        let header = HeaderName::try_from(name.as_str())
            .map_err(|_| ConnectError::Failed(format!("invalid header name: {name}")))?;
        let mut value = HeaderValue::try_from(value.as_str())
            .map_err(|_| ConnectError::Failed(format!("invalid value for header {name}")))?;
        value.set_sensitive(true);
        headers.insert(header, value);
    }
    Ok(StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers))
}

/// What a network transport signs in with: where the OAuth tokens live (`None`: it stays
/// unsigned), and where a sign-in is recorded and its address told.
#[derive(Clone, Copy)]
pub struct Signing<'a> {
    /// `<home>/credentials.json`.
    pub credentials: Option<&'a CredentialsFile>,
    /// The runtime's observer.
    pub observer: &'a Observer,
}

/// A transport ready to hand to rmcp, whose `tools/list` answers fill `audit`, signed with
/// OAuth tokens when `def` has them (or a client-credentials grant).
pub async fn transport(
    def: &ServerDef,
    signing: Signing<'_>,
    config: StreamableHttpClientTransportConfig,
    audit: HeaderAudit,
) -> Result<impl rmcp::transport::Transport<rmcp::RoleClient> + 'static, ConnectError> {
    let client =
        OAuthHttp::new(def, signing.credentials, signing.observer, AuditingClient::new(audit)?).await?;
    Ok(StreamableHttpClientTransport::with_client(client, config))
}

/// The same transport without OAuth: what a server says to a client that has not signed in.
pub fn unsigned(
    config: StreamableHttpClientTransportConfig,
    audit: HeaderAudit,
) -> Result<impl rmcp::transport::Transport<rmcp::RoleClient> + 'static, ConnectError> {
    Ok(StreamableHttpClientTransport::with_client(AuditingClient::new(audit)?, config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_headers_name_the_header_never_the_value() {
        let mut def = ServerDef { url: Some("http://127.0.0.1:1/mcp".into()), ..ServerDef::default() };
        def.headers.push(("Authorization".into(), "Bearer secret\n".into()));
        let err = config(&def).err().map(String::from).unwrap_or_default();
        assert_eq!(err, "invalid value for header Authorization");
        def.headers = vec![("bad name".into(), "x".into())];
        assert_eq!(config(&def).err().map(String::from).as_deref(), Some("invalid header name: bad name"));
    }

    #[test]
    fn headers_are_sensitive() -> Result<(), String> {
        let mut def = ServerDef { url: Some("http://127.0.0.1:1/mcp".into()), ..ServerDef::default() };
        def.headers.push(("Authorization".into(), "Bearer secret".into()));
        let cfg = config(&def)?;
        assert!(cfg.custom_headers.values().all(HeaderValue::is_sensitive));
        Ok(())
    }
}
