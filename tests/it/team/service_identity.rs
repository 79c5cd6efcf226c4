//! Issue 30's upstream tokens in a shared deployment: serve calls the servers behind it as one
//! service. Two callers with their own JWTs (`tests/team/issuer.py`) call `whoami` of a real
//! OAuth-protected server (`tests/auth/oauth_server.py`) that toolport reaches with a machine
//! grant, and both reach it as the same client, the service's; a server signed in by a person
//! (`mcp login`) is named on stderr at start, since every caller would act as that person.

use std::time::Duration;

use serde_json::json;

use super::oidc::{AUDIENCE, client, keys_known};
use crate::support::auth::{OAuthServer, add_enabled, login};
use crate::support::common::Env;
use crate::support::issuer::{Issuer, serve_oidc};

/// The machine client the protected server knows, and its secret (written as is in the
/// definition: serve's environment is the test's).
const MACHINE: &str = "toolport-team-service";
const SECRET: &str = "cc-it-team-service-secret";

#[test]
fn every_caller_reaches_the_server_behind_as_the_service_and_a_personal_sign_in_is_named() {
    let machine = OAuthServer::start(&["--client", &format!("{MACHINE}:{SECRET}")]);
    let personal = OAuthServer::start(&[]);
    let env = Env::new();
    let grant = json!({"grant": "client_credentials", "clientId": MACHINE, "clientSecret": SECRET});
    add_enabled(&env, &machine, "service", &json!({"type": "http", "url": machine.url, "oauth": grant}));
    add_enabled(&env, &personal, "personal", &json!({"type": "http", "url": personal.url}));
    login(&env, &personal, "personal");

    let issuer = Issuer::start();
    let serve = serve_oidc(&env, 0, &issuer.url, AUDIENCE, &[]);
    let warned = serve.wait_for_line("signs in as a person", Duration::from_secs(30));
    let expected = "toolport serve: server personal signs in as a person (signed in by `toolport mcp \
                    login`): every caller of --auth oidc acts as that person there; give it a machine \
                    grant (oauth.grant \"client_credentials\" or \"jwt_bearer\") as the team's service identity";
    assert!(warned.lines().any(|l| l == expected), "stderr:\n{warned}");
    assert!(!warned.contains("server service signs in"), "the machine grant is no person:\n{warned}");

    for caller in ["alice", "bob"] {
        let token = issuer.mint(json!({"sub": caller, "aud": AUDIENCE, "groups": ["team"]}));
        keys_known(&serve, &token);
        let seen = client(&serve.url, &["--token", &token, "--tool", "whoami", "--args", "{}"]);
        let texts = seen["texts"].as_array().cloned().unwrap_or_default();
        assert!(
            texts.len() == 1
                && texts[0].as_str().is_some_and(|t| t.starts_with(&format!("client_id={MACHINE} "))),
            "{caller} should reach the server as {MACHINE}: {seen}\nmachine server:\n{}",
            machine.log()
        );
    }
}
