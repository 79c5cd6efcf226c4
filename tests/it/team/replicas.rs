//! Three `toolport serve --http` replicas behind a real nginx (Debian's package,
//! `tests/peers/install_nginx.sh`), round robin with no affinity, sharing a session key
//! (`--session-key-env`): the Python SDK's default `mcp.Client` (2026-07-28) spreads its calls
//! over all three and loses none when one replica is killed mid-run; a 2025-11-25 session
//! (the SDK's legacy session client) keeps working while its requests land on different
//! replicas (its sealed id); a tampered id is an unknown session (404); and a `requestState`
//! brought to the wrong replica is told so, not taken for an expired one.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::serve::clients::python;
use crate::support::common::Env;
use crate::support::operator::http_get;
use crate::support::peers::{everything_stdio, install};
use crate::support::runtime::write_config;
use crate::support::serve::{ServeHttp, http_post};

/// The variable the replicas read their shared key from, and the key (a test value).
const KEY_VAR: &str = "TOOLPORT_TEST_SESSION_KEY";
const KEY: &str = "replicas-test-key-0123456789-abcdefghij";
/// What nginx answers when the replica it sent a request to went away before answering: a
/// JSON-RPC error, so the SDK shows its message (the nginx snippet of `docs/src/serve/team.md`,
/// "Replicas").
const GONE: &str = "the toolport replica serving this request went away before it answered (502 from the load balancer): call again";

/// `tests/peers/install_nginx.sh`'s nginx binary.
fn nginx_binary() -> PathBuf {
    static NGINX: OnceLock<String> = OnceLock::new();
    PathBuf::from(install("peers/install_nginx.sh", &NGINX)).join("usr/sbin/nginx")
}

/// A free loopback port (bound, then released for nginx to take).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    listener.local_addr().unwrap_or_else(|e| panic!("local addr: {e}")).port()
}

/// nginx in front of `upstreams`, round robin, its config, pid, logs and temp files in a temp
/// folder; stopped on drop.
pub struct Nginx {
    child: Child,
    _dir: TempDir,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    pub authority: String,
}

impl Nginx {
    pub fn start(upstreams: &[String]) -> Self {
        let binary = nginx_binary();
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
        let port = free_port();
        let servers: String = upstreams.iter().map(|u| format!("    server {u};\n")).collect();
        // Workers of a root master would switch to `nobody`, who cannot write the temp folder.
        let uid = Command::new("id").arg("-u").output().map(|o| o.stdout).unwrap_or_default();
        let user = if String::from_utf8_lossy(&uid).trim() == "0" { "user root;\n" } else { "" };
        let config = include_str!("../../team/nginx.conf.in")
            .replace("@USER@", user)
            .replace("@DIR@", &dir.path().display().to_string())
            .replace("@UPSTREAMS@", &servers)
            .replace("@PORT@", &port.to_string())
            .replace("@GONE@", GONE);
        let conf = dir.path().join("nginx.conf");
        std::fs::write(&conf, config).unwrap_or_else(|e| panic!("write nginx.conf: {e}"));
        let child = Command::new(&binary)
            .arg("-p")
            .arg(dir.path())
            .arg("-c")
            .arg(&conf)
            .args(["-g", "daemon off;"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {}: {e}", binary.display()));
        let authority = format!("127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(&authority).is_err() {
            let log = std::fs::read_to_string(dir.path().join("error.log")).unwrap_or_default();
            assert!(Instant::now() < deadline, "nginx did not listen on {authority}:\n{log}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { child, _dir: dir, url: format!("http://{authority}/mcp"), authority }
    }
}

impl Drop for Nginx {
    /// SIGTERM, so the master stops its workers too (a SIGKILLed master leaves them running,
    /// still listening); SIGKILL only if it has not gone within 10 s.
    fn drop(&mut self) {
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Three replicas, each its own home with the same store and workspace (server-everything),
/// sharing the key; the `Env`s live as long as the replicas.
fn replicas() -> (Vec<Env>, Vec<ServeHttp>) {
    let envs: Vec<Env> = (0..3).map(|_| Env::new()).collect();
    for env in &envs {
        write_config(env, json!({ "everything": everything_stdio() }), &["everything"], json!({}));
    }
    let vars = [(KEY_VAR, KEY)];
    let serves =
        envs.iter().map(|env| ServeHttp::start_with(env, &["--session-key-env", KEY_VAR], &vars)).collect();
    (envs, serves)
}

/// `tests/team/replicas_client.py SCENARIO ARGS` to its end; the JSON it printed.
fn client(args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("team/replicas_client.py");
    let out = Command::new(python()).arg(&script).args(args).output();
    let out = out.unwrap_or_else(|e| panic!("run replicas_client.py: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let seen: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|_| {
        panic!("replicas_client.py printed no JSON:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr))
    });
    assert!(seen.get("error").is_none(), "replicas_client.py failed: {seen}");
    seen
}

/// The `echo` calls `env`'s replica wrote to its audit log.
fn echoes_served(env: &Env) -> usize {
    let text = std::fs::read_to_string(env.home().join("audit/calls.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["kind"] == "call" && l["tool"] == "echo")
        .count()
}

/// 1,000 calls from four default `mcp.Client`s through nginx: every replica serves some, every
/// call has an answer, and the replica running a slow call is killed mid-run: that call fails
/// with nginx's clear error, the others go on, and every call made after the kill succeeds.
#[test]
fn a_thousand_calls_spread_over_three_replicas_and_survive_one_killed() {
    let (envs, mut serves) = replicas();
    let upstreams: Vec<String> = serves.iter().map(|s| s.authority()).collect();
    let nginx = Nginx::start(&upstreams);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("team/replicas_client.py");
    let mut child = Command::new(python())
        .arg(&script)
        .args(["load", "--url", &nginx.url, "--clients", "4", "--calls", "1000", "--slow-at", "400"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run replicas_client.py: {e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
    let mut lines = BufReader::new(stdout).lines();
    let mut killed = None;
    let mut last = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap_or_default();
        if line.trim() != "SLOW" {
            last = line;
            break;
        }
        // The replica a slow call runs on, as its /status shows it.
        let deadline = Instant::now() + Duration::from_secs(20);
        while killed.is_none() && Instant::now() < deadline {
            killed = serves.iter().position(|s| {
                let status = http_get(&s.authority(), "/status", &[]).body;
                status.contains("trigger-long-running-operation")
            });
            if killed.is_none() {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let Some(victim) = killed else { panic!("no replica shows the slow call in /status") };
        let _ = serves[victim].child.kill();
        let _ = serves[victim].child.wait();
        let _ = stdin.write_all(b"KILLED\n");
        let _ = stdin.flush();
    }
    drop(stdin);
    let status = child.wait().unwrap_or_else(|e| panic!("wait for replicas_client.py: {e}"));
    let mut stderr = String::new();
    if let Some(mut err) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut err, &mut stderr);
    }
    let seen: Value = serde_json::from_str(last.trim())
        .unwrap_or_else(|_| panic!("replicas_client.py printed no JSON ({status}):\n{last}\n{stderr}"));
    assert!(seen.get("error").is_none(), "replicas_client.py failed: {seen}\n{stderr}");
    assert!(killed.is_some(), "the slow calls never started: {seen}");

    let calls = seen["calls"].as_array().cloned().unwrap_or_default();
    let slow = seen["slow"].as_array().cloned().unwrap_or_default();
    assert_eq!(calls.len(), 1000, "every call has an outcome");
    assert_eq!(slow.len(), 3, "{slow:?}");
    let all: Vec<&Value> = calls.iter().chain(slow.iter()).collect();
    let lost: Vec<&&Value> = all.iter().filter(|c| c["lost"] == true).collect();
    assert!(lost.is_empty(), "calls with no answer: {lost:?}");
    let failed: Vec<&&Value> = all.iter().filter(|c| c.get("ok").is_none()).collect();
    for call in &failed {
        let said = call["error"].as_str().unwrap_or_default();
        assert!(said.contains(GONE), "an error other than the replica gone: {call}");
        assert_eq!(call["after_kill"], false, "a call made after the kill failed: {call}");
    }
    assert!(slow.iter().any(|c| c.get("ok").is_none()), "the killed replica's slow call succeeded: {slow:?}");
    assert!(slow.iter().any(|c| c["ok"] == true), "no slow call survived: {slow:?}");
    let after_kill = calls.iter().filter(|c| c["after_kill"] == true).count();
    assert!(after_kill > 100, "only {after_kill} calls were made after the kill");

    let served: Vec<usize> = envs.iter().map(echoes_served).collect();
    for (n, count) in served.iter().enumerate() {
        assert!(*count > 0, "replica {n} served no call: {served:?}");
    }
    let ok = calls.iter().filter(|c| c["ok"] == true).count();
    assert!(served.iter().sum::<usize>() >= ok, "an answered call no replica logged: {served:?}, {ok} ok");
    eprintln!(
        "replicas: {ok} of 1000 calls ok, {} failed with the replica gone; per replica {served:?}, replica {killed:?} killed",
        failed.len()
    );
}

/// The requests of one 2025-11-25 session land on all three replicas and all succeed; a
/// tampered session id gets 404; once the SDK ended the session, the replica that took its
/// `DELETE` refuses the id and the other two still serve it; a requestState brought to another
/// replica is told so.
#[test]
fn a_session_moves_between_replicas_and_a_request_state_says_where_it_belongs() {
    let (envs, serves) = replicas();
    let upstreams: Vec<String> = serves.iter().map(|s| s.authority()).collect();
    let nginx = Nginx::start(&upstreams);

    let seen = client(&["session", "--url", &nginx.url, "--calls", "12"]);
    assert_eq!(seen["protocol"], "2025-11-25", "{seen}");
    assert_eq!(seen["ok"], 12, "{seen}");
    assert_eq!(seen["session_ids"].as_array().map(Vec::len), Some(1), "one session id: {seen}");
    let sealed = seen["session_ids"][0].as_str().unwrap_or_default().to_string();
    assert!(sealed.starts_with("tp1."), "the session id is not sealed: {sealed}");
    let served: Vec<usize> = envs.iter().map(echoes_served).collect();
    assert!(served.iter().all(|n| *n > 0), "the session's calls did not reach every replica: {served:?}");

    // One character changed: not a session anyone issued.
    let mut tampered = sealed.clone().into_bytes();
    let at = tampered.len() / 2;
    tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap_or_default();
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#;
    for id in [tampered.as_str(), "not-a-session"] {
        let headers = [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Mcp-Session-Id", id),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        let (status, head) = http_post(&nginx.authority, &headers, list);
        assert_eq!(status, 404, "{id}: {head}");
    }
    // Ending a session that was never issued: 404 as well.
    let delete = |authority: &str, id: &str| {
        let mut stream = TcpStream::connect(authority).unwrap_or_else(|e| panic!("connect {authority}: {e}"));
        let request = format!(
            "DELETE /mcp HTTP/1.1\r\nHost: {authority}\r\nMcp-Session-Id: {id}\r\n\
             MCP-Protocol-Version: 2025-11-25\r\nConnection: close\r\n\r\n"
        );
        let _ = stream.write_all(request.as_bytes());
        let mut answer = String::new();
        let _ = std::io::Read::read_to_string(&mut stream, &mut answer);
        answer.split_whitespace().nth(1).and_then(|s| s.parse::<u16>().ok()).unwrap_or(0)
    };
    assert_eq!(delete(&nginx.authority, &tampered), 404);
    // The genuine id, by hand, on each replica directly. The SDK ended the session as it closed
    // (`DELETE`, through nginx): the replica that took the `DELETE` refuses the id from then on;
    // the other two, which share nothing but the key, serve it until it expires.
    let statuses: Vec<u16> = serves
        .iter()
        .map(|serve| {
            let headers = [
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("Mcp-Session-Id", sealed.as_str()),
                ("MCP-Protocol-Version", "2025-11-25"),
            ];
            http_post(&serve.authority(), &headers, list).0
        })
        .collect();
    let mut sorted = statuses.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, [200, 200, 404], "one replica took the DELETE: {statuses:?}");

    let rounds = client(&["rounds", "--url", &serves[0].url, "--other", &serves[1].url]);
    let state = rounds["request_state"].as_str().unwrap_or_default();
    assert!(!state.is_empty(), "no input-required result: {rounds}");
    let elsewhere = rounds["elsewhere"]["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(
        elsewhere,
        "this requestState was issued by another toolport replica (or by this one before a restart), \
         where its call waits: route a client's retries to the replica that asked (load-balancer \
         affinity), or call the tool again",
        "{rounds}"
    );
    let here = rounds["here"]["result"].to_string();
    assert!(here.contains("Ada"), "the retry at the replica that asked did not complete: {rounds}");
}

/// `--session-key-env` names a variable; an unset one or a short key is a usage error (exit 2)
/// that says what to do.
#[test]
fn a_missing_or_short_session_key_is_refused() {
    let env = Env::new();
    write_config(&env, json!({}), &[], json!({}));
    let run = |value: Option<&str>| {
        let mut cmd = env.cmd(["serve", "--http", "127.0.0.1:0", "--session-key-env", KEY_VAR]);
        match value {
            Some(value) => cmd.env(KEY_VAR, value),
            None => cmd.env_remove(KEY_VAR),
        };
        let out = cmd.timeout(Duration::from_secs(30)).output().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        String::from_utf8_lossy(&out.stderr).trim().to_string()
    };
    assert_eq!(run(None), format!("toolport: --session-key-env {KEY_VAR}: that variable is not set"));
    assert_eq!(
        run(Some("too-short")),
        format!(
            "toolport: --session-key-env {KEY_VAR}: the session key is 9 characters; it needs at least 32 \
             (make one with `openssl rand -base64 32`, and give every replica the same)"
        )
    );
}
