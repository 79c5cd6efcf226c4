//! The session's line language, parsed without touching anything: `/mcp …`, `/tools`,
//! `/call`, `/resources`, `/read`, `/prompts`, `/prompt`, `/help`, `/quit`. Pure so it can be unit-tested and fuzzed; the session and the
//! ACP agent decide what each command does.
//!
//! The messages are the original tool's, word for word (`Usage: /mcp <action> <name>`,
//! `Unknown /mcp action: …`). Arguments after `/mcp <action>` are split shell-style (`shlex`),
//! so a name or an `--env` value may contain spaces when quoted; `/call` keeps its JSON text
//! as typed, because JSON's own quotes must survive. Which `/mcp` actions exist, and what
//! each one takes, is the action table's ([`super::actions`]), and so are the commands
//! themselves (their words, `/help` lines and completion); this file only reads words.

use std::fmt;

use super::actions::{self, Args, McpCommand, Slash};

/// One parsed line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// A blank line: nothing to do.
    Empty,
    /// `/mcp …`.
    Mcp(McpCommand),
    /// `/tools [shape]`: the tool surface, in the session's shape unless one is named.
    Tools {
        /// A tool-shape plugin name, e.g. `anthropic`.
        shape: Option<String>,
    },
    /// `/tools tokens [shape]`: what each server's and tool's definition costs in tokens.
    ToolTokens {
        /// A tool-shape plugin name, as for [`Command::Tools`].
        shape: Option<String>,
    },
    /// `/call <tool> [json]`.
    Call {
        /// The final tool name.
        tool: String,
        /// The arguments exactly as typed; blank means `{}` (the executor decides).
        arguments: String,
    },
    /// `/resources`: every connected server's resources and resource templates.
    Resources,
    /// `/read <server> <uri>`.
    Read {
        /// The server to read from.
        server: String,
        /// The resource's URI.
        uri: String,
    },
    /// `/prompts`: every connected server's prompts.
    Prompts,
    /// `/prompt <name> [json]`.
    Prompt {
        /// The prompt's name.
        name: String,
        /// The arguments exactly as typed; blank means none.
        arguments: String,
    },
    /// `/help`.
    Help,
    /// `/quit` or `/exit`.
    Quit,
}

/// Why a line is not a command; `Display` is the message shown to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// A `/mcp` action that needs exactly one name got none or several.
    McpUsage {
        /// The action as typed (lower-cased).
        action: String,
    },
    /// `/mcp <a>` with an action we do not know.
    UnknownMcpAction(String),
    /// Unbalanced quotes after `/mcp <action>`.
    Quoting {
        /// The action as typed (lower-cased).
        action: String,
    },
    /// `/call` without a tool name.
    CallUsage,
    /// `/tools` with more than one word after it.
    ToolsUsage,
    /// `/read` without exactly a server and a URI.
    ReadUsage,
    /// `/prompt` without a prompt name.
    PromptUsage,
    /// A slash command we do not know.
    UnknownCommand(String),
    /// Text that is not a slash command at all.
    NotACommand,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::McpUsage { action } => write!(f, "Usage: /mcp {action} <name>"),
            Self::UnknownMcpAction(action) => {
                write!(f, "Unknown /mcp action: {action}. {}", actions::usage_sentence())
            }
            Self::Quoting { action } => {
                write!(f, "Unbalanced quotes in /mcp {action}: close every ' and \" you open")
            }
            Self::CallUsage => f.write_str("Usage: /call <tool> [json]"),
            Self::ToolsUsage => f.write_str("Usage: /tools [tokens] [shape]"),
            Self::ReadUsage => f.write_str("Usage: /read <server> <uri>"),
            Self::PromptUsage => f.write_str("Usage: /prompt <name> [json]"),
            Self::UnknownCommand(cmd) => write!(f, "Unknown command: {cmd}. Type /help for the commands."),
            Self::NotACommand => f.write_str(
                "toolport runs MCP tools, not a model: type /help for the commands \
                 (for example /tools or /call <tool> [json])",
            ),
        }
    }
}

impl std::error::Error for ParseError {}

/// Parses one line of the session language.
pub fn parse(line: &str) -> Result<Command, ParseError> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(Command::Empty);
    }
    if !line.starts_with('/') {
        return Err(ParseError::NotACommand);
    }
    let (head, rest) = split_word(line);
    let Some(entry) = actions::find_command(head) else {
        return Err(ParseError::UnknownCommand(head.to_string()));
    };
    match entry.slash {
        Slash::Mcp => parse_mcp(rest).map(Command::Mcp),
        Slash::Tools => parse_tools(rest),
        Slash::Call => parse_call(rest),
        Slash::Resources => Ok(Command::Resources),
        Slash::Read => parse_read(rest),
        Slash::Prompts => Ok(Command::Prompts),
        Slash::Prompt => parse_prompt(rest),
        Slash::Help => Ok(Command::Help),
        Slash::Quit => Ok(Command::Quit),
    }
}

/// `/read <server> <uri>`, split shell-style so a quoted server name may hold spaces.
fn parse_read(rest: &str) -> Result<Command, ParseError> {
    match shlex::split(rest).map(<[String; 2]>::try_from) {
        Some(Ok([server, uri])) if !server.trim().is_empty() && !uri.trim().is_empty() => {
            Ok(Command::Read { server: server.trim().to_string(), uri: uri.trim().to_string() })
        }
        _ => Err(ParseError::ReadUsage),
    }
}

/// `/prompt <name> [json]`: the JSON kept as typed, as `/call` keeps it.
fn parse_prompt(rest: &str) -> Result<Command, ParseError> {
    let (name, arguments) = split_word(rest);
    if name.is_empty() {
        return Err(ParseError::PromptUsage);
    }
    Ok(Command::Prompt { name: name.to_string(), arguments: arguments.to_string() })
}

/// Parses what follows `/mcp` (the ACP agent calls this on a prompt's text too): the action
/// word picks a table entry, whose argument shape says how to read the rest.
pub fn parse_mcp(rest: &str) -> Result<McpCommand, ParseError> {
    let (word, rest) = split_word(rest);
    let word = if word.is_empty() { actions::DEFAULT.to_string() } else { word.to_lowercase() };
    let Some(action) = actions::find(&word) else {
        return Err(ParseError::UnknownMcpAction(word));
    };
    let words = || shlex::split(rest).ok_or_else(|| ParseError::Quoting { action: word.clone() });
    match &action.args {
        Args::Bare(command) => Ok(command.clone()),
        Args::Flags(make) => words().map(make),
        Args::ServerName(make) => match <[String; 1]>::try_from(words()?) {
            Ok([name]) if !name.trim().is_empty() => Ok(make(name.trim().to_string())),
            _ => Err(ParseError::McpUsage { action: word.clone() }),
        },
    }
}

fn parse_tools(rest: &str) -> Result<Command, ParseError> {
    let mut words = rest.split_whitespace().peekable();
    let tokens = words.next_if_eq(&"tokens").is_some();
    let shape = words.next().map(str::to_string);
    if words.next().is_some() {
        return Err(ParseError::ToolsUsage);
    }
    Ok(if tokens { Command::ToolTokens { shape } } else { Command::Tools { shape } })
}

fn parse_call(rest: &str) -> Result<Command, ParseError> {
    let (tool, arguments) = split_word(rest);
    if tool.is_empty() {
        return Err(ParseError::CallUsage);
    }
    Ok(Command::Call { tool: tool.to_string(), arguments: arguments.to_string() })
}

/// The first whitespace-delimited word and the trimmed rest.
fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    match s.find(char::is_whitespace) {
        Some(i) => (&s[..i], s[i..].trim()),
        None => (s, ""),
    }
}

/// The `/mcp` lines of `/help`, exactly as the original `/mcp` prints them.
pub fn mcp_help() -> impl Iterator<Item = &'static str> {
    actions::help_lines(|_| true)
}

/// The full `/help` text, one command per line.
pub fn help_text() -> String {
    let mut out = String::new();
    for line in mcp_help().chain(actions::COMMANDS.iter().filter_map(|c| c.help)) {
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mcp(line: &str) -> Result<McpCommand, ParseError> {
        match parse(line)? {
            Command::Mcp(c) => Ok(c),
            other => panic!("not an /mcp command: {other:?}"),
        }
    }

    #[test]
    fn blank_and_plain_mcp() {
        assert_eq!(parse("   "), Ok(Command::Empty));
        assert_eq!(mcp("/mcp"), Ok(McpCommand::List));
        assert_eq!(mcp("  /mcp   list "), Ok(McpCommand::List));
        assert_eq!(mcp("/mcp LIST"), Ok(McpCommand::List));
        assert_eq!(mcp("/mcp help"), Ok(McpCommand::Help));
    }

    #[test]
    fn named_actions_take_exactly_one_name() {
        assert_eq!(mcp("/mcp pause files"), Ok(McpCommand::Pause("files".into())));
        assert_eq!(mcp("/mcp Resume files"), Ok(McpCommand::Resume("files".into())));
        assert_eq!(mcp("/mcp retry files"), Ok(McpCommand::Retry("files".into())));
        assert_eq!(mcp("/mcp enable files"), Ok(McpCommand::Enable("files".into())));
        assert_eq!(mcp("/mcp disable files"), Ok(McpCommand::Disable("files".into())));
        assert_eq!(mcp("/mcp remove files"), Ok(McpCommand::Remove("files".into())));
        assert_eq!(mcp("/mcp delete files"), Ok(McpCommand::Remove("files".into())));
        assert_eq!(mcp("/mcp pause 'my server'"), Ok(McpCommand::Pause("my server".into())));
        // Names are exact: case is kept.
        assert_eq!(mcp("/mcp pause Files"), Ok(McpCommand::Pause("Files".into())));
    }

    #[test]
    fn usage_message_names_the_action() {
        let err = mcp("/mcp pause").unwrap_err();
        assert_eq!(err.to_string(), "Usage: /mcp pause <name>");
        assert_eq!(mcp("/mcp retry a b").unwrap_err().to_string(), "Usage: /mcp retry <name>");
        assert_eq!(mcp("/mcp remove ''").unwrap_err().to_string(), "Usage: /mcp remove <name>");
    }

    #[test]
    fn unknown_action_lists_the_language() {
        let err = mcp("/mcp Frobnicate x").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Unknown /mcp action: frobnicate. Use /mcp, /mcp list, /mcp add --transport \
             <stdio|sse|http> <name> <target>, /mcp enable <name>, /mcp disable <name>, \
             /mcp pause <name>, /mcp resume <name>, /mcp retry <name>, /mcp login <name>, \
             /mcp logout <name>, or /mcp remove <name>."
        );
    }

    #[test]
    fn add_is_split_shell_style() {
        assert_eq!(
            mcp(r#"/mcp add --transport stdio files --env "GREETING=hello world" -- npx -y 'a b'"#),
            Ok(McpCommand::Add(
                ["--transport", "stdio", "files", "--env", "GREETING=hello world", "--", "npx", "-y", "a b"]
                    .map(String::from)
                    .to_vec()
            ))
        );
        assert_eq!(mcp("/mcp add"), Ok(McpCommand::Add(vec![])));
        assert_eq!(
            mcp("/mcp add --header 'Authorization: Bearer x"),
            Err(ParseError::Quoting { action: "add".into() })
        );
    }

    #[test]
    fn call_keeps_json_verbatim() {
        assert_eq!(
            parse(r#"/call echo {"text": "a  b"}"#),
            Ok(Command::Call { tool: "echo".into(), arguments: r#"{"text": "a  b"}"#.into() })
        );
        assert_eq!(parse("/call add"), Ok(Command::Call { tool: "add".into(), arguments: String::new() }));
        assert_eq!(parse("/call").unwrap_err().to_string(), "Usage: /call <tool> [json]");
    }

    #[test]
    fn other_commands() {
        assert_eq!(parse("/tools"), Ok(Command::Tools { shape: None }));
        assert_eq!(parse("/tools anthropic"), Ok(Command::Tools { shape: Some("anthropic".into()) }));
        assert_eq!(parse("/tools tokens"), Ok(Command::ToolTokens { shape: None }));
        assert_eq!(parse("/tools tokens gemini"), Ok(Command::ToolTokens { shape: Some("gemini".into()) }));
        assert_eq!(parse("/tools tokens gemini x"), Err(ParseError::ToolsUsage));
        assert_eq!(parse("/tools a b"), Err(ParseError::ToolsUsage));
        assert_eq!(parse("/resources"), Ok(Command::Resources));
        assert_eq!(parse("/prompts"), Ok(Command::Prompts));
        assert_eq!(
            parse("/read 'my server' demo://a/b"),
            Ok(Command::Read { server: "my server".into(), uri: "demo://a/b".into() })
        );
        assert_eq!(parse("/read a").unwrap_err().to_string(), "Usage: /read <server> <uri>");
        assert_eq!(
            parse(r#"/prompt args-prompt {"city": "New  York"}"#),
            Ok(Command::Prompt { name: "args-prompt".into(), arguments: r#"{"city": "New  York"}"#.into() })
        );
        assert_eq!(parse("/prompt").unwrap_err().to_string(), "Usage: /prompt <name> [json]");
        assert_eq!(parse("/help"), Ok(Command::Help));
        assert_eq!(parse("/quit"), Ok(Command::Quit));
        assert_eq!(parse("/exit"), Ok(Command::Quit));
        assert_eq!(
            parse("/nope").unwrap_err().to_string(),
            "Unknown command: /nope. Type /help for the commands."
        );
        assert_eq!(parse("hello there"), Err(ParseError::NotACommand));
    }

    #[test]
    fn help_has_the_reference_mcp_lines() {
        let help = help_text();
        assert!(help.starts_with("/mcp  Show current MCP services and status\n"));
        assert!(help.contains("/mcp retry <name>  Reconnect an enabled MCP service\n"));
        assert!(help.ends_with("/quit  Leave the session\n"));
    }

    /// Every short string over an alphabet of awkward characters, behind each prefix: no
    /// input may panic the parser or the completer (a cheap stand-in until it is fuzzed).
    #[test]
    fn no_short_input_panics() {
        const ALPHABET: [&str; 12] = ["/", "m", "c", "p", " ", "'", "\"", "\\", "\u{3000}", "é", "a", "\t"];
        let known = crate::session::complete::Known::default();
        let mut words = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> =
                words.iter().flat_map(|w| ALPHABET.iter().map(move |c| format!("{w}{c}"))).collect();
            words.extend(longer);
            words.dedup();
        }
        for prefix in ["", "/mcp ", "/mcp add ", "/mcp pause ", "/call ", "/read ", "/read a ", "/prompt "] {
            for w in &words {
                let line = format!("{prefix}{w}");
                let _ = parse(&line);
                let _ = known.complete(&line);
            }
        }
    }

    #[test]
    fn never_panics_on_odd_input() {
        for line in ["/", "/mcp \u{0}", "/mcp add \"", "/call \u{feff}", "/mcp pause \\", "/mcp\tpause\tx"] {
            let _ = parse(line);
        }
        assert_eq!(mcp("/mcp\tpause\tx"), Ok(McpCommand::Pause("x".into())));
    }
}
