//! The agents toolport adopts (`toolport install`) and learns from (`toolport mcp import`), and
//! where each keeps its MCP servers. A leaf: the files beside it share these types.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use toolport::ConfigError;

/// A coding agent (or editor) with a config file of MCP servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// Anthropic's Claude Code: `~/.claude.json`, `<project>/.mcp.json`.
    ClaudeCode,
    /// The Claude desktop app: one user file.
    ClaudeDesktop,
    /// OpenAI's Codex CLI: TOML, `[mcp_servers.<name>]`.
    Codex,
    /// Google's Gemini CLI: `settings.json`, `mcpServers`.
    Gemini,
    /// Cursor: `mcp.json`, `mcpServers`.
    Cursor,
    /// VS Code: `mcp.json` (JSONC), `servers`.
    VsCode,
}

/// Which of a client's files: the one for every project, or the one inside this project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientScope {
    /// The user's own file, for every project.
    #[default]
    User,
    /// The file inside the workspace root (shared with the project, often committed).
    Project,
    /// Claude Code's default for `claude mcp add`: the user's own file, under this project's
    /// entry (`~/.claude.json` → `projects.<workspace root>.mcpServers`), never shared.
    Local,
}

/// How a client's file is written, which decides the editor that changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// A JSON object holding the servers under `key` (for Claude Code's local scope, under
    /// `projects.<root>.` that). `comments`, `trailing_commas`: what the client reads too, so
    /// what toolport accepts, and keeps.
    Json { key: &'static str, comments: bool, trailing_commas: bool },
    /// Codex's TOML, `[mcp_servers.<name>]` tables.
    CodexToml,
}

impl Client {
    /// Every client, in the order the help and `docs/src/agents.md` list them.
    pub const ALL: [Client; 6] =
        [Self::ClaudeCode, Self::ClaudeDesktop, Self::Codex, Self::Gemini, Self::Cursor, Self::VsCode];

    /// The name on the command line (`--client claude-code`).
    pub fn name(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::ClaudeDesktop => "claude-desktop",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Cursor => "cursor",
            Self::VsCode => "vscode",
        }
    }

    /// The scopes the client has: Claude Desktop knows no projects, only Claude Code has a
    /// local one.
    pub fn scopes(self) -> &'static [ClientScope] {
        match self {
            Self::ClaudeDesktop => &[ClientScope::User],
            Self::ClaudeCode => &[ClientScope::User, ClientScope::Project, ClientScope::Local],
            _ => &[ClientScope::User, ClientScope::Project],
        }
    }

    /// What `mcp import --from` reads without `--scope`: what the client itself loads from
    /// the user's file in this project. Claude Code's `claude mcp add` writes to the local
    /// scope unless told otherwise, so that comes first (it wins over a user entry of the same
    /// name, as in Claude Code), then the user scope: both are in `~/.claude.json`.
    pub fn default_import_scopes(self) -> &'static [ClientScope] {
        match self {
            Self::ClaudeCode => &[ClientScope::Local, ClientScope::User],
            _ => &[ClientScope::User],
        }
    }

    pub(crate) fn format(self) -> Format {
        match self {
            Self::Codex => Format::CodexToml,
            Self::VsCode => Format::Json { key: "servers", comments: true, trailing_commas: true },
            // Gemini CLI strips comments from its settings, then `JSON.parse`s them: a trailing
            // comma is an error there (0.61: "Expected double-quoted property name").
            Self::Gemini => Format::Json { key: "mcpServers", comments: true, trailing_commas: false },
            Self::ClaudeCode | Self::ClaudeDesktop | Self::Cursor => {
                Format::Json { key: "mcpServers", comments: false, trailing_commas: false }
            }
        }
    }

    /// The keys leading to the servers' object in a JSON file: `[key]`, or for Claude Code's
    /// local scope `["projects", <workspace root>, key]` (Claude Code keys its projects by
    /// their absolute path).
    pub(crate) fn servers_path(self, scope: ClientScope, homes: &ClientHomes) -> Vec<String> {
        let key = match self.format() {
            Format::Json { key, .. } => key,
            Format::CodexToml => "mcp_servers",
        };
        match scope {
            ClientScope::Local => {
                vec!["projects".into(), homes.workspace_root.display().to_string(), key.into()]
            }
            ClientScope::User | ClientScope::Project => vec![key.into()],
        }
    }

    /// The file this client reads its servers from in `scope`. A scope the client does not
    /// have is a usage error naming the ones it has.
    pub fn config_file(self, scope: ClientScope, homes: &ClientHomes) -> Result<PathBuf, ConfigError> {
        let unsupported = || {
            let has: Vec<_> = self.scopes().iter().map(|s| s.name()).collect();
            ConfigError(format!(
                "{} has no {} scope: use --scope {}",
                self.name(),
                scope.name(),
                has.join(" or ")
            ))
        };
        if !self.scopes().contains(&scope) {
            return Err(unsupported());
        }
        let home = &homes.home;
        let root = &homes.workspace_root;
        Ok(match (self, scope) {
            (Self::ClaudeCode, ClientScope::User | ClientScope::Local) => home.join(".claude.json"),
            (Self::ClaudeCode, ClientScope::Project) => root.join(".mcp.json"),
            (Self::ClaudeDesktop, _) => homes.config_dir.join("Claude").join("claude_desktop_config.json"),
            (Self::Codex, ClientScope::User) => {
                homes.codex_home.clone().unwrap_or_else(|| home.join(".codex")).join("config.toml")
            }
            (Self::Codex, ClientScope::Project) => root.join(".codex").join("config.toml"),
            (_, ClientScope::Local) => return Err(unsupported()),
            (Self::Gemini, ClientScope::User) => home.join(".gemini").join("settings.json"),
            (Self::Gemini, ClientScope::Project) => root.join(".gemini").join("settings.json"),
            (Self::Cursor, ClientScope::User) => home.join(".cursor").join("mcp.json"),
            (Self::Cursor, ClientScope::Project) => root.join(".cursor").join("mcp.json"),
            (Self::VsCode, ClientScope::User) => homes.config_dir.join("Code").join("User").join("mcp.json"),
            (Self::VsCode, ClientScope::Project) => root.join(".vscode").join("mcp.json"),
        })
    }
}

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Client {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|c| c.name() == s).ok_or_else(|| {
            let names: Vec<_> = Self::ALL.iter().map(|c| c.name()).collect();
            format!("unknown client \"{s}\": one of {}", names.join(", "))
        })
    }
}

impl ClientScope {
    /// The name on the command line (`--scope project`).
    pub fn name(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Project => "project",
            Self::Local => "local",
        }
    }
}

impl FromStr for ClientScope {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "user" => Ok(Self::User),
            "project" => Ok(Self::Project),
            "local" => Ok(Self::Local),
            _ => Err(format!("unknown scope \"{s}\": user, project or local")),
        }
    }
}

/// The folders the clients' files hang off. The clients' own home is the user's (`$HOME`),
/// not toolport's `--home`: that one only holds toolport's store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientHomes {
    /// The user's home (`$HOME`).
    pub home: PathBuf,
    /// `$CODEX_HOME`, which Codex reads instead of `~/.codex` when set.
    pub codex_home: Option<PathBuf>,
    /// Where desktop apps keep settings: `$XDG_CONFIG_HOME` or `~/.config` on Linux,
    /// `~/Library/Application Support` on macOS, `%APPDATA%` on Windows.
    pub config_dir: PathBuf,
    /// The workspace root: where project-scope files live.
    pub workspace_root: PathBuf,
}

impl ClientHomes {
    /// The folders as this process's environment says (`HOME`, `CODEX_HOME`,
    /// `XDG_CONFIG_HOME`, `APPDATA`).
    pub fn from_env(workspace_root: &Path) -> Result<Self, ConfigError> {
        let home = std::env::home_dir()
            .filter(|h| !h.as_os_str().is_empty())
            .ok_or_else(|| ConfigError("no home folder: set HOME".into()))?;
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let config_dir = if cfg!(target_os = "macos") {
            home.join("Library").join("Application Support")
        } else if cfg!(windows) {
            var("APPDATA").unwrap_or_else(|| home.join("AppData").join("Roaming"))
        } else {
            // The XDG spec ignores a relative value.
            var("XDG_CONFIG_HOME").filter(|p| p.is_absolute()).unwrap_or_else(|| home.join(".config"))
        };
        Ok(Self {
            codex_home: var("CODEX_HOME"),
            config_dir,
            home,
            workspace_root: workspace_root.to_path_buf(),
        })
    }
}

/// What a client's entry starts: toolport's own binary, serving.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The absolute path of the toolport binary.
    pub command: String,
    /// `serve`, and `--home DIR` when toolport's home is not the default one.
    pub args: Vec<String>,
}

impl Launch {
    /// `<exe> serve [--home DIR]`. Nothing workspace-specific: a client starts a project's
    /// server in that project's folder, where `serve` finds the workspace by itself, and a
    /// user-scope entry serves whichever project the client is in.
    pub fn serve(exe: &Path, home: Option<&Path>) -> Self {
        let mut args = vec!["serve".to_string()];
        if let Some(home) = home {
            args.extend(["--home".to_string(), home.display().to_string()]);
        }
        Self { command: exe.display().to_string(), args }
    }

    /// The entry in `client`'s own dialect: the fields its docs show for a stdio server.
    pub(crate) fn entry(&self, client: Client) -> serde_json::Map<String, serde_json::Value> {
        use serde_json::Value;
        let mut m = serde_json::Map::new();
        match client {
            Client::ClaudeCode | Client::VsCode => {
                m.insert("type".into(), "stdio".into());
            }
            Client::ClaudeDesktop | Client::Codex | Client::Gemini | Client::Cursor => {}
        }
        m.insert("command".into(), self.command.clone().into());
        m.insert("args".into(), self.args.iter().cloned().map(Value::String).collect());
        if client == Client::ClaudeCode {
            m.insert("env".into(), Value::Object(serde_json::Map::new()));
        }
        m
    }
}

/// Keys of an entry that only a new entry gets: Claude Code's empty `env`, which a user's own
/// variables replace and a forced install must not wipe.
const NEW_ONLY: [&str; 1] = ["env"];

/// Keys that describe another transport (or, where toolport writes no `type`, name one): a
/// stdio entry must not keep them, or the client reads a remote server.
const OTHER_TRANSPORT: [&str; 6] =
    ["url", "httpUrl", "headers", "http_headers", "env_http_headers", "bearer_token_env_var"];

/// The change that turns an existing entry into toolport's: the keys toolport writes set, the
/// other transport's keys removed, and every other key (the user's `startup_timeout_sec`,
/// `env`, `trust`, …) left as it is. Empty: the entry already starts toolport as wanted.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct EntryEdit {
    /// Keys to set, in the entry's order.
    pub set: Vec<(String, serde_json::Value)>,
    /// Keys to remove.
    pub remove: Vec<String>,
}

impl EntryEdit {
    /// What turns `existing` into `wanted` (an [`Launch::entry`]).
    pub(crate) fn plan(
        existing: &serde_json::Map<String, serde_json::Value>,
        wanted: &serde_json::Map<String, serde_json::Value>,
    ) -> Self {
        let set = wanted
            .iter()
            .filter(|(k, _)| !NEW_ONLY.contains(&k.as_str()))
            .filter(|(k, v)| existing.get(k.as_str()) != Some(v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let stale = |k: &&String| {
            OTHER_TRANSPORT.contains(&k.as_str()) || (k.as_str() == "type" && !wanted.contains_key("type"))
        };
        let remove = existing.keys().filter(stale).cloned().collect();
        Self { set, remove }
    }

    /// Nothing to change.
    pub(crate) fn is_empty(&self) -> bool {
        self.set.is_empty() && self.remove.is_empty()
    }
}

/// What an install did (or, for [`InstallOutcome::Conflict`], would not do).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstallOutcome {
    /// The entry was added.
    Added,
    /// An entry of that name was there and differed; `force` replaced it.
    Replaced,
    /// The same entry was already there: nothing written.
    Unchanged,
    /// A different entry of that name is there and `force` was not given: nothing written.
    Conflict,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn homes() -> ClientHomes {
        ClientHomes {
            home: "/h".into(),
            codex_home: None,
            config_dir: "/h/.config".into(),
            workspace_root: "/w".into(),
        }
    }

    #[test]
    fn every_client_and_scope_has_its_documented_file() {
        let h = homes();
        let file = |c: Client, s| c.config_file(s, &h).map(|p| p.display().to_string()).map_err(|e| e.0);
        use ClientScope::{Project, User};
        assert_eq!(file(Client::ClaudeCode, User), Ok("/h/.claude.json".into()));
        assert_eq!(file(Client::ClaudeCode, Project), Ok("/w/.mcp.json".into()));
        assert_eq!(
            file(Client::ClaudeDesktop, User),
            Ok("/h/.config/Claude/claude_desktop_config.json".into())
        );
        assert_eq!(
            file(Client::ClaudeDesktop, Project),
            Err("claude-desktop has no project scope: use --scope user".into())
        );
        assert_eq!(file(Client::Codex, User), Ok("/h/.codex/config.toml".into()));
        assert_eq!(file(Client::Codex, Project), Ok("/w/.codex/config.toml".into()));
        assert_eq!(file(Client::Gemini, User), Ok("/h/.gemini/settings.json".into()));
        assert_eq!(file(Client::Gemini, Project), Ok("/w/.gemini/settings.json".into()));
        assert_eq!(file(Client::Cursor, User), Ok("/h/.cursor/mcp.json".into()));
        assert_eq!(file(Client::Cursor, Project), Ok("/w/.cursor/mcp.json".into()));
        assert_eq!(file(Client::VsCode, User), Ok("/h/.config/Code/User/mcp.json".into()));
        assert_eq!(file(Client::VsCode, Project), Ok("/w/.vscode/mcp.json".into()));
        let codex = ClientHomes { codex_home: Some("/c".into()), ..homes() };
        assert_eq!(Client::Codex.config_file(User, &codex).ok(), Some(PathBuf::from("/c/config.toml")));
    }

    #[test]
    fn names_round_trip_and_an_unknown_one_lists_the_rest() {
        for c in Client::ALL {
            assert_eq!(c.name().parse::<Client>(), Ok(c));
        }
        assert_eq!(
            "zed".parse::<Client>(),
            Err("unknown client \"zed\": one of claude-code, claude-desktop, codex, gemini, cursor, vscode"
                .into())
        );
    }

    #[test]
    fn the_entry_passes_a_home_only_when_given_one() {
        let plain = Launch::serve(Path::new("/bin/toolport"), None);
        assert_eq!(plain.args, ["serve"]);
        let homed = Launch::serve(Path::new("/bin/toolport"), Some(Path::new("/t")));
        assert_eq!(homed.args, ["serve", "--home", "/t"]);
        let entry = serde_json::Value::Object(plain.entry(Client::ClaudeCode));
        assert_eq!(
            entry,
            serde_json::json!({"type":"stdio","command":"/bin/toolport","args":["serve"],"env":{}})
        );
        let entry = serde_json::Value::Object(plain.entry(Client::Cursor));
        assert_eq!(entry, serde_json::json!({"command":"/bin/toolport","args":["serve"]}));
    }
}
