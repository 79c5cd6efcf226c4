//! Machine-to-machine sign-in (SEP-1046, `oauth.grant: "client_credentials"`): the client's
//! own secret (`client_secret_basic` or `_post`, as the server advertises) or a private key
//! signing a `private_key_jwt` assertion (RFC 7523). No person and no login step: a token is
//! fetched on every connect, so nothing needs storing or refreshing.

use anyhow::{Context as _, Result, anyhow, bail};
use rmcp::transport::auth::{AuthorizationManager, ClientCredentialsConfig, JwtSigningAlgorithm, OAuthState};

use crate::config::ServerDef;

/// The algorithm when `privateKeyJwt` does not name one: the one every server supports.
const DEFAULT_ALGORITHM: &str = "RS256";

/// A manager holding a fresh token for `def` (already `${VAR}`-expanded).
///
/// Runs on a blocking thread: rmcp 3.11's `private_key_jwt` exchange holds a
/// `form_urlencoded::Serializer` across an await, so its future is not `Send` and cannot be
/// part of a connection's task.
pub async fn authorize(def: &ServerDef) -> Result<AuthorizationManager> {
    let def = def.clone();
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || runtime.block_on(fetch(&def)))
        .await
        .context("the client credentials sign-in stopped")?
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
        (None, Some(secret)) => {
            ClientCredentialsConfig::ClientSecret { client_id, client_secret: secret.clone(), scopes, resource }
        }
        (None, None) => bail!("the client_credentials grant needs oauth.clientSecret or oauth.privateKey"),
    };
    let mut state = OAuthState::new(url, None).await.context("the server url is not usable")?;
    state
        .authenticate_client_credentials(config)
        .await
        .map_err(|e| anyhow!("client credentials sign-in failed: {e}"))?;
    state.into_authorization_manager().ok_or_else(|| anyhow!("client credentials sign-in did not finish"))
}

/// `privateKeyJwt`'s value as rmcp's algorithm.
fn algorithm(name: &str) -> Result<JwtSigningAlgorithm> {
    Ok(match name.to_ascii_uppercase().as_str() {
        "RS256" => JwtSigningAlgorithm::RS256,
        "RS384" => JwtSigningAlgorithm::RS384,
        "RS512" => JwtSigningAlgorithm::RS512,
        "ES256" => JwtSigningAlgorithm::ES256,
        "ES384" => JwtSigningAlgorithm::ES384,
        other => bail!("oauth.privateKeyJwt: unsupported signing algorithm {other} (RS256, RS384, RS512, ES256, ES384)"),
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
