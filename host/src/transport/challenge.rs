//! Whether a server asks for a sign-in, asked over a plain connection, and `mcp login` built
//! on it: the one place a sign-in needs a transport, so `auth` stays below `transport`.

use anyhow::{Result, anyhow};
use rmcp::ClientServiceExt;

use super::connect_error::ConnectError;
use super::http;
use super::http_audit::HeaderAudit;
use super::lifecycle;
use crate::auth::{self, Completion, CredentialsFile, SignedIn};
use crate::config::ServerDef;
use crate::observe::Observer;

/// Whether `def`'s server asks for a sign-in: its `WWW-Authenticate` challenge when a plain
/// connect or its first listing is refused with 401 (or 403), else `None` (it answered, or it
/// is down: the sign-in's discovery says which). Used by `toolport mcp login`.
async fn challenge(def: &ServerDef) -> Result<Option<String>, ConnectError> {
    let config = http::config(def)?;
    let transport = http::unsigned(config, HeaderAudit::default())?;
    match ().serve_with_lifecycle(transport, lifecycle::lifecycle()).await {
        Err(e) => Ok(e.auth_challenge().map(str::to_string)),
        Ok(service) => {
            let listed = service.peer().list_tools(None).await;
            let challenge = listed.err().and_then(|e| e.auth_challenge().map(str::to_string));
            let _ = service.cancel().await;
            Ok(challenge)
        }
    }
}

/// `mcp login` and `/mcp login`: asks the server for its [`challenge`] (a plain connect and
/// listing), then runs the sign-in from it. `def` is already expanded and passed
/// [`auth::no_login`].
/// The sign-in is recorded and its address told through `observer`.
pub async fn login(
    observer: &Observer,
    def: &ServerDef,
    file: &CredentialsFile,
    completion: Completion,
) -> Result<SignedIn> {
    let challenge = challenge(def).await.map_err(|e| anyhow!(e))?;
    auth::login(observer, def, file, completion, challenge).await
}
