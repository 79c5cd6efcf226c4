//! Whose tokens reach the servers behind a shared serve. With callers of their own (`serve
//! --http --auth oidc`), serve calls its servers as one service: a machine grant
//! (`client_credentials`, `jwt_bearer`) is that service's identity. A server that signs in as
//! a person (tokens a `mcp login` stored, or the enterprise grant's ID token) would act as
//! that person for every caller, so serve says so at start, once per such server.

use toolport::signin::CredentialsFile;
use toolport::store::Grant;
use toolport::{Paths, Resolved, ResolvedServer};

/// The line for each active server of `resolved` that signs in as a person.
pub fn personal_sign_ins(paths: &Paths, resolved: &Resolved) -> Vec<String> {
    let credentials = CredentialsFile::new(paths.credentials());
    let signed_in = |server: &ResolvedServer| {
        server.def.url.as_deref().is_some_and(|url| matches!(credentials.status(url), Ok(Some(_))))
    };
    resolved
        .servers
        .iter()
        .filter(|server| server.active() && !has_own_authorization(server))
        .filter_map(|server| {
            let how = match server.def.oauth.as_ref().map(|oauth| oauth.grant) {
                Some(Grant::Enterprise) => "its oauth.grant is \"enterprise\", a person's ID token",
                Some(Grant::ClientCredentials | Grant::JwtBearer) => return None,
                Some(Grant::AuthorizationCode) | None if signed_in(server) => {
                    "signed in by `toolport mcp login`"
                }
                Some(Grant::AuthorizationCode) | None => return None,
            };
            Some(format!(
                "toolport serve: server {} signs in as a person ({how}): every caller of --auth oidc \
                 acts as that person there; give it a machine grant (oauth.grant \"client_credentials\" \
                 or \"jwt_bearer\") as the team's service identity",
                server.def.name
            ))
        })
        .collect()
}

/// A definition with its own `Authorization` header never uses OAuth.
fn has_own_authorization(server: &ResolvedServer) -> bool {
    server.def.headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("authorization"))
}
