//! The team tests' issuer (`tests/team/issuer.py`, on the SDK venv): started on a loopback
//! port, read back from its `READY` line, asked for tokens (`/mint`) and new keys (`/rotate`),
//! killed on drop; and `serve --http --auth oidc` in front of it, on a port of the test's
//! choosing when the audience must name it.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::auth::python;
use crate::support::common::{Env, ReadyFixture};
use crate::support::serve::ServeHttp;

/// How long the issuer may take to print `READY` (the SDK's imports take a second or two).
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// `tests/team/<file>`.
pub fn team_file(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("team").join(file)
}

/// `tests/team/issuer.py`, running until dropped.
pub struct Issuer {
    fixture: ReadyFixture,
    /// `http://127.0.0.1:PORT`, the `iss` of its tokens.
    pub url: String,
}

impl Issuer {
    /// On a free port.
    pub fn start() -> Self {
        Self::start_on(0)
    }

    /// On `port` (0: a free one).
    pub fn start_on(port: u16) -> Self {
        let mut command = Command::new(python());
        command.arg(team_file("issuer.py")).args(["--port", &port.to_string()]);
        let fixture = ReadyFixture::start(command, "issuer.py", READY_TIMEOUT);
        Self { url: fixture.url.clone(), fixture }
    }

    /// A token from `/mint` with `asked` (`sub`, `aud`, `groups`, `expires_in`, `alg`, `kid`,
    /// `forged`, `claims`; see issuer.py).
    pub fn mint(&self, asked: Value) -> String {
        let answer = self.post("/mint", &asked);
        answer["token"].as_str().unwrap_or_else(|| panic!("/mint answered {answer}")).to_string()
    }

    /// A new signing key; its `kid`.
    pub fn rotate(&self) -> String {
        let answer = self.post("/rotate", &json!({}));
        answer["kid"].as_str().unwrap_or_else(|| panic!("/rotate answered {answer}")).to_string()
    }

    /// `POST path` with a JSON body, through the venv's Python (its urllib).
    fn post(&self, path: &str, body: &Value) -> Value {
        const POST: &str = "import sys, urllib.request\n\
            r = urllib.request.Request(sys.argv[1], data=sys.argv[2].encode(), method='POST', headers={'Content-Type': 'application/json'})\n\
            print(urllib.request.urlopen(r, timeout=30).read().decode())";
        let out = Command::new(python())
            .args(["-c", POST, &format!("{}{path}", self.url), &body.to_string()])
            .output()
            .unwrap_or_else(|e| panic!("POST {path}: {e}"));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
            panic!("POST {path} failed: {}\n{}", String::from_utf8_lossy(&out.stderr), self.log())
        })
    }

    /// Its stderr so far: keys made, JWKS served, tokens minted and issued.
    pub fn log(&self) -> String {
        self.fixture.log()
    }

    /// How many lines of its log so far contain `what`.
    pub fn logged(&self, what: &str) -> usize {
        self.fixture.logged(what)
    }
}

/// A loopback port nothing listens on now (the next to bind it may still take it first: the
/// tests bind it at once).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free port: {e}"))
}

/// `serve --http 127.0.0.1:PORT --auth oidc --issuer I --audience A [extra…]` on `env`, once it
/// listens (`port` 0: a free one). Its servers may still be connecting.
pub fn serve_oidc(env: &Env, port: u16, issuer: &str, audience: &str, extra: &[&str]) -> ServeHttp {
    let mut args = vec!["--auth", "oidc", "--issuer", issuer, "--audience", audience];
    args.extend_from_slice(extra);
    ServeHttp::listening_on(env, &format!("127.0.0.1:{port}"), &args, &[])
}
