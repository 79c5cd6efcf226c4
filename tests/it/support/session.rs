//! `toolport session` driven as a script: stdin piped, one command per line, each answer read
//! up to a fence line whose reply is known; its stderr (the host's log lines and warnings) goes
//! to a file, so a flood of them never blocks it. For tests that need one long-lived host across
//! several calls (the session itself, a server that must survive its neighbour's failure).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::support::common::{Env, toolport_path};

/// How long one command may take (a connect spawns a process; CI machines are slow).
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
/// A line after every command whose answer is known, so the driver knows where an answer ends.
const FENCE: &str = "/call";
const FENCE_REPLY: &str = "Usage: /call <tool> [json]";

/// A running `toolport session` fed one command at a time. Dropping it (a test that panicked)
/// kills the session, so none is left behind.
pub struct Scripted {
    pub child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    stderr: PathBuf,
}

impl Scripted {
    pub fn start(env: &Env) -> Self {
        Self::start_with(env, &[])
    }

    /// The session with `vars` added to toolport's own environment.
    pub fn start_with(env: &Env, vars: &[(&str, &str)]) -> Self {
        Self::start_wrapped(env, vars, &[])
    }

    /// [`Self::start_with`], started through `wrapper` (a program and its arguments, before
    /// toolport's path and arguments) that ends by exec-ing them, so the process id stays
    /// toolport's: for what a parent leaves toolport (`bash -c 'exec 7<file; exec "$@"' …`).
    pub fn start_wrapped(env: &Env, vars: &[(&str, &str)], wrapper: &[&str]) -> Self {
        let stderr = env.home().join("session.stderr");
        let log =
            std::fs::File::create(&stderr).unwrap_or_else(|e| panic!("create {}: {e}", stderr.display()));
        let mut command = match wrapper.split_first() {
            Some((program, args)) => {
                let mut c = std::process::Command::new(program);
                c.args(args).arg(toolport_path());
                c
            }
            None => std::process::Command::new(toolport_path()),
        };
        let mut child = command
            .arg("--home")
            .arg(env.home())
            .arg("--workspace")
            .arg(env.root())
            .arg("session")
            .env_remove("RUST_LOG")
            .env_remove("TOOLPORT_HOME")
            .envs(vars.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("spawn toolport session: {e}"));
        let stdin = child.stdin.take().unwrap_or_else(|| panic!("the session has no stdin"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("the session has no stdout"));
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self { child, stdin, lines, stderr }
    }

    /// The session's own process id.
    pub fn process_id(&self) -> u32 {
        self.child.id()
    }

    /// Sends `command` and returns its answer (every line up to the fence's, each ended by `\n`).
    pub fn run(&mut self, command: &str) -> String {
        self.run_within(command, COMMAND_TIMEOUT)
    }

    /// [`Self::run`], waiting at most `within` for the answer.
    pub fn run_within(&mut self, command: &str, within: Duration) -> String {
        writeln!(self.stdin, "{command}\n{FENCE}").unwrap_or_else(|e| panic!("write {command:?}: {e}"));
        self.stdin.flush().unwrap_or_else(|e| panic!("flush {command:?}: {e}"));
        let deadline = Instant::now() + within;
        let mut answer = String::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line == FENCE_REPLY => return answer,
                Ok(line) => {
                    answer.push_str(&line);
                    answer.push('\n');
                }
                Err(e) => panic!("no answer to {command:?} within {within:?} ({e}); so far:\n{answer}"),
            }
        }
    }

    /// The process id a demo server reports through its `<prefix>pid` tool.
    pub fn pid(&mut self, prefix: &str) -> u32 {
        let answer = self.run(&format!("/call {prefix}pid"));
        answer.trim().parse().unwrap_or_else(|_| panic!("{prefix}pid answered {answer:?}"))
    }

    /// What the host wrote to stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr)
            .unwrap_or_else(|e| panic!("read {}: {e}", self.stderr.display()))
    }

    /// `/quit`, and how the session exited (it must by itself, within [`COMMAND_TIMEOUT`]).
    pub fn quit(mut self) -> ExitStatus {
        writeln!(self.stdin, "/quit").unwrap_or_else(|e| panic!("write /quit: {e}"));
        let deadline = Instant::now() + COMMAND_TIMEOUT;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return status,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                Ok(None) => panic!("the session did not exit within {COMMAND_TIMEOUT:?} of /quit"),
                Err(e) => panic!("wait for the session: {e}"),
            }
        }
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
