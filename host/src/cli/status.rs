//! `toolport status --url URL`: what a running `serve --http` is doing, read from its
//! `/status` — servers and their states, clients connected, calls in flight — as lines in the
//! status view's `- name | key=value` form, or the body itself with `--json`.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::Value;
use toolport::display::{deepest_cause, escape_line};

use super::{ExitError, token_env};

/// How long serve has to answer: `/status` reads memory only, so a slow answer means a wrong
/// address or a stuck process, and a person is waiting.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Reads a running `toolport serve --http`'s status.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// serve's address: http://HOST:PORT (its /mcp URL works too).
    #[arg(long, value_name = "URL")]
    url: String,
    /// The environment variable holding the bearer token serve was started with (--token-env).
    #[arg(long, value_name = "VAR")]
    token_env: Option<String>,
    /// Print /status's JSON body as it came.
    #[arg(long)]
    json: bool,
}

/// Prints the status; exit 1 when serve cannot be reached, refuses the token (401) or the
/// caller (403: not an operator), or is not toolport.
pub async fn run(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let url = status_url(&args.url)?;
    let token = token_env::read(args.token_env.as_deref())?;
    let client = reqwest::Client::builder()
        .timeout(TIMEOUT)
        .build()
        .map_err(|e| ExitError::failure(format!("cannot make an HTTP client: {e}")))?;
    let mut request = client.get(&url);
    if let Some(token) = &token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.map_err(|e| {
        ExitError::failure(format!(
            "cannot reach {url}: {}; is `toolport serve --http` running there?",
            deepest_cause(&e)
        ))
    })?;
    let code = response.status();
    if code == reqwest::StatusCode::UNAUTHORIZED {
        let message = match &args.token_env {
            Some(var) => {
                format!("{url} refused the token in {var} (401): pass the one serve was started with")
            }
            None => format!(
                "{url} needs a bearer token (401): pass --token-env VAR naming the variable that holds it"
            ),
        };
        return Err(ExitError::failure(message).into());
    }
    let body = response.text().await.unwrap_or_default();
    if code == reqwest::StatusCode::FORBIDDEN {
        // serve says why (not an operator: what the policy must permit; a Host or Origin).
        let why = body.lines().next().unwrap_or_default().trim_start_matches("Forbidden: ");
        let message = format!("{url} refused the request (403): {}", escape_line(why));
        return Err(ExitError::failure(message).into());
    }
    let status: Option<Value> =
        serde_json::from_str(&body).ok().filter(|v: &Value| v["toolport"].is_string());
    let Some(status) = status.filter(|_| code.is_success()) else {
        let message = format!(
            "{url} is not toolport serve's status (HTTP {}): give the address `toolport serve --http` listens on",
            code.as_u16()
        );
        return Err(ExitError::failure(message).into());
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&status)?);
    } else {
        print!("{}", render(&status));
    }
    Ok(ExitCode::SUCCESS)
}

/// `URL`'s `/status`: a base address, or serve's `/mcp` URL.
fn status_url(given: &str) -> anyhow::Result<String> {
    let parsed = url::Url::parse(given.trim()).map_err(|e| {
        ExitError::usage(format!("--url {given}: not a URL ({e}); e.g. http://127.0.0.1:8931"))
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(
            ExitError::usage(format!("--url {given}: toolport serve answers http:// or https://")).into()
        );
    }
    let mut base = parsed.clone();
    let path = parsed.path().trim_end_matches('/');
    base.set_path(path.strip_suffix("/mcp").unwrap_or(path));
    base.set_query(None);
    Ok(format!("{}/status", base.as_str().trim_end_matches('/')))
}

/// The status as text: servers, clients, calls in flight.
fn render(status: &Value) -> String {
    let text = |v: &Value| escape_line(v.as_str().unwrap_or_default()).into_owned();
    let list = |key: &str| status[key].as_array().cloned().unwrap_or_default();
    let mut out = String::new();
    let ready = if status["ready"].as_bool() == Some(true) { "ready" } else { "starting" };
    let _ = writeln!(out, "toolport serve {} ({ready})", text(&status["toolport"]));
    let servers = list("servers");
    let _ = writeln!(out, "servers:{}", if servers.is_empty() { " (none)" } else { "" });
    for s in &servers {
        let _ = write!(out, "- {} | state={} | tools={}", text(&s["name"]), text(&s["state"]), s["tools"]);
        if s["held"].as_u64().is_some_and(|n| n > 0) {
            let _ = write!(out, " | held={}", s["held"]);
        }
        if s["error"].is_string() {
            let _ = write!(out, " | error={}", text(&s["error"]));
        }
        out.push('\n');
    }
    let clients = list("clients");
    let _ = writeln!(out, "clients:{}", if clients.is_empty() { " (none)" } else { "" });
    for c in &clients {
        let _ = write!(out, "- {} | session={}", named(&text(&c["name"])), c["session"]);
        if c["protocol"].is_string() {
            let _ = write!(out, " | protocol={}", text(&c["protocol"]));
        }
        let _ = writeln!(out, " | connected={}", seconds(&c["connected_s"]));
    }
    let calls = list("calls");
    let _ = writeln!(out, "calls in flight:{}", if calls.is_empty() { " (none)" } else { "" });
    for c in &calls {
        let _ = writeln!(
            out,
            "- {} {} | client={} | session={} | age={}",
            text(&c["method"]),
            text(&c["name"]),
            named(&text(&c["client"])),
            c["session"],
            seconds(&c["age_s"]),
        );
    }
    out
}

/// A client's name, or `(unnamed)` when it gave none.
fn named(name: &str) -> &str {
    if name.is_empty() { "(unnamed)" } else { name }
}

/// `2.5s`.
fn seconds(v: &Value) -> String {
    format!("{:.1}s", v.as_f64().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_url_is_found_from_serves_address_or_its_mcp_url() {
        let url = |s: &str| status_url(s).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(url("http://127.0.0.1:8931"), "http://127.0.0.1:8931/status");
        assert_eq!(url("http://127.0.0.1:8931/mcp"), "http://127.0.0.1:8931/status");
        assert_eq!(url("https://gw.example/base/mcp/"), "https://gw.example/base/status");
        assert!(status_url("ftp://x").is_err());
        assert!(status_url("not a url").is_err());
    }
}
