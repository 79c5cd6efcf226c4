//! The host's tool-name rules (reference-behaviour A, "Tool-name checks"). Pure: no I/O, no
//! async, so every rule and message is pinned by a unit test.
//!
//! They run on the final names (after any name policy), in definition order, and they are
//! never bypassed: a plugin can rename tools, but two servers can never share a name.

use std::collections::{HashMap, HashSet};

/// The names claimed so far in one pass over the servers, in definition order, and the
/// reserved ones. A server that passes claims its names; one that fails claims nothing (none of
/// its tools reach the registry), so the first-defined server keeps a contested name whichever
/// finished connecting first.
pub struct Claims {
    reserved: HashSet<String>,
    /// Lower-cased name → the server that claimed it.
    claimed: HashMap<String, String>,
}

impl Claims {
    /// A pass with nothing claimed yet; `reserved` compare without case.
    pub fn new(reserved: &[String]) -> Self {
        Self { reserved: reserved.iter().map(|n| n.trim().to_lowercase()).collect(), claimed: HashMap::new() }
    }

    /// Checks `server`'s final names against the reserved ones, each other and the names
    /// claimed before it. First failure wins, tool by tool; comparisons ignore case.
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
            let key = tool.to_lowercase();
            if self.reserved.contains(&key) {
                return Err(format!("MCP tool name conflicts with built-in tool: {tool}"));
            }
            if !own.insert(key.clone()) {
                return Err(format!("MCP server {server} returned duplicate tool: {tool}"));
            }
            if let Some(owner) = self.claimed.get(&key) {
                return Err(format!("MCP tool name conflict: {tool} already provided by {owner}"));
            }
        }
        for tool in tools {
            self.claimed.insert(tool.to_lowercase(), server.to_string());
        }
        Ok(())
    }
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
        assert_eq!(out, vec![Err("MCP tool name conflicts with built-in tool: Read_File".to_string())]);
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
                Err("MCP tool name conflicts with built-in tool: bash".to_string()),
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
        assert_eq!(out, vec![Err("MCP tool name conflicts with built-in tool: deploy".to_string())]);
    }
}
