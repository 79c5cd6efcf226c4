//! The fault suite, names and datagrams (issue 11, items 1 and 2): the hostile transport looks
//! up names it was not granted, and sends UDP to a granted peer and to one it was not. A refused
//! lookup or datagram fails only that server, with the host's own record of the refusal
//! (`not granted: …`); what was granted works, both ways; the healthy neighbour keeps answering.

use serde_json::{Value, json};
use toolport::ServerState;

use crate::common::Env;
use crate::faults_support::{OK, assert_failed, assert_neighbour_fine, healthy, row, start, write};
use crate::transport_support::{Exposed, Framing, built_plugin};

/// The hostile transport under `hosts` grants.
fn hostile(hosts: &[&str]) -> Value {
    json!({
        "kind": "transport",
        "path": built_plugin("fixture_transport_hostile"),
        "grants": { "hosts": hosts },
    })
}

/// A server of plugin `plugin` on `exposed` whose hostile mode gets `args`.
fn via(plugin: &str, exposed: &Exposed, args: &[String]) -> Value {
    json!({ "type": plugin, "url": exposed.url(), "args": args })
}

#[tokio::test(flavor = "multi_thread")]
async fn only_granted_names_resolve() {
    let exposed = Exposed::start(Framing::Tcp, &[]);
    let env = Env::new();
    let arg = |name: &str| vec![name.to_string()];
    let before = write(
        &env,
        &[
            // Granted only `api.example.com` (the reproduction), it tries a name that
            // carries a secret to whichever resolver answers, and `localhost`.
            ("resolve-secret", via("hostile", &exposed, &arg("secret-token-abc123.example.org"))),
            ("resolve-localhost", via("hostile", &exposed, &arg("LocalHost"))),
            // The same component granted `localhost` resolves it, then serves as usual.
            ("resolve-granted", via("named", &exposed, &arg("localhost"))),
            (OK, healthy()),
        ],
        json!({
            "hostile": hostile(&["https://api.example.com:443"]),
            "named": hostile(&["tcp://localhost:*"]),
        }),
        json!({}),
    );
    let runtime = start(&env).await;
    assert_failed(
        &runtime,
        "resolve-secret",
        "transport plugin hostile: not granted: name lookup of secret-token-abc123.example.org",
    );
    assert_failed(
        &runtime,
        "resolve-localhost",
        "transport plugin hostile: not granted: name lookup of LocalHost",
    );
    let granted = row(&runtime, "resolve-granted");
    assert_eq!((granted.state, granted.tools, granted.error.as_deref()), (ServerState::Connected, 6, None));
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}
