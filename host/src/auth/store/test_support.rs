//! What the credential store's tests share: a server, two issuers, tokens and the file read back.

use std::path::Path;
use std::time::Duration;

use rmcp::transport::auth::{OAuthTokenResponse, StoredCredentials};
use serde_json::{Value, json};

pub(super) const URL: &str = "https://mcp.example.com/mcp";
pub(super) const ISSUER_A: &str = "https://auth-a.example.com";
pub(super) const ISSUER_B: &str = "https://auth-b.example.com";
/// Long enough for a second task to reach the lock if it were not taken; short for a test.
pub(super) const SETTLE: Duration = Duration::from_millis(300);
/// A deadlock fails the test instead of hanging it.
pub(super) const PATIENCE: Duration = Duration::from_secs(10);

pub(super) fn token(access: &str, refresh: &str) -> anyhow::Result<OAuthTokenResponse> {
    Ok(serde_json::from_value(json!({
        "access_token": access, "token_type": "bearer", "expires_in": 3600, "refresh_token": refresh
    }))?)
}

pub(super) fn creds(
    client_id: &str,
    issuer: Option<&str>,
    access: &str,
    refresh: &str,
) -> anyhow::Result<StoredCredentials> {
    Ok(StoredCredentials::new(
        client_id.into(),
        Some(token(access, refresh)?),
        vec!["read".into()],
        Some(1_000),
    )
    .with_issuer(issuer.map(str::to_owned)))
}

pub(super) fn refresh_token_of(creds: &StoredCredentials) -> anyhow::Result<Value> {
    Ok(serde_json::to_value(&creds.token_response)?["refresh_token"].clone())
}

pub(super) fn file_json(path: &Path) -> anyhow::Result<Value> {
    Ok(serde_json::from_str(&std::fs::read_to_string(path)?)?)
}
