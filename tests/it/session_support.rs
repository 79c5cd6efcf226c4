//! `toolport session` driven as a script: stdin piped, one command per line, each answer read
//! up to a fence line whose reply is known. For tests that need one long-lived host across
//! several calls (the session, a server that must survive its neighbour's failure).

use std::io::Write;
use std::process::{Child, ChildStdin, ExitStatus};
use std::sync::mpsc;
use std::time::Duration;

use crate::common::Env;

/// How long one command may take (a connect spawns a process; CI machines are slow).
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
/// A line after every command whose answer is known, so the driver knows where an answer ends.
const FENCE: &str = "/call";
const FENCE_REPLY: &str = "Usage: /call <tool> [json]";

/// A running `toolport session` fed one command at a time.
pub struct Scripted {
    pub child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
}

impl Scripted {
    pub fn start(env: &Env) -> Self {
        let crate::common::Piped { child, stdin, lines } = env.spawn_piped(true, &["session"]);
        Self { child, stdin, lines }
    }

    /// Sends `command` and returns its answer (every line up to the fence's).
    pub fn run(&mut self, command: &str) -> String {
        writeln!(self.stdin, "{command}\n{FENCE}").unwrap_or_else(|e| panic!("write {command:?}: {e}"));
        self.stdin.flush().unwrap_or_else(|e| panic!("flush: {e}"));
        let mut answer = String::new();
        loop {
            match self.lines.recv_timeout(COMMAND_TIMEOUT) {
                Ok(line) if line == FENCE_REPLY => return answer,
                Ok(line) => {
                    answer.push_str(&line);
                    answer.push('\n');
                }
                Err(e) => panic!("no answer to {command:?} ({e}); so far:\n{answer}"),
            }
        }
    }

    /// The process id a demo server reports through its `<prefix>pid` tool.
    pub fn pid(&mut self, prefix: &str) -> u32 {
        let answer = self.run(&format!("/call {prefix}pid"));
        answer.trim().parse().unwrap_or_else(|_| panic!("{prefix}pid answered {answer:?}"))
    }

    pub fn quit(mut self) -> ExitStatus {
        writeln!(self.stdin, "/quit").unwrap_or_else(|e| panic!("write /quit: {e}"));
        self.child.wait().unwrap_or_else(|e| panic!("wait: {e}"))
    }
}

