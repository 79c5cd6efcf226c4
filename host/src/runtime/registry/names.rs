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

use crate::status::RESERVED_CONFLICT;
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

    /// Checks `server`'s final names: each valid ([`name_fault`]), then against the reserved
    /// ones, each other and the names claimed before it. First failure wins, tool by tool;
    /// comparisons use [`name_key`]. A reserved name is reported with every other reserved
    /// name the server lists and the two fixes ([`reserved_message`]), so one edit is enough.
    pub fn admit<'a>(
        &mut self,
        server: &str,
        tools: impl IntoIterator<Item = &'a str> + Clone,
    ) -> Result<(), String> {
        let mut own: HashSet<String> = HashSet::new();
        for tool in tools.clone() {
            if tool.trim().is_empty() {
                return Err(format!("MCP server {server} returned a tool without a name"));
            }
            if let Some(rule) = name_fault(tool) {
                return Err(format!(
                    "MCP server {server} returned an invalid tool name: {} ({rule})",
                    show_name(tool)
                ));
            }
            let key = name_key(tool);
            if self.reserved.contains(&key) {
                return Err(reserved_message(&self.reserved_among(tools.clone())));
            }
            if !own.insert(key.clone()) {
                return Err(format!("MCP server {server} returned duplicate tool: {tool}"));
            }
            if let Some(owner) = self.claimed.get(&key) {
                return Err(format!("MCP tool name conflict: {tool} already provided by {owner}"));
            }
        }
        for tool in tools {
            self.claimed.insert(name_key(tool), server.to_string());
        }
        Ok(())
    }

    /// The valid names among `tools` that are reserved, in list order, each once.
    fn reserved_among<'a>(&self, tools: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
        let mut seen = HashSet::new();
        tools
            .into_iter()
            .filter(|tool| name_fault(tool).is_none())
            .filter(|tool| {
                let key = name_key(tool);
                self.reserved.contains(&key) && seen.insert(key)
            })
            .collect()
    }
}

/// `MCP tool name conflicts with built-in tool: <tools>` (the original tool's sentence, every
/// reserved name of the server at once), then the two fixes: leave them out with the server's
/// tool filter, or let the `namespace` policy prefix every tool with its server's name.
pub fn reserved_message(tools: &[&str]) -> String {
    let listed = tools.join(", ");
    let quoted: Vec<String> = tools.iter().map(|t| format!("\"{t}\"")).collect();
    let flags: Vec<String> = tools.iter().map(|t| format!("--exclude {t}")).collect();
    let them = if tools.len() == 1 { "it" } else { "them" };
    format!(
        "{RESERVED_CONFLICT}{listed}. Fix: leave {them} out \
         (\"tools\": {{\"exclude\": [{}]}} in the server's definition, or toolport mcp add … {} when adding it), \
         or prefix every tool with its server's name (toolport workspace set namePolicy namespace)",
        quoted.join(", "),
        flags.join(" ")
    )
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
        servers.iter().map(|(name, tools)| claims.admit(name, tools.iter().copied())).collect()
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
        assert_eq!(out, vec![Err(reserved_message(&["Read_File"]))]);
    }

    #[test]
    fn every_reserved_name_is_named_at_once_with_the_fixes() {
        let out =
            check_all(&[server("files", &["read_file", "list", "WRITE_FILE", "read_file"])], &reserved());
        assert_eq!(
            out,
            vec![Err("MCP tool name conflicts with built-in tool: read_file, WRITE_FILE. Fix: leave them out \
                 (\"tools\": {\"exclude\": [\"read_file\", \"WRITE_FILE\"]} in the server's definition, \
                 or toolport mcp add … --exclude read_file --exclude WRITE_FILE when adding it), or prefix every \
                 tool with its server's name (toolport workspace set namePolicy namespace)"
                .to_string())]
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
        assert_eq!(out, vec![Ok(()), Err("MCP tool name conflict: Echo already provided by a".to_string())]);
    }

    #[test]
    fn a_failed_server_claims_nothing() {
        let out = check_all(
            &[server("a", &["echo", "bash"]), server("b", &["echo"]), server("c", &["echo"])],
            &reserved(),
        );
        assert_eq!(
            out,
            vec![
                Err(reserved_message(&["bash"])),
                Ok(()),
                Err("MCP tool name conflict: echo already provided by b".to_string()),
            ]
        );
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
        assert_eq!(out, vec![Err(reserved_message(&["deploy"]))]);
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
        assert_eq!(out, vec![Err(reserved_message(&["ｂａｓｈ"]))]);
        let out = check_all(&[server("a", &["ﬁnd"]), server("b", &["FIND"])], &reserved());
        assert_eq!(out, vec![Ok(()), Err("MCP tool name conflict: FIND already provided by a".to_string())]);
    }
}
