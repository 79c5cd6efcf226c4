//! Tab completion for the session line: slash commands, `/mcp` actions, server names after a
//! named action, `add`'s flags and transport values, tool names after `/call`, prompt names
//! after `/prompt`, and a server then its URIs after `/read`. Pure: the
//! line editor asks with what is typed up to the cursor and the names it knows right now.
//! Which words are commands and actions, and what each one takes, comes from the table.

use super::actions::{self, COMMANDS, Completes, McpAction};
use crate::config::TransportKind;

/// The flags of `/mcp add`.
pub const ADD_FLAGS: &[&str] = &[
    "--transport",
    "--env",
    "--header",
    "--cwd",
    "--include",
    "--exclude",
    "--roots",
    "--protocol-version",
    "--connect-timeout",
    "--list-timeout",
    "--call-timeout",
    "--sandbox",
    "--no-sandbox",
    "--force",
];

/// What completion can offer besides the fixed words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Known {
    /// Server names: defined, and enabled-but-missing ones.
    pub servers: Vec<String>,
    /// Final tool names in the registry.
    pub tools: Vec<String>,
    /// Transport plugin names from the store.
    pub transport_plugins: Vec<String>,
    /// Prompt names in the catalog.
    pub prompts: Vec<String>,
    /// `(server, uri)` of every listed resource.
    pub resources: Vec<(String, String)>,
}

impl Known {
    /// Completes `line`, the text before the cursor, from these names: what a line editor
    /// offers on Tab (where the word starts, and its candidates).
    pub fn complete(&self, line: &str) -> (usize, Vec<String>) {
        complete(line, self)
    }
}

/// Where the word being completed starts (byte offset into `line`) and its candidates, sorted
/// as offered. `line` is the text before the cursor. Reached through [`Known::complete`].
fn complete(line: &str, known: &Known) -> (usize, Vec<String>) {
    let start =
        line.char_indices().rev().find(|(_, c)| c.is_whitespace()).map_or(0, |(i, c)| i + c.len_utf8());
    let partial = &line[start..];
    let before: Vec<&str> = line[..start].split_whitespace().collect();
    let matching = |words: &mut dyn Iterator<Item = &str>| -> Vec<String> {
        words.filter(|w| w.starts_with(partial)).map(str::to_string).collect()
    };
    // An action word as typed, aliases included (`/mcp delete f` completes server names).
    let action = |word: &str| actions::find(&word.to_lowercase());
    let completes = |word: &str| actions::find_command(word).map(|c| c.completes);
    let candidates = match before.as_slice() {
        [] => matching(&mut COMMANDS.iter().map(|c| c.word)),
        [command] if completes(command) == Some(Completes::Tool) => {
            matching(&mut known.tools.iter().map(String::as_str))
        }
        [command] if completes(command) == Some(Completes::Prompt) => {
            matching(&mut known.prompts.iter().map(String::as_str))
        }
        [command] if completes(command) == Some(Completes::ServerThenUri) => {
            let mut servers: Vec<&str> = known.resources.iter().map(|(s, _)| s.as_str()).collect();
            servers.dedup();
            matching(&mut servers.into_iter())
        }
        [command, server] if completes(command) == Some(Completes::ServerThenUri) => {
            matching(&mut known.resources.iter().filter(|(s, _)| s == server).map(|(_, uri)| uri.as_str()))
        }
        ["/mcp"] => {
            // Alphabetical, as shells offer words; the table's order is the help text's.
            let mut words = matching(&mut actions::offered().map(|a| a.name));
            words.sort_unstable();
            words
        }
        ["/mcp", word] if action(word).is_some_and(McpAction::takes_server_name) => {
            matching(&mut known.servers.iter().map(String::as_str))
        }
        ["/mcp", word, .., last]
            if action(word).is_some_and(McpAction::takes_add_args) && *last == "--transport" =>
        {
            let builtins = TransportKind::add_words();
            let plugins = known.transport_plugins.iter();
            matching(&mut builtins.iter().chain(plugins).map(String::as_str))
        }
        ["/mcp", word, ..]
            if action(word).is_some_and(McpAction::takes_add_args) && partial.starts_with('-') =>
        {
            matching(&mut ADD_FLAGS.iter().copied())
        }
        _ => Vec::new(),
    };
    (start, candidates)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Known {
        Known {
            servers: vec!["files".into(), "fetch".into(), "git".into()],
            tools: vec!["echo".into(), "add".into()],
            transport_plugins: vec!["tcp".into()],
            prompts: vec!["args-prompt".into(), "simple-prompt".into()],
            resources: vec![("files".into(), "demo://a".into()), ("files".into(), "demo://b".into())],
        }
    }

    #[test]
    fn prompts_and_resources() {
        assert_eq!(complete("/prompt a", &known()), (8, vec!["args-prompt".to_string()]));
        assert_eq!(complete("/read f", &known()), (6, vec!["files".to_string()]));
        assert_eq!(complete("/read files demo://b", &known()).1, ["demo://b"]);
        assert_eq!(complete("/re", &known()).1, ["/resources", "/read"]);
    }

    #[test]
    fn commands_and_actions() {
        assert_eq!(complete("/m", &known()), (0, vec!["/mcp".to_string()]));
        assert_eq!(
            complete("/mcp re", &known()),
            (5, vec!["remove".to_string(), "resume".into(), "retry".into()])
        );
        assert_eq!(complete("/mcp ", &known()).1.len(), actions::offered().count());
    }

    #[test]
    fn server_names_after_named_actions() {
        assert_eq!(complete("/mcp pause f", &known()), (11, vec!["files".to_string(), "fetch".into()]));
        assert_eq!(complete("/mcp Retry g", &known()), (11, vec!["git".to_string()]));
        assert!(complete("/mcp pause files x", &known()).1.is_empty());
        assert!(complete("/mcp list f", &known()).1.is_empty());
    }

    #[test]
    fn add_flags_and_transports() {
        assert_eq!(
            complete("/mcp add --transport s", &known()),
            (21, vec!["stdio".to_string(), "sse".into(), "streamable_http".into()])
        );
        assert_eq!(complete("/mcp add --transport t", &known()).1, ["tcp"]);
        assert_eq!(complete("/mcp add --t", &known()).1, ["--transport"]);
        assert_eq!(complete("/mcp add --transport stdio x --e", &known()).1, ["--env", "--exclude"]);
        assert_eq!(
            complete("/mcp add --c", &known()).1,
            ["--cwd", "--connect-timeout", "--call-timeout"],
            "the timeout flags of `mcp add` too"
        );
        assert_eq!(complete("/mcp add --i", &known()).1, ["--include"]);
        assert_eq!(complete("/mcp add --s", &known()).1, ["--sandbox"]);
    }

    #[test]
    fn wide_whitespace_is_a_word_boundary() {
        // U+3000 is whitespace three bytes long: the word starts after all of it.
        assert_eq!(complete("/mcp\u{3000}pa", &known()), (7, vec!["pause".to_string()]));
        assert!(complete("\u{3000}", &known()).1.len() == COMMANDS.len());
    }

    #[test]
    fn tools_after_call() {
        assert_eq!(complete("/call e", &known()), (6, vec!["echo".to_string()]));
        assert!(complete("/call echo {", &known()).1.is_empty());
    }
}
