//! OAuth 2.1 sign-in to a remote MCP server, driven as a person drives it: `mcp login` with a
//! browser (`tests/auth/browser.sh` as `$BROWSER`) or by pasting the redirect back on a
//! terminal, then `mcp list`, `mcp get`, `tools` and `call` on the stored tokens, refreshes
//! when they expire, and `mcp logout`. The server is real: `tests/auth/oauth_server.py`, the
//! Python SDK's authorization and resource server, which rotates refresh tokens and revokes
//! the whole grant when a used one comes back, as real providers do.

use std::collections::BTreeSet;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::support::auth::{
    CONNECTED_ROW, LOGIN_TIMEOUT, NAME, OAuthServer, PAST_EXPIRY, Ran, SHORT_TOKEN_SECONDS, SIGN_IN_ROW,
    Terminal, add_enabled, assert_ok, browser_log, location_of, login, ok, row, run, toolport_cmd,
    url_on_screen,
};
use crate::support::common::Env;

/// `{"type":"http","url":URL,"oauth":{…}}`.
fn definition(server: &OAuthServer, oauth: Value) -> Value {
    json!({ "type": "http", "url": server.url, "oauth": oauth })
}

/// The `oauth:` line of `mcp get`, trimmed.
fn oauth_line(get: &str) -> Option<String> {
    get.lines().map(str::trim).find(|l| l.starts_with("oauth:")).map(str::to_string)
}

/// The tool names of `tools --json` (OpenAI's shape nests them under `function`).
fn tool_names(json_out: &str) -> BTreeSet<String> {
    let tools: Value = serde_json::from_str(json_out)
        .unwrap_or_else(|e| panic!("tools --json is not JSON: {e}\n{json_out}"));
    tools
        .as_array()
        .unwrap_or_else(|| panic!("tools --json is not an array: {json_out}"))
        .iter()
        .filter_map(|t| t.get("function").unwrap_or(t).get("name").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

fn assert_tools(json_out: &str) {
    let names = tool_names(json_out);
    assert!(names.contains("whoami") && names.contains("echo"), "{names:?}\n{json_out}");
}

/// `credentials.json` in the home: valid JSON, readable by its owner only.
fn assert_credentials_private(env: &Env) {
    use std::os::unix::fs::PermissionsExt;
    let file = env.home().join("credentials.json");
    let meta = std::fs::metadata(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{} mode", file.display());
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
    serde_json::from_str::<Value>(&text)
        .unwrap_or_else(|e| panic!("{} is not valid JSON: {e}\n{text}", file.display()));
}

/// Before a sign-in `mcp list` says what to run and `mcp get` says not signed in; after it the
/// server is connected with its tools and `get` names the issuer and the expiry; `mcp logout`
/// forgets the tokens and the list says sign in again.
#[test]
fn list_and_get_show_the_sign_in_and_logout_returns_to_it() {
    let server = OAuthServer::start(&[]);
    let env = Env::new();
    add_enabled(&env, &server, NAME, &definition(&server, json!({})));

    let list = ok(&env, &server, &["mcp", "list"]);
    assert_eq!(row(&list, NAME), Some(SIGN_IN_ROW), "{list}");
    let get = ok(&env, &server, &["mcp", "get", NAME]);
    assert_eq!(oauth_line(&get).as_deref(), Some("oauth: not signed in"), "{get}");

    login(&env, &server, NAME);
    assert_credentials_private(&env);

    let list = ok(&env, &server, &["mcp", "list"]);
    assert_eq!(row(&list, NAME), Some(CONNECTED_ROW), "{list}\n{}", server.log());
    let get = ok(&env, &server, &["mcp", "get", NAME]);
    let line = oauth_line(&get).unwrap_or_else(|| panic!("no oauth line:\n{get}"));
    let signed_in = format!("oauth: signed in (issuer {}, expires ", server.issuer());
    assert!(line.starts_with(&signed_in) && line.ends_with(')'), "{line}\nwanted {signed_in}…)");
    assert_tools(&ok(&env, &server, &["tools", "--json"]));
    assert_eq!(ok(&env, &server, &["call", "echo", r#"{"text":"hi"}"#]), "hi\n");
    // The audit log has the sign-in and the call (its shape, not its text).
    let audit = std::fs::read_to_string(env.home().join("audit/calls.jsonl")).unwrap_or_default();
    let lines: Vec<serde_json::Value> = audit.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let sign_in = lines.iter().find(|l| l["kind"] == "sign-in");
    assert_eq!(sign_in.map(|l| (&l["server"], &l["outcome"])), Some((&json!(NAME), &json!("ok"))), "{audit}");
    let call = lines.iter().find(|l| l["kind"] == "call" && l["tool"] == "echo");
    assert_eq!(call.map(|l| &l["shape"]), Some(&json!({"text": "string"})), "{audit}");
    assert!(!audit.contains("\"hi\""), "{audit}");

    ok(&env, &server, &["mcp", "logout", NAME]);
    let list = ok(&env, &server, &["mcp", "list"]);
    assert_eq!(row(&list, NAME), Some(SIGN_IN_ROW), "{list}");
    let get = ok(&env, &server, &["mcp", "get", NAME]);
    assert_eq!(oauth_line(&get).as_deref(), Some("oauth: not signed in"), "{get}");
    let call = run(&env, &[], &["call", "echo", r#"{"text":"hi"}"#], &[]);
    assert!(!call.output.status.success(), "a call after logout succeeded:\n{}", call.all());
}

/// A plain `mcp add --transport http` with no `oauth` key: the server's 401 is what turns the
/// sign-in on.
#[test]
fn a_plain_http_server_asks_for_a_sign_in_on_its_401() {
    let server = OAuthServer::start(&[]);
    let env = Env::new();
    ok(&env, &server, &["mcp", "add", "--transport", "http", NAME, &server.url]);
    ok(&env, &server, &["mcp", "enable", NAME]);

    let list = ok(&env, &server, &["mcp", "list"]);
    assert_eq!(row(&list, NAME), Some(SIGN_IN_ROW), "{list}");
    login(&env, &server, NAME);
    let whoami = ok(&env, &server, &["call", "whoami", "{}"]);
    assert!(whoami.starts_with("client_id=") && whoami.ends_with(" scopes=mcp:tools\n"), "{whoami}");
}

/// No browser: the authorization URL is printed, the person opens it elsewhere and pastes the
/// address the server sent them to. Here the test is that person: it reads the URL off the
/// terminal, fetches it without following the redirect and types the `Location` back.
#[test]
fn no_browser_login_takes_the_redirect_pasted_on_the_terminal() {
    let server = OAuthServer::start(&[]);
    let env = Env::new();
    add_enabled(&env, &server, NAME, &definition(&server, json!({})));
    let browser = crate::support::auth::browser().display().to_string();
    let log = browser_log(&env).display().to_string();
    let vars = [("BROWSER", browser.as_str()), ("AUTH_BROWSER_LOG", log.as_str())];

    let mut terminal = Terminal::start(&env, &["mcp", "login", NAME, "--no-browser"], &vars);
    let prefix = format!("{}/authorize?", server.issuer());
    let url =
        terminal.wait_for(LOGIN_TIMEOUT, |screen| url_on_screen(screen, &prefix)).unwrap_or_else(|| {
            panic!(
                "no authorization URL on the terminal:\n{}\noauth_server.py:\n{}",
                terminal.screen(),
                server.log()
            )
        });
    let redirect = location_of(&url);
    assert!(redirect.contains("code=") && redirect.contains("state="), "{redirect}\n{}", server.log());
    terminal.type_line(&redirect);
    let status = terminal.wait(LOGIN_TIMEOUT);
    assert!(
        status.success(),
        "login exited {status}; terminal:\n{}\noauth_server.py:\n{}",
        terminal.screen(),
        server.log()
    );
    assert!(!browser_log(&env).exists(), "--no-browser opened $BROWSER");

    assert_tools(&ok(&env, &server, &["tools", "--json"]));
    assert_eq!(ok(&env, &server, &["call", "echo", r#"{"text":"pasted"}"#]), "pasted\n");
    let list = ok(&env, &server, &["mcp", "list"]);
    assert_eq!(row(&list, NAME), Some(CONNECTED_ROW), "{list}");
}

/// Two processes find the access token expired at the same moment and both refresh. The
/// fixture rotates refresh tokens and revokes everything when a used one is presented again,
/// so unless the two agree on one refresh (and the loser reads the winner's tokens), one of
/// them, or the next call, ends signed out. Several rounds, then one more call after expiry.
#[test]
fn two_processes_refreshing_at_once_both_stay_signed_in() {
    let server = OAuthServer::start(&["--token-seconds", SHORT_TOKEN_SECONDS]);
    let env = Env::new();
    add_enabled(&env, &server, NAME, &definition(&server, json!({})));
    login(&env, &server, NAME);
    let whoami = ok(&env, &server, &["call", "whoami", "{}"]);
    assert!(whoami.starts_with("client_id="), "{whoami}");

    for round in 1..=5 {
        std::thread::sleep(PAST_EXPIRY);
        let spawn = || {
            toolport_cmd(&env, &[], &["call", "whoami", "{}"], &[])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("spawn toolport call: {e}"))
        };
        let pair = [spawn(), spawn()];
        for (i, child) in pair.into_iter().enumerate() {
            let output = child.wait_with_output().unwrap_or_else(|e| panic!("wait for toolport: {e}"));
            let ran = Ran { args: vec![format!("round {round}, process {i}: call whoami")], output };
            assert_ok(&ran, &env, &server);
            assert_eq!(ran.stdout(), whoami, "round {round}, process {i}");
        }
    }

    assert_eq!(ok(&env, &server, &["call", "whoami", "{}"]), whoami, "right after the rounds");
    std::thread::sleep(PAST_EXPIRY);
    assert_eq!(ok(&env, &server, &["call", "whoami", "{}"]), whoami, "after one more expiry");
    assert!(!server.log().contains("revoked"), "the fixture revoked a grant:\n{}", server.log());
    assert_credentials_private(&env);
}

/// The variable that holds the pre-registered client's secret, and its value.
const SECRET_VAR: &str = "TOOLPORT_IT_OAUTH_SECRET";
const SECRET: &str = "cs-it-7d41f09a-never-print-me";
/// The pre-registered client the fixture knows with that secret.
const CLIENT_ID: &str = "toolport-it";

/// At `-vvv`, from adding the definition to logging out, no command prints the client secret,
/// an access token or a refresh token: none of the values the fixture issued (it writes each
/// to `--issued`), through a login, a refresh after expiry and a logout.
#[test]
fn no_token_or_secret_is_printed_at_any_verbosity() {
    let issued = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let issued_file = issued.path().join("issued.txt");
    let issued_arg = issued_file.display().to_string();
    let client = format!("{CLIENT_ID}:{SECRET}");
    let server = OAuthServer::start(&[
        "--token-seconds",
        SHORT_TOKEN_SECONDS,
        "--issued",
        &issued_arg,
        "--client",
        &client,
    ]);
    let env = Env::new();
    let oauth = json!({ "clientId": CLIENT_ID, "clientSecret": format!("${{{SECRET_VAR}}}") });
    let def = definition(&server, oauth).to_string();
    let vars = [(SECRET_VAR, SECRET)];

    let mut runs: Vec<Ran> = Vec::new();
    let mut step = |args: &[&str]| {
        let ran = run(&env, &["-vvv"], args, &vars);
        assert_ok(&ran, &env, &server);
        let out = ran.stdout();
        runs.push(ran);
        out
    };
    step(&["mcp", "add-json", NAME, &def]);
    step(&["mcp", "enable", NAME]);
    step(&["mcp", "login", NAME]);
    step(&["mcp", "list"]);
    step(&["mcp", "list", "--json"]);
    step(&["mcp", "get", NAME]);
    step(&["mcp", "get", NAME, "--json"]);
    assert_tools(&step(&["tools", "--json"]));
    let whoami = step(&["call", "whoami", "{}"]);
    assert_eq!(
        whoami,
        format!("client_id={CLIENT_ID} scopes=mcp:tools\n"),
        "the pre-registered client signed in"
    );
    std::thread::sleep(PAST_EXPIRY);
    assert_eq!(step(&["call", "echo", r#"{"text":"after a refresh"}"#]), "after a refresh\n");
    step(&["tools"]);
    step(&["mcp", "logout", NAME]);
    step(&["mcp", "list"]);

    let values: Vec<String> = std::fs::read_to_string(&issued_file)
        .unwrap_or_else(|e| panic!("read {}: {e}", issued_file.display()))
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    // The secret, then an access and a refresh token from the code and from each refresh.
    assert!(values.len() >= 5, "the fixture issued only {values:?}\n{}", server.log());
    assert!(values.iter().any(|v| v == SECRET), "{values:?}");
    for ran in &runs {
        let all = ran.all();
        for value in &values {
            assert!(
                !all.contains(value.as_str()),
                "toolport -vvv {:?} printed an issued value {value}:\n{all}",
                ran.args
            );
        }
    }
}
