//! `oauth.grant: "jwt_bearer"` (RFC 7523 §2.1, SEP-1933 workload identity federation): a JWT
//! the platform issued to this workload, exchanged for an access token. rmcp has no such grant;
//! the request is one form POST. A refusal is final (no retry, no other grant): the platform's
//! token is what it is until the platform rotates it.
//!
//! That JWT proves the workload's identity to whoever holds it, so where it goes is the
//! definition's choice, never the server's (issue 26; as the enterprise grant's IdP): the
//! authorization server is pinned by `oauth.issuer`, and the token endpoint is
//! `oauth.tokenEndpoint` or the one that issuer's own metadata names on its own origin. The
//! server's metadata is not read. Every request goes through [`AddressPolicy`], rmcp's address
//! rule for its OAuth client, so no pin reaches a link-local, private or metadata address the
//! server's url does not allow.

use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail};
use serde_json::Value;
use url::Url;

use super::address_policy::AddressPolicy;
use super::machine::given_or_read;
use crate::config::ServerDef;

/// RFC 7523's grant type.
const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// Largest metadata document or token response read: neither server is trusted to bound its
/// own answer (rmcp's `MAX_OAUTH_HTTP_RESPONSE_BODY_BYTES`).
const MAX_RESPONSE_BYTES: usize = 1024 * 1024;
/// How long each request may take, as rmcp allows its own OAuth requests.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// An access token for `def`'s workload JWT (already `${VAR}`-expanded).
pub async fn token(def: &ServerDef) -> Result<String> {
    let url = def.url.as_deref().ok_or_else(|| anyhow!("no url"))?;
    let server = Url::parse(url).with_context(|| format!("the server url {url} is not a URL"))?;
    let oauth = def.oauth.clone().unwrap_or_default();
    // The config reader refuses a jwt_bearer definition without one; a definition built in
    // code may still lack it.
    let issuer = oauth.issuer.as_deref().ok_or_else(|| {
        anyhow!("the jwt_bearer grant needs oauth.issuer, the authorization server it trusts")
    })?;
    let policy = AddressPolicy::for_server(&server);
    let issuer_url = policy.check("oauth.issuer", issuer)?;
    let client = policy.client(REQUEST_TIMEOUT)?;
    let endpoint = match oauth.token_endpoint.as_deref() {
        Some(endpoint) => policy.check("oauth.tokenEndpoint", endpoint)?,
        None => {
            let named = token_endpoint_of(&client, &issuer_url, issuer).await?;
            let what = format!("issuer {issuer}'s token endpoint");
            let endpoint = policy.check(&what, &named)?;
            if !same_origin(&issuer_url, &endpoint) {
                bail!(
                    "the token endpoint {named} that issuer {issuer}'s metadata names is not on the \
                     issuer's origin: no workload token is sent there (set oauth.tokenEndpoint if that \
                     authorization server really uses it)"
                );
            }
            endpoint
        }
    };
    let assertion = given_or_read(&oauth.assertion, &oauth.assertion_file, "jwt_bearer", "assertion")?;
    let scope = oauth.scopes.as_ref().filter(|s| !s.is_empty()).map(|s| s.join(" "));
    let body = token_form(&assertion, url, oauth.client_id.as_deref(), scope.as_deref());
    let request = client
        .post(endpoint.clone())
        .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(http::header::ACCEPT, "application/json")
        .body(body);
    let (status, answer) = send(request).await.with_context(|| {
        format!("the token request to {} failed", crate::redact::redact_urls(endpoint.as_str()))
    })?;
    if !status.is_success() {
        let error = answer["error"].as_str().unwrap_or("no error code");
        let detail = answer["error_description"].as_str().map(|d| format!(" ({d})")).unwrap_or_default();
        bail!("the authorization server refused the workload token: {error}{detail} (HTTP {status})");
    }
    answer["access_token"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| anyhow!("the token response carries no access_token"))
}

/// The token endpoint of the pinned `issuer` (parsed: `issuer_url`) from its own RFC 8414 or
/// OpenID Connect metadata, in rmcp's order of well-known locations (but never the root's for
/// an issuer with a path: that document is another issuer's). The document must name the
/// issuer itself (RFC 8414 §3.3), so a document served for another issuer is refused.
async fn token_endpoint_of(client: &reqwest::Client, issuer_url: &Url, issuer: &str) -> Result<String> {
    for location in metadata_locations(issuer_url) {
        let request = client.get(location.clone()).header(http::header::ACCEPT, "application/json");
        let (status, document) = send(request)
            .await
            .with_context(|| format!("cannot read issuer {issuer}'s metadata at {location}"))?;
        if status != reqwest::StatusCode::OK || !document.is_object() {
            continue;
        }
        let named = document["issuer"].as_str().unwrap_or_default();
        if !same_issuer(named, issuer) {
            bail!("the metadata at {location} is issuer \"{named}\"'s, not the pinned oauth.issuer {issuer}");
        }
        return document["token_endpoint"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| anyhow!("issuer {issuer}'s metadata at {location} names no token_endpoint"));
    }
    bail!("issuer {issuer} publishes no authorization server metadata: set oauth.tokenEndpoint")
}

/// Where the metadata of the issuer `issuer` may be (rmcp's `generate_discovery_urls`, MCP's
/// order: RFC 8414 path insertion, then OpenID Connect insertion and appending).
fn metadata_locations(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_matches('/');
    let paths = if path.is_empty() {
        vec![
            "/.well-known/oauth-authorization-server".to_string(),
            "/.well-known/openid-configuration".to_string(),
        ]
    } else {
        vec![
            format!("/.well-known/oauth-authorization-server/{path}"),
            format!("/.well-known/openid-configuration/{path}"),
            format!("/{path}/.well-known/openid-configuration"),
        ]
    };
    paths
        .into_iter()
        .map(|p| {
            let mut url = issuer.clone();
            url.set_query(None);
            url.set_fragment(None);
            url.set_path(&p);
            url
        })
        .collect()
}

/// RFC 8414 §3.3's comparison as rmcp makes it (`issuer_identifiers_match`): the same string,
/// give or take the slash of an issuer without a path.
fn same_issuer(named: &str, pinned: &str) -> bool {
    let bare = |issuer: &str| -> String {
        issuer
            .strip_suffix('/')
            .filter(|without| Url::parse(without).is_ok_and(|u| u.path().is_empty() || u.path() == "/"))
            .unwrap_or(issuer)
            .to_string()
    };
    named == pinned || bare(named) == bare(pinned)
}

/// Same scheme, host and port (rmcp's `is_same_origin`).
fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str().zip(b.host_str()).is_some_and(|(a, b)| a.eq_ignore_ascii_case(b))
        && a.port_or_known_default() == b.port_or_known_default()
}

/// The status and JSON body (`null` when it is not JSON) of `request`, the body read to at
/// most [`MAX_RESPONSE_BYTES`].
async fn send(request: reqwest::RequestBuilder) -> Result<(reqwest::StatusCode, Value)> {
    let mut response = request.send().await.map_err(|e| anyhow!("{}", crate::cause::deepest_cause(&e)))?;
    let status = response.status();
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.context("cannot read the response")? {
        if bytes.len() + chunk.len() > MAX_RESPONSE_BYTES {
            bail!("the response is larger than {MAX_RESPONSE_BYTES} bytes");
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok((status, serde_json::from_slice(&bytes).unwrap_or(Value::Null)))
}

/// The `application/x-www-form-urlencoded` body of the JWT-bearer token request (RFC 8707's
/// `resource` included). Built apart from the request: the serializer must not live across an
/// await (it is not `Send`).
fn token_form(assertion: &str, resource: &str, client_id: Option<&str>, scope: Option<&str>) -> String {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    form.append_pair("grant_type", JWT_BEARER_GRANT).append_pair("assertion", assertion);
    form.append_pair("resource", resource);
    if let Some(id) = client_id {
        form.append_pair("client_id", id);
    }
    if let Some(scope) = scope {
        form.append_pair("scope", scope);
    }
    form.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn the_jwt_bearer_form_carries_grant_assertion_and_resource() {
        let form = token_form("a.b.c", "https://mcp.example/mcp", Some("wl"), Some("read write"));
        let pairs: Vec<(String, String)> =
            url::form_urlencoded::parse(form.as_bytes()).into_owned().collect();
        let get = |k: &str| pairs.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        assert_eq!(get("grant_type"), Some(JWT_BEARER_GRANT));
        assert_eq!(get("assertion"), Some("a.b.c"));
        assert_eq!(get("resource"), Some("https://mcp.example/mcp"));
        assert_eq!((get("client_id"), get("scope")), (Some("wl"), Some("read write")));
        assert!(!token_form("a", "r", None, None).contains("client_id"));
    }

    #[test]
    fn metadata_is_looked_for_only_where_the_issuer_publishes_its_own() {
        let at = |issuer: &str| -> Vec<String> {
            metadata_locations(&url(issuer)).iter().map(Url::to_string).collect()
        };
        assert_eq!(
            at("https://auth.example"),
            [
                "https://auth.example/.well-known/oauth-authorization-server",
                "https://auth.example/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            at("https://auth.example/realms/ci/"),
            [
                "https://auth.example/.well-known/oauth-authorization-server/realms/ci",
                "https://auth.example/.well-known/openid-configuration/realms/ci",
                "https://auth.example/realms/ci/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn issuers_and_origins_compare_as_rmcp_compares_them() {
        assert!(same_issuer("https://a.example", "https://a.example/"));
        assert!(same_issuer("https://a.example/t", "https://a.example/t"));
        assert!(!same_issuer("https://a.example/t/", "https://a.example/t"));
        assert!(!same_issuer("https://evil.example", "https://a.example"));
        assert!(same_origin(&url("https://A.example/x"), &url("https://a.example:443/token")));
        assert!(!same_origin(&url("http://127.0.0.1:80"), &url("http://127.0.0.1:81/token")));
        assert!(!same_origin(&url("https://a.example"), &url("http://a.example/token")));
    }
}
