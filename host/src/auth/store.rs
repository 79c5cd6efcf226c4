//! TEMPORARY stub (replaced by the helper's store).
#![allow(missing_docs)]
use std::path::PathBuf;
use anyhow::Result;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};

#[derive(Debug, Clone)]
pub struct CredentialsFile { path: PathBuf }
pub struct SignedIn { pub issuer: Option<String>, pub expires_at: Option<u64>, pub has_refresh_token: bool, pub scopes: Vec<String> }
#[derive(Clone)]
pub struct ServerCredentials { _p: PathBuf, _u: String }
impl CredentialsFile {
    pub fn new(path: PathBuf) -> Self { Self { path } }
    pub fn for_server(&self, url: &str) -> ServerCredentials { ServerCredentials { _p: self.path.clone(), _u: url.into() } }
    pub fn set_client_secret(&self, _url: &str, _issuer: Option<&str>, _id: &str, _s: &str) -> Result<()> { Ok(()) }
    pub fn client_secret(&self, _url: &str, _issuer: Option<&str>, _id: &str) -> Result<Option<String>> { Ok(None) }
    pub fn forget(&self, _url: &str) -> Result<bool> { Ok(false) }
    pub fn status(&self, _url: &str) -> Result<Option<SignedIn>> { Ok(None) }
}
#[async_trait::async_trait]
impl CredentialStore for ServerCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> { Ok(None) }
    async fn save(&self, _c: StoredCredentials) -> Result<(), AuthError> { Ok(()) }
    async fn clear(&self) -> Result<(), AuthError> { Ok(()) }
}
