//! The host's tool-name rules (reference-behaviour A, "Tool-name checks"). Pure: no I/O, no
//! async, so every rule and message is pinned by a unit test.
//!
//! They run on the final names (after any name policy), in definition order, and they are
//! never bypassed: a plugin can rename tools, but two servers can never share a name.

use std::collections::{HashMap, HashSet};

/// One server's final tool names, in the order it listed them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerNames<'a> {
    /// The server's name (for messages and ownership).
    pub server: &'a str,
    /// Final tool names.
    pub tools: Vec<&'a str>,
}

/// Checks one server against the reserved names and the names claimed by servers defined
/// before it. First failure wins, checked tool by tool; comparisons ignore case.
pub fn check_server(
    names: &ServerNames<'_>,
    reserved: &HashSet<String>,
    claimed: &HashMap<String, String>,
) -> Result<(), String> {
    let mut own: HashSet<String> = HashSet::new();
    for tool in &names.tools {
        if tool.trim().is_empty() {
            return Err(format!("MCP server {} returned a tool without a name", names.server));
        }
        let key = tool.to_lowercase();
        if reserved.contains(&key) {
            return Err(format!("MCP tool name conflicts with built-in tool: {tool}"));
        }
        if !own.insert(key.clone()) {
            return Err(format!("MCP server {} returned duplicate tool: {tool}", names.server));
        }
        if let Some(owner) = claimed.get(&key) {
            return Err(format!("MCP tool name conflict: {tool} already provided by {owner}"));
        }
    }
    Ok(())
}

/// Checks every server in definition order. A server that passes claims its names; one that
/// fails claims nothing (none of its tools reach the registry), so the first-defined server
/// keeps a contested name whichever finished connecting first.
pub fn check_all(servers: &[ServerNames<'_>], reserved: &[String]) -> Vec<Result<(), String>> {
    let reserved: HashSet<String> = reserved.iter().map(|n| n.trim().to_lowercase()).collect();
    let mut claimed: HashMap<String, String> = HashMap::new();
    servers
        .iter()
        .map(|names| {
            let verdict = check_server(names, &reserved, &claimed);
            if verdict.is_ok() {
                for tool in &names.tools {
                    claimed.insert(tool.to_lowercase(), names.server.to_string());
                }
            }
            verdict
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server<'a>(name: &'a str, tools: &[&'a str]) -> ServerNames<'a> {
        ServerNames { server: name, tools: tools.to_vec() }
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
