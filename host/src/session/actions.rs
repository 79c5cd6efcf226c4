//! The session's commands, one entry each in [`COMMANDS`] (`/tools`, `/read`, …: the word,
//! its `/help` line, what completion offers after it), and the `/mcp` actions, one entry each
//! in [`ACTIONS`]: the word and its aliases, the shape of
//! what follows the word, the `/help` line, and whether ACP's read-only view allows it. The
//! parser ([`super::command`]), the `/help` text, completion ([`super::complete`]) and the
//! unknown-action sentence are all read from the table, so they cannot drift apart; what an
//! action *does* is its handler in the session (`handlers.rs`), as each command in
//! mini-redis has one shape and one `apply`.
//!
//! Adding an action: a variant of [`McpCommand`], an entry in [`ACTIONS`] (copy the entry
//! whose argument shape matches) and one arm plus handler in `handlers.rs`.
//!
//! Pure data and lookups, importing nothing of the session, so every layer above may read it.

use std::mem::discriminant;

/// One `/mcp` action with its arguments, as parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpCommand {
    /// `/mcp` or `/mcp list`: the status view.
    List,
    /// `/mcp help`: the `/mcp` help lines.
    Help,
    /// `/mcp add …`: the arguments after `add`, split shell-style, for the config layer's
    /// `parse_add_args` (the same grammar as `toolport mcp add`).
    Add(Vec<String>),
    /// `/mcp remove <name>` (alias `delete`).
    Remove(String),
    /// `/mcp enable <name>`.
    Enable(String),
    /// `/mcp disable <name>`.
    Disable(String),
    /// `/mcp pause <name>`.
    Pause(String),
    /// `/mcp resume <name>`.
    Resume(String),
    /// `/mcp retry <name>`.
    Retry(String),
    /// `/mcp login <name>`: the OAuth sign-in of `toolport mcp login`, then a reconnect.
    Login(String),
    /// `/mcp logout <name>`: forget the server's tokens, then a reconnect.
    Logout(String),
}

impl McpCommand {
    /// The table entry this command is built by, found by variant rather than by a second
    /// `match`, so a new action needs no edit here. `None` only for a variant no entry builds,
    /// which the tests rule out; callers treat it as the most restricted action.
    pub fn action(&self) -> Option<&'static McpAction> {
        ACTIONS.iter().find(|a| discriminant(&a.args.sample()) == discriminant(self))
    }
}

/// What follows an action word, and how the words become a [`McpCommand`].
#[derive(Debug, Clone)]
pub enum Args {
    /// Nothing is read: words after the action are ignored (`/mcp list x` lists).
    Bare(McpCommand),
    /// Exactly one server name, split shell-style so a quoted name may contain spaces.
    ServerName(fn(String) -> McpCommand),
    /// `add`'s flags and operands, split shell-style and checked later by the config layer,
    /// which owns that grammar.
    Flags(fn(Vec<String>) -> McpCommand),
}

impl Args {
    /// A command of the variant this shape builds (its arguments empty).
    fn sample(&self) -> McpCommand {
        match self {
            Self::Bare(command) => command.clone(),
            Self::ServerName(make) => make(String::new()),
            Self::Flags(make) => make(Vec::new()),
        }
    }
}

/// How an action appears in `/help`, completion and the unknown-action sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doc {
    /// Its own `/help` line, exactly as the original `/mcp` prints it.
    Line(&'static str),
    /// Offered, but documented by the line of the entry before it (`enable|disable`).
    SharedLine,
    /// Accepted but never offered: `/mcp help` is what a user finds without being told.
    Hidden,
}

/// One `/mcp` action.
#[derive(Debug, Clone)]
pub struct McpAction {
    /// The word after `/mcp`, lower-case: the parser lower-cases what is typed.
    pub name: &'static str,
    /// Other words for the same action; accepted, never offered.
    pub aliases: &'static [&'static str],
    /// What follows the word.
    pub args: Args,
    /// Its documentation.
    pub doc: Doc,
    /// Allowed in ACP's read-only view. An ACP client chooses its session's servers, so an
    /// action that writes a file or changes which servers run is refused there.
    pub acp: bool,
}

impl McpAction {
    /// How the unknown-action sentence shows this action, e.g. `/mcp retry <name>`.
    pub fn usage(&self) -> String {
        match self.args {
            Args::Bare(_) => format!("/mcp {}", self.name),
            Args::ServerName(_) => format!("/mcp {} <name>", self.name),
            Args::Flags(_) => format!("/mcp {} {ADD_SYNOPSIS}", self.name),
        }
    }

    /// Whether this action's argument is a server name (completion offers names after it).
    pub fn takes_server_name(&self) -> bool {
        matches!(self.args, Args::ServerName(_))
    }

    /// Whether this action's arguments are `add`'s flags (completion offers flags after it).
    pub fn takes_add_args(&self) -> bool {
        matches!(self.args, Args::Flags(_))
    }
}

/// Which command a [`SlashCommand`] entry is; the parser turns it into a `Command` by one
/// exhaustive `match`, so a new entry cannot be forgotten there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slash {
    /// `/mcp …`: the actions of [`ACTIONS`].
    Mcp,
    /// `/tools [shape]`.
    Tools,
    /// `/call <tool> [json]`.
    Call,
    /// `/resources`.
    Resources,
    /// `/read <server> <uri>`.
    Read,
    /// `/prompts`.
    Prompts,
    /// `/prompt <name> [json]`.
    Prompt,
    /// `/help`.
    Help,
    /// `/quit`.
    Quit,
}

/// What completion offers for the words after a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completes {
    /// The `/mcp` actions, then what each action takes.
    McpActions,
    /// A tool name (first word).
    Tool,
    /// A prompt name (first word).
    Prompt,
    /// A server name, then one of the URIs that server lists.
    ServerThenUri,
    /// Nothing.
    Nothing,
}

/// One session command.
#[derive(Debug, Clone)]
pub struct SlashCommand {
    /// The word, with its slash.
    pub word: &'static str,
    /// Other words for it; accepted, never offered.
    pub aliases: &'static [&'static str],
    /// Which command it is.
    pub slash: Slash,
    /// Its `/help` line; `None` for `/mcp`, whose lines are the actions'.
    pub help: Option<&'static str>,
    /// What completion offers after it.
    pub completes: Completes,
}

/// Every session command, in the order completion and `/help` list them.
pub const COMMANDS: &[SlashCommand] = &[
    SlashCommand {
        word: "/mcp",
        aliases: &[],
        slash: Slash::Mcp,
        help: None,
        completes: Completes::McpActions,
    },
    SlashCommand {
        word: "/tools",
        aliases: &[],
        slash: Slash::Tools,
        help: Some(
            "/tools [tokens] [shape]  Show the converted tool surface, or what each tool costs in tokens",
        ),
        completes: Completes::Nothing,
    },
    SlashCommand {
        word: "/call",
        aliases: &[],
        slash: Slash::Call,
        help: Some("/call <tool> [json]  Call one tool with JSON object arguments"),
        completes: Completes::Tool,
    },
    SlashCommand {
        word: "/resources",
        aliases: &[],
        slash: Slash::Resources,
        help: Some("/resources  Show the servers' resources and resource templates"),
        completes: Completes::Nothing,
    },
    SlashCommand {
        word: "/read",
        aliases: &[],
        slash: Slash::Read,
        help: Some("/read <server> <uri>  Read one resource"),
        completes: Completes::ServerThenUri,
    },
    SlashCommand {
        word: "/prompts",
        aliases: &[],
        slash: Slash::Prompts,
        help: Some("/prompts  Show the servers' prompts"),
        completes: Completes::Nothing,
    },
    SlashCommand {
        word: "/prompt",
        aliases: &[],
        slash: Slash::Prompt,
        help: Some("/prompt <name> [json]  Get one prompt with JSON string arguments"),
        completes: Completes::Prompt,
    },
    SlashCommand {
        word: "/help",
        aliases: &[],
        slash: Slash::Help,
        help: Some("/help  Show this help"),
        completes: Completes::Nothing,
    },
    SlashCommand {
        word: "/quit",
        aliases: &["/exit"],
        slash: Slash::Quit,
        help: Some("/quit  Leave the session"),
        completes: Completes::Nothing,
    },
];

/// The command `word` names, by word or alias (exact: commands are lower-case, as typed).
pub fn find_command(word: &str) -> Option<&'static SlashCommand> {
    COMMANDS.iter().find(|c| c.word == word || c.aliases.contains(&word))
}

/// The action a bare `/mcp` runs.
pub const DEFAULT: &str = "list";

/// `add`'s arguments as the unknown-action sentence shows them.
const ADD_SYNOPSIS: &str = "--transport <stdio|sse|http> <name> <target>";

/// Every action, in the order `/help` and the unknown-action sentence list them.
pub const ACTIONS: &[McpAction] = &[
    McpAction {
        name: "list",
        aliases: &[],
        args: Args::Bare(McpCommand::List),
        doc: Doc::Line("/mcp  Show current MCP services and status"),
        acp: true,
    },
    McpAction { name: "help", aliases: &[], args: Args::Bare(McpCommand::Help), doc: Doc::Hidden, acp: true },
    McpAction {
        name: "add",
        aliases: &[],
        args: Args::Flags(McpCommand::Add),
        doc: Doc::Line("/mcp add --transport <stdio|sse|http> <name> <target>  Add a global MCP service"),
        acp: false,
    },
    McpAction {
        name: "enable",
        aliases: &[],
        args: Args::ServerName(McpCommand::Enable),
        doc: Doc::Line("/mcp enable|disable <name>  Toggle workspace MCP enablement"),
        acp: false,
    },
    McpAction {
        name: "disable",
        aliases: &[],
        args: Args::ServerName(McpCommand::Disable),
        doc: Doc::SharedLine,
        acp: false,
    },
    McpAction {
        name: "pause",
        aliases: &[],
        args: Args::ServerName(McpCommand::Pause),
        doc: Doc::Line("/mcp pause|resume <name>  Toggle current session MCP activation"),
        acp: false,
    },
    McpAction {
        name: "resume",
        aliases: &[],
        args: Args::ServerName(McpCommand::Resume),
        doc: Doc::SharedLine,
        acp: false,
    },
    McpAction {
        name: "retry",
        aliases: &[],
        args: Args::ServerName(McpCommand::Retry),
        doc: Doc::Line("/mcp retry <name>  Reconnect an enabled MCP service"),
        acp: false,
    },
    McpAction {
        name: "login",
        aliases: &[],
        args: Args::ServerName(McpCommand::Login),
        doc: Doc::Line("/mcp login|logout <name>  Sign in to (or out of) a remote MCP service"),
        acp: false,
    },
    McpAction {
        name: "logout",
        aliases: &[],
        args: Args::ServerName(McpCommand::Logout),
        doc: Doc::SharedLine,
        acp: false,
    },
    McpAction {
        name: "remove",
        aliases: &["delete"],
        args: Args::ServerName(McpCommand::Remove),
        doc: Doc::Line("/mcp remove <name>  Delete a global MCP service"),
        acp: false,
    },
];

/// The action `word` (already lower-cased) names, by name or alias.
pub fn find(word: &str) -> Option<&'static McpAction> {
    ACTIONS.iter().find(|a| a.name == word || a.aliases.contains(&word))
}

/// The actions offered to the user (completion, the unknown-action sentence), in table order.
pub fn offered() -> impl Iterator<Item = &'static McpAction> {
    ACTIONS.iter().filter(|a| a.doc != Doc::Hidden)
}

/// The `/help` lines of the actions `include` accepts, in table order.
pub fn help_lines(include: impl Fn(&McpAction) -> bool) -> impl Iterator<Item = &'static str> {
    ACTIONS.iter().filter(move |a| include(a)).filter_map(|a| match a.doc {
        Doc::Line(line) => Some(line),
        Doc::SharedLine | Doc::Hidden => None,
    })
}

/// What the unknown-action message offers instead: `Use /mcp, /mcp list, …, or /mcp remove
/// <name>.` A bare `/mcp` comes first because it is the shortest way to the default action.
pub fn usage_sentence() -> String {
    let forms: Vec<String> =
        std::iter::once("/mcp".to_string()).chain(offered().map(McpAction::usage)).collect();
    match forms.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("Use {}, or {last}.", rest.join(", ")),
        Some((only, _)) => format!("Use {only}."),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_maps_back_to_itself() {
        for action in ACTIONS {
            assert_eq!(action.args.sample().action().map(|a| a.name), Some(action.name));
        }
        // One command of every variant, so a variant without an entry fails here.
        let every = [
            McpCommand::List,
            McpCommand::Help,
            McpCommand::Add(vec![]),
            McpCommand::Remove(String::new()),
            McpCommand::Enable(String::new()),
            McpCommand::Disable(String::new()),
            McpCommand::Pause(String::new()),
            McpCommand::Resume(String::new()),
            McpCommand::Retry(String::new()),
            McpCommand::Login(String::new()),
            McpCommand::Logout(String::new()),
        ];
        assert!(every.iter().all(|c| c.action().is_some()));
    }

    #[test]
    fn words_are_unique_and_lower_case() {
        let mut words: Vec<&str> =
            ACTIONS.iter().flat_map(|a| a.aliases.iter().copied().chain([a.name])).collect();
        assert!(words.iter().all(|w| *w == w.to_lowercase()));
        let count = words.len();
        words.sort_unstable();
        words.dedup();
        assert_eq!(words.len(), count);
        assert!(find(DEFAULT).is_some());
    }

    #[test]
    fn command_words_are_unique_and_every_kind_has_one_entry() {
        let mut words: Vec<&str> =
            COMMANDS.iter().flat_map(|c| c.aliases.iter().copied().chain([c.word])).collect();
        let count = words.len();
        words.sort_unstable();
        words.dedup();
        assert_eq!(words.len(), count);
        for slash in [
            Slash::Mcp,
            Slash::Tools,
            Slash::Call,
            Slash::Resources,
            Slash::Read,
            Slash::Prompts,
            Slash::Prompt,
            Slash::Help,
            Slash::Quit,
        ] {
            assert_eq!(COMMANDS.iter().filter(|c| c.slash == slash).count(), 1, "{slash:?}");
        }
        assert_eq!(find_command("/exit").map(|c| c.slash), Some(Slash::Quit));
    }

    #[test]
    fn lookups() {
        assert_eq!(find("delete").map(|a| a.name), Some("remove"));
        assert_eq!(find("frobnicate").map(|a| a.name), None);
        let offered: Vec<&str> = offered().map(|a| a.name).collect();
        assert_eq!(
            offered,
            ["list", "add", "enable", "disable", "pause", "resume", "retry", "login", "logout", "remove"]
        );
    }

    #[test]
    fn only_listing_is_read_only() {
        let read_only: Vec<&str> = ACTIONS.iter().filter(|a| a.acp).map(|a| a.name).collect();
        assert_eq!(read_only, ["list", "help"]);
        assert_eq!(help_lines(|a| a.acp).collect::<Vec<_>>(), ["/mcp  Show current MCP services and status"]);
    }
}
