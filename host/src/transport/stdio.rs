//! The `stdio` transport: a child process speaking newline-delimited JSON-RPC on stdin/stdout.
//!
//! We spawn the child ourselves (rather than through rmcp's `TokioChildProcess`) so we keep
//! the `Child`: a watcher task waits on it and reports the exit status the moment the process
//! dies, which is how a crashed server turns into `error` without waiting for the next call.
//! The child leads a process group of its own ([`super::process_group`]): stopping it, or its
//! exit, ends the whole group, so helpers it started do not outlive it.
//! A definition with `"sandbox": true` starts the launcher instead ([`super::confine`]),
//! which becomes the group's leader and the server's parent; the rest is the same.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::{oneshot, watch};

use super::confine::{self, Confinement};
use super::connect_error::ConnectError;
use super::egress::EgressRefusals;
use super::process_group::{self, Group};
use super::stderr_tail::StderrTail;
use crate::config::{INHERIT_ENV_KEPT, ServerDef};

/// Largest message a stdio server may send. rmcp's default (16 MiB) drops a bigger line
/// silently and the call then waits for its timeout; a tool returning a large file or log is
/// legal, so we allow 64 MiB, which still bounds what one misbehaving server can make us buffer.
pub(super) const MAX_STDIO_MESSAGE_BYTES: usize = 64 * 1024 * 1024;
/// How long a failed stdio handshake waits for the child's exit: a server that crashed on
/// start has usually exited by then, and its status and stderr explain more than rmcp's
/// "connection closed"; one that is still running gets rmcp's reason instead.
pub(super) const HANDSHAKE_EXIT_WAIT: Duration = Duration::from_millis(300);

/// How long a closed server gets to exit on its own (its stdin is closed, its stdout still
/// read) before its group is sent SIGTERM; its exit ends the wait at once. A Node server that
/// is idle leaves 12–18 ms after its stdin closes; one with something pending does not leave
/// by itself at all (server-everything and server-filesystem wait up to 60 s for the answer to
/// the `roots/list` they send 350 ms after `initialized`), and the Python SDK's servers take
/// ~450 ms to tear down after they have stopped reading. Past this, SIGTERM (which they all
/// obey at once) is the reasonable end the MCP stdio shutdown allows, and a command is not
/// kept waiting after its work is done.
const EXIT_GRACE: Duration = Duration::from_millis(100);
/// Stderr lines quoted in an error message.
const QUOTED_STDERR_LINES: usize = 3;
/// How long the exit report waits for the stderr drain to read what the process wrote just
/// before it died (its last words are usually the reason); a pipe holds them already, so a
/// short wait is enough.
const STDERR_SETTLE: Duration = Duration::from_millis(20);

/// A running child process: how it ended (exit status and the last lines of its stderr), and
/// the way to stop it.
#[derive(Debug)]
pub struct StdioChild {
    exit: watch::Receiver<Option<String>>,
    kill: Option<oneshot::Sender<()>>,
    /// What the egress proxy refused a sandboxed server.
    refusals: Option<EgressRefusals>,
}

/// Spawns the child for `def` (already `${VAR}`-expanded). The pipes are returned apart so the
/// caller can hand them to rmcp as the transport.
pub fn spawn(def: &ServerDef) -> Result<(StdioChild, ChildStdout, ChildStdin), ConnectError> {
    let program = def.command.as_deref().ok_or("stdio transport requires command")?;
    // A sandboxed server is started by the launcher, which applies its environment, folder
    // and arguments itself once it is confined.
    let (mut cmd, confined) = match confine::wanted(def) {
        Some(sandbox) => {
            let (command, pending) = confine::prepare(def, sandbox)?;
            (command, Some(pending))
        }
        None => (plain_command(program, def)?, None),
    };
    // kill_on_drop is the last resort when the async runtime drops the watcher below; the
    // group itself is then ended by `process_group::end_all` at exit.
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    process_group::isolate(&mut cmd);
    let mut child = cmd.spawn().map_err(|e| ConnectError::Failed(format!("cannot start {program}: {e}")))?;
    let confinement = match (confined, child.id()) {
        (Some(pending), Some(pid)) => Some(pending.started(pid)),
        _ => None,
    };
    let refusals = confinement.as_ref().map(Confinement::refusals);
    let group = Group::of(&child);
    let stdin = child.stdin.take().ok_or("child stdin is not piped")?;
    let stdout = child.stdout.take().ok_or("child stdout is not piped")?;
    let stderr = child.stderr.take().map(StderrTail::drain).unwrap_or_default();

    let (exit_tx, exit_rx) = watch::channel(None);
    let (kill_tx, kill_rx) = oneshot::channel::<()>();
    let tail = stderr;
    tokio::spawn(async move {
        // The private folder and the proxy last as long as the process.
        let _confinement = confinement;
        let status = tokio::select! {
            status = child.wait() => status,
            // Asked to stop, or the handle was dropped: either way the process must not linger.
            _ = kill_rx => match &group {
                Some(group) => {
                    group.end(Some(&mut child)).await;
                    child.wait().await
                }
                None => {
                    let _ = child.kill().await;
                    child.wait().await
                }
            },
        };
        // Whatever the server left behind (helpers still running) goes with it.
        if let Some(group) = &group {
            group.end(None).await;
        }
        drop(group);
        let reason = match status {
            Ok(status) => describe_exit(status),
            Err(e) => format!("cannot wait for the process: {e}"),
        };
        let _ = exit_tx.send(Some(quote_stderr(reason, &tail).await));
    });
    Ok((StdioChild { exit: exit_rx, kill: Some(kill_tx), refusals }, stdout, stdin))
}

/// The server's own command, unconfined.
fn plain_command(program: &str, def: &ServerDef) -> Result<Command, ConnectError> {
    let mut cmd = Command::new(program);
    // Arguments exactly as configured: never de-duplicated or re-split (reference B.2).
    cmd.args(&def.args);
    if def.inherit_env == Some(false) {
        cmd.env_clear();
        for key in INHERIT_ENV_KEPT {
            if let Some(value) = std::env::var_os(key) {
                cmd.env(key, value);
            }
        }
    }
    // Added to the inherited (or kept) environment, in file order (later keys win).
    for (key, value) in &def.env {
        cmd.env(key, value);
    }
    if let Some(cwd) = &def.cwd {
        if !Path::new(cwd).is_dir() {
            return Err(ConnectError::Failed(format!("cwd {cwd} is not a folder")));
        }
        cmd.current_dir(cwd);
    }
    Ok(cmd)
}

impl StdioChild {
    /// A sandboxed server's run seen as a child: `ended` says how it ended, `stop` ends it,
    /// and its exit reason quotes `tail` like a process's. Stopping it drops its store.
    pub fn sandboxed(
        mut ended: watch::Receiver<Option<String>>,
        stop: oneshot::Sender<()>,
        tail: StderrTail,
    ) -> StdioChild {
        let (exit_tx, exit_rx) = watch::channel(None);
        let (kill_tx, kill_rx) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let end = async |ended: &mut watch::Receiver<Option<String>>| {
                ended.wait_for(Option::is_some).await.ok().and_then(|r| r.clone())
            };
            let finished = tokio::select! {
                done = end(&mut ended) => Some(done),
                _ = kill_rx => None,
            };
            let reason = match finished {
                Some(done) => done,
                None => {
                    let _ = stop.send(());
                    end(&mut ended).await
                }
            };
            let reason = reason.unwrap_or_else(|| "stopped".to_string());
            let _ = exit_tx.send(Some(quote_stderr(reason, &tail).await));
        });
        StdioChild { exit: exit_rx, kill: Some(kill_tx), refusals: None }
    }

    /// What the egress proxy refused this server, when it is sandboxed.
    pub fn refusals(&self) -> Option<EgressRefusals> {
        self.refusals.clone()
    }

    /// Waits until the process has exited and says how, e.g.
    /// `process exited with status 3; stderr: boom`.
    pub async fn exited(&self) -> String {
        let mut exit = self.exit.clone();
        match exit.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone().unwrap_or_default(),
            Err(_) => "process ended".to_string(),
        }
    }

    /// Stops the process: a short grace period to exit on its own (its stdin is closed by
    /// then), then its group is ended (SIGTERM, a grace, SIGKILL).
    pub async fn stop(mut self) {
        if tokio::time::timeout(EXIT_GRACE, self.exited()).await.is_err()
            && let Some(kill) = self.kill.take()
        {
            let _ = kill.send(());
            let _ = self.exited().await;
        }
    }
}

/// `reason` followed by the last lines the server wrote to stderr (`…; stderr: a | b`), once
/// the drain has read what it wrote just before it ended: the same words for a process and a
/// sandboxed server.
async fn quote_stderr(mut reason: String, tail: &StderrTail) -> String {
    tokio::time::sleep(STDERR_SETTLE).await;
    if let Some(lines) = tail.summary(QUOTED_STDERR_LINES) {
        reason.push_str("; stderr: ");
        reason.push_str(&lines);
    }
    reason
}

fn describe_exit(status: std::process::ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("process exited with status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("process was killed by signal {signal}");
        }
    }
    "process exited".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> ServerDef {
        ServerDef {
            name: "t".into(),
            command: Some("sh".into()),
            args: vec!["-c".into(), script.into()],
            ..ServerDef::default()
        }
    }

    #[tokio::test]
    async fn exit_status_and_stderr_are_reported() -> Result<(), String> {
        let (child, _out, _in) = spawn(&sh("echo first >&2; echo boom >&2; exit 7"))?;
        assert_eq!(child.exited().await, "process exited with status 7; stderr: first | boom");
        Ok(())
    }

    #[tokio::test]
    async fn env_and_cwd_and_args_are_applied() -> Result<(), String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mut def = sh("echo \"$TP_X $(pwd) $0 $1 $2\" >&2; exit 0");
        def.args.extend(["-p".into(), "-p".into()]);
        def.env.push(("TP_X".into(), "hello".into()));
        def.cwd = Some(dir.path().display().to_string());
        let (child, _out, _in) = spawn(&def)?;
        let reason = child.exited().await;
        let canonical = dir.path().canonicalize().map_err(|e| e.to_string())?;
        assert!(reason.contains(&format!("hello {} -p -p", canonical.display())), "{reason}");
        Ok(())
    }

    #[tokio::test]
    async fn without_inherit_env_the_child_gets_only_the_kept_names_and_env() -> Result<(), String> {
        // Names only, sorted, on one stderr line; `env -0`-free so plain sh works.
        let mut def = sh("env | cut -d= -f1 | sort | tr '\\n' ' ' >&2; exit 0");
        def.env.push(("TP_CONFIGURED".into(), "1".into()));
        def.inherit_env = Some(false);
        let (child, _out, _in) = spawn(&def)?;
        let reason = child.exited().await;
        let names = reason.split("stderr: ").nth(1).unwrap_or_default();
        for name in names.split_whitespace() {
            // sh itself sets PWD (and some shells SHLVL, _, OLDPWD).
            let allowed = INHERIT_ENV_KEPT.contains(&name)
                || ["TP_CONFIGURED", "PWD", "SHLVL", "_", "OLDPWD"].contains(&name);
            assert!(allowed, "{name} leaked into the child: {names}");
        }
        assert!(names.split_whitespace().any(|n| n == "TP_CONFIGURED"), "{names}");
        Ok(())
    }

    #[tokio::test]
    async fn missing_program_and_cwd_are_clear() {
        let def = ServerDef { command: Some("/nonexistent/prog".into()), ..ServerDef::default() };
        let err = spawn(&def).err().map(String::from).unwrap_or_default();
        assert!(err.starts_with("cannot start /nonexistent/prog: "), "{err}");
        let mut def = sh("true");
        def.cwd = Some("/nonexistent/dir".into());
        assert_eq!(
            spawn(&def).err().map(String::from).as_deref(),
            Some("cwd /nonexistent/dir is not a folder")
        );
    }

    #[tokio::test]
    async fn stop_kills_a_process_that_ignores_stdin() -> Result<(), String> {
        let (child, _out, _in) = spawn(&sh("trap '' TERM; sleep 30"))?;
        let started = std::time::Instant::now();
        child.stop().await;
        assert!(started.elapsed() < Duration::from_secs(5));
        Ok(())
    }
}
