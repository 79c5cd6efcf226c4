//! The `jwt_bearer` grant sends the workload's token only to the authorization server the
//! definition pins (issue 26 item 7). Before, it discovered the token endpoint from the
//! server's own metadata and posted the platform's token (a Kubernetes or CI identity) wherever
//! that named, through a client that reached any address, 169.254.169.254 included. Now
//! `oauth.issuer` is required, the token endpoint is `oauth.tokenEndpoint` or the one the
//! issuer's own metadata names on its own origin, and every request keeps to rmcp's address
//! rule (no link-local, private or metadata address the server's url does not allow).
//!
//! The server is the real sign-in fixture (`tests/auth/oauth_server.py`) accepting the JWT
//! bearer grant (`--workload`), and lying about its token endpoint (`--token-endpoint`) where a
//! test needs it; "another host" is a listener of this test that records what reaches it.

use std::io::Read as _;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::auth::{NAME, OAuthServer, add_enabled, run};
use crate::support::common::Env;

/// The workload's platform token: what must reach only the pinned authorization server.
const WORKLOAD_JWT: &str = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjaS13b3JrbG9hZCJ9.it-7c1e-workload-signature";
/// The client id the definition names, which the fixture's log repeats.
const CLIENT_ID: &str = "ci-workload";
/// What the fixture logs for every JWT bearer token request, and for each token it issues.
const ASSERTION_RECEIVED: &str = "jwt_bearer assertion received";
const TOKEN_ISSUED: &str = "jwt_bearer token issued to ci-workload";

/// The fixture with the JWT bearer grant for [`WORKLOAD_JWT`], and `args`.
fn workload_server(args: &[&str]) -> OAuthServer {
    let mut all = vec!["--workload", WORKLOAD_JWT];
    all.extend(args);
    OAuthServer::start(&all)
}

/// `{"type":"http","url":URL,"oauth":{"grant":"jwt_bearer",…}}` with `pins` added to `oauth`
/// (`issuer`, `tokenEndpoint`) and the token in a file, as a platform mounts it.
fn definition(env: &Env, url: &str, pins: Value) -> Value {
    let token_file = env.root().join("workload-token");
    std::fs::write(&token_file, format!("{WORKLOAD_JWT}\n")).unwrap_or_else(|e| panic!("write token: {e}"));
    let mut oauth = json!({
        "grant": "jwt_bearer",
        "clientId": CLIENT_ID,
        "assertionFile": token_file.display().to_string(),
    });
    if let (Some(o), Some(pins)) = (oauth.as_object_mut(), pins.as_object()) {
        o.extend(pins.clone());
    }
    json!({ "type": "http", "url": url, "oauth": oauth })
}

/// The error `mcp list --json` shows for [`NAME`] (the whole message: the text view clips it).
fn listed_error(env: &Env, server: &OAuthServer) -> String {
    let ran = run(env, &[], &["mcp", "list", "--json"], &[]);
    let list: Value = serde_json::from_str(&ran.stdout())
        .unwrap_or_else(|e| panic!("mcp list --json: {e}\n{}\n{}", ran.all(), server.log()));
    let row = list["servers"].as_array().and_then(|rows| rows.iter().find(|r| r["name"] == NAME)).cloned();
    let row = row.unwrap_or_else(|| panic!("no {NAME} in mcp list --json:\n{list}"));
    assert_eq!(row["state"], "error", "{NAME} did not fail:\n{row}\noauth_server.py:\n{}", server.log());
    row["error"].as_str().unwrap_or_default().to_string()
}

/// A listener on another port of this machine ("another host" the server can name): every
/// byte any connection sends it, read until the client stops or a second passes, then closed.
struct Recorder {
    port: u16,
    received: Arc<Mutex<Vec<u8>>>,
    connections: Arc<Mutex<usize>>,
}

impl Recorder {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
        let port = listener.local_addr().unwrap_or_else(|e| panic!("local addr: {e}")).port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(Mutex::new(0));
        let (bytes, count) = (received.clone(), connections.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                *count.lock().unwrap_or_else(std::sync::PoisonError::into_inner) += 1;
                let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
                let mut buf = [0u8; 8192];
                while let Ok(n @ 1..) = stream.read(&mut buf) {
                    bytes
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .extend_from_slice(&buf[..n]);
                }
            }
        });
        Self { port, received, connections }
    }

    fn connections(&self) -> usize {
        *self.connections.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn received(&self) -> String {
        String::from_utf8_lossy(&self.received.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
            .into_owned()
    }
}

/// (d) The pinned issuer's own metadata names its own token endpoint: the workload's token is
/// exchanged there, with the server's url as the resource, and the tool answers.
#[test]
fn the_workload_token_is_exchanged_at_the_pinned_issuer() {
    let server = workload_server(&[]);
    let env = Env::new();
    add_enabled(&env, &server, NAME, &definition(&env, &server.url, json!({ "issuer": server.issuer() })));

    let ran = run(&env, &[], &["call", "echo", r#"{"text":"from the workload"}"#], &[]);
    assert!(
        ran.output.status.success() && ran.stdout().contains("from the workload"),
        "call echo:\n{}\noauth_server.py:\n{}",
        ran.all(),
        server.log()
    );
    let issued = format!("{TOKEN_ISSUED} (resource {})", server.url);
    assert!(server.logged(&issued) >= 1, "no token was issued as `{issued}`:\n{}", server.log());

    let shown = run(&env, &[], &["mcp", "get", NAME], &[]).stdout();
    let pin = format!("oauth config: grant=jwt_bearer clientId={CLIENT_ID} issuer={}", server.issuer());
    assert!(shown.contains(&pin), "mcp get does not show the pin `{pin}`:\n{shown}");
}

/// (a) The pinned issuer's metadata names a token endpoint on another origin (here another
/// port of this machine, which the address rule allows for a loopback server): nothing at all
/// is sent there, the fixture's own token endpoint is not used either, and the error says why
/// and what to set if that endpoint is really the issuer's. Before, the assertion was posted
/// to whatever the server's metadata named.
#[test]
fn a_token_endpoint_off_the_pinned_issuer_gets_no_assertion() {
    let elsewhere = Recorder::start();
    let named = format!("http://127.0.0.1:{}/token", elsewhere.port);
    let server = workload_server(&["--token-endpoint", &named]);
    let env = Env::new();
    add_enabled(&env, &server, NAME, &definition(&env, &server.url, json!({ "issuer": server.issuer() })));

    let error = listed_error(&env, &server);
    let issuer = server.issuer();
    assert_eq!(
        error,
        format!(
            "the token endpoint {named} that issuer {issuer}'s metadata names is not on the issuer's \
             origin: no workload token is sent there (set oauth.tokenEndpoint if that authorization \
             server really uses it)"
        ),
        "oauth_server.py:\n{}",
        server.log()
    );
    // Give a request that was sent anyway time to arrive before looking.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(elsewhere.connections(), 0, "the other listener was reached:\n{}", elsewhere.received());
    assert!(!elsewhere.received().contains(WORKLOAD_JWT), "the assertion left:\n{}", elsewhere.received());
    assert_eq!(server.logged(ASSERTION_RECEIVED), 0, "the assertion was sent:\n{}", server.log());
}

/// (b) A token endpoint or issuer at a link-local (cloud instance metadata), private or
/// reserved address is refused before any request, whether the issuer's metadata names it or
/// the definition does (IPv4 inside IPv6 included); nothing reaches the fixture's token
/// endpoint. Before, the metadata's endpoint was posted to, and `tokenEndpoint`/`issuer` did not
/// exist (the token went to the server's own token endpoint).
#[test]
fn a_link_local_or_private_token_endpoint_is_refused() {
    let metadata_lie = "http://169.254.169.254/latest/api/token";
    let server = workload_server(&["--token-endpoint", metadata_lie]);
    let issuer = server.issuer();
    let link_local = "is a link-local address (where cloud instance metadata answers)";
    let cases = [
        (
            json!({ "issuer": issuer }),
            format!(
                "issuer {issuer}'s token endpoint {metadata_lie} is refused: 169.254.169.254 {link_local}"
            ),
        ),
        (
            json!({ "issuer": issuer, "tokenEndpoint": "https://169.254.169.254/latest/api/token" }),
            format!(
                "oauth.tokenEndpoint https://169.254.169.254/latest/api/token is refused: 169.254.169.254 \
                 {link_local}"
            ),
        ),
        (
            json!({ "issuer": issuer, "tokenEndpoint": "https://[::ffff:169.254.169.254]/token" }),
            format!(
                "oauth.tokenEndpoint https://[::ffff:169.254.169.254]/token is refused: ::ffff:169.254.169.254 \
                 {link_local}"
            ),
        ),
        (
            json!({ "issuer": issuer, "tokenEndpoint": "https://10.0.0.1/token" }),
            "oauth.tokenEndpoint https://10.0.0.1/token is refused: 10.0.0.1 is a private address, reached \
             only for a server whose url is a private address"
                .to_string(),
        ),
        (
            json!({ "issuer": "https://metadata.google.internal" }),
            "oauth.issuer https://metadata.google.internal is refused: metadata.google.internal is a cloud \
             instance metadata service"
                .to_string(),
        ),
    ];
    for (pins, want) in cases {
        let env = Env::new();
        add_enabled(&env, &server, NAME, &definition(&env, &server.url, pins.clone()));
        let error = listed_error(&env, &server);
        assert_eq!(error, want, "pins {pins}\noauth_server.py:\n{}", server.log());
    }
    assert_eq!(server.logged(ASSERTION_RECEIVED), 0, "the assertion was sent:\n{}", server.log());
}

/// (b) What a name resolves to is checked too, not only IP literals: for a server on the
/// network, an issuer whose name resolves to this machine (`localhost`) is not reached, and
/// nothing connects to the listener there. Before, the issuer did not exist and the token
/// went wherever the server's metadata said.
#[test]
fn an_issuer_whose_name_resolves_to_a_refused_address_is_not_reached() {
    let here = Recorder::start();
    let env = Env::new();
    let issuer = format!("https://localhost:{}", here.port);
    let def = definition(&env, "https://mcp.example.invalid/mcp", json!({ "issuer": issuer }));
    let added = run(&env, &[], &["mcp", "add-json", NAME, &def.to_string()], &[]);
    assert!(added.output.status.success(), "mcp add-json:\n{}", added.all());
    let enabled = run(&env, &[], &["mcp", "enable", NAME], &[]);
    assert!(enabled.output.status.success(), "mcp enable:\n{}", enabled.all());

    let ran = run(&env, &[], &["mcp", "list", "--json"], &[]);
    let list: Value =
        serde_json::from_str(&ran.stdout()).unwrap_or_else(|e| panic!("mcp list --json: {e}\n{}", ran.all()));
    let error = list["servers"][0]["error"].as_str().unwrap_or_default().to_string();
    let metadata = format!("{issuer}/.well-known/oauth-authorization-server");
    assert!(
        error.starts_with(&format!(
            "cannot read issuer {issuer}'s metadata at {metadata}: localhost resolves to "
        )) && error.contains("is a loopback address, reached only for a server on this machine"),
        "mcp list --json:\n{list}"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(here.connections(), 0, "the listener on this machine was reached:\n{}", here.received());
}

/// (c) A jwt_bearer definition without `oauth.issuer` is a configuration error naming the key:
/// `mcp add-json` refuses it (exit 2), and a store that holds one stops every command with the
/// file and the key, before anything connects. Before, it was accepted and the server chose.
#[test]
fn jwt_bearer_without_a_pinned_issuer_is_a_config_error() {
    let server = workload_server(&[]);
    let env = Env::new();
    let unpinned = definition(&env, &server.url, json!({}));
    let required = format!(
        "server \"{NAME}\": \"oauth.issuer\" is required for oauth.grant \"jwt_bearer\": the authorization \
         server the workload's token may be sent to (its issuer, e.g. \"https://auth.example.com\")"
    );

    let added = run(&env, &[], &["mcp", "add-json", NAME, &unpinned.to_string()], &[]);
    assert_eq!(added.output.status.code(), Some(2), "mcp add-json:\n{}", added.all());
    assert!(added.stderr().contains(&required), "mcp add-json:\n{}", added.all());

    let store = env.store();
    let doc = json!({ "mcpServers": { NAME: unpinned } });
    std::fs::write(&store, doc.to_string()).unwrap_or_else(|e| panic!("write store: {e}"));
    let listed = run(&env, &[], &["mcp", "list"], &[]);
    assert_eq!(listed.output.status.code(), Some(2), "mcp list:\n{}", listed.all());
    let at_file = format!("{}: {required}", store.display());
    assert!(listed.stderr().contains(&at_file), "mcp list does not say `{at_file}`:\n{}", listed.all());
    assert_eq!(server.logged(ASSERTION_RECEIVED), 0, "the assertion was sent:\n{}", server.log());
}
