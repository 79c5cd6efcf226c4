//! What can go wrong around a sign-in's loopback redirect (`mcp login` against the real OAuth
//! fixture, `tests/auth/oauth_server.py`): requests to the callback that are not this
//! sign-in's (another program on the machine can reach a loopback port), a refusal whose text
//! tries to forge terminal lines, and the authorization code in a `-vvv` log.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::auth::{NAME, OAuthServer, add_enabled, assert_ok, browser, browser_log, run};
use crate::support::common::Env;

/// A `$BROWSER` in the test's root that runs `body` (bash) with `$url` (the authorization
/// URL), `$redirect` (toolport's callback, its `redirect_uri` decoded), `$state` (the
/// request's, as it stands in the URL) and `$log` set, and `$BROWSER_SH` the tests' real browser.
fn browser_script(env: &Env, body: &str) -> PathBuf {
    let script = format!(
        r#"#!/usr/bin/env bash
set -uo pipefail
url="${{!#}}"
log="${{AUTH_BROWSER_LOG:-/dev/null}}"
BROWSER_SH='{real}'
# A query parameter of the authorization URL as it stands there (still percent-encoded).
param() {{
  local query="${{url#*\?}}" part
  local IFS='&'
  for part in $query; do
    if [[ "$part" == "$1="* ]]; then printf '%s' "${{part#*=}}"; return; fi
  done
}}
encoded="$(param redirect_uri)"
redirect="$(printf '%b' "${{encoded//%/\\x}}")"
state="$(param state)"
{body}
"#,
        real = browser().display()
    );
    let path = env.root().join("browser-under-test.sh");
    std::fs::write(&path, script).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("chmod {}: {e}", path.display()));
    path
}

/// `mcp login` of the fixture with `browser` as `$BROWSER` and `pre` (global flags).
fn login_with(env: &Env, pre: &[&str], browser: &Path) -> crate::support::auth::Ran {
    let browser = browser.display().to_string();
    run(env, pre, &["mcp", "login", NAME], &[("BROWSER", browser.as_str())])
}

fn browser_said(env: &Env) -> String {
    std::fs::read_to_string(browser_log(env)).unwrap_or_default()
}

/// The browser's log once it holds `text`, or as it stands after `within`.
fn browser_said_within(env: &Env, text: &str, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let said = browser_said(env);
        if said.contains(text) || Instant::now() >= deadline {
            return said;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The fixture's OAuth server and a home with it enabled as [`NAME`], not signed in.
fn enabled_oauth_server() -> (OAuthServer, Env) {
    let server = OAuthServer::start(&[]);
    let env = Env::new();
    add_enabled(&env, &server, NAME, &json!({ "type": "http", "url": server.url, "oauth": {} }));
    (server, env)
}

/// Before the real redirect, three forged requests reach the callback: a refusal with no
/// state (its text with a newline), one with another state, and a code with another state.
/// Each is answered 400 and ignored; the real redirect then signs in, and nothing the forger
/// wrote is printed.
#[test]
fn callback_requests_without_the_sign_ins_state_are_ignored() {
    let (server, env) = enabled_oauth_server();
    let forger = browser_script(
        &env,
        r#"for query in 'error=access_denied&error_description=forged%0Aline' \
             'error=access_denied&error_description=forged&state=not-this-one' \
             'code=forged-code&state=not-this-one'; do
  status="$(curl --silent --max-time 10 --output /dev/null --write-out '%{http_code}' "$redirect?$query")"
  echo "forged $query: $status" >>"$log"
done
exec "$BROWSER_SH" "$url""#,
    );
    let ran = login_with(&env, &[], &forger);
    assert_ok(&ran, &env, &server);
    let said = browser_said(&env);
    assert_eq!(said.matches("forged ").count(), 3, "{said}");
    assert_eq!(
        said.lines().filter(|l| l.starts_with("forged ") && l.ends_with(": 400")).count(),
        3,
        "{said}"
    );
    assert!(said.contains("callback answered 200"), "{said}");
    let stderr = ran.stderr();
    assert!(!stderr.contains("forged") && !stderr.contains("refused"), "{stderr}");
    assert!(stderr.contains("ignored a request without this sign-in's state"), "{stderr}");
    let whoami = run(&env, &[], &["call", "whoami", "{}"], &[]);
    assert_ok(&whoami, &env, &server);
}

/// A refusal that does carry the sign-in's state ends it, and its `error` and
/// `error_description` are printed as one line: CR, LF and ESC escaped, so the text cannot
/// forge a line of toolport's or move the cursor.
#[test]
fn a_refusal_with_the_right_state_is_printed_as_one_escaped_line() {
    let (_server, env) = enabled_oauth_server();
    let refuser = browser_script(
        &env,
        r#"[[ -n "$state" ]] || { echo "no state in $url" >>"$log"; exit 1; }
query="error=access_denied%1B%5B2J&error_description=denied%0D%0Atoolport%3A%20forged&state=$state"
( status="$(curl --silent --max-time 10 --output /dev/null --write-out '%{http_code}' "$redirect?$query")"
  echo "refused with the state: $status" >>"$log" ) </dev/null >/dev/null 2>&1 &"#,
    );
    let ran = login_with(&env, &[], &refuser);
    assert_eq!(ran.output.status.code(), Some(1), "{}\n{}", ran.all(), browser_said(&env));
    let stderr = ran.stderr();
    let expected = r"the authorization server refused the sign-in: access_denied\u{1b}[2J (denied\u{d}\u{a}toolport: forged)";
    assert!(stderr.contains(expected), "{stderr}\n{}", browser_said(&env));
    assert!(!stderr.lines().any(|l| l.starts_with("toolport: forged")), "{stderr}");
    assert!(!stderr.contains('\u{1b}') && !stderr.contains('\r'), "{stderr:?}");
    // The refusing request runs in the background and logs its status only once curl has
    // read the answer, which can be after toolport has exited: wait for the line.
    let said = browser_said_within(&env, "refused with the state: ", Duration::from_secs(10));
    assert!(said.contains("refused with the state: 200"), "{said}");
}

/// rmcp logs the authorization code at debug level; at `-vvv` a whole `mcp login` (discovery,
/// registration, the redirect, the exchange) prints it nowhere. The code is read from the
/// redirect the fixture sent the browser to.
#[test]
fn the_authorization_code_never_reaches_the_log_at_vvv() {
    let (server, env) = enabled_oauth_server();
    let ran = login_with(&env, &["-vvv"], &browser());
    assert_ok(&ran, &env, &server);
    let said = browser_said(&env);
    let location = said
        .lines()
        .find_map(|l| l.strip_prefix("browser.sh: redirected to "))
        .unwrap_or_else(|| panic!("the browser was not redirected:\n{said}"));
    // The fixture's codes are URL-safe base64: as they stand in the query, so they are.
    let query = location.split_once('?').map(|(_, q)| q).unwrap_or_default();
    let code = query
        .split('&')
        .find_map(|pair| pair.strip_prefix("code="))
        .unwrap_or_else(|| panic!("no code in {location}"));
    assert!(code.len() >= 16, "{code}");
    let all = ran.all();
    for secret in [code, location] {
        assert!(!all.contains(secret), "the authorization code was printed:\n{all}");
    }
    // The exchange is logged, masked: the line the mask is for was written, so this run shows
    // the mask at work (rmcp rewording or dropping it fails here, to be looked at).
    assert!(all.contains("exchange code for token: \"***\""), "rmcp's exchange line changed:\n{all}");
}
