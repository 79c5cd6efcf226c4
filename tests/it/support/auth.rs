//! The sign-in tests' fixtures: the OAuth-protected MCP server (`tests/auth/oauth_server.py`,
//! on the Python SDK venv `tests/peers/install_clients.sh` makes), read back from its `READY`
//! line and killed on drop; the browser a person would have (`tests/auth/browser.sh`); and a
//! terminal to paste into (`script` from util-linux, as `common::session_on_a_terminal`).

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::common::{Env, ReadyFixture, toolport_path};
use crate::support::peers::install;

/// How long the fixture may take to print `READY` (the SDK's imports take a second or two).
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a sign-in may take to show its URL or finish: a debug build discovering and
/// registering against a local server needs well under a second; this only stops a hang.
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(60);
/// Access token lifetime (`--token-seconds`) for the tests that wait for expiry, and the wait
/// that outlasts it.
pub const SHORT_TOKEN_SECONDS: &str = "2";
pub const PAST_EXPIRY: Duration = Duration::from_millis(3_000);

/// The Python of the SDK venv; a failed install fails the test (a missing peer is a failure).
pub fn python() -> PathBuf {
    static CLIENTS: OnceLock<String> = OnceLock::new();
    PathBuf::from(install("peers/install_clients.sh", &CLIENTS)).join("venv/bin/python")
}

/// `tests/auth/<file>`.
fn auth_file(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("auth").join(file)
}

/// The `$BROWSER` of the tests: fetches the authorization URL, then the callback it redirects to.
pub fn browser() -> PathBuf {
    auth_file("browser.sh")
}

/// `tests/auth/oauth_server.py --port 0 [args…]`, running until dropped.
pub struct OAuthServer {
    fixture: ReadyFixture,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl OAuthServer {
    pub fn start(args: &[&str]) -> Self {
        let mut command = Command::new(python());
        command.arg(auth_file("oauth_server.py")).args(["--port", "0"]).args(args);
        let fixture = ReadyFixture::start(command, "oauth_server.py", READY_TIMEOUT);
        Self { url: fixture.url.clone(), fixture }
    }

    /// The issuer (and origin): `http://127.0.0.1:PORT`.
    pub fn issuer(&self) -> String {
        self.url.trim_end_matches("/mcp").to_string()
    }

    /// The fixture's stderr so far: what it registered, approved, refreshed and revoked.
    pub fn log(&self) -> String {
        self.fixture.log()
    }

    /// How many lines of the fixture's log so far contain `what`.
    pub fn logged(&self, what: &str) -> usize {
        self.fixture.logged(what)
    }
}

/// Where `browser.sh` writes what it did, for failure messages.
pub fn browser_log(env: &Env) -> PathBuf {
    env.root().join("browser.log")
}

/// `toolport [pre…] --home H --workspace W args…` with `$BROWSER` the tests' browser, `vars`
/// set and `RUST_LOG` cleared. `pre` holds global flags put first, as a person types them
/// (`-vvv`).
pub fn toolport_cmd(env: &Env, pre: &[&str], args: &[&str], vars: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(toolport_path());
    cmd.args(pre)
        .arg("--home")
        .arg(env.home())
        .arg("--workspace")
        .arg(env.root())
        .args(args)
        .env("BROWSER", browser())
        .env("AUTH_BROWSER_LOG", browser_log(env))
        .envs(vars.iter().copied())
        .env_remove("RUST_LOG")
        .env_remove("TOOLPORT_HOME")
        .stdin(Stdio::null());
    cmd
}

/// One finished toolport command.
pub struct Ran {
    pub args: Vec<String>,
    pub output: Output,
}

impl Ran {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Both streams, for searching and for failure messages.
    pub fn all(&self) -> String {
        format!("{}{}", self.stdout(), self.stderr())
    }
}

/// Runs `toolport` to the end.
pub fn run(env: &Env, pre: &[&str], args: &[&str], vars: &[(&str, &str)]) -> Ran {
    let output =
        toolport_cmd(env, pre, args, vars).output().unwrap_or_else(|e| panic!("run toolport {args:?}: {e}"));
    Ran { args: args.iter().map(|a| a.to_string()).collect(), output }
}

/// Panics, showing everything a failure needs (both streams, the fixture's log, the
/// browser's), unless `ran` exited 0.
pub fn assert_ok(ran: &Ran, env: &Env, server: &OAuthServer) {
    assert!(
        ran.output.status.success(),
        "toolport {:?} exited {:?}\nstdout:\n{}\nstderr:\n{}\noauth_server.py:\n{}\nbrowser.sh:\n{}",
        ran.args,
        ran.output.status.code(),
        ran.stdout(),
        ran.stderr(),
        server.log(),
        std::fs::read_to_string(browser_log(env)).unwrap_or_default()
    );
}

/// [`run`] with no global flags or variables, asserting exit 0; returns stdout.
pub fn ok(env: &Env, server: &OAuthServer, args: &[&str]) -> String {
    let ran = run(env, &[], args, &[]);
    assert_ok(&ran, env, server);
    ran.stdout()
}

/// `mcp add-json NAME DEF` then `mcp enable NAME`.
pub fn add_enabled(env: &Env, server: &OAuthServer, name: &str, def: &Value) {
    ok(env, server, &["mcp", "add-json", name, &def.to_string()]);
    ok(env, server, &["mcp", "enable", name]);
}

/// `mcp login NAME` with the tests' browser, asserting exit 0.
pub fn login(env: &Env, server: &OAuthServer, name: &str) {
    ok(env, server, &["mcp", "login", name]);
}

/// The `mcp list` row of `name` (`- NAME | type=…`), if any.
pub fn row<'a>(list: &'a str, name: &str) -> Option<&'a str> {
    let start = format!("- {name} | ");
    list.lines().find(|l| l.starts_with(&start))
}

/// The `Location` a GET of `url` answers with, the redirect not followed: what a browser is
/// sent to next. One HTTP/1.1 exchange by hand, as `support::serve::http_post`.
pub fn location_of(url: &str) -> String {
    let rest = url.strip_prefix("http://").unwrap_or_else(|| panic!("not an http URL: {url}"));
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let mut stream = TcpStream::connect(authority).unwrap_or_else(|e| panic!("connect {authority}: {e}"));
    let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
    let request = format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap_or_else(|e| panic!("send to {authority}: {e}"));
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    let head = answer.split("\r\n\r\n").next().unwrap_or_default();
    head.lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("location"))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| panic!("GET {url} did not redirect:\n{answer}"))
}

/// The name the tests define the fixture under.
pub const NAME: &str = "remote";
/// The status row of a server that needs a sign-in (`mcp list`, the session's `/mcp`).
pub const SIGN_IN_ROW: &str = "- remote | type=streamable_http | state=error | workspace=enabled | paused=no | tools=0 \
     | error=authorization required: run toolport mcp login remote";
/// The row once signed in: the fixture's two tools, `whoami` and `echo`.
pub const CONNECTED_ROW: &str =
    "- remote | type=streamable_http | state=connected | workspace=enabled | paused=no | tools=2";

/// The session's prompt on a terminal (`cli/session_editor.rs`).
pub const SESSION_PROMPT: &str = "toolport> ";

/// `toolport --home H --workspace W args…` on a pseudo-terminal (`script -q -e`, `TERM=xterm`),
/// everything it writes to the terminal (stdout and stderr alike) collected as it comes.
pub struct Terminal {
    child: Child,
    stdin: ChildStdin,
    screen: Arc<Mutex<Vec<u8>>>,
    closed: Arc<AtomicBool>,
}

impl Terminal {
    pub fn start(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> Self {
        let (child, stdin, mut stdout) = crate::support::common::on_a_terminal(env, args, vars);
        let screen = Arc::new(Mutex::new(Vec::new()));
        let closed = Arc::new(AtomicBool::new(false));
        let (kept, at_end) = (screen.clone(), closed.clone());
        std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                if let Ok(mut kept) = kept.lock() {
                    kept.extend_from_slice(&chunk[..n]);
                }
            }
            at_end.store(true, Ordering::SeqCst);
        });
        Self { child, stdin, screen, closed }
    }

    /// `toolport … session` on the terminal with the tests' browser as `$BROWSER` (and its log),
    /// as `common::session_on_a_terminal` but with that environment: a `/mcp login` typed in
    /// the session then signs in the way `mcp login` does.
    pub fn session(env: &Env) -> Self {
        let browser = browser().display().to_string();
        let log = browser_log(env).display().to_string();
        Self::start(env, &["session"], &[("BROWSER", browser.as_str()), ("AUTH_BROWSER_LOG", log.as_str())])
    }

    /// Types `line` into a session and returns the session's answer: what it showed after the
    /// echo of the line, once `done` accepts that text and the next prompt follows it (so the
    /// answer is complete and the editor ready for the next line). Panics with the whole
    /// screen after `within`.
    pub fn ask(&mut self, line: &str, within: Duration, done: impl Fn(&str) -> bool) -> String {
        let from = self.screen().len();
        self.type_line(line);
        let answer = self.wait_for(within, |screen| {
            let after = screen.get(from..)?;
            // The editor echoes the line (redrawing it as it likes) and ends it at Enter.
            let answer = &after[after.find('\n')? + 1..];
            let answer = &answer[..answer.rfind(SESSION_PROMPT)?];
            done(answer).then(|| answer.to_string())
        });
        answer.unwrap_or_else(|| panic!("no complete answer to {line:?}; screen:\n{}", self.screen()))
    }

    /// Everything shown so far.
    pub fn screen(&self) -> String {
        self.screen.lock().map(|s| String::from_utf8_lossy(&s).into_owned()).unwrap_or_default()
    }

    /// Waits (at most `within`) until `found` picks something out of the screen.
    pub fn wait_for<T>(&self, within: Duration, found: impl Fn(&str) -> Option<T>) -> Option<T> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(hit) = found(&self.screen()) {
                return Some(hit);
            }
            // Once the terminal is closed (the command ended) nothing more will come.
            if Instant::now() > deadline || self.closed.load(Ordering::SeqCst) {
                return found(&self.screen());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types `line` and Enter.
    pub fn type_line(&mut self, line: &str) {
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|_| self.stdin.flush())
            .unwrap_or_else(|e| panic!("type on the terminal: {e}"));
    }

    /// Waits (at most `within`) for the command to exit; kills it and panics on a hang.
    pub fn wait(&mut self, within: Duration) -> ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("the command on the terminal did not finish; screen:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The first URL on `screen` starting with `prefix`, once it is complete: followed by a space, a
/// line end, a control character (the escape of a terminal hyperlink) or a character a URL
/// cannot hold unescaped (quotes, angle brackets) that a message may put around it.
pub fn url_on_screen(screen: &str, prefix: &str) -> Option<String> {
    let at = screen.find(prefix)?;
    let rest = &screen[at..];
    let end = rest.find(|c: char| c.is_whitespace() || c.is_control() || "\"'<>".contains(c))?;
    Some(rest[..end].to_string())
}

/// The lines of terminal output as the terminal leaves them: a carriage return starts the line
/// over (a progress line on stderr is redrawn that way, then cleared for the next output), and
/// control sequences (`ESC [ … final`) are dropped.
pub fn shown_lines(output: &str) -> Vec<String> {
    output
        .split('\n')
        .map(|line| {
            let line = line.trim_end_matches('\r');
            let last = line.rsplit('\r').next().unwrap_or_default();
            without_controls(last)
        })
        .collect()
}

/// `text` without its CSI sequences (`ESC [`, parameters, one final byte in `@`..=`~`) and
/// other two-byte escapes.
fn without_controls(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.next() == Some('[') {
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
    }
    out
}
