//! README's "Get started" runs as printed: every `toolport` command between its
//! `quickstart` markers, in order, in a fresh project with a fresh `$HOME`, on this build. `npx`
//! and `uvx` are shims on `PATH` that start the peers the suite installs (server-filesystem
//! from npm, mcp-server-time from PyPI), so nothing is downloaded; everything else is real.
//! Then Gemini CLI itself is asked about the entry `install` wrote, before and after the
//! folder trust the README describes.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::support::common::{shared_cache, toolport_path};
use crate::support::peers::{install, node};

/// The lines of README's quick start that start with `toolport `.
fn quick_start() -> Vec<String> {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let text = fs::read_to_string(&readme).unwrap_or_else(|e| panic!("{}: {e}", readme.display()));
    let begin =
        text.find("<!-- quickstart:begin -->").unwrap_or_else(|| panic!("no quickstart:begin marker"));
    let end = text.find("<!-- quickstart:end -->").unwrap_or_else(|| panic!("no quickstart:end marker"));
    let block = text.get(begin..end).unwrap_or_default();
    block.lines().filter(|l| l.starts_with("toolport ")).map(str::to_string).collect()
}

/// A folder of executables: `toolport` (this build), and `npx`/`uvx` shims that start the
/// installed peers for the packages the README names (anything else fails loudly).
fn shims(dir: &Path) {
    static FILESYSTEM: OnceLock<String> = OnceLock::new();
    static TIME: OnceLock<String> = OnceLock::new();
    let filesystem = Path::new(install("peers/install_filesystem.sh", &FILESYSTEM))
        .join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let time = Path::new(install("peers/install_time.sh", &TIME)).join("venv/bin/mcp-server-time");
    std::os::unix::fs::symlink(toolport_path(), dir.join("toolport")).unwrap_or_else(|e| panic!("{e}"));
    let script = |name: &str, package: &str, exec: String| {
        let path = dir.join(name);
        let text = format!(
            "#!/bin/sh\n[ \"$1\" = -y ] && shift\nif [ \"$1\" = {package} ]; then shift; exec {exec} \"$@\"; fi\n\
             echo \"{name} shim: no installed peer for $*\" >&2; exit 127\n"
        );
        fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap_or_else(|e| panic!("{e}"));
    };
    script(
        "npx",
        "@modelcontextprotocol/server-filesystem",
        format!("'{}' '{}'", node().display(), filesystem.display()),
    );
    script("uvx", "mcp-server-time", format!("'{}'", time.display()));
}

struct User {
    home: tempfile::TempDir,
    project: PathBuf,
    path: String,
}

impl User {
    fn new() -> Self {
        let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let project = home.path().join("my-project");
        let bin = home.path().join("bin");
        for dir in [&project, &bin] {
            fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{e}"));
        }
        shims(&bin);
        let node_dir = node().parent().map(Path::to_path_buf).unwrap_or_default();
        let path = format!("{}:{}:/usr/bin:/bin", bin.display(), node_dir.display());
        Self { home, project, path }
    }

    /// `line` run by `sh` in the project, as the user would type it.
    fn sh(&self, line: &str) -> Output {
        Command::new("sh")
            .args(["-c", line])
            .current_dir(&self.project)
            .env("HOME", self.home.path())
            .env("PATH", &self.path)
            .env("TOOLPORT_CACHE_DIR", shared_cache())
            .env("TZ", "UTC")
            .env_remove("TOOLPORT_HOME")
            .env_remove("RUST_LOG")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CODEX_HOME")
            .output()
            .unwrap_or_else(|e| panic!("{line}: {e}"))
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_readme_quick_start_runs_as_printed() {
    let commands = quick_start();
    for kind in ["mcp add", "mcp enable", "mcp list", "call", "install --client"] {
        assert!(commands.iter().any(|c| c.contains(kind)), "the quick start lost its `{kind}`: {commands:?}");
    }
    let user = User::new();
    let project = user.project.canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let mut outputs = String::new();
    for command in &commands {
        let o = user.sh(command);
        assert!(o.status.success(), "{command}\nstdout: {}\nstderr: {}", text(&o.stdout), text(&o.stderr));
        outputs.push_str(&format!("$ {command}\n{}", text(&o.stdout)));
    }
    for expected in [
        "- files | type=stdio | state=connected | workspace=enabled | paused=no | tools=12\n".to_string(),
        "- time | type=stdio | state=connected | workspace=enabled | paused=no | tools=2\n".to_string(),
        // The project's folder, not the home holding toolport's `~/.toolport`.
        format!("Allowed directories:\n{}\n", project.display()),
        "\"timezone\": \"Europe/Paris\"".to_string(),
        format!(
            "installed: toolport -> {}/.claude.json (claude-code, user scope)\n",
            user.home.path().display()
        ),
        format!(
            "installed: toolport -> {}/.codex/config.toml (codex, user scope)\n",
            user.home.path().display()
        ),
        format!(
            "installed: toolport -> {}/.gemini/settings.json (gemini, user scope)\n",
            user.home.path().display()
        ),
    ] {
        assert!(outputs.contains(&expected), "the quick start lacks {expected:?}:\n{outputs}");
    }

    // Gemini CLI itself: the entry is there but disabled in an untrusted folder, and connects
    // once the folder is trusted the way the README says.
    let entry = format!("toolport: {} serve (stdio)", toolport_path().display());
    let listed = user.gemini_mcp_list();
    for expected in [
        "Warning: MCP servers are configured but disabled because this folder is untrusted.".to_string(),
        format!("{entry} - Disabled"),
    ] {
        assert!(listed.contains(&expected), "gemini mcp list lacks {expected:?}:\n{listed}");
    }
    let trusted = serde_json::json!({ project.display().to_string(): "TRUST_FOLDER" });
    fs::write(user.home.path().join(".gemini/trustedFolders.json"), trusted.to_string())
        .unwrap_or_else(|e| panic!("{e}"));
    let listed = user.gemini_mcp_list();
    assert!(listed.contains(&format!("✓ {entry} - Connected")), "gemini mcp list:\n{listed}");
}

impl User {
    /// The real `gemini mcp list` in the project (it lists on stderr): it starts toolport's
    /// entry to see whether it connects.
    fn gemini_mcp_list(&self) -> String {
        static AGENTS: OnceLock<String> = OnceLock::new();
        let gemini = Path::new(install("peers/install_agents.sh", &AGENTS)).join("node_modules/.bin/gemini");
        let o = Command::new(gemini)
            .args(["mcp", "list"])
            .current_dir(&self.project)
            .env("HOME", self.home.path())
            .env("PATH", &self.path)
            .env("TOOLPORT_CACHE_DIR", shared_cache())
            .env("NO_COLOR", "1")
            .env_remove("GEMINI_API_KEY")
            .env_remove("GEMINI_CLI_TRUST_WORKSPACE")
            .env_remove("TOOLPORT_HOME")
            .env_remove("RUST_LOG")
            .output()
            .unwrap_or_else(|e| panic!("gemini mcp list: {e}"));
        let all = format!("{}{}", text(&o.stdout), text(&o.stderr));
        assert!(o.status.success(), "gemini mcp list:\n{all}");
        all
    }
}
