//! Telling clients the surface changed. A 2025-11-25 client has a session: each change is
//! pushed to it as `notifications/{tools,resources,prompts}/list_changed` until it goes away.
//! A 2026-07-28 client has none: it opens `subscriptions/listen` and hears the kinds it asked
//! for there. The operator hears each change as one line on stderr.

use std::collections::HashSet;

use rmcp::model::ServerNotification;
use rmcp::service::{SubscriptionContext, SubscriptionSendError};
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use tokio::sync::watch;

use crate::runtime::{Revision, Runtime};

/// Pushes every change to the session behind `peer` until a notification cannot be sent.
pub async fn push(mut revisions: watch::Receiver<Revision>, peer: Peer<RoleServer>) {
    let mut seen = *revisions.borrow_and_update();
    while revisions.changed().await.is_ok() {
        let now = *revisions.borrow_and_update();
        for note in notifications(seen, now) {
            if peer.send_notification(note).await.is_err() {
                return;
            }
        }
        if peer.is_transport_closed() {
            return;
        }
        seen = now;
    }
}

/// Serves one `subscriptions/listen` until the client cancels it: each change of a kind the
/// subscription accepted is sent on it.
pub async fn listen(
    mut revisions: watch::Receiver<Revision>,
    context: SubscriptionContext,
) -> Result<(), McpError> {
    let mut seen = *revisions.borrow_and_update();
    loop {
        tokio::select! {
            () = context.cancelled() => return Ok(()),
            changed = revisions.changed() => {
                if changed.is_err() {
                    return Ok(());
                }
                let now = *revisions.borrow_and_update();
                for note in notifications(seen, now) {
                    match context.sink().send(note).await {
                        Ok(()) | Err(SubscriptionSendError::NotificationNotAccepted(_)) => {}
                        Err(_) => return Ok(()),
                    }
                }
                seen = now;
            }
        }
    }
}

/// The `list_changed` notifications that tell a client what differs between two revisions.
fn notifications(seen: Revision, now: Revision) -> Vec<ServerNotification> {
    let mut notes = Vec::new();
    if now.tools != seen.tools {
        notes.push(ServerNotification::ToolListChangedNotification(Default::default()));
    }
    if now.resources != seen.resources {
        notes.push(ServerNotification::ResourceListChangedNotification(Default::default()));
    }
    if now.prompts != seen.prompts {
        notes.push(ServerNotification::PromptListChangedNotification(Default::default()));
    }
    notes
}

/// One stderr line per change of the tools: how many tools from how many servers, and which
/// names came and went. Runs until the gateway aborts it.
pub async fn report(runtime: Runtime) {
    let mut revisions = runtime.revisions();
    let mut names = runtime.tool_names();
    while revisions.changed().await.is_ok() {
        let _ = revisions.borrow_and_update();
        let now = runtime.tool_names();
        if now == names {
            continue;
        }
        runtime
            .observer()
            .tell(format_args!("toolport serve: {}", describe(&names, &now, runtime.connected().len())));
        names = now;
    }
}

/// Names a change line lists of the tools added, and of those removed: the first connect of a
/// server with a thousand tools is one readable line, not a thousand names.
const NAMED: usize = 10;

fn describe(before: &[String], after: &[String], servers: usize) -> String {
    // Sets, not `contains` on the lists: 10,000 tools would be 10⁸ comparisons per change.
    let (was, is): (HashSet<&String>, HashSet<&String>) = (before.iter().collect(), after.iter().collect());
    let added: Vec<&str> = after.iter().filter(|n| !was.contains(n)).map(String::as_str).collect();
    let removed: Vec<&str> = before.iter().filter(|n| !is.contains(n)).map(String::as_str).collect();
    let (tools, servers) =
        (crate::text::counted(after.len(), "tool"), crate::text::counted(servers, "server"));
    let mut line = format!("the agent now sees {tools} from {servers}");
    for (what, names) in [("added", added), ("removed", removed)] {
        if !names.is_empty() {
            line.push_str(&format!("; {what} {}", crate::text::escape_line(&named(&names))));
        }
    }
    line
}

/// `names` joined, the first [`NAMED`] of them and how many more.
fn named(names: &[&str]) -> String {
    match names.len().checked_sub(NAMED) {
        Some(more) if more > 0 => format!("{} and {more} more", names[..NAMED].join(", ")),
        _ => names.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_names_what_came_and_went() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            describe(&names(&["a", "b"]), &names(&["b", "c", "d"]), 2),
            "the agent now sees 3 tools from 2 servers; added c, d; removed a"
        );
        assert_eq!(
            describe(&names(&["a"]), &names(&[]), 0),
            "the agent now sees 0 tools from 0 servers; removed a"
        );
    }

    #[test]
    fn a_large_change_names_the_first_ten_and_counts_the_rest() {
        let many: Vec<String> = (0..1006).map(|i| format!("t{i}")).collect();
        let line = describe(&[], &many, 1);
        assert_eq!(
            line,
            "the agent now sees 1006 tools from 1 server; added t0, t1, t2, t3, t4, t5, t6, t7, t8, t9 and 996 more"
        );
        let ten = &many[..10];
        assert_eq!(
            describe(ten, &[], 0),
            "the agent now sees 0 tools from 0 servers; removed t0, t1, t2, t3, t4, t5, t6, t7, t8, t9"
        );
    }
}
