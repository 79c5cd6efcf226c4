//! Machine-to-machine sign-in, no person and no login step; a token is fetched on every
//! connect, so nothing needs storing or refreshing:
//! - `oauth.grant: "client_credentials"` (SEP-1046): the client's own secret
//!   (`client_secret_basic` or `_post`, as the server advertises) or a private key signing a
//!   `private_key_jwt` assertion (RFC 7523), through rmcp;
//! - `oauth.grant: "jwt_bearer"` (RFC 7523 §2.1, SEP-1933 workload identity federation): a JWT
//!   the platform issued to this workload, exchanged at the authorization server the
//!   definition pins (`auth/workload.rs`);
//! - `oauth.grant: "enterprise"` (SEP-990, enterprise-managed authorization): the person's ID
//!   token from the company's IdP (`oauth.idp`) exchanged there for an ID-JAG (RFC 8693), and
//!   that at the server's authorization server for an access token, through rmcp's
//!   `auth-enterprise-managed`. The IdP comes from the definition, never from the server.

use anyhow::{Context as _, Result, anyhow, bail};
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
};
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadataResolution, ClientCredentialsConfig, JwtSigningAlgorithm,
    OAuthState, default_oauth_http_client,
};

use crate::config::ServerDef;
use crate::observe::{Exchange, Observer};

/// The algorithm when `privateKeyJwt` does not name one: the one every server supports.
const DEFAULT_ALGORITHM: &str = "RS256";

/// A manager holding a fresh token for `def` (already `${VAR}`-expanded).
///
/// Runs on a blocking thread: rmcp 3.11's `private_key_jwt` exchange holds a
/// `form_urlencoded::Serializer` across an await, so its future is not `Send` and cannot be
/// part of a connection's task.
pub async fn authorize(observer: &Observer, def: &ServerDef) -> Result<AuthorizationManager> {
    let started = std::time::Instant::now();
    let name = def.name.clone();
    let def = def.clone();
    let runtime = tokio::runtime::Handle::current();
    let manager = tokio::task::spawn_blocking(move || runtime.block_on(fetch(&def)))
        .await
        .context("the client credentials sign-in stopped")
        .and_then(|fetched| fetched);
    // A machine's token fetch is a sign-in too: observed (the audit log, the metrics).
    let error = manager.is_err().then_some("sign-in-failed");
    observer.finished(&Exchange::sign_in(&name, started.elapsed(), error));
    manager
}

async fn fetch(def: &ServerDef) -> Result<AuthorizationManager> {
    let url = def.url.as_deref().ok_or_else(|| anyhow!("no url"))?;
    let oauth = def.oauth.clone().unwrap_or_default();
    let client_id = oauth
        .client_id
        .clone()
        .ok_or_else(|| anyhow!("the client_credentials grant needs oauth.clientId"))?;
    let scopes = oauth.scopes.clone().unwrap_or_default();
    let resource = Some(url.to_string());
    let config = match (&oauth.private_key, &oauth.client_secret) {
        (Some(key), _) => ClientCredentialsConfig::PrivateKeyJwt {
            client_id,
            signing_key: key.as_bytes().to_vec(),
            signing_algorithm: algorithm(oauth.private_key_jwt.as_deref().unwrap_or(DEFAULT_ALGORITHM))?,
            token_endpoint_audience: None,
            scopes,
            resource,
        },
        (None, Some(secret)) => ClientCredentialsConfig::ClientSecret {
            client_id,
            client_secret: secret.clone(),
            scopes,
            resource,
        },
        (None, None) => bail!("the client_credentials grant needs oauth.clientSecret or oauth.privateKey"),
    };
    let mut state = OAuthState::new(url, None).await.context("the server url is not usable")?;
    state
        .authenticate_client_credentials(config)
        .await
        .map_err(|e| anyhow!("client credentials sign-in failed: {e}"))?;
    state.into_authorization_manager().ok_or_else(|| anyhow!("client credentials sign-in did not finish"))
}

/// An access token for `def` through its enterprise IdP (already `${VAR}`-expanded).
pub async fn enterprise_token(observer: &Observer, def: &ServerDef) -> Result<String> {
    let started = std::time::Instant::now();
    let token = enterprise_token_once(def).await;
    let error = token.is_err().then_some("sign-in-failed");
    observer.finished(&Exchange::sign_in(&def.name, started.elapsed(), error));
    token
}

async fn enterprise_token_once(def: &ServerDef) -> Result<String> {
    let url = def.url.as_deref().ok_or_else(|| anyhow!("no url"))?;
    let oauth = def.oauth.clone().unwrap_or_default();
    let idp = oauth.idp.clone().ok_or_else(|| anyhow!("the enterprise grant needs oauth.idp"))?;
    let need =
        |v: Option<String>, field: &str| v.ok_or_else(|| anyhow!("the enterprise grant needs oauth.{field}"));
    let idp_issuer = need(idp.issuer.clone(), "idp.issuer")?;
    let id_token = given_or_read(&idp.id_token, &idp.id_token_file, "enterprise", "idp.idToken")?;
    let idp_token_endpoint = match idp.token_endpoint.clone() {
        Some(endpoint) => endpoint,
        None => token_endpoint_of(&idp_issuer).await?,
    };
    let metadata = discover(url, "the authorization server").await?.metadata;
    let as_issuer =
        metadata.issuer.clone().ok_or_else(|| anyhow!("the authorization server names no issuer"))?;
    let idp_server =
        EmaAuthorizationServer::new(idp_issuer, idp_token_endpoint, need(idp.client_id, "idp.clientId")?)
            .with_client_authentication(basic_or_public(idp.client_secret));
    let resource_server =
        EmaAuthorizationServer::new(as_issuer, metadata.token_endpoint, need(oauth.client_id, "clientId")?)
            .with_client_authentication(basic_or_public(oauth.client_secret));
    let http = default_oauth_http_client().map_err(|e| anyhow!("{e}"))?;
    let request = EmaExchangeRequest::new_with_id_token(idp_server, resource_server, url, &id_token)
        .with_scopes(oauth.scopes.unwrap_or_default());
    let token = request
        .exchange(&http, &http)
        .await
        .map_err(|e| anyhow!("enterprise-managed sign-in failed: {e}"))?;
    Ok(token.access_token.secret().to_string())
}

/// A token given in the definition (`oauth.<field>`), else read from `oauth.<field>File` on
/// every connect (platforms rotate such files in place).
pub(super) fn given_or_read(
    given: &Option<String>,
    file: &Option<String>,
    grant: &str,
    field: &str,
) -> Result<String> {
    match (given, file) {
        (Some(token), _) => Ok(token.clone()),
        (None, Some(path)) => Ok(std::fs::read_to_string(path)
            .with_context(|| format!("cannot read oauth.{field}File {path}"))?
            .trim()
            .to_string()),
        (None, None) => bail!("the {grant} grant needs oauth.{field} or oauth.{field}File"),
    }
}

/// rmcp's discovery from `base` (a server url or an issuer), `what` naming it in errors.
async fn discover(base: &str, what: &str) -> Result<AuthorizationMetadataResolution> {
    let manager =
        AuthorizationManager::new(base).await.with_context(|| format!("{base} is not a usable url"))?;
    manager.resolve_metadata().await.with_context(|| format!("cannot discover {what}"))
}

/// HTTP Basic with `secret`, else a public client.
fn basic_or_public(secret: Option<String>) -> EmaClientAuthentication {
    match secret {
        Some(secret) => EmaClientAuthentication::ClientSecretBasic(oauth2::ClientSecret::new(secret)),
        None => EmaClientAuthentication::None,
    }
}

/// The IdP's token endpoint from its issuer's metadata (RFC 8414 or OpenID Connect).
async fn token_endpoint_of(issuer: &str) -> Result<String> {
    let resolution = discover(issuer, "the identity provider").await?;
    if !resolution.source.is_discovered() {
        bail!("the identity provider {issuer} publishes no metadata: set oauth.idp.tokenEndpoint");
    }
    Ok(resolution.metadata.token_endpoint)
}

/// `privateKeyJwt`'s value as rmcp's algorithm.
fn algorithm(name: &str) -> Result<JwtSigningAlgorithm> {
    Ok(match name.to_ascii_uppercase().as_str() {
        "RS256" => JwtSigningAlgorithm::RS256,
        "RS384" => JwtSigningAlgorithm::RS384,
        "RS512" => JwtSigningAlgorithm::RS512,
        "ES256" => JwtSigningAlgorithm::ES256,
        "ES384" => JwtSigningAlgorithm::ES384,
        other => bail!(
            "oauth.privateKeyJwt: unsupported signing algorithm {other} (RS256, RS384, RS512, ES256, ES384)"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algorithms_are_named_in_the_message() {
        assert!(matches!(algorithm("es256"), Ok(JwtSigningAlgorithm::ES256)));
        let err = algorithm("HS256").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("unsupported signing algorithm HS256"), "{err}");
    }
}
