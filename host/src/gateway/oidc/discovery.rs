//! Where an issuer publishes its keys: the `jwks_uri` of its OpenID discovery document
//! (`<issuer>/.well-known/openid-configuration`), else of its RFC 8414 metadata
//! (`<origin>/.well-known/oauth-authorization-server<path>`), which an OAuth-only
//! authorization server serves instead. Either document must name the issuer exactly (OpenID
//! Discovery §4.3, RFC 8414 §3.3): a document for another issuer is not trusted.

use anyhow::{Context as _, bail};
use serde_json::Value;
use url::Url;

/// The largest document (discovery or JWKS) read from the issuer: real ones are a few KB.
const MAX_DOCUMENT_BYTES: usize = 1 << 20;

/// The two discovery URLs of `issuer`, in the order they are tried.
pub fn urls(issuer: &str) -> anyhow::Result<[String; 2]> {
    let parsed = Url::parse(issuer).with_context(|| format!("the issuer {issuer} is not a URL"))?;
    let openid = format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/'));
    let path = parsed.path().trim_end_matches('/');
    let origin = parsed.origin().ascii_serialization();
    Ok([openid, format!("{origin}/.well-known/oauth-authorization-server{path}")])
}

/// The issuer's `jwks_uri`, from the first discovery document that answers.
pub async fn jwks_uri(client: &reqwest::Client, issuer: &str) -> anyhow::Result<String> {
    let mut failures = Vec::new();
    for url in urls(issuer)? {
        match get_json(client, &url).await {
            Ok(document) => return jwks_uri_of(&document, issuer, &url),
            Err(e) => failures.push(format!("{e:#}")),
        }
    }
    bail!("no discovery document: {}", failures.join("; "))
}

/// `document`'s `jwks_uri`, once it is known to be `issuer`'s.
fn jwks_uri_of(document: &Value, issuer: &str, url: &str) -> anyhow::Result<String> {
    let named = document.get("issuer").and_then(Value::as_str).unwrap_or_default();
    if named != issuer {
        bail!("{url} names the issuer {named:?}, not {issuer}");
    }
    match document.get("jwks_uri").and_then(Value::as_str) {
        Some(uri) if Url::parse(uri).is_ok() => Ok(uri.to_string()),
        _ => bail!("{url} has no jwks_uri"),
    }
}

/// `GET url` as JSON: a 200 within [`MAX_DOCUMENT_BYTES`].
pub async fn get_json(client: &reqwest::Client, url: &str) -> anyhow::Result<Value> {
    let mut response = client
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .with_context(|| format!("cannot reach {url}"))?;
    if !response.status().is_success() {
        bail!("{url} answered {}", response.status());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.with_context(|| format!("cannot read {url}"))? {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            bail!("{url} is over {MAX_DOCUMENT_BYTES} bytes");
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).with_context(|| format!("{url} is not JSON"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn discovery_tries_openid_then_rfc_8414_with_the_path_inserted() -> anyhow::Result<()> {
        assert_eq!(
            urls("https://login.example.com/tenant/")?,
            [
                "https://login.example.com/tenant/.well-known/openid-configuration".to_string(),
                "https://login.example.com/.well-known/oauth-authorization-server/tenant".to_string(),
            ]
        );
        assert_eq!(
            urls("http://127.0.0.1:9000")?[1],
            "http://127.0.0.1:9000/.well-known/oauth-authorization-server"
        );
        Ok(())
    }

    #[test]
    fn a_document_for_another_issuer_is_not_trusted() {
        let document = json!({"issuer": "https://evil.example", "jwks_uri": "https://evil.example/jwks"});
        let got = jwks_uri_of(&document, "https://login.example", "U").map_err(|e| e.to_string());
        assert_eq!(got, Err("U names the issuer \"https://evil.example\", not https://login.example".into()));
        let document = json!({"issuer": "https://login.example"});
        assert!(jwks_uri_of(&document, "https://login.example", "U").is_err());
    }
}
