//! The host's tool-name rules, the original tool's four checks: blank, reserved, duplicate
//! within one server, already claimed by another. Pure: no I/O, no async, so every rule and
//! message is pinned by a unit test.
//!
//! They run on the final names (after any name policy), in definition order, and they are
//! never bypassed: a plugin can rename tools, but two servers can never share a name. Names
//! are compared by [`name_key`] (NFKC, then case folding), so `ｂａｓｈ` is `bash` and a ligature
//! or a full-width letter cannot slip a second copy of a claimed name past the rules.

use std::collections::{HashMap, HashSet};

use unicode_normalization::UnicodeNormalization;

use crate::fix_command::{NAMESPACE_FIX, exclude_fix};
use crate::status::{NAME_CONFLICT, RESERVED_CONFLICT};
use crate::text::{escape_line, is_hidden_or_control};

/// Longest final tool name, in characters. The MCP specification (2025-11-25, "Tool names")
/// says a name SHOULD be 1 to 128 characters; model APIs accept less still (OpenAI and
/// Anthropic: 64), and a name is printed in every view, so a policy's 5,000,002-character
/// rename must stop here rather than be held and shown whole.
pub const MAX_TOOL_NAME_CHARS: usize = 128;

/// Characters of a bad name quoted in its message: enough to recognise it, never a flood.
const SHOWN_NAME_CHARS: usize = 64;

/// The rule a final name breaks, if any: blank, longer than [`MAX_TOOL_NAME_CHARS`], or holding
/// a control or format character (Cc, Cf: ESC, CR/LF, BEL, zero-width, bidi overrides) or a
/// line/paragraph separator, or whitespace at either end. Such a name forges lines and escape
/// sequences in every view, or looks like another name while being a different one. Every name
/// on the surface passes, so a caller's name is matched exactly: one with a space around it is
/// no tool's, never the tool without it.
pub fn name_fault(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        return Some("blank".to_string());
    }
    let count = name.chars().count();
    if count > MAX_TOOL_NAME_CHARS {
        return Some(format!("{count} characters, over the limit of {MAX_TOOL_NAME_CHARS}"));
    }
    if let Some(c) = name.chars().find(|c| is_hidden_or_control(*c)) {
        return Some(format!("control or format character U+{:04X}", u32::from(c)));
    }
    (name.trim() != name).then(|| "whitespace at either end".to_string())
}

/// A bad name as its message quotes it: escaped, and clipped to [`SHOWN_NAME_CHARS`].
pub fn show_name(name: &str) -> String {
    let mut shown: String = name.chars().take(SHOWN_NAME_CHARS).collect();
    if name.chars().nth(SHOWN_NAME_CHARS).is_some() {
        shown.push('…');
    }
    escape_line(&shown).into_owned()
}

/// The form names are compared in: NFKC, lower-cased, NFKC again (lower-casing can leave a
/// string that is not normalised, e.g. `İ`), an approximation of Unicode's NFKC_Casefold.
pub fn name_key(name: &str) -> String {
    let folded = name.trim().nfkc().collect::<String>().to_lowercase();
    folded.nfkc().collect()
}

/// The names claimed so far in one pass over the servers, in definition order, and the
/// reserved ones. A server that passes claims its names; one that fails claims nothing (none of
/// its tools reach the registry), so the first-defined server keeps a contested name whichever
/// finished connecting first.
pub struct Claims {
    /// Reserved names by [`name_key`].
    reserved: HashSet<String>,
    /// [`name_key`] → the server that claimed it.
    claimed: HashMap<String, String>,
}

impl Claims {
    /// A pass with nothing claimed yet; `reserved` compare by [`name_key`].
    pub fn new(reserved: &[String]) -> Self {
        Self { reserved: reserved.iter().map(|n| name_key(n)).collect(), claimed: HashMap::new() }
    }

    /// Checks one server's final names: each valid ([`name_fault`]), then against the reserved
    /// ones, each other and the names claimed before it. First failure wins, tool by tool;
    /// comparisons use [`name_key`]. A reserved name, or a name another server claimed, is
    /// reported with every other such name the server lists and the fixes ([`reserved_message`],
    /// [`clash_message`]), so one command is enough. `tools` are `(final, own)` name pairs.
    pub fn admit<'a>(
        &mut self,
        server: &ServerFixes<'_>,
        tools: impl IntoIterator<Item = (&'a str, &'a str)> + Clone,
    ) -> Result<(), String> {
        let name = server.name;
        let mut own: HashSet<String> = HashSet::new();
        for (tool, _) in tools.clone() {
            if tool.trim().is_empty() {
                return Err(format!("MCP server {name} returned a tool without a name"));
            }
            if let Some(rule) = name_fault(tool) {
                return Err(format!(
                    "MCP server {name} returned an invalid tool name: {} ({rule})",
                    show_name(tool)
                ));
            }
            let key = name_key(tool);
            if self.reserved.contains(&key) {
                let reserved = self.among(tools.clone(), |key| self.reserved.contains(key));
                return Err(reserved_message(server, &reserved));
            }
            if !own.insert(key.clone()) {
                return Err(format!("MCP server {name} returned duplicate tool: {tool}"));
            }
            if let Some(owner) = self.claimed.get(&key) {
                let clashes = self.among(tools.clone(), |key| self.claimed.contains_key(key));
                return Err(clash_message(server, tool, owner, &clashes));
            }
        }
        for (tool, _) in tools {
            self.claimed.insert(name_key(tool), name.to_string());
        }
        Ok(())
    }

    /// The valid names among `tools` whose key `hit` picks, in list order, each once.
    fn among<'a>(
        &self,
        tools: impl IntoIterator<Item = (&'a str, &'a str)>,
        hit: impl Fn(&String) -> bool,
    ) -> Vec<(&'a str, &'a str)> {
        let mut seen = HashSet::new();
        tools
            .into_iter()
            .filter(|(tool, _)| name_fault(tool).is_none())
            .filter(|(tool, _)| {
                let key = name_key(tool);
                hit(&key) && seen.insert(key)
            })
            .collect()
    }
}

/// What a name report needs to print fixes that run as printed: the server's name, the
/// `tools.exclude` it already has (the fix's values replace the list, so they are repeated),
/// whether the namespace policy is a fix (only while the workspace has no name policy: over
/// another, it would not be the one change the message says it is), and whether toolport's
/// commands reach the definition at all (an ACP client's own servers are the client's).
#[derive(Debug, Clone, Copy)]
pub struct ServerFixes<'a> {
    /// The server, as its definition names it.
    pub name: &'a str,
    /// Its `tools.exclude` globs as written.
    pub excluded: &'a [String],
    /// Whether to offer `toolport workspace set namePolicy namespace`.
    pub namespace: bool,
    /// Whether the server is the store's and the settings the workspace file's, so that
    /// `toolport mcp set` and `toolport workspace set` change them; without, no fix is printed
    /// (the original tool's sentence alone).
    pub commands: bool,
}

/// `MCP tool name conflicts with built-in tool: <tools>` (the original tool's sentence, every
/// reserved name of the server at once), then the fixes. `tools` are `(final, own)` pairs.
pub fn reserved_message(server: &ServerFixes<'_>, tools: &[(&str, &str)]) -> String {
    let listed: Vec<&str> = tools.iter().map(|(name, _)| *name).collect();
    match fixes(server, tools) {
        Some(fixes) => format!("{RESERVED_CONFLICT}{}. {fixes}", listed.join(", ")),
        None => format!("{RESERVED_CONFLICT}{}", listed.join(", ")),
    }
}

/// `MCP tool name conflict: <tool> already provided by <owner>` (the original tool's
/// sentence), then the fixes for the server that came later, which lost: every one of its
/// tools another server claimed, left out at once, or the namespace policy.
pub fn clash_message(server: &ServerFixes<'_>, tool: &str, owner: &str, clashes: &[(&str, &str)]) -> String {
    match fixes(server, clashes) {
        Some(fixes) => format!("{NAME_CONFLICT}{tool} already provided by {owner}. {fixes}"),
        None => format!("{NAME_CONFLICT}{tool} already provided by {owner}"),
    }
}

/// `Fix: leave it out (toolport mcp set …), or prefix every tool with its server's name
/// (toolport workspace set namePolicy namespace)`; the second only when it is one; none when
/// the commands would not reach the definition.
fn fixes(server: &ServerFixes<'_>, tools: &[(&str, &str)]) -> Option<String> {
    if !server.commands {
        return None;
    }
    let own: Vec<&str> = tools.iter().map(|(_, own)| *own).collect();
    let them = if tools.len() == 1 { "it" } else { "them" };
    let exclude = exclude_fix(server.name, server.excluded, &own);
    Some(if server.namespace {
        format!(
            "Fix: leave {them} out ({exclude}), or prefix every tool with its server's name ({NAMESPACE_FIX})"
        )
    } else {
        format!("Fix: leave {them} out ({exclude})")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One server's name and its final tool names.
    type ServerNames<'a> = (&'a str, &'a [&'a str]);

    fn server<'a>(name: &'a str, tools: &'a [&'a str]) -> ServerNames<'a> {
        (name, tools)
    }

    /// Every server through one pass, in order, as the pipeline runs them.
    fn check_all(servers: &[ServerNames<'_>], reserved: &[String]) -> Vec<Result<(), String>> {
        let mut claims = Claims::new(reserved);
        servers
            .iter()
            .map(|(name, tools)| claims.admit(&fixes(name), tools.iter().map(|t| (*t, *t))))
            .collect()
    }

    /// A server without excluded globs in a workspace without a name policy.
    fn fixes(name: &str) -> ServerFixes<'_> {
        ServerFixes { name, excluded: &[], namespace: true, commands: true }
    }

    /// The reserved-name report of `server` listing `tools` under their own names.
    fn reserved_of(server: &str, tools: &[&str]) -> String {
        let pairs: Vec<(&str, &str)> = tools.iter().map(|t| (*t, *t)).collect();
        reserved_message(&fixes(server), &pairs)
    }

    /// The clash report of `server` whose `tool` `owner` had, with the one fix command.
    fn clash_of(server: &str, tool: &str, owner: &str) -> String {
        format!(
            "MCP tool name conflict: {tool} already provided by {owner}. Fix: leave it out (toolport mcp set \
             {server} tools.exclude {tool}), or prefix every tool with its server's name (toolport workspace set \
             namePolicy namespace)"
        )
    }

    fn reserved() -> Vec<String> {
        crate::config::DEFAULT_RESERVED_TOOL_NAMES.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn blank_name() {
        let out = check_all(&[server("a", &["ok", "  "])], &reserved());
        assert_eq!(out, vec![Err("MCP server a returned a tool without a name".to_string())]);
    }

    #[test]
    fn reserved_name_ignores_case() {
        let out = check_all(&[server("a", &["Read_File"])], &reserved());
        assert_eq!(out, vec![Err(reserved_of("a", &["Read_File"]))]);
    }

    #[test]
    fn every_reserved_name_is_named_at_once_with_the_fixes() {
        let out =
            check_all(&[server("files", &["read_file", "list", "WRITE_FILE", "read_file"])], &reserved());
        assert_eq!(
            out,
            vec![Err(
                "MCP tool name conflicts with built-in tool: read_file, WRITE_FILE. Fix: leave them out \
                 (toolport mcp set files tools.exclude read_file WRITE_FILE), or prefix every tool with its \
                 server's name (toolport workspace set namePolicy namespace)"
                    .to_string()
            )]
        );
    }

    #[test]
    fn the_fix_keeps_excluded_globs_uses_own_names_and_every_clash() {
        let mut claims = Claims::new(&reserved());
        let first = ServerFixes { name: "one", excluded: &[], namespace: false, commands: true };
        assert_eq!(claims.admit(&first, [("echo", "echo"), ("add", "add")]), Ok(()));
        let excluded = ["debug_*".to_string()];
        let later = ServerFixes { name: "two", excluded: &excluded, namespace: false, commands: true };
        // A plugin renamed `x.echo` to `echo`: the filter takes the server's own name.
        let out = claims.admit(&later, [("ok", "ok"), ("echo", "x.echo"), ("add", "add*")]);
        assert_eq!(
            out,
            Err("MCP tool name conflict: echo already provided by one. Fix: leave them out (toolport mcp set two \
                 tools.exclude 'debug_*' x.echo 'add[*]')"
                .to_string())
        );
    }

    #[test]
    fn without_commands_that_reach_the_definition_only_the_sentence_is_printed() {
        let mut claims = Claims::new(&reserved());
        let fixes = |name| ServerFixes { name, excluded: &[], namespace: true, commands: false };
        assert_eq!(claims.admit(&fixes("a"), [("echo", "echo")]), Ok(()));
        assert_eq!(
            claims.admit(&fixes("b"), [("echo", "echo")]),
            Err("MCP tool name conflict: echo already provided by a".to_string())
        );
        assert_eq!(
            claims.admit(&fixes("c"), [("bash", "bash")]),
            Err("MCP tool name conflicts with built-in tool: bash".to_string())
        );
    }

    #[test]
    fn duplicate_within_server_ignores_case() {
        let out = check_all(&[server("a", &["echo", "ECHO"])], &reserved());
        assert_eq!(out, vec![Err("MCP server a returned duplicate tool: ECHO".to_string())]);
    }

    #[test]
    fn first_defined_keeps_the_name() {
        let out = check_all(&[server("a", &["echo"]), server("b", &["x", "Echo"])], &reserved());
        assert_eq!(out, vec![Ok(()), Err(clash_of("b", "Echo", "a"))]);
    }

    #[test]
    fn a_failed_server_claims_nothing() {
        let out = check_all(
            &[server("a", &["echo", "bash"]), server("b", &["echo"]), server("c", &["echo"])],
            &reserved(),
        );
        assert_eq!(out, vec![Err(reserved_of("a", &["bash"])), Ok(()), Err(clash_of("c", "echo", "b")),]);
    }

    #[test]
    fn first_failure_wins_tool_by_tool() {
        // The duplicate comes before the reserved name in list order, so it is reported.
        let out = check_all(&[server("a", &["x", "x", "bash"])], &reserved());
        assert_eq!(out, vec![Err("MCP server a returned duplicate tool: x".to_string())]);
    }

    #[test]
    fn custom_reserved_set_replaces_the_default() {
        let out = check_all(&[server("a", &["bash", "deploy"])], &["Deploy".to_string()]);
        assert_eq!(out, vec![Err(reserved_of("a", &["deploy"]))]);
    }

    #[test]
    fn names_with_controls_or_format_characters_are_invalid() {
        let out = check_all(&[server("a", &["ok", "bell\u{7}tool"])], &reserved());
        assert_eq!(
            out,
            vec![Err(
                "MCP server a returned an invalid tool name: bell\\u{7}tool (control or format character U+0007)"
                    .to_string()
            )]
        );
        for bad in ["new\nline", "esc\u{1b}[2J", "bidi\u{202e}cba", "zero\u{200b}width", "sep\u{2028}"] {
            assert!(name_fault(bad).is_some(), "{bad:?}");
        }
        assert_eq!(name_fault("read_file"), None);
        assert_eq!(name_fault("café_ñandú"), None);
    }

    #[test]
    fn names_with_whitespace_at_either_end_are_invalid() {
        let out = check_all(&[server("a", &["ok", " padded"])], &reserved());
        assert_eq!(
            out,
            vec![Err(
                "MCP server a returned an invalid tool name:  padded (whitespace at either end)".to_string()
            )]
        );
        for bad in ["trailing ", "nbsp\u{a0}", "\u{3000}ideographic"] {
            assert_eq!(name_fault(bad).as_deref(), Some("whitespace at either end"), "{bad:?}");
        }
        assert_eq!(name_fault("in between"), None);
    }

    #[test]
    fn zero_width_cannot_dodge_the_reserved_check() {
        let out = check_all(&[server("a", &["bash\u{200b}"])], &reserved());
        assert_eq!(
            out,
            vec![Err(
                "MCP server a returned an invalid tool name: bash\\u{200b} (control or format character U+200B)"
                    .to_string()
            )]
        );
    }

    #[test]
    fn the_length_cap_is_128_characters() {
        let at_cap = "n".repeat(MAX_TOOL_NAME_CHARS);
        assert_eq!(check_all(&[server("a", &[&at_cap])], &reserved()), vec![Ok(())]);
        let over = "n".repeat(5_000_002);
        let out = check_all(&[server("a", &[&over])], &reserved());
        let shown = format!("{}…", "n".repeat(64));
        assert_eq!(
            out,
            vec![Err(format!(
                "MCP server a returned an invalid tool name: {shown} (5000002 characters, over the limit of 128)"
            ))]
        );
    }

    #[test]
    fn reserved_and_collisions_compare_after_nfkc_and_case_folding() {
        // Full-width letters and a ligature normalise to the ASCII names they imitate.
        let out = check_all(&[server("a", &["ｂａｓｈ"])], &reserved());
        assert_eq!(out, vec![Err(reserved_of("a", &["ｂａｓｈ"]))]);
        let out = check_all(&[server("a", &["ﬁnd"]), server("b", &["FIND"])], &reserved());
        assert_eq!(out, vec![Ok(()), Err(clash_of("b", "FIND", "a"))]);
    }
}
