//! Shared fixtures: a temporary home + workspace and a way to run the built binary in it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use tempfile::TempDir;

/// A temporary home and workspace; both vanish when dropped.
pub struct Env {
    pub home: TempDir,
    pub workspace: TempDir,
}

impl Env {
    pub fn new() -> Self {
        let home = tempfile::tempdir().unwrap_or_else(|e| panic!("temp home: {e}"));
        let workspace = tempfile::tempdir().unwrap_or_else(|e| panic!("temp workspace: {e}"));
        Self { home, workspace }
    }

    pub fn home(&self) -> &Path {
        self.home.path()
    }

    pub fn root(&self) -> &Path {
        self.workspace.path()
    }

    pub fn store(&self) -> PathBuf {
        self.home().join("mcp.json")
    }

    pub fn workspace_file(&self) -> PathBuf {
        self.root().join(".toolport/workspace.json")
    }

    /// `toolport --home <home> --workspace <root> <args…>`, with RUST_LOG cleared so logs never
    /// leak into asserted output.
    pub fn cmd<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut cmd = toolport();
        cmd.arg("--home").arg(self.home()).arg("--workspace").arg(self.root());
        cmd.args(args);
        cmd.env_remove("RUST_LOG").env_remove("TOOLPORT_HOME");
        cmd
    }

    /// Runs [`Env::cmd`] to its end, killed after `within`: exit code (-1 when killed),
    /// stdout, stderr.
    pub fn run(&self, args: &[&str], within: Duration) -> (i32, String, String) {
        let out =
            self.cmd(args).timeout(within).output().unwrap_or_else(|e| panic!("toolport {args:?}: {e}"));
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
    }
}

/// An interactive `toolport` process: piped stdin, and its stdout lines arriving on a channel
/// (read by a thread, so a test can wait with a timeout instead of hanging).
pub struct Piped {
    pub child: Child,
    pub stdin: ChildStdin,
    pub lines: mpsc::Receiver<String>,
    /// Every stderr line so far.
    pub stderr: Arc<Mutex<Vec<String>>>,
}

impl Piped {
    /// Waits (at most `within`) for a stderr line containing `text`; returns all of stderr.
    pub fn wait_for_stderr(&self, text: &str, within: Duration) -> String {
        wait_for_text(&self.stderr, text, within)
    }
}

/// Collects `reader`'s lines as a thread reads them (so the writer never blocks on a full pipe).
pub fn collect_lines(reader: impl std::io::Read + Send + 'static) -> Arc<Mutex<Vec<String>>> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let kept = lines.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(reader).lines().map_while(Result::ok) {
            if let Ok(mut kept) = kept.lock() {
                kept.push(line);
            }
        }
    });
    lines
}

/// A fixture process (a Python script of the tests) that prints `READY <url>` on stdout once it
/// serves on loopback; its stderr is kept for failure messages and for tests that count what it
/// did. Killed on drop.
pub struct ReadyFixture {
    child: Child,
    /// The URL of its `READY` line.
    pub url: String,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl ReadyFixture {
    /// Spawns `command` (named `name` in panics) and waits up to `within` for `READY http://127.0.0.1:…`.
    pub fn start(mut command: std::process::Command, name: &str, within: Duration) -> Self {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {name}: {e}"));
        let stdout = collect_lines(child.stdout.take().unwrap_or_else(|| panic!("{name}: no stdout")));
        let stderr = collect_lines(child.stderr.take().unwrap_or_else(|| panic!("{name}: no stderr")));
        let printed = wait_for_text(&stdout, "READY http://127.0.0.1:", within);
        let url = printed.lines().find_map(|l| l.strip_prefix("READY ")).map(|u| u.trim().to_string());
        let mut fixture = Self { child, url: url.clone().unwrap_or_default(), stderr };
        if url.is_none() {
            fixture.stop();
            panic!("{name} printed {printed:?} instead of READY; stderr:\n{}", fixture.log());
        }
        fixture
    }

    /// Its stderr so far.
    pub fn log(&self) -> String {
        self.stderr.lock().map(|l| l.join("\n")).unwrap_or_default()
    }

    /// How many lines of its stderr so far contain `what`.
    pub fn logged(&self, what: &str) -> usize {
        self.stderr.lock().map(|l| l.iter().filter(|line| line.contains(what)).count()).unwrap_or_default()
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ReadyFixture {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Waits (at most `within`) until one of `lines` contains `text`; returns them all, joined.
pub fn wait_for_text(lines: &Mutex<Vec<String>>, text: &str, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let printed = lines.lock().map(|l| l.join("\n")).unwrap_or_default();
        if printed.contains(text) || Instant::now() > deadline {
            return printed;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

impl Env {
    /// `toolport --home <home> [--workspace <root>] <args…>` with piped stdin and stdout,
    /// stderr collected and RUST_LOG cleared.
    pub fn spawn_piped(&self, with_workspace: bool, args: &[&str]) -> Piped {
        let mut cmd = std::process::Command::new(toolport_path());
        cmd.arg("--home").arg(self.home());
        if with_workspace {
            cmd.arg("--workspace").arg(self.root());
        }
        cmd.args(args).env_remove("RUST_LOG").env_remove("TOOLPORT_HOME");
        Piped::spawn(cmd)
    }
}

impl Piped {
    /// Any program with piped stdin, stdout lines on a channel and stderr collected.
    pub fn spawn(mut cmd: std::process::Command) -> Self {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
        let stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let stderr = collect_lines(child.stderr.take().unwrap_or_else(|| panic!("no stderr")));
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Piped { child, stdin, lines, stderr }
    }
}

/// The built `toolport` binary. `cargo test --workspace` builds it before running this crate.
/// The shared compiled cache of the built-ins this test run uses (`$TOOLPORT_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/toolport`, else `~/.cache/toolport`), for a test that moves `HOME`: passed
/// as `TOOLPORT_CACHE_DIR`, it keeps the built-ins compiled instead of compiling them cold.
pub fn shared_cache() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("TOOLPORT_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").filter(|d| d.is_absolute()).map(|d| d.join("toolport")))
        .or_else(|| var("HOME").map(|h| h.join(".cache/toolport")))
        .unwrap_or_else(|| std::env::temp_dir().join("toolport-cache"))
}

pub fn toolport() -> Command {
    Command::new(toolport_path())
}

pub fn toolport_path() -> PathBuf {
    // tests run from target/<profile>/deps/it-<hash>; the binary is in target/<profile>/.
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("current_exe: {e}"));
    let dir = exe.parent().and_then(Path::parent).unwrap_or_else(|| panic!("no target dir above {exe:?}"));
    let bin = dir.join(format!("toolport{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "{} is missing: run `cargo test --workspace` so the binary is built",
        bin.display()
    );
    bin
}

/// `toolport --home H --workspace W session` on a pseudo-terminal (util-linux `script`,
/// `TERM=xterm`): what a person at a terminal runs. Stdin and stdout are the terminal's.
pub fn session_on_a_terminal(env: &Env) -> (Child, ChildStdin, std::process::ChildStdout) {
    on_a_terminal(env, &["session"], &[])
}

/// `toolport --home H --workspace W <args…>` on a pseudo-terminal with `vars` set, RUST_LOG
/// and TOOLPORT_HOME cleared: the terminal's stdin and its screen (stdout and stderr alike).
pub fn on_a_terminal(
    env: &Env,
    args: &[&str],
    vars: &[(&str, &str)],
) -> (Child, ChildStdin, std::process::ChildStdout) {
    let mut words = vec![
        toolport_path().display().to_string(),
        "--home".into(),
        env.home().display().to_string(),
        "--workspace".into(),
        env.root().display().to_string(),
    ];
    words.extend(args.iter().map(|a| a.to_string()));
    let command =
        words.iter().map(|a| format!("'{}'", a.replace('\'', r"'\''"))).collect::<Vec<_>>().join(" ");
    let mut child = std::process::Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .env("TERM", "xterm")
        .envs(vars.iter().copied())
        .env_remove("RUST_LOG")
        .env_remove("TOOLPORT_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn script (util-linux): {e}"));
    let stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
    (child, stdin, stdout)
}
