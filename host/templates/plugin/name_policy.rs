//! `{{name}}`: a toolport name policy. For every server it hides the tools whose name starts with
//! [`HIDDEN_PREFIX`] and exposes the others as `<server>_<tool>`; calls still reach the server
//! under the original name.

use toolport_guest::{PolicyGuest, Server, Tool, Verdict};

/// Tools whose name starts with this are not exposed at all.
const HIDDEN_PREFIX: &str = "internal_";

struct Policy;

impl PolicyGuest for Policy {
    /// One verdict per tool, in the order given: `Keep`, `Rename(new)`, `Hide`, or
    /// `Reject(reason)` (puts the whole server in `error`).
    fn review(server: Server, tools: Vec<Tool>) -> Vec<Verdict> {
        let hidden = tools.iter().filter(|t| t.name.starts_with(HIDDEN_PREFIX)).count();
        toolport_guest::info!("{}: {} tools, {hidden} hidden", server.name, tools.len());
        tools
            .iter()
            .map(|tool| {
                if tool.name.starts_with(HIDDEN_PREFIX) {
                    Verdict::Hide
                } else {
                    Verdict::Rename(format!("{}_{}", server.name, tool.name))
                }
            })
            .collect()
    }
}

toolport_guest::export!(Policy);
