//! Which guard plugins apply, and how: the `guards` list of a workspace
//! (`.toolport/workspace.json`) and of a server definition, each entry a guard plugin declared
//! in the store's `plugins` (`kind: "guard"`) with its globs, phase, mode and `failOpen`.
//!
//! The chain of a request is the workspace's list, then its server's, each in the order
//! written: a team's guards run before one server's own. Globs are compiled when read, so a bad
//! glob is a configuration error (exit 2), not a surprise on the first call.

use globset::{GlobSet, GlobSetBuilder};

/// Which half of an exchange a guard sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardPhase {
    /// Only the request, before it is sent.
    Request,
    /// Only the answer, before anyone sees it.
    Response,
    /// Both (the default).
    Both,
}

impl GuardPhase {
    /// The `phase` string of the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Request => "request",
            Self::Response => "response",
            Self::Both => "both",
        }
    }

    /// The phase a `phase` string names.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Request, Self::Response, Self::Both].into_iter().find(|p| p.as_str() == text)
    }

    /// Whether the request is this phase's.
    pub fn request(self) -> bool {
        matches!(self, Self::Request | Self::Both)
    }

    /// Whether the answer is this phase's.
    pub fn response(self) -> bool {
        matches!(self, Self::Response | Self::Both)
    }
}

/// What a guard's `deny` and `mutate` do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardMode {
    /// They take effect (the default).
    Enforce,
    /// They are only recorded: the request and its answer go on unchanged.
    Audit,
}

impl GuardMode {
    /// The `mode` string of the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Enforce => "enforce",
            Self::Audit => "audit",
        }
    }

    /// The mode a `mode` string names.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Enforce, Self::Audit].into_iter().find(|m| m.as_str() == text)
    }
}

/// Where a guard entry was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuardScope {
    /// The workspace's `guards`: every active server's requests.
    Workspace,
    /// A server's own `guards` (the server's name).
    Server(String),
}

/// One entry of a `guards` list, read and compiled.
#[derive(Clone)]
pub struct GuardUse {
    /// The guard plugin's name (a `plugins` entry of kind `guard`).
    pub plugin: String,
    /// `tools`: globs on the tool's name (final or the server's own), the prompt's name, or the
    /// resource's URI; default `["*"]`.
    pub tools: Vec<String>,
    /// `phase`; default both.
    pub phase: GuardPhase,
    /// `mode`; default enforce.
    pub mode: GuardMode,
    /// `failOpen`; default false: a guard that traps, times out, answers nonsense or is missing
    /// denies the request.
    pub fail_open: bool,
    /// Where it was written.
    pub scope: GuardScope,
    set: GlobSet,
}

impl GuardUse {
    /// Compiles `tools` (empty means every name); the first glob that does not compile is the
    /// error, as `(glob, globset's reason)`.
    pub fn new(
        plugin: String,
        tools: Vec<String>,
        phase: GuardPhase,
        mode: GuardMode,
        fail_open: bool,
        scope: GuardScope,
    ) -> Result<Self, (String, String)> {
        let tools = if tools.is_empty() { vec!["*".to_string()] } else { tools };
        let mut builder = GlobSetBuilder::new();
        for glob in &tools {
            let compiled = globset::GlobBuilder::new(glob)
                .literal_separator(false)
                .backslash_escape(true)
                .build()
                .map_err(|e| (glob.clone(), e.kind().to_string()))?;
            builder.add(compiled);
        }
        let set = builder.build().map_err(|e| (tools.join(", "), e.to_string()))?;
        Ok(Self { plugin, tools, phase, mode, fail_open, scope, set })
    }

    /// Whether this guard sees a request for one of `names` (a tool's final name and its
    /// server's own, a prompt's name, a resource's URI).
    pub fn applies(&self, names: &[&str]) -> bool {
        names.iter().any(|n| self.set.is_match(n))
    }

    /// What becomes of the requests this entry applies to while its plugin cannot run as a
    /// guard (none of that name, or one of another kind): refused, or let through with
    /// `failOpen`.
    pub fn without_its_plugin(&self) -> &'static str {
        if self.fail_open {
            "every call it applies to is let through (failOpen is true)"
        } else {
            "every call it applies to is refused (failOpen is false)"
        }
    }

    /// The warning about this entry when its plugin cannot run as a guard, `problem` saying
    /// why (the plugin host's words: `unknown plugin (built-in: …; configured: …)`):
    /// `guard "pii": <problem>, so every call it applies to is refused (failOpen is false)`.
    /// Not a configuration error: the runtime refuses (or lets through) each such call.
    pub fn misfit_line(&self, problem: &str) -> String {
        format!("guard \"{}\": {problem}, so {}", self.plugin, self.without_its_plugin())
    }
}

impl PartialEq for GuardUse {
    fn eq(&self, other: &Self) -> bool {
        self.plugin == other.plugin
            && self.tools == other.tools
            && self.phase == other.phase
            && self.mode == other.mode
            && self.fail_open == other.fail_open
            && self.scope == other.scope
    }
}

impl Eq for GuardUse {}

impl std::fmt::Debug for GuardUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardUse")
            .field("plugin", &self.plugin)
            .field("tools", &self.tools)
            .field("phase", &self.phase)
            .field("mode", &self.mode)
            .field("fail_open", &self.fail_open)
            .field("scope", &self.scope)
            .finish()
    }
}

/// The chain for a request to one server: `workspace`'s entries, then `server`'s.
pub fn chain<'a>(workspace: &'a [GuardUse], server: &'a [GuardUse]) -> impl Iterator<Item = &'a GuardUse> {
    workspace.iter().chain(server)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(tools: &[&str]) -> GuardUse {
        let tools = tools.iter().map(|t| t.to_string()).collect();
        GuardUse::new("g".into(), tools, GuardPhase::Both, GuardMode::Enforce, false, GuardScope::Workspace)
            .unwrap_or_else(|e| panic!("{e:?}"))
    }

    #[test]
    fn globs_match_any_of_the_names_and_default_to_every_name() {
        assert!(guard(&[]).applies(&["anything"]));
        let g = guard(&["db_*", "file:///srv/*"]);
        assert!(g.applies(&["memory_db_query", "db_query"]));
        assert!(g.applies(&["file:///srv/a/b"]));
        assert!(!g.applies(&["query"]));
    }

    #[test]
    fn a_guard_without_its_plugin_says_what_becomes_of_its_calls() {
        let closed = guard(&[]);
        assert_eq!(
            closed.misfit_line("unknown plugin (built-in: none; configured: none)"),
            "guard \"g\": unknown plugin (built-in: none; configured: none), so every call it applies to is \
             refused (failOpen is false)"
        );
        let open = GuardUse { fail_open: true, ..closed };
        assert_eq!(
            open.misfit_line(
                "plugin g is a tool-shape plugin, not a guard plugin (built-in: none; configured: none)"
            ),
            "guard \"g\": plugin g is a tool-shape plugin, not a guard plugin (built-in: none; configured: none), \
             so every call it applies to is let through (failOpen is true)"
        );
    }

    #[test]
    fn a_bad_glob_is_named() {
        let bad = GuardUse::new(
            "g".into(),
            vec!["[".into()],
            GuardPhase::Both,
            GuardMode::Audit,
            true,
            GuardScope::Workspace,
        );
        assert_eq!(bad.err().map(|e| e.0), Some("[".to_string()));
    }
}
